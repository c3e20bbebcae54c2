#include "sim/hlo/shape.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

namespace tpusim::hlo {
namespace {

void AppendInt(int64_t v, std::string& out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, end);
}

void AppendIntsJoined(std::span<const int64_t> values, std::string& out) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    AppendInt(values[i], out);
  }
}

/// Starts the extras part of a layout with ':' the first time it is needed.
struct ExtrasWriter {
  std::string& out;
  bool started = false;
  std::string& Begin() {
    if (!started) out += ':';
    started = true;
    return out;
  }
};

}  // namespace

Shape::Shape(PrimitiveType type, DimensionVector dimensions)
    : kind_(type == PrimitiveType::kToken    ? Kind::kToken
            : type == PrimitiveType::kOpaque ? Kind::kOpaque
                                             : Kind::kArray),
      element_type_(type),
      dimensions_(std::move(dimensions)) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.kind_ = Kind::kTuple;
  s.tuple_shapes_ = std::move(elements);
  return s;
}

Shape Shape::Token() { return Shape(PrimitiveType::kToken, {}); }

Shape Shape::Opaque() { return Shape(PrimitiveType::kOpaque, {}); }

Shape Shape::Buffer(Shape array) {
  Shape s;
  s.kind_ = Kind::kBuffer;
  s.element_type_ = array.element_type();
  s.tuple_shapes_.push_back(std::move(array));
  return s;
}

void Shape::set_dynamic_dimension(int64_t i, bool dynamic) {
  // The mask has 64 bits; the parser rejects arrays of higher rank, so larger
  // indices never reach here from text.
  if (i < 0 || i >= 64) return;
  const uint64_t bit = uint64_t{1} << i;
  dynamic_mask_ = dynamic ? (dynamic_mask_ | bit) : (dynamic_mask_ & ~bit);
}

std::optional<int64_t> Shape::FirstUnboundedDimension() const {
  for (int64_t i = 0; IsArray() && i < rank(); ++i) {
    if (dimensions_[i] == kUnboundedSize) return i;
  }
  return std::nullopt;
}

int64_t Shape::element_count() const {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t count = 1;
  bool saturated = false;
  for (int64_t d : dimensions_) {
    if (d == 0) return 0;
    // An unbounded dimension (`?`) has no bound: count it as unlimited.
    if (d < 0 || count > kMax / d) {
      saturated = true;
      continue;
    }
    count *= d;
  }
  return saturated ? kMax : count;
}

std::vector<int64_t> MajorToMinor(const Shape& array) {
  const int64_t rank = array.rank();
  if (array.has_layout()) {
    const std::span<const int64_t> m2m = array.layout().minor_to_major();
    std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
    bool permutation = static_cast<int64_t>(m2m.size()) == rank;
    for (size_t i = 0; permutation && i < m2m.size(); ++i) {
      permutation = m2m[i] >= 0 && m2m[i] < rank && !seen[m2m[i]];
      if (permutation) seen[m2m[i]] = true;
    }
    if (permutation) return std::vector<int64_t>(m2m.rbegin(), m2m.rend());
  }
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d) order.push_back(d);
  return order;
}

std::optional<int64_t> PhysicalBits(const Shape& array) {
  // The tiled shape, major to minor: a tile splits the minor dimensions it
  // covers into (tile counts..., tile sizes...), each count rounded up, and
  // the next tile splits the minor dimensions of that.
  std::vector<int64_t> tiled;
  for (int64_t d : MajorToMinor(array)) tiled.push_back(std::max<int64_t>(array.dimensions(d), 0));
  int64_t bits = PrimitiveTypeBitWidth(array.element_type());
  if (array.has_layout()) {
    const Layout& layout = array.layout();
    if (layout.element_size_in_bits > 0) bits = layout.element_size_in_bits;
    for (const Tile& tile : layout.tiles) {
      const std::vector<int64_t>& t = tile.dimensions;
      while (tiled.size() < t.size()) tiled.insert(tiled.begin(), 1);
      const size_t offset = tiled.size() - t.size();
      for (size_t i = 0; i < t.size(); ++i) {
        // A combined `*` dimension (or any other non-positive size) leaves
        // its dimension whole.
        const int64_t size = t[i] > 0 ? t[i] : std::max<int64_t>(tiled[offset + i], 1);
        int64_t& count = tiled[offset + i];
        count = count / size + (count % size != 0 ? 1 : 0);
        tiled.push_back(size);
      }
    }
  }
  int64_t total = bits;
  for (int64_t d : tiled) {
    if (__builtin_mul_overflow(total, d, &total)) return std::nullopt;
  }
  return total;
}

