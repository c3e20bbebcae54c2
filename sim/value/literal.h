// Literal: an owning value of an HLO shape — an array of any element type, a
// tuple of literals, or a token.
//
// An array's elements live in one contiguous, zero-initialised byte buffer in
// logical row-major order (the last dimension varies fastest). Layouts are a
// timing concern: a Literal's shape never carries one, and the same values
// have the same bytes whatever layout the program asks for. Each element is
// stored as its NativeType (element_type.h): sub-byte integers one per byte,
// narrow floats as raw bits. A dimension with a dynamic bound holds the bound
// in the buffer and carries its current (dynamic) size: the elements at
// indices beyond it are padding, always zero, so that values are equal when
// their sizes and valid regions are.
#ifndef TPUSIM_SIM_VALUE_LITERAL_H_
#define TPUSIM_SIM_VALUE_LITERAL_H_

#include <complex>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/shape.h"
#include "sim/value/check.h"
#include "sim/value/element_type.h"
#include "sim/value/huge_page_allocator.h"

namespace tpusim::value {

/// The element type whose NativeType is `T`, for the types that have one
/// unambiguously (`bool` means pred; uint8_t means u8).
template <typename T>
constexpr hlo::PrimitiveType PrimitiveTypeOf() {
  using hlo::PrimitiveType;
  if constexpr (std::is_same_v<T, bool>)
    return PrimitiveType::kPred;
  else if constexpr (std::is_same_v<T, int8_t>)
    return PrimitiveType::kS8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return PrimitiveType::kS16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return PrimitiveType::kS32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return PrimitiveType::kS64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return PrimitiveType::kU8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return PrimitiveType::kU16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return PrimitiveType::kU32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return PrimitiveType::kU64;
  else if constexpr (std::is_same_v<T, float>)
    return PrimitiveType::kF32;
  else if constexpr (std::is_same_v<T, double>)
    return PrimitiveType::kF64;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return PrimitiveType::kC64;
  else if constexpr (std::is_same_v<T, std::complex<double>>)
    return PrimitiveType::kC128;
  else
    return T::kPrimitiveType;  // a NarrowFloat
}

class Literal {
 public:
  /// The empty tuple `()`.
  Literal();
  /// A zero-filled value of `shape` (layouts dropped). The shape must be
  /// materialisable (see Create); violating that is a caller bug and aborts.
  explicit Literal(const hlo::Shape& shape);

  /// A zero-filled value of `shape`, or an error instead of allocating:
  /// kResourceExhausted when its bytes (tuple elements included) exceed
  /// `max_bytes` or overflow int64; kInvalidArgument for a negative or
  /// unbounded (`?`) dimension; kUnimplemented for opaque and buffer shapes.
  static StatusOr<Literal> Create(const hlo::Shape& shape, int64_t max_bytes);
  /// Bytes a Literal of `shape` holds, tuple elements included, with the
  /// errors of Create (but no limit).
  static StatusOr<int64_t> ByteSizeOf(const hlo::Shape& shape);

  static Literal CreateToken();
  static Literal CreateTuple(std::vector<Literal> elements);
  /// A scalar of T's element type (PrimitiveTypeOf).
  template <typename T>
  static Literal CreateR0(T value);
  /// A vector of T's element type.
  template <typename T>
  static Literal CreateR1(std::span<const T> values);
  template <typename T>
  static Literal CreateR1(std::initializer_list<T> values) {
    return CreateR1<T>(std::span<const T>(values.begin(), values.size()));
  }
  /// A scalar or vector of any element type, each value set with SetFromDouble.
  static Literal CreateR0(hlo::PrimitiveType type, double value);
  static Literal CreateR1(hlo::PrimitiveType type, std::span<const double> values);

  const hlo::Shape& shape() const { return shape_; }
  /// Element type of an array (kToken for a token; meaningless for a tuple).
  hlo::PrimitiveType element_type() const { return shape_.element_type(); }
  /// Elements of an array (1 for a scalar); 0 for tuples and tokens.
  int64_t element_count() const;
  /// The array's element bytes (empty for tuples and tokens).
  std::span<const std::byte> bytes() const { return bytes_; }
  std::span<std::byte> mutable_bytes() { return bytes_; }

