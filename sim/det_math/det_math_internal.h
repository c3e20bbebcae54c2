// Building blocks shared by the det_math*.cc files: IEEE bit access,
// double-double ("DD") arithmetic, and the extended-precision kernels.
//
// Only det_math*.cc include this header, and they are compiled with
// -ffp-contract=off: the error-free transformations below (TwoSum, TwoProd)
// are exact only when every operation is rounded separately, never fused.
#ifndef TPUSIM_SIM_DET_MATH_DET_MATH_INTERNAL_H_
#define TPUSIM_SIM_DET_MATH_DET_MATH_INTERNAL_H_

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "sim/det_math/det_math_tables.h"

#if defined(__FAST_MATH__)
#error "det_math must not be compiled with -ffast-math: it relies on exact IEEE arithmetic"
#endif
static_assert(FLT_EVAL_METHOD == 0, "det_math needs SSE2 arithmetic, not x87 excess precision");

namespace tpusim::detmath::internal {

// ---------------------------------------------------------------------------
// IEEE bit access.

inline constexpr uint64_t kSignBit = 0x8000000000000000ULL;
inline constexpr uint64_t kExpMask = 0x7ff0000000000000ULL;
inline constexpr uint64_t kMantMask = 0x000fffffffffffffULL;
inline constexpr uint64_t kQuietBit = 0x0008000000000000ULL;

inline uint64_t Bits(double x) { return std::bit_cast<uint64_t>(x); }
inline double FromBits(uint64_t b) { return std::bit_cast<double>(b); }

/// The canonical quiet NaN returned by invalid operations. Built from bits, so
/// constant folding and hardware agree (x86 would produce the negative one).
inline constexpr double kNaN = std::bit_cast<double>(0x7ff8000000000000ULL);
inline constexpr float kNaNf = std::bit_cast<float>(0x7fc00000U);
inline constexpr double kInf = std::bit_cast<double>(0x7ff0000000000000ULL);

inline bool IsNaN(double x) { return (Bits(x) & ~kSignBit) > kExpMask; }
inline bool IsNaN(float x) { return (std::bit_cast<uint32_t>(x) & 0x7fffffffU) > 0x7f800000U; }
inline bool IsInf(double x) { return (Bits(x) & ~kSignBit) == kExpMask; }
inline bool SignBit(double x) { return (Bits(x) & kSignBit) != 0; }
inline double Abs(double x) { return FromBits(Bits(x) & ~kSignBit); }
/// |mag| with the sign of sgn.
inline double CopySign(double mag, double sgn) {
  return FromBits((Bits(mag) & ~kSignBit) | (Bits(sgn) & kSignBit));
}
/// A NaN argument returned as a quiet NaN with its sign and payload.
inline double Quiet(double nan) { return FromBits(Bits(nan) | kQuietBit); }
inline float Quiet(float nan) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(nan) | 0x00400000U);
}

/// 2^k for -1022 <= k <= 1023, built from bits.
inline double Pow2(int k) { return FromBits(static_cast<uint64_t>(k + 1023) << 52); }

/// floor(log2 |x|) for finite nonzero x, subnormals included.
inline int Exponent(double x) {
  const uint64_t b = Bits(x) & ~kSignBit;
  const int biased = static_cast<int>(b >> 52);
  if (biased != 0) return biased - 1023;
  return -1011 - std::countl_zero(b);  // subnormal: 2^-1074 * b, b < 2^52
}

/// x * 2^k, exact whenever the result is normal (or overflows to inf): the
/// factor is applied in steps that each stay inside the normal range.
inline double Ldexp(double x, int k) {
  while (k > 1000) {
    x *= Pow2(1000);
    k -= 1000;
  }
  while (k < -1000) {
    x *= Pow2(-1000);
    k += 1000;
  }
  return x * Pow2(k);
}

/// c[0] + x (c[1] + x (c[2] + ...)) by Horner's rule in double precision, for
/// polynomial tails whose rounding errors are negligible at the result's scale.
template <int N>
double Horner(double x, const double (&c)[N]) {
  double r = c[N - 1];
  for (int i = N - 2; i >= 0; --i) r = r * x + c[i];
  return r;
}

// ---------------------------------------------------------------------------
// Double-double arithmetic (Dekker 1971, Knuth TAOCP 4.2.2). A DD value is
// hi + lo with |lo| <= ulp(hi)/2 after normalisation, about 106 bits. Inputs
// must stay below 2^996 in magnitude (Dekker's split multiplies by 2^27 + 1)
// and products far from the subnormal range; callers scale to ensure it.

