// Exponentials, logarithms and pow (see det_math.h and docs/numerics-math.md).
//
// exp uses Tang's table method: x = (64k + j) ln2/64 + r, reduced by a
// three-part Cody-Waite split of ln2/64, then exp(x) = 2^k 2^(j/64) (1 + p)
// with p = expm1(r) from its Taylor series. log uses a 257-entry table of
// reciprocals: ln x = k ln2 - ln(inv) + log1p(m inv - 1), where m inv - 1 is
// formed exactly. Both carry double-double precision to the last step, so the
// rounded results are within a hair of correct rounding, and pow = exp(y ln x)
// stays accurate even when |y ln x| is near 745.
#include <bit>
#include <cstdint>

#include "sim/det_math/det_math.h"
#include "sim/det_math/det_math_internal.h"

namespace tpusim::detmath {
namespace internal {
namespace {

/// exp(x) = 2^k 2^(j/64) (1 + p), p = expm1(r), |r| <= ln2/128 (+ rounding).
struct ExpParts {
  DD p;
  int k;
  int j;
};

ExpParts ExpReduce(DD x) {
  // n = RN(x 64/ln2): adding and removing 1.5 * 2^52 rounds to an integer.
  constexpr double kShifter = 0x1.8p52;
  const double nd = (x.hi * k64OverLn2 + kShifter) - kShifter;
  const int n = static_cast<int>(nd);
  // r = x - n ln2/64. nd * kLn2Over64[0..1] are exact (36-bit parts, |n| < 2^17)
  // and x.hi - nd * kLn2Over64[0] is exact by Sterbenz's lemma.
  DD r = TwoSum(x.hi - nd * kLn2Over64[0], -nd * kLn2Over64[1]);
  r = FastTwoSum(r.hi, r.lo + (x.lo - nd * kLn2Over64[2]));
  // expm1(r) = r + r^2/2 + r^3/6 + ... + r^9/9! (Taylor); for |r| < 2^-7.4 the
  // truncation is below 2^-78 |r|. The r^3 tail is 2^-25 of r, so plain double
  // arithmetic is accurate enough for it.
  static constexpr double kTail[] = {1.0 / 6,    1.0 / 24,    1.0 / 120,   1.0 / 720,
                                     1.0 / 5040, 1.0 / 40320, 1.0 / 362880};  // 1/3! .. 1/9!
  const double h = r.hi;
  const DD sq = TwoProd(h, h);
  const double cubic = h * sq.hi * Horner(h, kTail);
  DD p = TwoSum(h, 0.5 * sq.hi);
  p = FastTwoSum(p.hi, p.lo + (r.lo + (0.5 * sq.lo + h * r.lo) + cubic));
  return {p, n >> 6, n & 63};  // arithmetic shift: floor division by 64
}

/// 2^(j/64) (1 + p) as a DD in [0.98, 2.03].
DD ExpMantissa(const ExpParts& e) {
  const DD t = ToDD(kExp2Table[e.j]);
  const DD tp = TwoProd(t.hi, e.p.hi);
  const DD y = TwoSum(t.hi, tp.hi);
  return FastTwoSum(y.hi, y.lo + (t.lo + (tp.lo + t.hi * e.p.lo + t.lo * e.p.hi)));
}

/// 0: not an integer; 1: an odd integer; 2: an even integer (finite y).
int IntegerKind(double y) {
  const double a = Abs(y);
  if (a >= 0x1p53) return 2;  // every double this large is an even integer
  if (a < 1.0) return a == 0.0 ? 2 : 0;
  const int e = Exponent(a);  // 0..52: the units bit is significand bit 52 - e
  const uint64_t b = Bits(a);
  if ((b & (kMantMask >> e)) != 0) return 0;
  return ((b >> (52 - e)) & 1) != 0 ? 1 : 2;  // e == 0 reads the exponent's low bit: a == 1
}

/// x^n exactly rounded for finite x > 0 and an integer n, when x = m 2^e
/// (m odd) has m^n < 2^64 for n > 0, or m == 1: the exact power m^n 2^(en)
/// rounded once by ScaleRound. These cover every integer power whose exact
/// value is a rounding tie (an odd m^n of at most 54 bits), which no
/// approximation could settle. Returns false otherwise.
bool ExactIntegerPow(double x, double n, double* result) {
  const int e_x = Exponent(x);
  const uint64_t sig =
      Bits(x) < (uint64_t{1} << 52) ? Bits(x) : (Bits(x) & kMantMask) | (uint64_t{1} << 52);
  const int tz = std::countr_zero(sig);
  const uint64_t m = sig >> tz;
  const double e = e_x - (63 - std::countl_zero(sig)) + tz;  // x = m 2^e
  uint64_t power = 1;
  if (m != 1) {
    if (n < 0.0 || n > 64.0) return false;
    for (int i = 0; i < static_cast<int>(n); ++i) {
      if (power > UINT64_MAX / m) return false;
      power *= m;
    }
  }
  const double k = e * n;  // exact whenever |k| <= 2200; beyond, only its sign matters
  if (k > 2100.0) {
    *result = kInf;
  } else if (k < -2200.0) {
    *result = 0.0;
  } else {
    // power as a normalised DD: its top 53 bits and the rest, both exact.
    const DD p = FastTwoSum(static_cast<double>(power & ~uint64_t{0x7ff}),
                            static_cast<double>(power & 0x7ff));
    *result = ScaleRound(p, static_cast<int>(k));
  }
  return true;
}

/// x^y for finite x > 0 and finite y != 0.
double PowPositive(double x, double y) {
  const DD l = LogDD(x);
  const double p = y * l.hi;
  // exp overflows above 709.79 and underflows below -745.14; outside [-746, 710]
  // the outcome is certain, and inside it y is small enough for TwoProd.
  if (p > 710.0) return kInf;
  if (p < -746.0) return 0.0;
  const DD yl = TwoProd(y, l.hi);
  const ScaledDD e = ExpDD(FastTwoSum(yl.hi, yl.lo + y * l.lo));
  return ScaleRound(e.v, e.k);
}

}  // namespace

ScaledDD ExpDD(DD x) {
  const ExpParts e = ExpReduce(x);
  return {ExpMantissa(e), e.k};
}

DD Expm1DD(double x) {
  const ExpParts e = ExpReduce({x, 0.0});
  // n == 0: expm1(x) is the series itself, with no cancellation.
  if (e.k == 0 && e.j == 0) return e.p;
  // Otherwise |x| > ln2/128, so |expm1(x)| > 0.0054 and subtracting 1 from
  // 2^k y (exact scaling, k <= 1023) costs at most 8 of the DD's 106 bits.
  const DD y = ExpMantissa(e);
  const double s = Pow2(e.k);
  const DD z = TwoSum(y.hi * s, -1.0);
  return FastTwoSum(z.hi, z.lo + y.lo * s);
}

double ScaleRound(DD y, int k) {
  if (SignBit(y.hi)) return -ScaleRound(Neg(y), k);
  const int e = Exponent(y.hi) + k;
  if (e >= -1022) return Ldexp(y.hi, k);  // a normal result: y.hi = RN(y), scaling is exact
  if (e < -1076) return 0.0;              // below 2^-1076: rounds to zero
  // A subnormal result: count in units of 2^-1074 and round to an integer once.
  const double u = Ldexp(y.hi, k + 1074);  // exact, u < 2^52
  const double lo = Ldexp(y.lo, k + 1074);
  constexpr double kShifter = 0x1p52;
  double n = (u + kShifter) - kShifter;  // RN(u), ties to even
  const double frac = u - n;             // exact
  // A tie in u alone is broken by the low part.
  if (frac == 0.5 && lo > 0.0) n += 1.0;
  if (frac == -0.5 && lo < 0.0) n -= 1.0;
  return FromBits(static_cast<uint64_t>(n));  // the bits of n * 2^-1074 are n itself
}

DD LogDD(double x) {
  int k = 0;
  if (Bits(x) < (uint64_t{1} << 52)) {  // subnormal: scale into the normal range
    x *= 0x1p54;
    k = -54;
  }
  const uint64_t b = Bits(x);
  k += static_cast<int>(b >> 52) - 1023;
  double m = FromBits((b & kMantMask) | 0x3ff0000000000000ULL);  // [1, 2)
  const int j =
      static_cast<int>(((b & kMantMask) + (uint64_t{1} << 43)) >> 44);  // round(256 (m - 1))
  if (j >= 128) {  // m in [1.498, 2): use m/2 in [0.749, 1) so ln x never cancels against k ln2
    m *= 0.5;
    ++k;
  }
  const LogEntry& t = kLogTable[j];
  // u = m inv - 1 exactly: the product's high part lies within 2^-8 of 1, so
  // subtracting 1 is exact (Sterbenz) and the product's error term is kept.
  const DD prod = TwoProd(m, t.inv);
  const DD u = TwoSum(prod.hi - 1.0, prod.lo);
  // log1p(u) = u - u^2/2 + u^3/3 - ... - u^10/10 (Taylor); |u| <= 2^-9 + 2^-52
  // makes the truncation < 2^-90 |u|, and the u^3 tail (2^-19.6 of u) needs only
  // double precision.
  static constexpr double kTail[] = {1.0 / 3, -1.0 / 4, 1.0 / 5, -1.0 / 6,
                                     1.0 / 7, -1.0 / 8, 1.0 / 9, -1.0 / 10};
  const double v = u.hi;
  const DD sq = TwoProd(v, v);
  const double cubic = v * sq.hi * Horner(v, kTail);
  DD l = TwoSum(v, -0.5 * sq.hi);
  l = FastTwoSum(l.hi, l.lo + ((u.lo - (0.5 * sq.lo + v * u.lo)) + cubic));
  const double kd = k;
  const DD k_ln2 = {kd * kLn2Hi, kd * kLn2Lo};  // kd * kLn2Hi is exact (|k| < 2^11)
  return Add(Add(k_ln2, DD{t.neg_log_hi, t.neg_log_lo}), l);
}

}  // namespace internal

using namespace internal;

double Exp(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (x > 710.0) return kInf;        // e^710 > DBL_MAX; also +inf
  if (x < -746.0) return 0.0;        // e^-746 < 2^-1076; also -inf
  if (Abs(x) < 0x1p-60) return 1.0;  // 1 + x rounds to 1
  const ScaledDD e = ExpDD({x, 0.0});
  return ScaleRound(e.v, e.k);
}

double Expm1(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (Abs(x) < 0x1p-54) return x;  // x + x^2/2: the square is below half an ulp; keeps -0
  if (x < -40.0) return -1.0;      // e^x < 2^-57 is below half an ulp of -1; also -inf
  // e^x > 2^1022 here, and subtracting 1 (2^-1022 of it) could only change the
  // rounding if e^x were that close to a rounding boundary; the closest any
  // exp result comes is about 2^-113 (Lefevre and Muller's worst cases).
  if (x > 709.0) return Exp(x);
  return Expm1DD(x).hi;
}

double Log(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (x == 0.0) return -kInf;  // either sign of zero
  if (SignBit(x)) return kNaN;
  if (IsInf(x)) return x;
  return LogDD(x).hi;
}

double Log1p(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (x == -1.0) return -kInf;
  if (x < -1.0) return kNaN;  // also -inf
  if (IsInf(x)) return x;
  if (Abs(x) < 0x1p-54) return x;     // x - x^2/2: the square is below half an ulp; keeps -0
  return LogOfDD(TwoSum(1.0, x)).hi;  // 1 + x exactly as a DD
}

double Pow(double x, double y) {
  // C99 Annex F.9.4.4, in the standard's order.
  if (y == 0.0) return 1.0;  // even for a NaN x
  if (x == 1.0) return 1.0;  // even for a NaN y
  if (IsNaN(x)) return Quiet(x);
  if (IsNaN(y)) return Quiet(y);
  const int kind = IsInf(y) ? 2 : IntegerKind(y);
  const bool odd = kind == 1;
  if (x == 0.0) {
    if (y < 0.0) return odd ? CopySign(kInf, x) : kInf;  // pole
    return odd ? x : 0.0;
  }
  if (IsInf(y)) {
    const double ax = Abs(x);
    if (ax == 1.0) return 1.0;  // pow(-1, ±inf)
    return (ax < 1.0) == (y < 0.0) ? kInf : 0.0;
  }
  if (IsInf(x)) {
    if (!SignBit(x)) return y < 0.0 ? 0.0 : kInf;
    if (y < 0.0) return odd ? -0.0 : 0.0;
    return odd ? -kInf : kInf;
  }
  if (SignBit(x) && kind == 0) return kNaN;  // a negative base needs an integer exponent
  double mag;
  if (kind == 0 || !ExactIntegerPow(Abs(x), y, &mag)) mag = PowPositive(Abs(x), y);
  return SignBit(x) && odd ? -mag : mag;
}

}  // namespace tpusim::detmath
