// The narrow floating-point element types (f16, bf16, the f8 family and
// f4e2m1fn): exact decoding, and encoding that rounds once to nearest, ties to
// even, straight from a double or a float. Written with integer arithmetic on
// the bit patterns only (no libm, no FMA), so the results are the same on every
// machine and every compiler. docs/values.md states the per-format rules for
// NaN, infinity, overflow and signed zero; they follow ml_dtypes (which XLA
// uses for these types) with the one exception documented there.
#ifndef TPUSIM_SIM_VALUE_FLOAT_FORMATS_H_
#define TPUSIM_SIM_VALUE_FLOAT_FORMATS_H_

#include <bit>
#include <cstdint>
#include <type_traits>

#include "sim/hlo/primitive_type.h"

namespace tpusim::value {

/// Describes one narrow float format. Values are (1.f) * 2^(E - bias) for a
/// biased exponent E >= 1 and, when the format has subnormals, 0.f * 2^(1 - bias)
/// for E == 0.
struct FloatFormat {
  /// How a format spends its top codes on NaN and infinity.
  enum class Kind : uint8_t {
    kIeee,          ///< IEEE 754 style: exponent all ones is inf (f == 0) or NaN
    kFiniteNan,     ///< "fn": no inf; only S.1111.111 is NaN (f8e4m3fn)
    kFnuz,          ///< "fnuz": no inf, no -0; the code 0x80 is the one NaN
    kFinite,        ///< no inf and no NaN at all (f4e2m1fn)
    kExponentOnly,  ///< unsigned powers of two, no zero, 0xFF is NaN (f8e8m0fnu)
  };

  hlo::PrimitiveType type;
  Kind kind;
  int total_bits;  ///< 16, 8 or 4
  int exponent_bits;
  int mantissa_bits;  ///< explicit fraction bits
  int bias;

  bool is_signed() const { return kind != Kind::kExponentOnly; }
  bool has_infinity() const { return kind == Kind::kIeee; }
  bool has_nan() const { return kind != Kind::kFinite; }
  /// Mask of the sign bit (0 for unsigned formats).
  uint32_t sign_mask() const { return is_signed() ? 1u << (total_bits - 1) : 0u; }
  /// Largest finite magnitude, as a code without the sign bit.
  uint32_t max_finite_code() const;
  /// Unbiased exponent of the smallest normal number; subnormals share it.
  int min_exponent() const { return kind == Kind::kExponentOnly ? -bias : 1 - bias; }
};

/// True for the element types handled here: f16, bf16, every f8 and f4e2m1fn.
bool IsNarrowFloat(hlo::PrimitiveType type);
/// The format of a narrow float type; aborts for any other type (a caller bug).
const FloatFormat& FloatFormatOf(hlo::PrimitiveType type);

/// Rounds `x` once to the nearest value of `type` (ties to even) and returns
/// its bit pattern in the low bits. NaN, infinity, overflow, zero and
/// underflow follow the format's Kind, as docs/values.md lists.
uint32_t NarrowFloatFromDouble(hlo::PrimitiveType type, double x);
/// Same as NarrowFloatFromDouble: every float is exactly a double, so this
/// also rounds once.
inline uint32_t NarrowFloatFromFloat(hlo::PrimitiveType type, float x) {
  return NarrowFloatFromDouble(type, static_cast<double>(x));
}
/// The exact value of a bit pattern. NaN payloads of IEEE-style formats move to
/// the top of the double's fraction; other NaNs become a quiet NaN with the
/// pattern's sign bit.
double NarrowFloatToDouble(hlo::PrimitiveType type, uint32_t bits);
/// The exact value as a float (every narrow value is a float); NaN payloads as
/// for NarrowFloatToDouble.
float NarrowFloatToFloat(hlo::PrimitiveType type, uint32_t bits);
/// True when the pattern is a NaN of its format.
bool NarrowFloatIsNan(hlo::PrimitiveType type, uint32_t bits);

/// bf16 from float, rounding to nearest even: the hot path of bf16 arithmetic,
/// bit-identical to NarrowFloatFromFloat(kBF16, x) (a test checks).
inline uint16_t Bf16FromFloat(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7FFF'FFFFu) > 0x7F80'0000u) {
    return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7FC0u);  // canonical quiet NaN
  }
  // Adding 0x7FFF plus the lowest kept bit carries into the kept bits exactly
  // when the dropped half is above one half, or equal to it with an odd result.
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
/// bf16 to float is a shift: bf16 is the top half of a float.
inline float Bf16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

/// A narrow float element held as its raw bits: the type of `Literal::data<T>()`
/// for these element types. It has no arithmetic on purpose; compute in float
/// or double and round once with FromFloat/FromDouble.
template <hlo::PrimitiveType kType>
class NarrowFloat {
 public:
  static constexpr hlo::PrimitiveType kPrimitiveType = kType;
  using Bits =
      std::conditional_t<(kType == hlo::PrimitiveType::kF16 || kType == hlo::PrimitiveType::kBF16),
                         uint16_t, uint8_t>;

  constexpr NarrowFloat() = default;
  static constexpr NarrowFloat FromBits(Bits bits) {
    NarrowFloat f;
    f.bits_ = bits;
    return f;
  }
  static NarrowFloat FromFloat(float x) {
    if constexpr (kType == hlo::PrimitiveType::kBF16) {
      return FromBits(Bf16FromFloat(x));
    } else {
      return FromBits(static_cast<Bits>(NarrowFloatFromFloat(kType, x)));
    }
  }
  static NarrowFloat FromDouble(double x) {
    return FromBits(static_cast<Bits>(NarrowFloatFromDouble(kType, x)));
  }

  constexpr Bits bits() const { return bits_; }
  float ToFloat() const {
    if constexpr (kType == hlo::PrimitiveType::kBF16) {
      return Bf16ToFloat(bits_);
    } else {
      return NarrowFloatToFloat(kType, bits_);
    }
  }
  double ToDouble() const { return static_cast<double>(ToFloat()); }
  bool IsNan() const { return NarrowFloatIsNan(kType, bits_); }

 private:
  Bits bits_ = 0;
};

using F16 = NarrowFloat<hlo::PrimitiveType::kF16>;
using BF16 = NarrowFloat<hlo::PrimitiveType::kBF16>;
using F8E5M2 = NarrowFloat<hlo::PrimitiveType::kF8E5M2>;
using F8E4M3 = NarrowFloat<hlo::PrimitiveType::kF8E4M3>;
using F8E4M3FN = NarrowFloat<hlo::PrimitiveType::kF8E4M3FN>;
using F8E4M3B11FNUZ = NarrowFloat<hlo::PrimitiveType::kF8E4M3B11FNUZ>;
using F8E5M2FNUZ = NarrowFloat<hlo::PrimitiveType::kF8E5M2FNUZ>;
using F8E4M3FNUZ = NarrowFloat<hlo::PrimitiveType::kF8E4M3FNUZ>;
using F8E3M4 = NarrowFloat<hlo::PrimitiveType::kF8E3M4>;
using F8E8M0FNU = NarrowFloat<hlo::PrimitiveType::kF8E8M0FNU>;
using F4E2M1FN = NarrowFloat<hlo::PrimitiveType::kF4E2M1FN>;

}  // namespace tpusim::value

#endif  // TPUSIM_SIM_VALUE_FLOAT_FORMATS_H_
