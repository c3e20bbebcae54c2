#include "sim/value/literal.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <utility>

namespace tpusim::value {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

/// The shape with every layout removed: a Literal's values are logical.
Shape WithoutLayouts(const Shape& shape) {
  Shape copy = shape;
  copy.clear_layout();
  for (Shape& element : copy.mutable_tuple_shapes()) element = WithoutLayouts(element);
  return copy;
}

/// Products and sums of sizes that report overflow instead of wrapping.
bool CheckedMul(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }
bool CheckedAdd(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }

/// The byte size of an array shape whose dimensions are sizes or bounds.
StatusOr<int64_t> ArrayByteSize(const Shape& shape) {
  if (!hlo::IsArrayType(shape.element_type())) {
    return InvalidArgument("shape " + shape.ToString(false) + " is not an array of values");
  }
  if (const std::optional<int64_t> i = shape.FirstUnboundedDimension()) {
    return InvalidArgument("shape " + shape.ToString(false) + " has an unbounded dimension " +
                           std::to_string(*i) + ": a value needs a size or a bound");
  }
  bool empty = false;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    const int64_t d = shape.dimensions(i);
    if (d < 0) {
      return InvalidArgument("shape " + shape.ToString(false) + " has a negative dimension " +
                             std::to_string(i));
    }
    empty = empty || d == 0;
  }
  // An empty array is empty even when the product of its other sizes would
  // overflow.
  if (empty) return int64_t{0};
  int64_t bytes = ElementByteSize(shape.element_type());
  for (int64_t d : shape.dimensions()) {
    if (!CheckedMul(bytes, d, bytes)) {
      return ResourceExhausted("shape " + shape.ToString(false) +
                               " has more bytes than a 64-bit size can count");
    }
  }
  return bytes;
}

/// XLA's float-to-integer convert: truncate toward zero, clamp, NaN gives 0.
/// [lo, hi] is the range of the (possibly sub-byte) integer type.
template <typename Int>
Int SaturatingFromDouble(double x, int64_t lo, uint64_t hi) {
  if (x != x) return 0;
  if (x < static_cast<double>(lo)) return static_cast<Int>(lo);
  // hi + 1 is a power of two, so this double is exact: x >= it means the
  // truncated x exceeds hi.
  if (x >= static_cast<double>(hi) + 1.0) return static_cast<Int>(hi);
  return static_cast<Int>(x);
}

/// Range of an integer element type, from its bit width.
void IntegerRange(PrimitiveType type, int64_t& lo, uint64_t& hi) {
  const int bits = hlo::PrimitiveTypeBitWidth(type);
  if (hlo::IsSignedInt(type)) {
    lo = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    hi = (uint64_t{1} << (bits - 1)) - 1;
  } else {
    lo = 0;
    hi = bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  }
}

template <typename T>
void AppendNumber(T value, std::string& out) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out.append(buffer, result.ptr);
}

void AppendElement(const Literal& literal, int64_t i, std::string& out) {
  VisitArrayType(literal.element_type(), [&](auto tag) {
    constexpr PrimitiveType kType = decltype(tag)::value;
    using T = NativeType<kType>;
    const T value = literal.data<T>()[i];
    if constexpr (kType == PrimitiveType::kPred) {
      out += value != 0 ? "true" : "false";
    } else if constexpr (std::is_integral_v<T>) {
      // Widened so that int8_t and uint8_t print as numbers, not characters.
      if constexpr (std::is_signed_v<T>) {
        AppendNumber(static_cast<int64_t>(value), out);
      } else {
        AppendNumber(static_cast<uint64_t>(value), out);
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      AppendNumber(value, out);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      out += '(';
      AppendNumber(value.real(), out);
      out += ',';
      AppendNumber(value.imag(), out);
      out += ')';
    } else {
      AppendNumber(value.ToFloat(), out);
    }
  });
}

void AppendLiteral(const Literal& literal, std::string& out) {
  const Shape& shape = literal.shape();
  if (shape.IsToken()) {
    out += "token";
    return;
  }
  if (shape.IsTuple()) {
    out += '(';
    for (int64_t i = 0; i < literal.tuple_size(); ++i) {
      if (i > 0) out += ", ";
      AppendLiteral(literal.tuple_element(i), out);
    }
    out += ')';
    return;
  }
  // Enough to recognise a value in a log line or a test failure; large arrays
  // are summarised, never printed whole.
  constexpr int64_t kMaxPrinted = 8;
  const int64_t count = literal.element_count();
  out += literal.ShapeString();
  out += shape.rank() == 0 ? " " : " {";
  for (int64_t i = 0; i < count && i < kMaxPrinted; ++i) {
    if (i > 0) out += ", ";
    AppendElement(literal, i, out);
  }
  if (count > kMaxPrinted) out += ", ... " + std::to_string(count) + " elements";
  if (shape.rank() != 0) out += '}';
}

}  // namespace

