#include "sim/value/float_formats.h"

#include <algorithm>
#include <array>

#include "sim/value/check.h"

namespace tpusim::value {
namespace {

using hlo::PrimitiveType;
using Kind = FloatFormat::Kind;

// Bias, exponent and fraction widths as ml_dtypes defines them (float8.h,
// mxfloat.h); the fnuz formats use bias 2^(e-1) (8 and 16) except b11's 11.
constexpr std::array<FloatFormat, 11> kFormats = {{
    {PrimitiveType::kF16, Kind::kIeee, 16, 5, 10, 15},
    {PrimitiveType::kBF16, Kind::kIeee, 16, 8, 7, 127},
    {PrimitiveType::kF8E5M2, Kind::kIeee, 8, 5, 2, 15},
    {PrimitiveType::kF8E4M3, Kind::kIeee, 8, 4, 3, 7},
    {PrimitiveType::kF8E4M3FN, Kind::kFiniteNan, 8, 4, 3, 7},
    {PrimitiveType::kF8E4M3B11FNUZ, Kind::kFnuz, 8, 4, 3, 11},
    {PrimitiveType::kF8E5M2FNUZ, Kind::kFnuz, 8, 5, 2, 16},
    {PrimitiveType::kF8E4M3FNUZ, Kind::kFnuz, 8, 4, 3, 8},
    {PrimitiveType::kF8E3M4, Kind::kIeee, 8, 3, 4, 3},
    {PrimitiveType::kF8E8M0FNU, Kind::kExponentOnly, 8, 8, 0, 127},
    {PrimitiveType::kF4E2M1FN, Kind::kFinite, 4, 2, 1, 1},
}};

/// kFormats indexed by PrimitiveType (nullptr for the other types): every
/// conversion looks its format up, so this is a table rather than a search.
constexpr std::array<const FloatFormat*, hlo::kPrimitiveTypeCount> kFormatByType = [] {
  std::array<const FloatFormat*, hlo::kPrimitiveTypeCount> table{};
  for (const FloatFormat& f : kFormats) table[static_cast<int>(f.type)] = &f;
  return table;
}();

const FloatFormat* FindFormat(PrimitiveType type) { return kFormatByType[static_cast<int>(type)]; }

constexpr uint64_t kF64SignMask = uint64_t{1} << 63;
constexpr uint64_t kF64ExponentMask = uint64_t{0x7FF} << 52;
constexpr uint64_t kF64FractionMask = (uint64_t{1} << 52) - 1;

/// 2^e as a double, built from its bits (no ldexp). e is in [-1074, 1023].
double Pow2(int e) {
  if (e >= -1022) return std::bit_cast<double>(static_cast<uint64_t>(e + 1023) << 52);
  return std::bit_cast<double>(uint64_t{1} << (e + 1074));
}

/// Code whose exponent field is all ones and fraction zero (IEEE infinity).
uint32_t AllOnesExponentCode(const FloatFormat& f) {
  return ((1u << f.exponent_bits) - 1u) << f.mantissa_bits;
}

uint32_t NanBits(const FloatFormat& f, bool negative) {
  const uint32_t sign = negative ? f.sign_mask() : 0u;
  switch (f.kind) {
    case Kind::kIeee:  // the canonical quiet NaN: top fraction bit set
      return sign | AllOnesExponentCode(f) | (1u << (f.mantissa_bits - 1));
    case Kind::kFiniteNan:
      return sign | ((1u << (f.total_bits - 1)) - 1u);
    case Kind::kFnuz:
      return f.sign_mask();
    case Kind::kFinite:
      // No NaN exists; the MX spec leaves the result to the implementation.
      // ml_dtypes returns ±quiet_NaN() where quiet_NaN() is the -0 pattern and
      // negation flips the sign bit, so +NaN gives -0 and -NaN gives +0.
      return negative ? 0u : f.sign_mask();
    case Kind::kExponentOnly:
      return 0xFFu;
  }
  return 0;  // unreachable: every Kind returns above
}

/// The result of an infinite input or of a finite one too large for the format.
uint32_t OverflowBits(const FloatFormat& f, bool negative) {
  const uint32_t sign = negative ? f.sign_mask() : 0u;
  switch (f.kind) {
    case Kind::kIeee:
      return sign | AllOnesExponentCode(f);
    case Kind::kFinite:  // saturates: ml_dtypes' infinity() is the largest finite value
      return sign | f.max_finite_code();
    case Kind::kFiniteNan:
    case Kind::kFnuz:
    case Kind::kExponentOnly:
      return NanBits(f, negative);
  }
  return 0;  // unreachable: every Kind returns above
}

/// The result of a zero input (`exact`) or of a nonzero one that rounds to zero.
uint32_t ZeroBits(const FloatFormat& f, bool negative, bool exact) {
  switch (f.kind) {
    case Kind::kFnuz:  // no negative zero
      return 0u;
    case Kind::kExponentOnly:
      // No zero exists: ml_dtypes maps an exact zero to NaN and a tiny value
      // to the smallest code, 2^-127.
      return exact ? 0xFFu : 0x00u;
    case Kind::kIeee:
    case Kind::kFiniteNan:
    case Kind::kFinite:
      return negative ? f.sign_mask() : 0u;
  }
  return 0;  // unreachable: every Kind returns above
}

}  // namespace

uint32_t FloatFormat::max_finite_code() const {
  const uint32_t all_codes = (1u << (exponent_bits + mantissa_bits)) - 1u;
  switch (kind) {
    case Kind::kIeee:
      return AllOnesExponentCode(*this) - 1u;
    case Kind::kFiniteNan:
    case Kind::kExponentOnly:
      return all_codes - 1u;  // the all-ones code is NaN
    case Kind::kFnuz:
    case Kind::kFinite:
      return all_codes;
  }
  return 0;  // unreachable: every Kind returns above
}

bool IsNarrowFloat(PrimitiveType type) { return FindFormat(type) != nullptr; }

const FloatFormat& FloatFormatOf(PrimitiveType type) {
  const FloatFormat* f = FindFormat(type);
  TPUSIM_VALUE_CHECK(f != nullptr, "not a narrow float type");
  return *f;
}

uint32_t NarrowFloatFromDouble(PrimitiveType type, double x) {
  const FloatFormat& f = FloatFormatOf(type);
  const uint64_t bits = std::bit_cast<uint64_t>(x);
  const bool negative = (bits & kF64SignMask) != 0;
  const uint64_t magnitude = bits & ~kF64SignMask;
  if (magnitude > kF64ExponentMask) return NanBits(f, negative);
  if (magnitude == kF64ExponentMask) return OverflowBits(f, negative);
  if (magnitude == 0) return ZeroBits(f, negative, /*exact=*/true);
  if (negative && !f.is_signed()) return NanBits(f, negative);

  const int biased = static_cast<int>(magnitude >> 52);
  if (biased != 0 && biased - 1023 >= f.min_exponent()) {
    // The common case, a normal double whose result is normal too: the
    // general rounding below with its shift fixed at 52 - mantissa_bits.
    // Adding half a quantum less one, plus the kept lowest bit, carries into
    // the kept bits exactly when the dropped part is over half, or half with
    // an odd result; a carry out of the fraction bumps the exponent.
    const int shift = 52 - f.mantissa_bits;
    const uint64_t m = (magnitude & kF64FractionMask) | (uint64_t{1} << 52);
    const uint64_t n = (m + ((uint64_t{1} << (shift - 1)) - 1) + ((m >> shift) & 1)) >> shift;
    const int64_t code = (static_cast<int64_t>(biased - 1023 + f.bias - 1) << f.mantissa_bits) +
                         static_cast<int64_t>(n);
    if (code > static_cast<int64_t>(f.max_finite_code())) return OverflowBits(f, negative);
    return static_cast<uint32_t>(code) | (negative ? f.sign_mask() : 0u);
  }

  // |x| = m * 2^e exactly, with m < 2^53.
  const uint64_t m = biased == 0 ? (magnitude & kF64FractionMask)
                                 : (magnitude & kF64FractionMask) | (uint64_t{1} << 52);
  const int e = biased == 0 ? -1074 : biased - 1075;
  const int x_exponent = e + static_cast<int>(std::bit_width(m)) - 1;  // floor(log2 |x|)

  // Round |x| to a whole number n of quanta 2^q, where q is the weight of the
  // last fraction bit at x's exponent (subnormals: at the smallest exponent).
  const int scale_exponent = std::max(x_exponent, f.min_exponent());
  const int q = scale_exponent - f.mantissa_bits;
  uint64_t n;
  if (q <= e) {
    n = m << (e - q);  // exact; e - q <= mantissa_bits, so n < 2^(p + 1)
  } else if (q - e >= 64) {
    n = 0;  // |x| < 2^(53 + e) <= 2^(q - 11): far below half a quantum
  } else {
    const int shift = q - e;
    const uint64_t remainder = m & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    n = m >> shift;
    if (remainder > half || (remainder == half && (n & 1) != 0)) ++n;
  }
  if (n == 0) return ZeroBits(f, negative, /*exact=*/false);

  // n carries the implicit leading one at bit p (or is below it for a
  // subnormal), so adding it to (exponent field - 1) << p yields the code, and
  // a rounding carry to 2^(p+1) bumps the exponent field by itself.
  const int64_t code = (static_cast<int64_t>(scale_exponent + f.bias - 1) << f.mantissa_bits) +
                       static_cast<int64_t>(n);
  if (code > static_cast<int64_t>(f.max_finite_code())) return OverflowBits(f, negative);
  return static_cast<uint32_t>(code) | (negative ? f.sign_mask() : 0u);
}

bool NarrowFloatIsNan(PrimitiveType type, uint32_t bits) {
  const FloatFormat& f = FloatFormatOf(type);
  bits &= (1u << f.total_bits) - 1u;
  const uint32_t magnitude = bits & ~f.sign_mask();
  switch (f.kind) {
    case Kind::kIeee:
      return magnitude > AllOnesExponentCode(f);
    case Kind::kFiniteNan:
      return magnitude == (1u << (f.total_bits - 1)) - 1u;
    case Kind::kFnuz:
      return bits == f.sign_mask();
    case Kind::kFinite:
      return false;
    case Kind::kExponentOnly:
      return bits == 0xFFu;
  }
  return false;  // unreachable: every Kind returns above
}

double NarrowFloatToDouble(PrimitiveType type, uint32_t bits) {
  const FloatFormat& f = FloatFormatOf(type);
  bits &= (1u << f.total_bits) - 1u;
  const bool negative = (bits & f.sign_mask()) != 0;
  const uint32_t magnitude = bits & ~f.sign_mask();
  const uint32_t fraction = magnitude & ((1u << f.mantissa_bits) - 1u);
  const uint64_t sign = negative ? kF64SignMask : 0;
  if (NarrowFloatIsNan(type, bits)) {
    const uint64_t payload = f.kind == Kind::kIeee
                                 ? static_cast<uint64_t>(fraction) << (52 - f.mantissa_bits)
                                 : uint64_t{1} << 51;
    return std::bit_cast<double>(sign | kF64ExponentMask | payload);
  }
  if (f.has_infinity() && magnitude == AllOnesExponentCode(f)) {
    return std::bit_cast<double>(sign | kF64ExponentMask);
  }
  const int biased = static_cast<int>(magnitude >> f.mantissa_bits);
  double value;
  if (biased == 0 && f.kind != Kind::kExponentOnly) {
    value = static_cast<double>(fraction) * Pow2(f.min_exponent() - f.mantissa_bits);
  } else {
    const uint32_t significand = (1u << f.mantissa_bits) | fraction;
    value = static_cast<double>(significand) * Pow2(biased - f.bias - f.mantissa_bits);
  }
  return negative ? -value : value;
}

float NarrowFloatToFloat(PrimitiveType type, uint32_t bits) {
  const double d = NarrowFloatToDouble(type, bits);
  const uint64_t d_bits = std::bit_cast<uint64_t>(d);
  if ((d_bits & ~kF64SignMask) > kF64ExponentMask) {
    // Rebuild the NaN in float bits: a double-to-float cast would quiet a
    // signalling payload, and the decode must be exact.
    const uint32_t sign = static_cast<uint32_t>(d_bits >> 32) & 0x8000'0000u;
    const uint32_t payload = static_cast<uint32_t>((d_bits & kF64FractionMask) >> 29);
    return std::bit_cast<float>(sign | 0x7F80'0000u | payload);
  }
  return static_cast<float>(d);  // exact: every narrow value is a float
}

}  // namespace tpusim::value