  /// The elements viewed as T, which must be a storage type of the element
  /// type (IsStorageTypeFor): its NativeType or the raw bits' container.
  template <typename T>
  std::span<const T> data() const {
    CheckStorageType<T>();
    return {reinterpret_cast<const T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }
  template <typename T>
  std::span<T> data() {
    CheckStorageType<T>();
    return {reinterpret_cast<T*>(bytes_.data()), bytes_.size() / sizeof(T)};
  }

  /// Row-major position of a multi-index; aborts when it is out of bounds.
  int64_t LinearIndex(std::span<const int64_t> multi_index) const;
  template <typename T>
  T Get(std::span<const int64_t> multi_index) const {
    return data<T>()[LinearIndex(multi_index)];
  }
  template <typename T>
  T Get(std::initializer_list<int64_t> multi_index) const {
    return Get<T>(std::span<const int64_t>(multi_index.begin(), multi_index.size()));
  }
  template <typename T>
  void Set(std::span<const int64_t> multi_index, T value) {
    data<T>()[LinearIndex(multi_index)] = value;
  }
  template <typename T>
  void Set(std::initializer_list<int64_t> multi_index, T value) {
    Set<T>(std::span<const int64_t>(multi_index.begin(), multi_index.size()), value);
  }

  /// The element at a row-major index as a double: exact for every type
  /// except 64-bit integers beyond 2^53 (rounded to nearest even); complex
  /// values give their real part; pred gives 0 or 1.
  double GetAsDouble(int64_t linear_index) const;
  /// Stores `value` converted to the element type as XLA's convert does:
  /// floats round once to nearest even; integers truncate toward zero, clamp
  /// to their range (sub-byte types to their 1-, 2- or 4-bit range) and take
  /// 0 for NaN; pred is value != 0 (so NaN is true); complex gets (value, 0).
  void SetFromDouble(int64_t linear_index, double value);
  /// SetFromDouble for values[i] at first + i, the element type looked up
  /// once: the way to store many values.
  void SetFromDoubles(int64_t first, std::span<const double> values);

  /// The current size of array dimension `dim`: the bound unless
  /// set_dynamic_size made it smaller (static dimensions are their size).
  int64_t dynamic_size(int64_t dim) const;
  /// Sets a dynamic dimension's current size, 0 <= size <= its bound, and
  /// zeroes the elements beyond it. Aborts on a static dimension or a size out
  /// of range (callers check; see eval's set-dimension-size).
  void set_dynamic_size(int64_t dim, int64_t size);
  /// True when some array dimension, here or in a tuple element, is smaller
  /// than its bound.
  bool HasPaddedDimension() const;
  /// An array's shape without layout, followed by its current sizes when some
  /// dimension is below its bound: `f32[<=8,2] sizes=5,2`.
  std::string ShapeString() const;

  int64_t tuple_size() const { return static_cast<int64_t>(elements_.size()); }
  const Literal& tuple_element(int64_t i) const;
  /// For changing an element's values in place; assigning it a Literal of
  /// another shape is a caller bug (the tuple's shape would no longer match).
  Literal& mutable_tuple_element(int64_t i);
  /// Moves the elements out of a tuple, leaving this the empty tuple.
  std::vector<Literal> DecomposeTuple() &&;

  /// Bitwise equality: compatible shapes, the same dynamic sizes and identical
  /// bytes (so NaNs with the same bits are equal and +0 differs from -0).
  friend bool operator==(const Literal& a, const Literal& b);

  /// A one-line summary: the shape and the first elements, e.g.
  /// `f32[2,3] {1, 2, 3, 4, 5, 6}`, `(s32[] 1, token)`.
  std::string ToString() const;

 private:
  template <typename T>
  void CheckStorageType() const {
    TPUSIM_VALUE_CHECK(shape_.IsArray() && IsStorageTypeFor<T>(shape_.element_type()),
                       "data<T>(): T is not a storage type of this literal's element type");
  }

  hlo::Shape shape_;
  std::vector<std::byte, HugePageAllocator<std::byte>> bytes_;
  std::vector<Literal> elements_;  ///< tuple elements
  /// Current size of each array dimension; empty while every one is at its bound.
  std::vector<int64_t> dynamic_sizes_;
};

template <typename T>
Literal Literal::CreateR0(T value) {
  Literal literal(hlo::Shape(PrimitiveTypeOf<T>(), {}));
  if constexpr (std::is_same_v<T, bool>) {
    literal.data<uint8_t>()[0] = value ? 1 : 0;
  } else {
    literal.data<T>()[0] = value;
  }
  return literal;
}

template <typename T>
Literal Literal::CreateR1(std::span<const T> values) {
  Literal literal(hlo::Shape(PrimitiveTypeOf<T>(), {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    if constexpr (std::is_same_v<T, bool>) {
      literal.data<uint8_t>()[i] = values[i] ? 1 : 0;
    } else {
      literal.data<T>()[i] = values[i];
    }
  }
  return literal;
}

}  // namespace tpusim::value

#endif  // TPUSIM_SIM_VALUE_LITERAL_H_