Literal::Literal() : shape_(Shape::Tuple({})) {}

Literal::Literal(const Shape& shape) : shape_(WithoutLayouts(shape)) {
  const StatusOr<int64_t> bytes = ByteSizeOf(shape_);
  if (!bytes.ok()) {
    internal::CheckFailed(__FILE__, __LINE__, "Literal(shape)", bytes.status().message().c_str());
  }
  if (shape_.IsArray()) {
    bytes_.resize(static_cast<size_t>(*bytes));  // value-initialised: all zero
  } else if (shape_.IsTuple()) {
    elements_.reserve(shape_.tuple_shapes().size());
    for (const Shape& element : shape_.tuple_shapes()) elements_.emplace_back(element);
  }
}

StatusOr<int64_t> Literal::ByteSizeOf(const Shape& shape) {
  switch (shape.kind()) {
    case Shape::Kind::kArray:
      return ArrayByteSize(shape);
    case Shape::Kind::kToken:
      return int64_t{0};
    case Shape::Kind::kTuple: {
      int64_t total = 0;
      for (const Shape& element : shape.tuple_shapes()) {
        TPUSIM_ASSIGN_OR_RETURN(int64_t bytes, ByteSizeOf(element));
        if (!CheckedAdd(total, bytes, total)) {
          return ResourceExhausted("shape " + shape.ToString(false) +
                                   " has more bytes than a 64-bit size can count");
        }
      }
      return total;
    }
    case Shape::Kind::kOpaque:
    case Shape::Kind::kBuffer:
      break;
  }
  return Unimplemented("shape " + shape.ToString(false) + " cannot be held as a value");
}

StatusOr<Literal> Literal::Create(const Shape& shape, int64_t max_bytes) {
  TPUSIM_ASSIGN_OR_RETURN(int64_t bytes, ByteSizeOf(shape));
  if (bytes > max_bytes) {
    return ResourceExhausted("a value of shape " + shape.ToString(false) + " needs " +
                             std::to_string(bytes) + " bytes, more than the limit of " +
                             std::to_string(max_bytes));
  }
  return Literal(shape);
}

Literal Literal::CreateToken() { return Literal(Shape::Token()); }

Literal Literal::CreateTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& element : elements) shapes.push_back(element.shape());
  Literal tuple;
  tuple.shape_ = Shape::Tuple(std::move(shapes));
  tuple.elements_ = std::move(elements);
  return tuple;
}

Literal Literal::CreateR0(PrimitiveType type, double value) {
  Literal literal(Shape(type, {}));
  literal.SetFromDouble(0, value);
  return literal;
}

Literal Literal::CreateR1(PrimitiveType type, std::span<const double> values) {
  Literal literal(Shape(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i)
    literal.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return literal;
}

int64_t Literal::element_count() const {
  if (!shape_.IsArray()) return 0;
  return static_cast<int64_t>(bytes_.size()) / ElementByteSize(shape_.element_type());
}

int64_t Literal::LinearIndex(std::span<const int64_t> multi_index) const {
  TPUSIM_VALUE_CHECK(shape_.IsArray() && static_cast<int64_t>(multi_index.size()) == shape_.rank(),
                     "index rank differs from the literal's rank");
  int64_t linear = 0;
  for (int64_t i = 0; i < shape_.rank(); ++i) {
    const int64_t d = shape_.dimensions(i);
    TPUSIM_VALUE_CHECK(multi_index[i] >= 0 && multi_index[i] < d, "index out of bounds");
    linear = linear * d + multi_index[i];
  }
  return linear;
}

double Literal::GetAsDouble(int64_t linear_index) const {
  TPUSIM_VALUE_CHECK(linear_index >= 0 && linear_index < element_count(),
                     "linear index out of bounds");
  return VisitArrayType(element_type(), [&](auto tag) -> double {
    using T = NativeType<decltype(tag)::value>;
    const T value = data<T>()[linear_index];
    if constexpr (std::is_arithmetic_v<T>) {
      return static_cast<double>(value);
    } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                         std::is_same_v<T, std::complex<double>>) {
      return static_cast<double>(value.real());
    } else {
      return value.ToDouble();
    }
  });
}

void Literal::SetFromDouble(int64_t linear_index, double value) {
  SetFromDoubles(linear_index, std::span(&value, 1));
}

