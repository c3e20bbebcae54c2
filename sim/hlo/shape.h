// HLO shapes: arrays (element type, dimensions, optional layout), tuples,
// tokens, opaque values and buffers (`b(f32[4])`).
#ifndef TPUSIM_SIM_HLO_SHAPE_H_
#define TPUSIM_SIM_HLO_SHAPE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/hlo/dimension_vector.h"
#include "sim/hlo/layout.h"
#include "sim/hlo/primitive_type.h"

namespace tpusim::hlo {

class Shape {
 public:
  /// What a Shape describes. Arrays carry an element type; tokens and opaque
  /// values carry kToken/kOpaque as their element type.
  enum class Kind : uint8_t { kArray, kTuple, kToken, kOpaque, kBuffer };

  /// Size printed as `?`: an unbounded dynamic dimension.
  static constexpr int64_t kUnboundedSize = -1;

  Shape() = default;
  /// An array shape with static dimensions and no layout.
  Shape(PrimitiveType type, DimensionVector dimensions);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Opaque();
  /// `b(array)`: a buffer holding an array of the given shape.
  static Shape Buffer(Shape array);

  Kind kind() const { return kind_; }
  bool IsArray() const { return kind_ == Kind::kArray; }
  bool IsTuple() const { return kind_ == Kind::kTuple; }
  bool IsToken() const { return kind_ == Kind::kToken; }
  bool IsOpaque() const { return kind_ == Kind::kOpaque; }
  bool IsBuffer() const { return kind_ == Kind::kBuffer; }

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType t) { element_type_ = t; }

  // --- arrays -------------------------------------------------------------
  int64_t rank() const { return static_cast<int64_t>(dimensions_.size()); }
  /// Sizes; for a bounded dynamic dimension this is the bound.
  const DimensionVector& dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[i]; }
  DimensionVector& mutable_dimensions() { return dimensions_; }
  /// True when dimension i was printed as `<=N` or `?`.
  bool is_dynamic_dimension(int64_t i) const { return (dynamic_mask_ >> i) & 1; }
  void set_dynamic_dimension(int64_t i, bool dynamic);
  bool is_static() const { return dynamic_mask_ == 0; }
  /// An array's first dimension printed as `?` (kUnboundedSize), of which no
  /// size, bound or cost follows; none for other shapes.
  std::optional<int64_t> FirstUnboundedDimension() const;
  /// Product of the dimensions (bounds for dynamic ones); 1 for a scalar.
  /// Saturates at INT64_MAX rather than overflowing.
  int64_t element_count() const;

  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout& mutable_layout() {
    if (!layout_) layout_.emplace();
    return *layout_;
  }
  void clear_layout() { layout_.reset(); }

  // --- tuples and buffers -------------------------------------------------
  /// Tuple elements, or the single array of a buffer.
  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[i]; }
  std::vector<Shape>& mutable_tuple_shapes() { return tuple_shapes_; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }

  /// Same kind, element type, dimensions and dynamism, recursively; ignores layouts.
  bool Compatible(const Shape& other) const;
  /// Everything, layouts included.
  friend bool operator==(const Shape& a, const Shape& b);

  /// HLO text, e.g. `bf16[8,128]{1,0:T(8,128)(2,1)}`; layouts only when asked.
  std::string ToString(bool print_layout = true) const;

 private:
  Kind kind_ = Kind::kArray;
  PrimitiveType element_type_ = PrimitiveType::kF32;
  DimensionVector dimensions_;
  /// Bit i set: dimension i is dynamic (rank is at most 64 in any real program).
  uint64_t dynamic_mask_ = 0;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_shapes_;
};

/// Dimension numbers from the most major to the most minor: the reverse of
/// the layout's minor_to_major, or 0..rank-1 when there is no layout (or one
/// that is not a permutation of the dimensions, which the parser rejects).
std::vector<int64_t> MajorToMinor(const Shape& array);

/// Bits an array occupies in memory under its layout: the elements of its
/// tiled shape times the element width (`E(n)` when given, else the type's).
/// A tile splits the minor dimensions it covers, in physical order, into tile
/// counts (rounded up: the padding) and tile sizes, a tile of higher rank
/// seeing leading dimensions of size 1; each later tile splits the minor
/// dimensions of that tiled shape. So f32[3,5]{1,0:T(8,128)} is one 8x128
/// tile; T(8,128)(2,1) and T(1024)(128)(2,1) pad nothing more, while
/// T(8,128)(3,1) pads each 8-row tile to 9 rows. nullopt at 2^63 or more.
std::optional<int64_t> PhysicalBits(const Shape& array);

/// Appends the HLO text of a shape to `out` (the printer's fast path).
void AppendShape(const Shape& shape, bool print_layout, std::string& out);
void AppendLayout(const Layout& layout, std::string& out);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_SHAPE_H_
