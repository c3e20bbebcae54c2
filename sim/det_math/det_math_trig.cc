// Trigonometric functions and their inverses (see det_math.h and
// docs/numerics-math.md).
//
// sin, cos and tan reduce |x| > pi/4 by Payne-Hanek: the 53-bit significand
// times a 192-bit window of 2/pi, in exact integer arithmetic, gives x mod pi/2
// to 2^-137 absolute. The closest a double comes to a multiple of pi/2 is about
// 2^-61 (6381956970095103 * 2^797; Muller, "Elementary Functions", ch. 11), so
// the reduced argument keeps at least 75 correct bits for every input. Kernels
// on [-pi/4, pi/4] are Taylor series in double-double form.
//
// atan reduces to [0, 1] by reciprocal, then to |t| <= 1/32 around the nearest
// c = j/16: atan v = atan c + atan((v - c)/(1 + v c)). asin, acos and atan2 feed
// the same kernel a DD ratio, with 1 - x^2 formed exactly.
#include <algorithm>
#include <bit>
#include <cstdint>

#include "sim/det_math/det_math.h"
#include "sim/det_math/det_math_internal.h"

namespace tpusim::detmath {
namespace {

using namespace internal;
__extension__ typedef unsigned __int128 u128;  // GCC and Clang on x86-64

// ---------------------------------------------------------------------------
// Argument reduction.

/// x = quadrant pi/2 + r (mod 2 pi) with |r| <= pi/4.
struct Reduced {
  int quadrant;
  DD r;
};

/// 64 bits of 2/pi starting at bit `pos` (bit 1 is the first after the point).
uint64_t TwoOverPiWord(int pos) {
  const int offset = pos - 1;
  const int word = offset / 64;
  const int shift = offset % 64;
  if (shift == 0) return kTwoOverPiBits[word];
  return (kTwoOverPiBits[word] << shift) | (kTwoOverPiBits[word + 1] >> (64 - shift));
}

/// Shifts the 256-bit number p (p[0] most significant) left by 0 <= sh < 128.
void ShiftLeft256(uint64_t p[4], int sh) {
  if (sh >= 64) {
    p[0] = p[1];
    p[1] = p[2];
    p[2] = p[3];
    p[3] = 0;
    sh -= 64;
  }
  if (sh == 0) return;
  for (int i = 0; i < 3; ++i) p[i] = (p[i] << sh) | (p[i + 1] >> (64 - sh));
  p[3] <<= sh;
}

int LeadingZeros256(const uint64_t p[4]) {
  for (int i = 0; i < 4; ++i) {
    if (p[i] != 0) return 64 * i + std::countl_zero(p[i]);
  }
  return 256;
}

/// Payne-Hanek reduction of a finite a >= pi/4.
Reduced ReducePiOver2(double a) {
  const uint64_t b = Bits(a);
  const uint64_t m = (b & kMantMask) | (uint64_t{1} << 52);
  const int e = static_cast<int>(b >> 52) - 1075;  // a = m 2^e
  // Bits of 2/pi before s contribute multiples of 4 to a * 2/pi (m 2^(e - i) with
  // i <= e - 2), which leave the quadrant unchanged, so the window starts at s.
  const int s = std::max(1, e - 1);
  const uint64_t w0 = TwoOverPiWord(s);
  const uint64_t w1 = TwoOverPiWord(s + 64);
  const uint64_t w2 = TwoOverPiWord(s + 128);
  // P = m * (w0:w1:w2), exactly, in four 64-bit limbs.
  uint64_t p[4];
  u128 acc = static_cast<u128>(m) * w2;
  p[3] = static_cast<uint64_t>(acc);
  acc = (acc >> 64) + static_cast<u128>(m) * w1;
  p[2] = static_cast<uint64_t>(acc);
  acc = (acc >> 64) + static_cast<u128>(m) * w0;
  p[1] = static_cast<uint64_t>(acc);
  p[0] = static_cast<uint64_t>(acc >> 64);
  // a * 2/pi = P * 2^-frac_bits; the two bits above the point are the quadrant.
  const int frac_bits = s + 191 - e;  // 190..245
  const auto bit = [&p](int i) { return static_cast<int>((p[3 - i / 64] >> (i % 64)) & 1); };
  int quadrant = bit(frac_bits) | (bit(frac_bits + 1) << 1);
  ShiftLeft256(p, 256 - frac_bits);  // p is now the fraction f in [0, 1), point at the top
  // Fold f in [1/2, 1) to f - 1 in [-1/2, 0) and move to the next quadrant.
  const bool negative = (p[0] >> 63) != 0;
  if (negative) {
    ++quadrant;
    uint64_t carry = 1;  // two's complement negation: ~p + 1
    for (int i = 3; i >= 0; --i) {
      p[i] = ~p[i] + carry;
      carry = carry != 0 && p[i] == 0 ? 1 : 0;
    }
  }
  // |f| as a DD from its leading 106 bits; |f| >= 2^-62 for every double, so
  // the shift below stays under 128.
  const int lz = LeadingZeros256(p);
  ShiftLeft256(p, lz);
  const double f_hi = static_cast<double>(p[0] >> 11) * Pow2(-53 - lz);
  const double f_lo = static_cast<double>(((p[0] & 0x7ff) << 42) | (p[1] >> 22)) * Pow2(-106 - lz);
  const DD r = Mul(FastTwoSum(f_hi, f_lo), ToDD(kPiOver2DD));
  return {quadrant & 3, negative ? Neg(r) : r};
}

// ---------------------------------------------------------------------------
// Kernels on |r.hi| <= pi/4 (r.lo is a tail below ulp(r.hi)).

/// sin(a + b) = a - a^3/3! + a^5/5! - ... + a^21/21! + b cos a (Taylor;
/// truncation below 2^-72 |a|). a^3/6 and a^5/120 are formed in DD; the a^7
/// tail (below 2^-14.6 |a|) needs only double precision, and so does b cos a,
/// b being below 2^-53 |a| (cos a to a^4 leaves 2^-66).
DD SinDD(DD r) {
  const double a = r.hi;
  const DD z = TwoProd(a, a);
  const DD a3_main = TwoProd(a, z.hi);
  const DD a3 = FastTwoSum(a3_main.hi, a3_main.lo + a * z.lo);
  const DD a5 = Mul(a3, z);
  const DD cubic = Mul(a3, ToDD(kSixthDD));
  const DD quintic = Mul(a5, ToDD(kInv120DD));
  static constexpr double kTail[] = {-1.0 / 5040,
                                     1.0 / 362880,
                                     -1.0 / 39916800,
                                     1.0 / 6227020800.0,
                                     -1.0 / 1307674368000.0,
                                     1.0 / 355687428096000.0,
                                     -1.0 / 121645100408832000.0,
                                     1.0 / 51090942171709440000.0};  // -1/7! .. 1/21!
  const double w = z.hi;
  const double rest = a5.hi * w * Horner(w, kTail);
  const double b_cos_a = r.lo * (1.0 - 0.5 * w * (1.0 - w / 12));
  const DD s = Add(TwoSum(a, -cubic.hi), quintic);
  return FastTwoSum(s.hi, s.lo + ((rest - cubic.lo) + b_cos_a));
}

/// cos(a + b) = 1 - a^2/2 + a^4/4! - ... + a^20/20! - b sin a (Taylor;
/// truncation below 2^-77). 1 - a^2/2 is formed exactly and a^4/24 = (a^2/2)^2/6
/// in DD; the a^6 tail (at most 2^-11.6) and b sin a (sin a to a^5 leaves
/// 2^-67) need only double precision.
DD CosDD(DD r) {
  const double a = r.hi;
  const DD z = TwoProd(a, a);
  const double hz = 0.5 * z.hi;
  const DD w = FastTwoSum(1.0, -hz);
  const DD hz2 = TwoProd(hz, hz);  // (hz + z.lo/2)^2 = hz^2 + hz z.lo + (below 2^-106)
  const DD quartic = Mul(FastTwoSum(hz2.hi, hz2.lo + hz * z.lo), ToDD(kSixthDD));
  static constexpr double kTail[] = {-1.0 / 720,
                                     1.0 / 40320,
                                     -1.0 / 3628800,
                                     1.0 / 479001600,
                                     -1.0 / 87178291200.0,
                                     1.0 / 20922789888000.0,
                                     -1.0 / 6402373705728000.0,
                                     1.0 / 2432902008176640000.0};  // -1/6! .. 1/20!
  const double u = z.hi;
  const double rest = u * u * u * Horner(u, kTail);
  const DD s = TwoSum(w.hi, quartic.hi);
  const double b_sin_a = r.lo * a * (1.0 - u / 6 * (1.0 - u / 20));
  return FastTwoSum(s.hi, s.lo + ((w.lo + quartic.lo) + ((rest - 0.5 * z.lo) - b_sin_a)));
}

/// atan(v) for a DD v in [0, 1] (slightly above 1 is fine).
DD AtanUnit(DD v) {
  const int j = static_cast<int>(v.hi * 16.0 + 0.5);
  DD t = v;
  if (j != 0) {
    const double c = j * 0.0625;
    // v.hi - c is exact (Sterbenz: v.hi lies within 1/32 of c >= 1/16).
    t = Div(TwoSum(v.hi - c, v.lo), Add(Mul(v, c), 1.0));
  }
  // atan t = t - t^3/3 + ... + t^13/13 (Taylor); |t| <= 1/32 + 2^-50 makes the
  // truncation < 2^-73 |t|.
  static constexpr double kTail[] = {-1.0 / 3, 1.0 / 5, -1.0 / 7, 1.0 / 9, -1.0 / 11, 1.0 / 13};
  const double z = t.hi * t.hi;
  const double tail = t.hi * z * Horner(z, kTail);
  return Add(ToDD(kAtanTable[j]), FastTwoSum(t.hi, t.lo + tail));
}

/// atan(n / d) in [0, pi/2] for DDs n, d >= 0, not both zero, of moderate size.
DD AtanRatio(DD n, DD d) {
  if (n.hi <= d.hi) return AtanUnit(Div(n, d));
  return Sub(ToDD(kPiOver2DD), AtanUnit(Div(d, n)));
}

/// 1 - a^2 as an exact DD: a^2 = sq.hi + sq.lo exactly, and TwoSum is exact.
DD OneMinusSquare(double a) {
  const DD sq = TwoProd(a, a);
  return Add(TwoSum(1.0, -sq.hi), -sq.lo);
}

}  // namespace

double Sin(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (IsInf(x)) return kNaN;
  const double a = Abs(x);
  if (a < 0x1p-26) return x;  // x (1 - x^2/6): the correction is below half an ulp; keeps ±0
  if (a <= kPiOver4) return SinDD({x, 0.0}).hi;
  const Reduced red = ReducePiOver2(a);
  const DD v = (red.quadrant & 1) != 0 ? CosDD(red.r) : SinDD(red.r);
  const double mag = (red.quadrant & 2) != 0 ? -v.hi : v.hi;
  return SignBit(x) ? -mag : mag;
}

double Cos(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (IsInf(x)) return kNaN;
  const double a = Abs(x);
  if (a < 0x1p-27) return 1.0;  // 1 - x^2/2 rounds to 1
  if (a <= kPiOver4) return CosDD({a, 0.0}).hi;
  const Reduced red = ReducePiOver2(a);
  switch (red.quadrant) {
    case 0:
      return CosDD(red.r).hi;
    case 1:
      return -SinDD(red.r).hi;
    case 2:
      return -CosDD(red.r).hi;
    default:
      return SinDD(red.r).hi;
  }
}

double Tan(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (IsInf(x)) return kNaN;
  const double a = Abs(x);
  if (a < 0x1p-27) return x;  // x (1 + x^2/3): the correction is below half an ulp
  Reduced red = {0, {a, 0.0}};
  if (a > kPiOver4) red = ReducePiOver2(a);
  const DD s = SinDD(red.r);
  const DD c = CosDD(red.r);
  // tan(r + pi/2) = -cot r.
  const double t = (red.quadrant & 1) != 0 ? -Div(c, s).hi : Div(s, c).hi;
  return SignBit(x) ? -t : t;
}

double Atan(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a < 0x1p-27) return x;  // x (1 - x^2/3): the correction is below half an ulp
  double r;
  if (a > 0x1p60) {
    r = kPiOver2DD.hi + (kPiOver2DD.lo - 1.0 / a);  // pi/2 - 1/a + 1/(3a^3) - ...; also inf
  } else {
    r = AtanRatio({a, 0.0}, {1.0, 0.0}).hi;
  }
  return CopySign(r, x);
}

