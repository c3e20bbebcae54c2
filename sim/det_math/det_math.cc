// erf, the roots, rounding to integers, and the f32 entry points of the
// deterministic math library (see det_math.h and docs/numerics-math.md).
#include "sim/det_math/det_math.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "sim/det_math/det_math_internal.h"

namespace tpusim::detmath {
namespace {

using namespace internal;
__extension__ typedef unsigned __int128 u128;  // GCC and Clang on x86-64

// ---------------------------------------------------------------------------
// erf.

/// erf(a) for 1/16 <= a < 5.9375 from the Taylor expansion about the nearest
/// c = j/8 (generated table), |h| = |a - c| <= 1/16. The terms to h^2 are
/// formed in DD (the h^2 term reaches 2^-8 of the result); the h^3 tail (at
/// most 2^-10) needs only double precision.
double ErfTable(double a) {
  const int j = static_cast<int>(a * 8.0 + 0.5);  // 1..47
  const ErfEntry& t = kErfTable[j - 1];
  const double h = a - j * 0.125;  // exact (Sterbenz: a lies within 1/16 of c >= 1/8)
  const DD h2 = TwoProd(h, h);
  const DD lin = Mul(ToDD(t.a1), h);
  const DD quad = Mul(ToDD(t.a2), h2);
  const double tail = h2.hi * h * Horner(h, t.a);
  const DD s = Add(Add(ToDD(t.value), lin), quad);
  return FastTwoSum(s.hi, s.lo + tail).hi;
}

/// erf(a) for 0 < a < 1/16: 2/sqrt(pi) a (1 - a^2/3 + a^4/10 - ... - a^14/75600)
/// (Maclaurin; truncation below 2^-82).
double ErfSmall(double a) {
  if (a < 0x1p-900) {
    // erf a = 2a/sqrt(pi) to 2^-1800. Scaling up keeps the DD product exact
    // and ScaleRound rounds once, also when the result is subnormal.
    return ScaleRound(Mul(ToDD(kTwoOverSqrtPiDD), a * 0x1p1000), -1000);
  }
  static constexpr double kSeries[] = {-1.0 / 3,    1.0 / 10,   -1.0 / 42,   1.0 / 216,
                                       -1.0 / 1320, 1.0 / 9360, -1.0 / 75600};
  const double z = a * a;
  const double s = z * Horner(z, kSeries);
  const DD ca = Mul(ToDD(kTwoOverSqrtPiDD), a);
  return FastTwoSum(ca.hi, ca.lo + ca.hi * s).hi;
}

// ---------------------------------------------------------------------------
// Correctly rounded 1/sqrt.

/// A positive finite float or double as sig 2^exp (sig < 2^53).
struct Decomposed {
  uint64_t sig;
  int exp;
};

Decomposed Decompose(double x) {
  const uint64_t b = Bits(x);
  const int biased = static_cast<int>(b >> 52);
  if (biased == 0) return {b, -1074};
  return {(b & kMantMask) | (uint64_t{1} << 52), biased - 1075};
}

Decomposed Decompose(float x) {
  const uint32_t b = std::bit_cast<uint32_t>(x);
  const int biased = static_cast<int>(b >> 23);
  if (biased == 0) return {b, -149};
  return {(b & 0x7fffffU) | (uint32_t{1} << 23), biased - 150};
}

int BitLength(u128 v) {
  const uint64_t hi = static_cast<uint64_t>(v >> 64);
  if (hi != 0) return 128 - std::countl_zero(hi);
  return 64 - std::countl_zero(static_cast<uint64_t>(v));
}

/// Whether 1/sqrt(x) exceeds the midpoint between y and its successor, decided
/// exactly: with x = X 2^ex and the midpoint M 2^em (M = 2 sig(y) + 1, odd),
/// 1/sqrt(x) > mid <=> X M^2 < 2^-(ex + 2 em). X M^2 (up to 162 bits) is never
/// a power of two, as M is odd and above one, so comparing bit lengths decides.
template <typename T>
bool AboveMidpoint(T x, T y) {
  const Decomposed dx = Decompose(x);
  const Decomposed dy = Decompose(y);
  const uint64_t mid = 2 * dy.sig + 1;
  const u128 mid2 = static_cast<u128>(mid) * mid;
  const u128 low = static_cast<u128>(dx.sig) * static_cast<uint64_t>(mid2);
  const u128 high = static_cast<u128>(dx.sig) * static_cast<uint64_t>(mid2 >> 64) + (low >> 64);
  const int bits = high != 0 ? 64 + BitLength(high) : BitLength(static_cast<uint64_t>(low));
  return bits <= -(dx.exp + 2 * (dy.exp - 1));
}

template <typename T>
T NextUp(T y) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(y) + 1));
}

template <typename T>
T NextDown(T y) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  return std::bit_cast<T>(static_cast<U>(std::bit_cast<U>(y) - 1));
}

