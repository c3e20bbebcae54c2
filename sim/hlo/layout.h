// Physical layout of an HLO array: dimension order plus XLA's tiling and the
// other extras printed after ':' in `{1,0:T(8,128)(2,1)S(1)}`.
#ifndef TPUSIM_SIM_HLO_LAYOUT_H_
#define TPUSIM_SIM_HLO_LAYOUT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/hlo/dimension_vector.h"
#include "sim/hlo/primitive_type.h"

namespace tpusim::hlo {

class Shape;

/// One tile of a tiling, outermost tile first in Layout::tiles. Dimensions are
/// listed major to minor, as printed: T(8,128) tiles the two minor dimensions
/// into 8 rows of 128 elements.
struct Tile {
  /// `*` in the text: the dimension is combined with the next one.
  static constexpr int64_t kCombinedDimension = INT64_MIN;
  std::vector<int64_t> dimensions;
  friend bool operator==(const Tile&, const Tile&) = default;
};

/// `SC(dim:i,j,...)`: split a dimension at the given indices.
struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  friend bool operator==(const SplitConfig&, const SplitConfig&) = default;
};

class Layout {
 public:
  Layout() = default;
  explicit Layout(DimensionVector minor_to_major) : minor_to_major_(std::move(minor_to_major)) {}
  Layout(const Layout& other);
  Layout& operator=(const Layout& other);
  Layout(Layout&&) noexcept = default;
  Layout& operator=(Layout&&) noexcept = default;
  ~Layout();

  /// Dimension numbers from the fastest-varying to the slowest.
  const DimensionVector& minor_to_major() const { return minor_to_major_; }
  DimensionVector& mutable_minor_to_major() { return minor_to_major_; }

  /// `D(...)`: per-dimension level types (dense, compressed, ...) verbatim, e.g. "D", "C+", "S~".
  std::vector<std::string> dim_level_types;
  /// `T(...)(...)`: tiles, outermost first.
  std::vector<Tile> tiles;
  /// `L(n)`: tail padding alignment in elements; 1 when not printed.
  int64_t tail_padding_alignment_in_elements = 1;
  /// `#(type)` and `*(type)`: index and pointer types of sparse layouts.
  std::optional<PrimitiveType> index_primitive_type;
  std::optional<PrimitiveType> pointer_primitive_type;
  /// `E(n)`: element size in bits; 0 when not printed (the type's own width).
  int64_t element_size_in_bits = 0;
  /// `S(n)`: memory space; 0 is the default device memory (HBM on TPU).
  int64_t memory_space = 0;
  /// `SC(...)`: split configs.
  std::vector<SplitConfig> split_configs;
  /// `P(shape)`: physical shape of a sparse array.
  std::unique_ptr<Shape> physical_shape;
  /// `M(n)`: dynamic-shape metadata prefix bytes; 0 when not printed.
  int64_t dynamic_shape_metadata_prefix_bytes = 0;

  /// True when any extra after ':' differs from its default.
  bool HasExtras() const;

  friend bool operator==(const Layout& a, const Layout& b);

 private:
  DimensionVector minor_to_major_;
};

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_LAYOUT_H_