bool Shape::Compatible(const Shape& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kArray:
      return element_type_ == other.element_type_ && dimensions_ == other.dimensions_ &&
             dynamic_mask_ == other.dynamic_mask_;
    case Kind::kTuple:
    case Kind::kBuffer:
      if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
      for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
        if (!tuple_shapes_[i].Compatible(other.tuple_shapes_[i])) return false;
      }
      return true;
    case Kind::kToken:
    case Kind::kOpaque:
      return true;
  }
  return false;
}

bool operator==(const Shape& a, const Shape& b) {
  if (a.kind_ != b.kind_) return false;
  // Only arrays have a meaningful element type; tuples keep the default.
  if (a.kind_ == Shape::Kind::kArray && a.element_type_ != b.element_type_) return false;
  return a.dimensions_ == b.dimensions_ && a.dynamic_mask_ == b.dynamic_mask_ &&
         a.layout_ == b.layout_ && a.tuple_shapes_ == b.tuple_shapes_;
}

std::string Shape::ToString(bool print_layout) const {
  std::string out;
  AppendShape(*this, print_layout, out);
  return out;
}

void AppendShape(const Shape& shape, bool print_layout, std::string& out) {
  switch (shape.kind()) {
    case Shape::Kind::kTuple: {
      out += '(';
      const auto& elements = shape.tuple_shapes();
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i > 0) out += ", ";
        AppendShape(elements[i], print_layout, out);
      }
      out += ')';
      return;
    }
    case Shape::Kind::kBuffer:
      out += "b(";
      if (shape.tuple_size() == 1) AppendShape(shape.tuple_shapes(0), print_layout, out);
      out += ')';
      return;
    case Shape::Kind::kToken:
      out += "token[]";
      return;
    case Shape::Kind::kOpaque:
      out += "opaque[]";
      return;
    case Shape::Kind::kArray:
      break;
  }
  out += PrimitiveTypeName(shape.element_type());
  out += '[';
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (i > 0) out += ',';
    const int64_t d = shape.dimensions(i);
    if (d == Shape::kUnboundedSize) {
      out += '?';
      continue;
    }
    if (shape.is_dynamic_dimension(i)) out += "<=";
    AppendInt(d, out);
  }
  out += ']';
  // XLA omits a scalar's empty layout; we print `{}` so that a present layout
  // stays present when the text is parsed again (the parser reads none as absent).
  if (print_layout && shape.has_layout()) AppendLayout(shape.layout(), out);
}

void AppendLayout(const Layout& layout, std::string& out) {
  out += '{';
  AppendIntsJoined(layout.minor_to_major(), out);
  ExtrasWriter extras{out};
  if (!layout.dim_level_types.empty()) {
    extras.Begin() += "D(";
    for (size_t i = 0; i < layout.dim_level_types.size(); ++i) {
      if (i > 0) out += ',';
      out += layout.dim_level_types[i];
    }
    out += ')';
  }
  if (!layout.tiles.empty()) {
    extras.Begin() += 'T';
    for (const Tile& tile : layout.tiles) {
      out += '(';
      for (size_t i = 0; i < tile.dimensions.size(); ++i) {
        if (i > 0) out += ',';
        if (tile.dimensions[i] == Tile::kCombinedDimension) {
          out += '*';
        } else {
          AppendInt(tile.dimensions[i], out);
        }
      }
      out += ')';
    }
  }
  if (layout.tail_padding_alignment_in_elements != 1) {
    extras.Begin() += "L(";
    AppendInt(layout.tail_padding_alignment_in_elements, out);
    out += ')';
  }
  if (layout.index_primitive_type) {
    extras.Begin() += "#(";
    out += PrimitiveTypeName(*layout.index_primitive_type);
    out += ')';
  }
  if (layout.pointer_primitive_type) {
    extras.Begin() += "*(";
    out += PrimitiveTypeName(*layout.pointer_primitive_type);
    out += ')';
  }
  if (layout.element_size_in_bits != 0) {
    extras.Begin() += "E(";
    AppendInt(layout.element_size_in_bits, out);
    out += ')';
  }
  if (layout.memory_space != 0) {
    extras.Begin() += "S(";
    AppendInt(layout.memory_space, out);
    out += ')';
  }
  if (!layout.split_configs.empty()) {
    extras.Begin() += "SC";
    for (const SplitConfig& sc : layout.split_configs) {
      out += '(';
      AppendInt(sc.dimension, out);
      out += ':';
      AppendIntsJoined(sc.split_indices, out);
      out += ')';
    }
  }
  if (layout.physical_shape) {
    extras.Begin() += "P(";
    AppendShape(*layout.physical_shape, /*print_layout=*/true, out);
    out += ')';
  }
  if (layout.dynamic_shape_metadata_prefix_bytes != 0) {
    extras.Begin() += "M(";
    AppendInt(layout.dynamic_shape_metadata_prefix_bytes, out);
    out += ')';
  }
  out += '}';
}

}  // namespace tpusim::hlo