/// 1/sqrt(x) for finite x > 0: a first guess within two ulps (two roundings),
/// then steps until the exact midpoint tests bracket the result. The result is
/// always a normal number, far from the ends of the range.
template <typename T>
T RsqrtPositive(T x) {
  T y = static_cast<T>(1.0 / std::sqrt(static_cast<double>(x)));
  while (AboveMidpoint(x, y)) y = NextUp(y);
  while (!AboveMidpoint(x, NextDown(y))) y = NextDown(y);
  return y;
}

// ---------------------------------------------------------------------------
// Rounding to integral values, by bit manipulation on the IEEE encoding.

enum class RoundMode { kNearestEven, kNearestAfz, kFloor, kCeil };

template <typename T, RoundMode kMode>
T RoundIntegral(T x) {
  using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  constexpr int kMantBits = sizeof(T) == 8 ? 52 : 23;
  constexpr int kBias = sizeof(T) == 8 ? 1023 : 127;
  constexpr U kSign = U{1} << (sizeof(T) * 8 - 1);
  const U b = std::bit_cast<U>(x);
  const U sign = b & kSign;
  const U mag = b & ~kSign;
  const int e = static_cast<int>(mag >> kMantBits) - kBias;
  // Already integral, or inf or NaN.
  if (e >= kMantBits) return IsNaN(x) ? Quiet(x) : x;
  if (e < 0) {  // |x| < 1: the result is ±0 or ±1
    bool to_one = false;
    switch (kMode) {
      case RoundMode::kNearestEven:
        to_one = e == -1 && mag != (static_cast<U>(kBias - 1) << kMantBits);  // (0.5, 1); 0.5 -> 0
        break;
      case RoundMode::kNearestAfz:
        to_one = e == -1;  // [0.5, 1)
        break;
      case RoundMode::kFloor:
        to_one = sign != 0 && mag != 0;
        break;
      case RoundMode::kCeil:
        to_one = sign == 0 && mag != 0;
        break;
    }
    return std::bit_cast<T>(
        static_cast<U>(sign | (to_one ? static_cast<U>(kBias) << kMantBits : 0)));
  }
  const int frac_bits = kMantBits - e;
  const U unit = U{1} << frac_bits;  // one in the last integer place
  const U frac_mask = unit - 1;
  if ((mag & frac_mask) == 0) return x;
  U m = mag;
  switch (kMode) {
    case RoundMode::kNearestEven:  // half - 1, plus 1 when the integer part is odd
      m += (unit >> 1) - 1 + ((m >> frac_bits) & 1);
      break;
    case RoundMode::kNearestAfz:
      m += unit >> 1;
      break;
    case RoundMode::kFloor:  // magnitude up for negative x, truncation otherwise
      if (sign != 0) m += frac_mask;
      break;
    case RoundMode::kCeil:
      if (sign == 0) m += frac_mask;
      break;
  }
  // A carry out of the significand correctly bumps the exponent.
  return std::bit_cast<T>(static_cast<U>(sign | (m & ~frac_mask)));
}

// ---------------------------------------------------------------------------
// f32 entry points: the f64 function on the exactly widened argument, rounded
// once to float. A NaN argument keeps its payload (widening would quieten it
// differently on different paths), and an invalid result becomes f32's
// canonical NaN.

float Narrow(double r) { return IsNaN(r) ? kNaNf : static_cast<float>(r); }

template <typename F>
float ViaDouble(float x, F f) {
  if (IsNaN(x)) return Quiet(x);
  return Narrow(f(static_cast<double>(x)));
}

}  // namespace

// ---------------------------------------------------------------------------
// f64.

double Erf(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a == 0.0) return x;
  double r;
  if (a >= 5.9375) {
    r = 1.0;  // erf rounds to 1 from here on (checked by the table generator); also inf
  } else if (a >= 0.0625) {
    r = ErfTable(a);
  } else {
    r = ErfSmall(a);
  }
  return CopySign(r, x);
}

double Sqrt(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (x < 0.0) return kNaN;  // -0 is not below 0: sqrt(-0) = -0
  return std::sqrt(x);       // IEEE correctly rounded (sqrtsd)
}

double Rsqrt(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (x == 0.0) return CopySign(kInf, x);
  if (SignBit(x)) return kNaN;
  if (IsInf(x)) return 0.0;
  return RsqrtPositive(x);
}