double Atan2(double y, double x) {
  if (IsNaN(y)) return Quiet(y);
  if (IsNaN(x)) return Quiet(x);
  const double ay = Abs(y);
  const double ax = Abs(x);
  const bool x_neg = SignBit(x);
  double r;  // the angle for |y|; y's sign is applied last (C99 F.9.1.4)
  if (ay == 0.0) {
    r = x_neg ? kPiDD.hi : 0.0;  // (±0, x < 0 or -0) -> ±pi; (±0, x > 0 or +0) -> ±0
  } else if (IsInf(ay)) {
    r = IsInf(ax) ? (x_neg ? kThreePiOver4 : kPiOver4) : kPiOver2DD.hi;
  } else if (IsInf(ax)) {
    r = x_neg ? kPiDD.hi : 0.0;
  } else if (ax == 0.0) {
    r = kPiOver2DD.hi;
  } else {
    const int ey = Exponent(ay);
    const int ex = Exponent(ax);
    DD base;
    if (ey - ex > 60) {
      base = FastTwoSum(kPiOver2DD.hi, kPiOver2DD.lo - ax / ay);  // pi/2 - x/y + ...
    } else if (ex - ey > 60) {
      // atan v = v - v^3/3 with v < 2^-60. The quotient as a DD on a scale that
      // keeps it normal, marked as slightly low when exact (atan v < v), then
      // one rounding by ScaleRound: right even for subnormal results.
      DD q = Div({Ldexp(ay, -ey), 0.0}, {Ldexp(ax, -ex), 0.0});
      if (q.lo == 0.0) q.lo = -q.hi * 0x1p-200;
      if (!x_neg) return CopySign(ScaleRound(q, ey - ex), y);
      base = {ay / ax, 0.0};  // pi - v: v only needs to be close
    } else {
      // Scale the larger to [1, 2): exact, and keeps DD arithmetic in range.
      const int shift = -std::max(ey, ex);
      base = AtanRatio({Ldexp(ay, shift), 0.0}, {Ldexp(ax, shift), 0.0});
    }
    r = (x_neg ? Sub(ToDD(kPiDD), base) : base).hi;
  }
  return CopySign(r, y);
}

double Asin(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a > 1.0) return kNaN;
  if (a < 0x1p-26) return x;  // x (1 + x^2/6): the correction is below half an ulp
  // asin a = atan(a / sqrt(1 - a^2)).
  const double r = a == 1.0 ? kPiOver2DD.hi : AtanRatio({a, 0.0}, Sqrt(OneMinusSquare(a))).hi;
  return CopySign(r, x);
}

double Acos(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a > 1.0) return kNaN;
  if (x == 1.0) return 0.0;
  if (x == -1.0) return kPiDD.hi;
  if (a < 0x1p-57) return kPiOver2DD.hi;  // pi/2 - x: RN(pi/2) is 2^-54 from a boundary
  // acos a = atan(sqrt(1 - a^2) / a); acos(-a) = pi - acos a.
  const DD base = AtanRatio(Sqrt(OneMinusSquare(a)), {a, 0.0});
  return (SignBit(x) ? Sub(ToDD(kPiDD), base) : base).hi;
}

}  // namespace tpusim::detmath
