#include "sim/hlo/layout.h"

#include "sim/hlo/shape.h"

namespace tpusim::hlo {

Layout::Layout(const Layout& other)
    : dim_level_types(other.dim_level_types),
      tiles(other.tiles),
      tail_padding_alignment_in_elements(other.tail_padding_alignment_in_elements),
      index_primitive_type(other.index_primitive_type),
      pointer_primitive_type(other.pointer_primitive_type),
      element_size_in_bits(other.element_size_in_bits),
      memory_space(other.memory_space),
      split_configs(other.split_configs),
      physical_shape(other.physical_shape ? std::make_unique<Shape>(*other.physical_shape)
                                          : nullptr),
      dynamic_shape_metadata_prefix_bytes(other.dynamic_shape_metadata_prefix_bytes),
      minor_to_major_(other.minor_to_major_) {}

Layout& Layout::operator=(const Layout& other) {
  if (this != &other) *this = Layout(other);  // copy, then move-assign
  return *this;
}

// Defined here, where Shape is complete, because physical_shape owns a Shape.
Layout::~Layout() = default;

bool Layout::HasExtras() const {
  return !dim_level_types.empty() || !tiles.empty() || tail_padding_alignment_in_elements != 1 ||
         index_primitive_type.has_value() || pointer_primitive_type.has_value() ||
         element_size_in_bits != 0 || memory_space != 0 || !split_configs.empty() ||
         physical_shape != nullptr || dynamic_shape_metadata_prefix_bytes != 0;
}

bool operator==(const Layout& a, const Layout& b) {
  if (a.minor_to_major_ != b.minor_to_major_ || a.dim_level_types != b.dim_level_types ||
      a.tiles != b.tiles ||
      a.tail_padding_alignment_in_elements != b.tail_padding_alignment_in_elements ||
      a.index_primitive_type != b.index_primitive_type ||
      a.pointer_primitive_type != b.pointer_primitive_type ||
      a.element_size_in_bits != b.element_size_in_bits || a.memory_space != b.memory_space ||
      a.split_configs != b.split_configs ||
      a.dynamic_shape_metadata_prefix_bytes != b.dynamic_shape_metadata_prefix_bytes) {
    return false;
  }
  if (!a.physical_shape || !b.physical_shape) return a.physical_shape == b.physical_shape;
  return *a.physical_shape == *b.physical_shape;
}

}  // namespace tpusim::hlo