double Cbrt(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (x == 0.0 || IsInf(x)) return x;
  // |x| = 2^(3q) m with m in [1, 8), so cbrt |x| = 2^q cbrt m (exact scalings).
  const int e = Exponent(x);
  const int q = (e >= 0 ? e : e - 2) / 3;  // floor(e / 3)
  const double m = Ldexp(Abs(x), -3 * q);
  // Halley's iteration y <- y (y^3 + 2m)/(2y^3 + m) from the chord
  // 1 + (m - 1)/7 (within 12%): 2^-30 after two steps, double precision after three.
  double y = 1.0 + (m - 1.0) / 7.0;
  for (int i = 0; i < 3; ++i) {
    const double y3 = y * y * y;
    y = y * (y3 + 2.0 * m) / (2.0 * y3 + m);
  }
  // One Newton step y - (y^3 - m)/(3y^2) with the residual y^3 - m formed to
  // about 2^-106: y^2 and y^2.hi * y are TwoProds, y3.hi - m is exact by
  // Sterbenz's lemma, and only the tiny y2.lo * y is rounded.
  const DD y2 = TwoProd(y, y);
  const DD y3 = TwoProd(y2.hi, y);
  const double residual = ((y3.hi - m) + y3.lo) + y2.lo * y;
  const DD root = FastTwoSum(y, -residual / (3.0 * y2.hi));
  return CopySign(Ldexp(root.hi, q), x);  // cbrt of a double is always normal
}

double RoundNearestEven(double x) { return RoundIntegral<double, RoundMode::kNearestEven>(x); }
double RoundNearestAfz(double x) { return RoundIntegral<double, RoundMode::kNearestAfz>(x); }
double Floor(double x) { return RoundIntegral<double, RoundMode::kFloor>(x); }
double Ceil(double x) { return RoundIntegral<double, RoundMode::kCeil>(x); }

// ---------------------------------------------------------------------------
// f32.

float Exp(float x) {
  return ViaDouble(x, [](double d) { return Exp(d); });
}
float Expm1(float x) {
  return ViaDouble(x, [](double d) { return Expm1(d); });
}
float Log(float x) {
  return ViaDouble(x, [](double d) { return Log(d); });
}
float Log1p(float x) {
  return ViaDouble(x, [](double d) { return Log1p(d); });
}
float Tanh(float x) {
  return ViaDouble(x, [](double d) { return Tanh(d); });
}
float Logistic(float x) {
  return ViaDouble(x, [](double d) { return Logistic(d); });
}
float Sinh(float x) {
  return ViaDouble(x, [](double d) { return Sinh(d); });
}
float Cosh(float x) {
  return ViaDouble(x, [](double d) { return Cosh(d); });
}
float Asinh(float x) {
  return ViaDouble(x, [](double d) { return Asinh(d); });
}
float Acosh(float x) {
  return ViaDouble(x, [](double d) { return Acosh(d); });
}
float Atanh(float x) {
  return ViaDouble(x, [](double d) { return Atanh(d); });
}
float Sin(float x) {
  return ViaDouble(x, [](double d) { return Sin(d); });
}
float Cos(float x) {
  return ViaDouble(x, [](double d) { return Cos(d); });
}
float Tan(float x) {
  return ViaDouble(x, [](double d) { return Tan(d); });
}
float Atan(float x) {
  return ViaDouble(x, [](double d) { return Atan(d); });
}
float Asin(float x) {
  return ViaDouble(x, [](double d) { return Asin(d); });
}
float Acos(float x) {
  return ViaDouble(x, [](double d) { return Acos(d); });
}
float Erf(float x) {
  return ViaDouble(x, [](double d) { return Erf(d); });
}
float Cbrt(float x) {
  return ViaDouble(x, [](double d) { return Cbrt(d); });
}

float Atan2(float y, float x) {
  if (IsNaN(y)) return Quiet(y);
  if (IsNaN(x)) return Quiet(x);
  return Narrow(Atan2(static_cast<double>(y), static_cast<double>(x)));
}

float Pow(float x, float y) {
  // The NaN-absorbing cases first, so a NaN payload is never widened.
  if (y == 0.0f || x == 1.0f) return 1.0f;
  if (IsNaN(x)) return Quiet(x);
  if (IsNaN(y)) return Quiet(y);
  return Narrow(Pow(static_cast<double>(x), static_cast<double>(y)));
}

float Sqrt(float x) {
  if (IsNaN(x)) return Quiet(x);
  if (x < 0.0f) return kNaNf;
  return std::sqrt(x);  // IEEE correctly rounded (sqrtss)
}

float Rsqrt(float x) {
  if (IsNaN(x)) return Quiet(x);
  if (x == 0.0f) return std::bit_cast<float>(std::bit_cast<uint32_t>(x) | 0x7f800000U);  // ±inf
  if (x < 0.0f) return kNaNf;
  if (x == std::bit_cast<float>(0x7f800000U)) return 0.0f;
  return RsqrtPositive(x);
}

float RoundNearestEven(float x) { return RoundIntegral<float, RoundMode::kNearestEven>(x); }
float RoundNearestAfz(float x) { return RoundIntegral<float, RoundMode::kNearestAfz>(x); }
float Floor(float x) { return RoundIntegral<float, RoundMode::kFloor>(x); }
float Ceil(float x) { return RoundIntegral<float, RoundMode::kCeil>(x); }

}  // namespace tpusim::detmath