struct DD {
  double hi;
  double lo;
};

inline DD ToDD(DDConst c) { return {c.hi, c.lo}; }
/// ln 2 as a (non-normalised) DD whose high part has 42 bits.
inline constexpr DD kLn2DD = {kLn2Hi, kLn2Lo};
inline DD Neg(DD a) { return {-a.hi, -a.lo}; }

/// a + b exactly as s + e (Knuth's branch-free TwoSum).
inline DD TwoSum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

/// a + b exactly, given |a| >= |b| or a == 0 (Dekker's FastTwoSum).
inline DD FastTwoSum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

/// Veltkamp's split of a into two 26-bit halves, hi + lo == a exactly.
inline DD Split(double a) {
  const double t = 134217729.0 * a;  // 2^27 + 1
  const double hi = t - (t - a);
  return {hi, a - hi};
}

/// a * b exactly as p + e (Dekker's TwoProduct, no FMA).
inline DD TwoProd(double a, double b) {
  const double p = a * b;
  const DD as = Split(a);
  const DD bs = Split(b);
  return {p, ((as.hi * bs.hi - p) + as.hi * bs.lo + as.lo * bs.hi) + as.lo * bs.lo};
}

inline DD Add(DD a, DD b) {
  DD s = TwoSum(a.hi, b.hi);
  const DD t = TwoSum(a.lo, b.lo);
  s = FastTwoSum(s.hi, s.lo + t.hi);
  return FastTwoSum(s.hi, s.lo + t.lo);
}

inline DD Add(DD a, double b) {
  const DD s = TwoSum(a.hi, b);
  return FastTwoSum(s.hi, s.lo + a.lo);
}

inline DD Sub(DD a, DD b) { return Add(a, Neg(b)); }

inline DD Mul(DD a, DD b) {
  const DD p = TwoProd(a.hi, b.hi);
  return FastTwoSum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

inline DD Mul(DD a, double b) {
  const DD p = TwoProd(a.hi, b);
  return FastTwoSum(p.hi, p.lo + a.lo * b);
}

/// a / b: a first quotient, then the exact remainder divided once more.
inline DD Div(DD a, DD b) {
  const double q1 = a.hi / b.hi;
  const DD r = Sub(a, Mul(b, q1));
  return FastTwoSum(q1, r.hi / b.hi);
}

/// sqrt(a) for a.hi > 0: the IEEE root, then one Newton correction whose
/// residual a - s^2 is computed exactly.
inline DD Sqrt(DD a) {
  const double s = std::sqrt(a.hi);  // IEEE correctly rounded
  const DD sq = TwoProd(s, s);
  const double residual = ((a.hi - sq.hi) - sq.lo) + a.lo;  // a.hi - sq.hi is exact (Sterbenz)
  return FastTwoSum(s, residual / (2.0 * s));
}

// ---------------------------------------------------------------------------
// Kernels shared between files.

/// exp(x) as 2^k * v, v in [0.98, 2.03], relative error below 2^-84.
/// Requires x.hi in [-746, 711].
struct ScaledDD {
  DD v;
  int k;
};
ScaledDD ExpDD(DD x);

/// expm1(x) for -40 <= x <= 709, relative error below 2^-70.
DD Expm1DD(double x);

/// ln(x) for finite x > 0 (subnormals included), relative error below 2^-72.
DD LogDD(double x);

/// ln(w.hi + w.lo) for a normalised DD w > 0: ln(w.hi) + t - t^2/2 with
/// t = w.lo/w.hi as a DD. Both t's own rounding error and the square (below
/// 2^-107) matter when the result is tiny (log1p of x near 2^-53); the cube is
/// below 2^-160. The quotient is taken with w.hi scaled to [1, 2), where the
/// DD division cannot overflow.
inline DD LogOfDD(DD w) {
  const int e = Exponent(w.hi);
  const DD t = Div({Ldexp(w.lo, -e), 0.0}, {Ldexp(w.hi, -e), 0.0});
  return Add(Add(LogDD(w.hi), t), -0.5 * t.hi * t.hi);
}

/// RN(2^k * (y.hi + y.lo)) for a normalised DD y != 0, with a single rounding
/// also when the result is subnormal; overflow gives inf.
double ScaleRound(DD y, int k);

}  // namespace tpusim::detmath::internal

#endif  // TPUSIM_SIM_DET_MATH_DET_MATH_INTERNAL_H_