void Literal::SetFromDoubles(int64_t first, std::span<const double> values) {
  TPUSIM_VALUE_CHECK(first >= 0 && static_cast<int64_t>(values.size()) <= element_count() - first,
                     "linear index out of bounds");
  VisitArrayType(element_type(), [&](auto tag) {
    constexpr PrimitiveType kType = decltype(tag)::value;
    using T = NativeType<kType>;
    T* out = data<T>().data() + first;
    [[maybe_unused]] int64_t lo = 0;
    [[maybe_unused]] uint64_t hi = 0;
    if constexpr (kType != PrimitiveType::kPred && std::is_integral_v<T>) {
      IntegerRange(kType, lo, hi);
    }
    for (const double value : values) {
      if constexpr (kType == PrimitiveType::kPred) {
        *out++ = value != 0.0 ? 1 : 0;
      } else if constexpr (std::is_integral_v<T>) {
        *out++ = SaturatingFromDouble<T>(value, lo, hi);
      } else if constexpr (std::is_floating_point_v<T>) {
        *out++ = static_cast<T>(value);  // f64 -> f32 is IEEE round-to-nearest-even
      } else if constexpr (std::is_same_v<T, std::complex<float>>) {
        *out++ = T(static_cast<float>(value), 0.0f);
      } else if constexpr (std::is_same_v<T, std::complex<double>>) {
        *out++ = T(value, 0.0);
      } else {
        *out++ = T::FromDouble(value);
      }
    }
  });
}

const Literal& Literal::tuple_element(int64_t i) const {
  TPUSIM_VALUE_CHECK(i >= 0 && i < tuple_size(), "tuple index out of bounds");
  return elements_[i];
}

Literal& Literal::mutable_tuple_element(int64_t i) {
  TPUSIM_VALUE_CHECK(i >= 0 && i < tuple_size(), "tuple index out of bounds");
  return elements_[i];
}

std::vector<Literal> Literal::DecomposeTuple() && {
  std::vector<Literal> elements = std::move(elements_);
  *this = Literal();
  return elements;
}

int64_t Literal::dynamic_size(int64_t dim) const {
  TPUSIM_VALUE_CHECK(shape_.IsArray() && dim >= 0 && dim < shape_.rank(),
                     "dynamic_size: no such dimension");
  return dynamic_sizes_.empty() ? shape_.dimensions(dim) : dynamic_sizes_[dim];
}

void Literal::set_dynamic_size(int64_t dim, int64_t size) {
  TPUSIM_VALUE_CHECK(shape_.IsArray() && dim >= 0 && dim < shape_.rank() &&
                         shape_.is_dynamic_dimension(dim),
                     "set_dynamic_size: not a dynamic dimension");
  TPUSIM_VALUE_CHECK(size >= 0 && size <= shape_.dimensions(dim),
                     "set_dynamic_size: size beyond the bound");
  if (dynamic_sizes_.empty()) dynamic_sizes_.assign(shape_.dimensions().begin(), shape_.dimensions().end());
  dynamic_sizes_[dim] = size;
  // Zero the padding: every element whose index along `dim` is >= size.
  const int64_t element_bytes = ElementByteSize(shape_.element_type());
  int64_t inner = element_bytes;  // bytes of one step along `dim`
  for (int64_t d = dim + 1; d < shape_.rank(); ++d) inner *= shape_.dimensions(d);
  const int64_t bound = shape_.dimensions(dim);
  const int64_t outer = bound == 0 || inner == 0
                            ? 0
                            : static_cast<int64_t>(bytes_.size()) / (bound * inner);
  for (int64_t o = 0; o < outer; ++o) {
    std::byte* row = bytes_.data() + o * bound * inner;
    std::fill(row + size * inner, row + bound * inner, std::byte{0});
  }
  if (std::equal(dynamic_sizes_.begin(), dynamic_sizes_.end(), shape_.dimensions().begin())) {
    dynamic_sizes_.clear();
  }
}

bool Literal::HasPaddedDimension() const {
  if (!dynamic_sizes_.empty()) return true;
  return std::any_of(elements_.begin(), elements_.end(),
                     [](const Literal& e) { return e.HasPaddedDimension(); });
}

std::string Literal::ShapeString() const {
  std::string out = shape_.ToString(false);
  if (dynamic_sizes_.empty()) return out;
  out += " sizes=";
  for (size_t d = 0; d < dynamic_sizes_.size(); ++d) {
    out += (d > 0 ? "," : "") + std::to_string(dynamic_sizes_[d]);
  }
  return out;
}

bool operator==(const Literal& a, const Literal& b) {
  return a.shape_.Compatible(b.shape_) && a.dynamic_sizes_ == b.dynamic_sizes_ &&
         a.bytes_ == b.bytes_ && a.elements_ == b.elements_;
}

std::string Literal::ToString() const {
  std::string out;
  AppendLiteral(*this, out);
  return out;
}

}  // namespace tpusim::value
