// How each array element type is stored in a Literal: the C++ type of one
// element (its "native type"), its size, and a switch that hands a caller the
// element type as a compile-time constant.
//
//   pred                     uint8_t, 0 or 1
//   s1 s2 s4 s8 / u1 u2 u4 u8 int8_t / uint8_t, one element per byte
//                            (sub-byte signed values are sign-extended)
//   s16..s64 / u16..u64      the fixed-width integer of that size
//   f16 bf16 f8* f4e2m1fn    NarrowFloat<type>: the raw bits in uint16_t or uint8_t
//   f32 f64                  float, double
//   c64 c128                 std::complex<float>, std::complex<double>
#ifndef TPUSIM_SIM_VALUE_ELEMENT_TYPE_H_
#define TPUSIM_SIM_VALUE_ELEMENT_TYPE_H_

#include <complex>
#include <cstdint>
#include <type_traits>

#include "sim/hlo/primitive_type.h"
#include "sim/value/check.h"
#include "sim/value/float_formats.h"

namespace tpusim::value {

namespace internal {
template <hlo::PrimitiveType kType>
struct NativeTypeOf;
#define TPUSIM_VALUE_NATIVE_TYPE(enumerator, cpp_type)  \
  template <>                                           \
  struct NativeTypeOf<hlo::PrimitiveType::enumerator> { \
    using type = cpp_type;                              \
  };
TPUSIM_VALUE_NATIVE_TYPE(kPred, uint8_t)
TPUSIM_VALUE_NATIVE_TYPE(kS1, int8_t)
TPUSIM_VALUE_NATIVE_TYPE(kS2, int8_t)
TPUSIM_VALUE_NATIVE_TYPE(kS4, int8_t)
TPUSIM_VALUE_NATIVE_TYPE(kS8, int8_t)
TPUSIM_VALUE_NATIVE_TYPE(kS16, int16_t)
TPUSIM_VALUE_NATIVE_TYPE(kS32, int32_t)
TPUSIM_VALUE_NATIVE_TYPE(kS64, int64_t)
TPUSIM_VALUE_NATIVE_TYPE(kU1, uint8_t)
TPUSIM_VALUE_NATIVE_TYPE(kU2, uint8_t)
TPUSIM_VALUE_NATIVE_TYPE(kU4, uint8_t)
TPUSIM_VALUE_NATIVE_TYPE(kU8, uint8_t)
TPUSIM_VALUE_NATIVE_TYPE(kU16, uint16_t)
TPUSIM_VALUE_NATIVE_TYPE(kU32, uint32_t)
TPUSIM_VALUE_NATIVE_TYPE(kU64, uint64_t)
TPUSIM_VALUE_NATIVE_TYPE(kF16, F16)
TPUSIM_VALUE_NATIVE_TYPE(kBF16, BF16)
TPUSIM_VALUE_NATIVE_TYPE(kF32, float)
TPUSIM_VALUE_NATIVE_TYPE(kF64, double)
TPUSIM_VALUE_NATIVE_TYPE(kF8E5M2, F8E5M2)
TPUSIM_VALUE_NATIVE_TYPE(kF8E4M3, F8E4M3)
TPUSIM_VALUE_NATIVE_TYPE(kF8E4M3FN, F8E4M3FN)
TPUSIM_VALUE_NATIVE_TYPE(kF8E4M3B11FNUZ, F8E4M3B11FNUZ)
TPUSIM_VALUE_NATIVE_TYPE(kF8E5M2FNUZ, F8E5M2FNUZ)
TPUSIM_VALUE_NATIVE_TYPE(kF8E4M3FNUZ, F8E4M3FNUZ)
TPUSIM_VALUE_NATIVE_TYPE(kF8E3M4, F8E3M4)
TPUSIM_VALUE_NATIVE_TYPE(kF8E8M0FNU, F8E8M0FNU)
TPUSIM_VALUE_NATIVE_TYPE(kF4E2M1FN, F4E2M1FN)
TPUSIM_VALUE_NATIVE_TYPE(kC64, std::complex<float>)
TPUSIM_VALUE_NATIVE_TYPE(kC128, std::complex<double>)
#undef TPUSIM_VALUE_NATIVE_TYPE
}  // namespace internal

/// The C++ type one element of an array of `kType` is stored as.
template <hlo::PrimitiveType kType>
using NativeType = typename internal::NativeTypeOf<kType>::type;

/// Tag passed by VisitArrayType: `decltype(tag)::value` is the element type.
template <hlo::PrimitiveType kType>
using ElementTypeTag = std::integral_constant<hlo::PrimitiveType, kType>;

/// Calls `fn(ElementTypeTag<type>{})` for an array element type and returns its
/// result; aborts for token and opaque, which have no elements.
template <typename Fn>
decltype(auto) VisitArrayType(hlo::PrimitiveType type, Fn&& fn) {
  switch (type) {
#define V(enumerator, name, bits, kind)                                        \
  case hlo::PrimitiveType::enumerator:                                         \
    if constexpr (hlo::PrimitiveKind::kind != hlo::PrimitiveKind::kNonArray) { \
      return fn(ElementTypeTag<hlo::PrimitiveType::enumerator>{});             \
    }                                                                          \
    break;
#include "sim/hlo/primitive_type.def"
#undef V
  }
  internal::CheckFailed(__FILE__, __LINE__, "IsArrayType(type)", "element type has no elements");
}

/// Bytes one element occupies in a Literal; 0 for token and opaque.
int64_t ElementByteSize(hlo::PrimitiveType type);

/// True when `T` may view the storage of `type`: its native type, or the raw
/// container of the bits (uint8_t for pred, u1..u8 and the 8- and 4-bit
/// floats; int8_t for s1..s8; uint16_t for f16 and bf16).
template <typename T>
bool IsStorageTypeFor(hlo::PrimitiveType type) {
  return VisitArrayType(type, [](auto tag) {
    using Native = NativeType<decltype(tag)::value>;
    if constexpr (std::is_same_v<T, Native>) {
      return true;
    } else if constexpr (std::is_class_v<Native> && !std::is_same_v<Native, std::complex<float>> &&
                         !std::is_same_v<Native, std::complex<double>>) {
      return std::is_same_v<T, typename Native::Bits>;  // a NarrowFloat's raw bits
    } else {
      return false;
    }
  });
}

}  // namespace tpusim::value

#endif  // TPUSIM_SIM_VALUE_ELEMENT_TYPE_H_
