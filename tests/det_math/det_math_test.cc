// Tests for the deterministic math library (sim/det_math/det_math.h).
//
// Accuracy is measured against the host libm's long double functions, used
// here as an oracle only (64-bit significands: their own error is about 2^-11
// of an f64 ulp). Random arguments come from a fixed-seed std::mt19937_64,
// whose output the C++ standard defines, turned into doubles by exact or
// IEEE-rounded operations (this file is compiled with -ffp-contract=off too),
// so every machine tests the same arguments. Each accuracy test prints the
// largest error it saw; docs/numerics-math.md quotes those numbers.
#include "sim/det_math/det_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <type_traits>

#include "sim/base/fingerprint.h"

namespace tpusim::detmath {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHuge = 1e30;  // the "error" of a wrong NaN, infinity or overflow

template <typename T>
constexpr int kPrecision = std::numeric_limits<T>::digits;  // 53 or 24
template <typename T>
constexpr int kMinExp = std::numeric_limits<T>::min_exponent - 1;  // -1022 or -126

/// |got - want| in ulps of the format T at want (want is the exact value).
template <typename T>
double UlpError(T got, long double want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got) ? 0 : kHuge;
  if (std::isinf(got)) return static_cast<T>(want) == got ? 0 : kHuge;
  const int e = want == 0 ? kMinExp<T> : std::max(std::ilogb(want), kMinExp<T>);
  const long double ulp = std::ldexp(1.0L, e - kPrecision<T> + 1);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

/// Deterministic arguments: half uniform over [lo, hi], half with a uniformly
/// random binary exponent (down to the subnormals) and significand, so every
/// scale of the domain is exercised.
class Sampler {
 public:
  explicit Sampler(uint64_t seed) : rng_(seed) {}

  uint64_t Bits() { return rng_(); }

  double Unit() { return static_cast<double>(rng_() >> 11) * 0x1p-53; }

  double Uniform(double lo, double hi) { return lo + (hi - lo) * Unit(); }

  /// sign * 2^e * (1 + f) with e uniform in [min_exp, max_exp].
  double LogUniform(int min_exp, int max_exp, bool negative) {
    const int e = min_exp + static_cast<int>(rng_() % static_cast<uint64_t>(max_exp - min_exp + 1));
    const double m = 1.0 + Unit();
    return (negative ? -1.0 : 1.0) * std::ldexp(m, e);
  }

  template <typename T>
  T InRange(double lo, double hi) {
    if (rng_() & 1) return static_cast<T>(Uniform(lo, hi));
    const int min_exp = std::numeric_limits<T>::min_exponent - kPrecision<T>;
    const int max_exp = std::ilogb(std::max(std::fabs(lo), std::fabs(hi)));
    for (;;) {
      const T x = static_cast<T>(LogUniform(min_exp, max_exp, (rng_() & 1) != 0));
      if (x >= lo && x <= hi) return x;
    }
  }

 private:
  std::mt19937_64 rng_;
};

/// A per-test seed from the test's name (FNV-1a), the same everywhere.
uint64_t Seed(const char* name, uint64_t salt) { return Fnv1a(name, kFnv1aBasis ^ salt); }

std::string Show(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g (%a)", x, x);
  return buf;
}

/// The largest error seen and its argument(s), formatted only when reported.
struct Worst {
  double ulps = 0;
  double x = 0;
  std::optional<double> y;

  void Update(double err, double arg, std::optional<double> arg2 = std::nullopt) {
    if (err > ulps) {
      ulps = err;
      x = arg;
      y = arg2;
    }
  }

  std::string Where() const { return y ? Show(x) + ", " + Show(*y) : Show(x); }
};

void Report(const char* name, const char* type, const Worst& w) {
  std::printf("[ measured ] %-9s %s max %.4f ulp at %s\n", name, type, w.ulps, w.Where().c_str());
}

// ---------------------------------------------------------------------------
// Unary functions: random arguments over the domain, f64 and f32.

struct UnarySpec {
  const char* name;
  double (*f64)(double);
  float (*f32)(float);
  long double (*oracle)(long double);
  double lo;
  double hi;
  double bound64;  // documented maximum error, ulps
  double bound32;
};

void PrintTo(const UnarySpec& s, std::ostream* os) { *os << s.name; }

// One table row: the function's f64 and f32 overloads and its oracle expression in x.
// (clang-format would move the stringised name to the start of a line.)
// clang-format off
#define DETMATH_UNARY(fn, oracle_expr, lo, hi, b64, b32)                              \
  UnarySpec{#fn,                                                                      \
            [](double x) { return fn(x); },                                           \
            [](float x) { return fn(x); },                                            \
            [](long double x) -> long double { return oracle_expr; },                 \
            lo,                                                                       \
            hi,                                                                       \
            b64,                                                                      \
            b32}
// clang-format on

constexpr double kMax = std::numeric_limits<double>::max();
// The documented bounds (docs/numerics-math.md). f64 results are within a few
// thousandths of an ulp of correct rounding, and the long double oracle is
// itself about 0.001 ulp off, hence 0.505. f32 results are the f64 result
// rounded once: at most 0.5 ulp plus the f64 error, which is 2^-29 of an f32 ulp.
constexpr double kBound64 = 0.505;
constexpr double kBound32 = 0.50001;
constexpr int kSamples64 = 200000;
constexpr int kSamples32 = 200000;

long double LogisticOracle(long double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}

const UnarySpec kUnarySpecs[] = {
    DETMATH_UNARY(Exp, std::exp(x), -750, 712, kBound64, kBound32),
    DETMATH_UNARY(Expm1, std::expm1(x), -50, 712, kBound64, kBound32),
    DETMATH_UNARY(Log, std::log(x), 0, kMax, kBound64, kBound32),
    DETMATH_UNARY(Log1p, std::log1p(x), -1, kMax, kBound64, kBound32),
    DETMATH_UNARY(Tanh, std::tanh(x), -25, 25, kBound64, kBound32),
    DETMATH_UNARY(Logistic, LogisticOracle(x), -750, 50, kBound64, kBound32),
    DETMATH_UNARY(Sinh, std::sinh(x), -715, 715, kBound64, kBound32),
    DETMATH_UNARY(Cosh, std::cosh(x), -715, 715, kBound64, kBound32),
    DETMATH_UNARY(Asinh, std::asinh(x), -kMax, kMax, kBound64, kBound32),
    DETMATH_UNARY(Acosh, std::acosh(x), 1, kMax, kBound64, kBound32),
    DETMATH_UNARY(Atanh, std::atanh(x), -1, 1, kBound64, kBound32),
    DETMATH_UNARY(Sin, std::sin(x), -kMax, kMax, kBound64, kBound32),
    DETMATH_UNARY(Cos, std::cos(x), -kMax, kMax, kBound64, kBound32),
    DETMATH_UNARY(Tan, std::tan(x), -kMax, kMax, kBound64, kBound32),
    DETMATH_UNARY(Atan, std::atan(x), -kMax, kMax, kBound64, kBound32),
    DETMATH_UNARY(Asin, std::asin(x), -1, 1, kBound64, kBound32),
    DETMATH_UNARY(Acos, std::acos(x), -1, 1, kBound64, kBound32),
    DETMATH_UNARY(Erf, std::erf(x), -7, 7, kBound64, kBound32),
    DETMATH_UNARY(Sqrt, std::sqrt(x), 0, kMax, kBound64, kBound32),
    DETMATH_UNARY(Rsqrt, 1 / std::sqrt(x), 0, kMax, kBound64, kBound32),
    DETMATH_UNARY(Cbrt, std::cbrt(x), -kMax, kMax, kBound64, kBound32),
};

class UnaryAccuracyTest : public ::testing::TestWithParam<UnarySpec> {};

TEST_P(UnaryAccuracyTest, F64WithinDocumentedBound) {
  const UnarySpec& s = GetParam();
  Sampler sampler(Seed(s.name, 64));
  Worst worst;
  for (int i = 0; i < kSamples64; ++i) {
    const double x = sampler.InRange<double>(s.lo, s.hi);
    worst.Update(UlpError(s.f64(x), s.oracle(x)), x);
  }
  Report(s.name, "f64", worst);
  EXPECT_LE(worst.ulps, s.bound64) << s.name << " at " << worst.Where();
}

TEST_P(UnaryAccuracyTest, F32WithinDocumentedBound) {
  const UnarySpec& s = GetParam();
  const double lo = std::max(s.lo, -double{std::numeric_limits<float>::max()});
  const double hi = std::min(s.hi, double{std::numeric_limits<float>::max()});
  Sampler sampler(Seed(s.name, 32));
  Worst worst;
  for (int i = 0; i < kSamples32; ++i) {
    const float x = sampler.InRange<float>(lo, hi);
    worst.Update(UlpError(s.f32(x), s.oracle(x)), x);
  }
  Report(s.name, "f32", worst);
  EXPECT_LE(worst.ulps, s.bound32) << s.name << " at " << worst.Where();
}

INSTANTIATE_TEST_SUITE_P(DetMath, UnaryAccuracyTest, ::testing::ValuesIn(kUnarySpecs),
                         [](const ::testing::TestParamInfo<UnarySpec>& info) {
                           return std::string(info.param.name);
                         });

// ---------------------------------------------------------------------------
// Dense f32 sweep: every 1024th float (by bit pattern, so every binade gets the
// same share) in [-20, 20] for the functions ML graphs use most.

TEST(DetMathF32Sweep, ExpLogTanhLogisticOverMinus20To20) {
  struct Fn {
    const char* name;
    float (*f)(float);
    long double (*oracle)(long double);
  };
  const Fn fns[] = {
      {"Exp", [](float x) { return Exp(x); }, [](long double x) { return std::exp(x); }},
      {"Log", [](float x) { return Log(x); }, [](long double x) { return std::log(x); }},
      {"Tanh", [](float x) { return Tanh(x); }, [](long double x) { return std::tanh(x); }},
      {"Logistic", [](float x) { return Logistic(x); }, LogisticOracle},
  };
  const uint32_t top = std::bit_cast<uint32_t>(20.0f);
  for (const Fn& fn : fns) {
    Worst worst;
    for (uint32_t bits = 0; bits <= top; bits += 1024) {
      for (const uint32_t sign : {0u, 0x80000000u}) {
        const float x = std::bit_cast<float>(bits | sign);
        worst.Update(UlpError(fn.f(x), fn.oracle(x)), x);
      }
    }
    Report(fn.name, "f32 sweep", worst);
    EXPECT_LE(worst.ulps, kBound32) << fn.name << " at " << worst.Where();
  }
}

// ---------------------------------------------------------------------------
// Two-argument functions.

TEST(DetMathPow, RandomArgumentsWithinBound) {
  Sampler sampler(Seed("Pow", 64));
  Worst worst64;
  Worst worst32;
  for (int i = 0; i < kSamples64; ++i) {
    double x;
    double y;
    switch (i % 4) {
      case 0:  // any positive x, y putting x^y anywhere from underflow to overflow
        x = sampler.LogUniform(-1074, 1023, false);
        y = sampler.Uniform(-780, 740) / std::log(x);
        break;
      case 1:  // x near 1, large |y|
        x = sampler.Uniform(0.5, 2);
        y = sampler.LogUniform(-20, 40, (sampler.Bits() & 1) != 0);
        break;
      case 2:  // negative x, integer y
        x = -sampler.LogUniform(-8, 8, false);
        y = std::round(sampler.Uniform(-90, 90));
        break;
      default:  // moderate x and y
        x = sampler.LogUniform(-30, 30, false);
        y = sampler.Uniform(-30, 30);
        break;
    }
    worst64.Update(
        UlpError(Pow(x, y), std::pow(static_cast<long double>(x), static_cast<long double>(y))), x,
        y);
    const float xf = static_cast<float>(x);
    const float yf = static_cast<float>(y);
    if (std::isfinite(xf) && std::isfinite(yf)) {
      worst32.Update(UlpError(Pow(xf, yf),
                              std::pow(static_cast<long double>(xf), static_cast<long double>(yf))),
                     xf, yf);
    }
  }
  Report("Pow", "f64", worst64);
  Report("Pow", "f32", worst32);
  EXPECT_LE(worst64.ulps, kBound64) << worst64.Where();
  EXPECT_LE(worst32.ulps, kBound32) << worst32.Where();
}

TEST(DetMathPow, IntegerPowersAreExactWhenRepresentable) {
  for (int64_t base = -20; base <= 20; ++base) {
    if (base == 0) continue;
    int64_t exact = 1;  // base^n, while |base^n| < 2^53
    for (int n = 0; n < 64; ++n) {
      ASSERT_EQ(Pow(static_cast<double>(base), static_cast<double>(n)), static_cast<double>(exact))
          << base << "^" << n;
      if (exact < (int64_t{1} << 24) && exact > -(int64_t{1} << 24)) {
        ASSERT_EQ(Pow(static_cast<float>(base), static_cast<float>(n)), static_cast<float>(exact))
            << base << "^" << n << " (f32)";
      }
      if ((base & (base - 1)) == 0 && base > 0) {  // powers of two: negative exponents too
        ASSERT_EQ(Pow(static_cast<double>(base), static_cast<double>(-n)),
                  1.0 / static_cast<double>(exact));
      }
      if (std::abs(exact) > (int64_t{1} << 53) / std::abs(base)) break;
      exact *= base;
    }
  }
  EXPECT_EQ(Pow(10.0, 22.0), 1e22);  // 10^22 is the largest exact power of ten
  EXPECT_EQ(Pow(2.5, 7.0), 610.3515625);
  EXPECT_EQ(Pow(-0.5, 3.0), -0.125);
  EXPECT_EQ(Pow(2.0, -1074.0), std::ldexp(1.0, -1074));
  EXPECT_EQ(Pow(2.0, 1023.0), std::ldexp(1.0, 1023));
  EXPECT_EQ(Pow(4.0, 0.5), 2.0);
  EXPECT_EQ(Pow(-3.0f, 5.0f), -243.0f);
}

TEST(DetMathAtan2, RandomArgumentsWithinBound) {
  Sampler sampler(Seed("Atan2", 64));
  Worst worst64;
  Worst worst32;
  for (int i = 0; i < kSamples64; ++i) {
    // Both exponents over the whole range, or close to each other (the usual case).
    const bool close = (i & 1) != 0;
    const int ey = close ? static_cast<int>(sampler.Bits() % 200) - 100 : -1074;
    const double y =
        sampler.LogUniform(close ? ey : -1074, close ? ey : 1023, (sampler.Bits() & 1) != 0);
    const double x = close ? sampler.LogUniform(ey - 8, ey + 8, (sampler.Bits() & 1) != 0)
                           : sampler.LogUniform(-1074, 1023, (sampler.Bits() & 1) != 0);
    worst64.Update(
        UlpError(Atan2(y, x), std::atan2(static_cast<long double>(y), static_cast<long double>(x))),
        y, x);
    const float yf = static_cast<float>(y);
    const float xf = static_cast<float>(x);
    worst32.Update(UlpError(Atan2(yf, xf),
                            std::atan2(static_cast<long double>(yf), static_cast<long double>(xf))),
                   yf, xf);
  }
  Report("Atan2", "f64", worst64);
  Report("Atan2", "f32", worst32);
  EXPECT_LE(worst64.ulps, kBound64) << worst64.Where();
  EXPECT_LE(worst32.ulps, kBound32) << worst32.Where();
}

// ---------------------------------------------------------------------------
// Special values, bit for bit (signed zeros and NaN encodings included).

constexpr double kNaN64 = std::bit_cast<double>(0x7ff8000000000000ULL);  // canonical
constexpr float kNaN32 = std::bit_cast<float>(0x7fc00000U);
constexpr double kPayloadNaN =
    std::bit_cast<double>(0xfff0000000000123ULL);  // signalling, negative
constexpr double kPayloadNaNQuiet = std::bit_cast<double>(0xfff8000000000123ULL);
constexpr float kPayloadNaN32 = std::bit_cast<float>(0xff800123U);
constexpr float kPayloadNaN32Quiet = std::bit_cast<float>(0xffc00123U);
constexpr double kMinSub = std::numeric_limits<double>::denorm_min();
constexpr double kPi = 0x1.921fb54442d18p+1;  // RN(pi)
constexpr double kPiOver2 = 0x1.921fb54442d18p+0;

template <typename T>
::testing::AssertionResult SameBits(const char* got_expr, const char*, T got, T want) {
  if (std::bit_cast<std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>>(got) ==
      std::bit_cast<std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>>(want)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << got_expr << " is " << Show(got) << ", want " << Show(want);
}
#define EXPECT_SAME(got, want) EXPECT_PRED_FORMAT2(SameBits, got, want)

TEST(DetMathSpecial, NaNArgumentsKeepPayloadAndInvalidGivesCanonicalNaN) {
  for (double (*f)(double) :
       {+[](double x) { return Exp(x); }, +[](double x) { return Log(x); },
        +[](double x) { return Sin(x); }, +[](double x) { return Erf(x); },
        +[](double x) { return Rsqrt(x); }, +[](double x) { return Floor(x); }}) {
    EXPECT_SAME(f(kPayloadNaN), kPayloadNaNQuiet);
  }
  EXPECT_SAME(Exp(kPayloadNaN32), kPayloadNaN32Quiet);
  EXPECT_SAME(Tanh(kPayloadNaN32), kPayloadNaN32Quiet);
  EXPECT_SAME(RoundNearestEven(kPayloadNaN32), kPayloadNaN32Quiet);
  EXPECT_SAME(Atan2(kPayloadNaN, 1.0), kPayloadNaNQuiet);
  EXPECT_SAME(Atan2(1.0, kPayloadNaN), kPayloadNaNQuiet);
  EXPECT_SAME(Pow(kPayloadNaN, 2.0), kPayloadNaNQuiet);
  EXPECT_SAME(Pow(kPayloadNaN32, 2.0f), kPayloadNaN32Quiet);
  EXPECT_SAME(Log(-1.0), kNaN64);
  EXPECT_SAME(Log(-1.0f), kNaN32);
  EXPECT_SAME(Sqrt(-1.0), kNaN64);
  EXPECT_SAME(Sqrt(-1.0f), kNaN32);
  EXPECT_SAME(Sin(kInf), kNaN64);
  EXPECT_SAME(Cos(-kInf), kNaN64);
  EXPECT_SAME(Tan(static_cast<float>(kInf)), kNaN32);
  EXPECT_SAME(Asin(1.5), kNaN64);
  EXPECT_SAME(Acos(-1.5f), kNaN32);
  EXPECT_SAME(Acosh(0.5), kNaN64);
  EXPECT_SAME(Atanh(2.0), kNaN64);
  EXPECT_SAME(Log1p(-2.0), kNaN64);
  EXPECT_SAME(Rsqrt(-kInf), kNaN64);
  EXPECT_SAME(Pow(-2.0, 0.5), kNaN64);
  EXPECT_SAME(Pow(-2.0f, 0.5f), kNaN32);
}

TEST(DetMathSpecial, ExponentialsAndLogarithms) {
  EXPECT_SAME(Exp(-kInf), 0.0);
  EXPECT_SAME(Exp(kInf), kInf);
  EXPECT_SAME(Exp(-0.0), 1.0);
  EXPECT_SAME(Exp(0x1.62e42fefa39efp+9), 0x1.fffffffffff2ap+1023);  // the largest finite result
  EXPECT_SAME(Exp(0x1.62e42fefa39f0p+9), kInf);
  EXPECT_SAME(Exp(-0x1.74910d52d3051p+9), kMinSub);  // the smallest nonzero result
  EXPECT_SAME(Exp(-0x1.74910d52d3052p+9), 0.0);
  EXPECT_SAME(Exp(-1000.0), 0.0);
  EXPECT_SAME(Exp(88.8f), std::bit_cast<float>(0x7f800000U));  // f32 overflow
  EXPECT_SAME(Exp(-103.9f), std::numeric_limits<float>::denorm_min());
  EXPECT_SAME(Exp(-104.0f), 0.0f);  // below 2^-150: f32 underflow
  EXPECT_SAME(Expm1(-0.0), -0.0);
  EXPECT_SAME(Expm1(kMinSub), kMinSub);
  EXPECT_SAME(Expm1(-kInf), -1.0);
  EXPECT_SAME(Expm1(kInf), kInf);
  EXPECT_SAME(Log(0.0), -kInf);
  EXPECT_SAME(Log(-0.0), -kInf);
  EXPECT_SAME(Log(1.0), 0.0);
  EXPECT_SAME(Log(kInf), kInf);
  EXPECT_SAME(Log(kMinSub), -0x1.74385446d71c3p+9);
  EXPECT_SAME(Log1p(-1.0), -kInf);
  EXPECT_SAME(Log1p(-0.0), -0.0);
  EXPECT_SAME(Log1p(kInf), kInf);
  EXPECT_SAME(Log1p(-kMinSub), -kMinSub);
}

TEST(DetMathSpecial, HyperbolicAndLogistic) {
  EXPECT_SAME(Tanh(kInf), 1.0);
  EXPECT_SAME(Tanh(-kInf), -1.0);
  EXPECT_SAME(Tanh(-0.0), -0.0);
  EXPECT_SAME(Tanh(-0.0f), -0.0f);
  EXPECT_SAME(Logistic(kInf), 1.0);
  EXPECT_SAME(Logistic(-kInf), 0.0);
  EXPECT_SAME(Logistic(0.0), 0.5);
  EXPECT_SAME(Logistic(-0.0f), 0.5f);
  EXPECT_SAME(Logistic(-800.0), 0.0);
  EXPECT_SAME(Logistic(-0x1.74910d52d3051p+9), kMinSub);  // e^x (1 - e^x), subnormal
  EXPECT_SAME(Sinh(-0.0), -0.0);
  EXPECT_SAME(Sinh(-kInf), -kInf);
  EXPECT_SAME(Cosh(-kInf), kInf);
  EXPECT_SAME(Cosh(0.0), 1.0);
  EXPECT_TRUE(std::isfinite(Cosh(0x1.633ce8fb9f87dp+9)));  // the last finite cosh
  EXPECT_SAME(Cosh(0x1.633ce8fb9f87ep+9), kInf);
  EXPECT_SAME(Sinh(-0x1.633ce8fb9f87ep+9), -kInf);
  EXPECT_SAME(Asinh(-0.0), -0.0);
  EXPECT_SAME(Asinh(-kInf), -kInf);
  EXPECT_SAME(Acosh(1.0), 0.0);
  EXPECT_SAME(Acosh(kInf), kInf);
  EXPECT_SAME(Atanh(-1.0), -kInf);
  EXPECT_SAME(Atanh(1.0f), std::bit_cast<float>(0x7f800000U));
  EXPECT_SAME(Atanh(-0.0), -0.0);
}

TEST(DetMathSpecial, Trigonometric) {
  EXPECT_SAME(Sin(-0.0), -0.0);
  EXPECT_SAME(Sin(-kMinSub), -kMinSub);
  EXPECT_SAME(Cos(-0.0), 1.0);
  EXPECT_SAME(Tan(-0.0), -0.0);
  EXPECT_SAME(Atan(-0.0), -0.0);
  EXPECT_SAME(Atan(kInf), kPiOver2);
  EXPECT_SAME(Atan(-kInf), -kPiOver2);
  EXPECT_SAME(Asin(-0.0), -0.0);
  EXPECT_SAME(Asin(-1.0), -kPiOver2);
  EXPECT_SAME(Acos(1.0), 0.0);
  EXPECT_SAME(Acos(-1.0), kPi);
  EXPECT_SAME(Acos(0.0), kPiOver2);
  // atan2, C99 F.9.1.4, every quadrant and signed zero.
  EXPECT_SAME(Atan2(0.0, -0.0), kPi);
  EXPECT_SAME(Atan2(-0.0, -0.0), -kPi);
  EXPECT_SAME(Atan2(0.0, 0.0), 0.0);
  EXPECT_SAME(Atan2(-0.0, 0.0), -0.0);
  EXPECT_SAME(Atan2(0.0, -2.0), kPi);
  EXPECT_SAME(Atan2(-0.0, -2.0), -kPi);
  EXPECT_SAME(Atan2(0.0, 2.0), 0.0);
  EXPECT_SAME(Atan2(-0.0, 2.0), -0.0);
  EXPECT_SAME(Atan2(-2.0, 0.0), -kPiOver2);
  EXPECT_SAME(Atan2(-2.0, -0.0), -kPiOver2);
  EXPECT_SAME(Atan2(2.0, -0.0), kPiOver2);
  EXPECT_SAME(Atan2(2.0, -kInf), kPi);
  EXPECT_SAME(Atan2(-2.0, -kInf), -kPi);
  EXPECT_SAME(Atan2(2.0, kInf), 0.0);
  EXPECT_SAME(Atan2(-2.0, kInf), -0.0);
  EXPECT_SAME(Atan2(kInf, 2.0), kPiOver2);
  EXPECT_SAME(Atan2(-kInf, -2.0), -kPiOver2);
  EXPECT_SAME(Atan2(kInf, -kInf), 0x1.2d97c7f3321d2p+1);   // RN(3pi/4)
  EXPECT_SAME(Atan2(-kInf, kInf), -0x1.921fb54442d18p-1);  // -RN(pi/4)
  EXPECT_SAME(Atan2(1.0, -1.0), 0x1.2d97c7f3321d2p+1);
  EXPECT_SAME(Atan2(-0.0f, -1.0f), -static_cast<float>(kPi));
  // Tiny ratios: the exact quotient 3 * 2^-1075 is a tie, which atan's
  // curvature breaks downwards.
  EXPECT_SAME(Atan2(3 * kMinSub, 2.0), kMinSub);
  EXPECT_SAME(Atan2(1e-300, 1e300), 0.0);
  EXPECT_SAME(Atan2(kMinSub, kMinSub), 0x1.921fb54442d18p-1);  // RN(pi/4), scaled exactly
  EXPECT_SAME(Atan2(-kMax, -kMax), -0x1.2d97c7f3321d2p+1);
  EXPECT_SAME(Atan2(kMax, kMinSub), kPiOver2);
  EXPECT_SAME(Atan2(1e-300, -1e300), kPi);
}

TEST(DetMathSpecial, RootsAndErf) {
  EXPECT_SAME(Sqrt(-0.0), -0.0);
  EXPECT_SAME(Sqrt(kInf), kInf);
  EXPECT_SAME(Rsqrt(0.0), kInf);
  EXPECT_SAME(Rsqrt(-0.0), -kInf);
  EXPECT_SAME(Rsqrt(-0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_SAME(Rsqrt(kInf), 0.0);
  EXPECT_SAME(Rsqrt(4.0), 0.5);
  EXPECT_SAME(Rsqrt(0.25f), 2.0f);
  EXPECT_SAME(Rsqrt(std::ldexp(1.0, -1074)), std::ldexp(1.0, 537));
  EXPECT_SAME(Cbrt(-0.0), -0.0);
  EXPECT_SAME(Cbrt(-kInf), -kInf);
  EXPECT_SAME(Cbrt(-8.0), -2.0);
  EXPECT_SAME(Cbrt(27.0f), 3.0f);
  EXPECT_SAME(Cbrt(std::ldexp(1.0, -1074)), std::ldexp(1.0, -358));
  EXPECT_SAME(Erf(-0.0), -0.0);
  EXPECT_SAME(Erf(kInf), 1.0);
  EXPECT_SAME(Erf(-kInf), -1.0);
  EXPECT_SAME(Erf(6.0), 1.0);
  EXPECT_SAME(Erf(5.9375), 1.0);
  EXPECT_SAME(Erf(kMinSub), kMinSub);  // 2/sqrt(pi) 2^-1074 rounds to 2^-1074
  EXPECT_SAME(Erf(-2 * kMinSub), -2 * kMinSub);
}

TEST(DetMathSpecial, PowC99AnnexF) {
  const double odd = 3.0;
  const double even = 4.0;
  const double frac = 2.5;
  EXPECT_SAME(Pow(kNaN64, 0.0), 1.0);
  EXPECT_SAME(Pow(kNaN64, -0.0), 1.0);
  EXPECT_SAME(Pow(1.0, kNaN64), 1.0);
  EXPECT_SAME(Pow(1.0, -kInf), 1.0);
  EXPECT_SAME(Pow(0.0, -odd), kInf);
  EXPECT_SAME(Pow(-0.0, -odd), -kInf);
  EXPECT_SAME(Pow(-0.0, -even), kInf);
  EXPECT_SAME(Pow(-0.0, -frac), kInf);
  EXPECT_SAME(Pow(0.0, -kInf), kInf);
  EXPECT_SAME(Pow(-0.0, -kInf), kInf);
  EXPECT_SAME(Pow(-0.0, odd), -0.0);
  EXPECT_SAME(Pow(0.0, odd), 0.0);
  EXPECT_SAME(Pow(-0.0, even), 0.0);
  EXPECT_SAME(Pow(-0.0, frac), 0.0);
  EXPECT_SAME(Pow(-0.0, kInf), 0.0);
  EXPECT_SAME(Pow(-1.0, kInf), 1.0);
  EXPECT_SAME(Pow(-1.0, -kInf), 1.0);
  EXPECT_SAME(Pow(0.5, -kInf), kInf);
  EXPECT_SAME(Pow(-0.5, -kInf), kInf);
  EXPECT_SAME(Pow(2.0, -kInf), 0.0);
  EXPECT_SAME(Pow(-2.0, -kInf), 0.0);
  EXPECT_SAME(Pow(0.5, kInf), 0.0);
  EXPECT_SAME(Pow(-2.0, kInf), kInf);
  EXPECT_SAME(Pow(-kInf, -odd), -0.0);
  EXPECT_SAME(Pow(-kInf, -even), 0.0);
  EXPECT_SAME(Pow(-kInf, -frac), 0.0);
  EXPECT_SAME(Pow(-kInf, odd), -kInf);
  EXPECT_SAME(Pow(-kInf, even), kInf);
  EXPECT_SAME(Pow(-kInf, frac), kInf);
  EXPECT_SAME(Pow(kInf, -frac), 0.0);
  EXPECT_SAME(Pow(kInf, frac), kInf);
  EXPECT_SAME(Pow(-2.0, 0x1p60), kInf);  // huge even integer
  EXPECT_SAME(Pow(-2.0, 1025.0), -kInf);
  EXPECT_SAME(Pow(-2.0, -1075.0), -0.0);  // -2^-1075, a tie: rounds to even
  EXPECT_SAME(Pow(-0.5, 1075.0), -0.0);
  // Integer powers are exact before their single rounding, ties included.
  EXPECT_SAME(Pow(3.0 * 0x1p-215, 5.0), 122 * kMinSub);  // 121.5 * 2^-1074: tie to even
  EXPECT_SAME(Pow(-3.0 * 0x1p-215, 5.0), -122 * kMinSub);
  EXPECT_SAME(Pow(3.0 * 0x1p-359, 3.0), 3 * kMinSub);  // 3.375 * 2^-1074
  EXPECT_SAME(Pow(0x1.8p-538, 2.0), kMinSub);          // 0.5625 * 2^-1074
  EXPECT_SAME(Pow(2.0, -1075.0), 0.0);                 // 0.5 * 2^-1074: tie to even
  EXPECT_SAME(Pow(10.0, 400.0), kInf);
  EXPECT_SAME(Pow(10.0, -400.0), 0.0);
  EXPECT_SAME(Pow(1.0 + 0x1p-52, 0x1p62), kInf);
  EXPECT_SAME(Pow(-1.0f, 3.0f), -1.0f);
  EXPECT_SAME(Pow(0.0f, -1.0f), std::numeric_limits<float>::infinity());
  EXPECT_SAME(Pow(2.0f, 128.0f), std::numeric_limits<float>::infinity());
  EXPECT_SAME(Pow(2.0f, -149.0f), std::numeric_limits<float>::denorm_min());
}

TEST(DetMathSpecial, RoundingToIntegers) {
  struct Case {
    double x, even, afz, floor, ceil;
  };
  const Case cases[] = {
      {0.0, 0.0, 0.0, 0.0, 0.0},
      {-0.0, -0.0, -0.0, -0.0, -0.0},
      {0.3, 0.0, 0.0, 0.0, 1.0},
      {-0.3, -0.0, -0.0, -1.0, -0.0},
      {0.5, 0.0, 1.0, 0.0, 1.0},
      {-0.5, -0.0, -1.0, -1.0, -0.0},
      {1.5, 2.0, 2.0, 1.0, 2.0},
      {2.5, 2.0, 3.0, 2.0, 3.0},
      {-2.5, -2.0, -3.0, -3.0, -2.0},
      {0x1.fffffffffffffp-2, 0.0, 0.0, 0.0, 1.0},                              // just below 0.5
      {0x1.fffffffffffffp+51, 0x1p52, 0x1p52, 0x1.ffffffffffffep+51, 0x1p52},  // 2^52 - 0.5
      {4503599627370497.0, 4503599627370497.0, 4503599627370497.0, 4503599627370497.0,
       4503599627370497.0},
      {kMinSub, 0.0, 0.0, 0.0, 1.0},
      {-kMinSub, -0.0, -0.0, -1.0, -0.0},
      {kInf, kInf, kInf, kInf, kInf},
      {-kInf, -kInf, -kInf, -kInf, -kInf},
  };
  for (const Case& c : cases) {
    EXPECT_SAME(RoundNearestEven(c.x), c.even);
    EXPECT_SAME(RoundNearestAfz(c.x), c.afz);
    EXPECT_SAME(Floor(c.x), c.floor);
    EXPECT_SAME(Ceil(c.x), c.ceil);
  }
  // Against the host's exact rounding functions on random values and halves.
  Sampler sampler(Seed("Round", 0));
  for (int i = 0; i < 100000; ++i) {
    const double x = (i & 1) != 0 ? sampler.LogUniform(-1074, 60, (i & 2) != 0)
                                  : std::round(sampler.Uniform(-4000, 4000)) / 4;  // many ties
    EXPECT_SAME(RoundNearestEven(x), std::nearbyint(x));
    EXPECT_SAME(RoundNearestAfz(x), std::round(x));
    EXPECT_SAME(Floor(x), std::floor(x));
    EXPECT_SAME(Ceil(x), std::ceil(x));
    const float xf = static_cast<float>(x);
    EXPECT_SAME(RoundNearestEven(xf), std::nearbyint(xf));
    EXPECT_SAME(RoundNearestAfz(xf), std::round(xf));
    EXPECT_SAME(Floor(xf), std::floor(xf));
    EXPECT_SAME(Ceil(xf), std::ceil(xf));
  }
}

TEST(DetMathSpecial, SqrtIsTheIeeeSquareRoot) {
  Sampler sampler(Seed("Sqrt", 0));
  for (int i = 0; i < 100000; ++i) {
    const double x = sampler.LogUniform(-1074, 1023, false);
    EXPECT_SAME(Sqrt(x), std::sqrt(x));
    EXPECT_SAME(Sqrt(static_cast<float>(x)), std::sqrt(static_cast<float>(x)));
  }
}

// ---------------------------------------------------------------------------
// Hard cases for argument reduction and rounding, against the oracle.

TEST(DetMathHardCases, WithinBound) {
  const double worst_reduction =
      6381956970095103.0 * 0x1p797;  // closest double to a multiple of pi/2
  const double hard64[] = {1e22,    worst_reduction,      0x1.fffffffffffffp+1023, kPi,   kPiOver2,
                           2 * kPi, 0x1.921fb54442d19p+0, 0x1.921fb54442d18p-1,    355.0, 103993.0,
                           1e300};
  for (const double x : hard64) {
    for (const double v : {x, -x}) {
      EXPECT_LE(UlpError(Sin(v), std::sin(static_cast<long double>(v))), kBound64)
          << "sin " << Show(v);
      EXPECT_LE(UlpError(Cos(v), std::cos(static_cast<long double>(v))), kBound64)
          << "cos " << Show(v);
      EXPECT_LE(UlpError(Tan(v), std::tan(static_cast<long double>(v))), kBound64)
          << "tan " << Show(v);
    }
  }
  const float hard32[] = {1e30f,
                          std::numeric_limits<float>::max(),
                          static_cast<float>(kPiOver2),
                          static_cast<float>(kPi),
                          16777216.0f,
                          0x1.921fb6p+0f};
  for (const float x : hard32) {
    EXPECT_LE(UlpError(Sin(x), std::sin(static_cast<long double>(x))), kBound32)
        << "sin " << Show(x);
    EXPECT_LE(UlpError(Cos(x), std::cos(static_cast<long double>(x))), kBound32)
        << "cos " << Show(x);
    EXPECT_LE(UlpError(Tan(x), std::tan(static_cast<long double>(x))), kBound32)
        << "tan " << Show(x);
  }
  // Near 1, near the overflow and underflow thresholds, and at erf's table seams.
  for (const double x : {1.0 - 0x1p-53, 1.0 + 0x1p-52, 0.75, 1.5 - 0x1p-52, 2.0 - 0x1p-52}) {
    EXPECT_LE(UlpError(Log(x), std::log(static_cast<long double>(x))), kBound64)
        << "log " << Show(x);
    EXPECT_LE(UlpError(Log1p(x - 1), std::log1p(static_cast<long double>(x - 1))), kBound64)
        << "log1p " << Show(x - 1);
  }
  for (const double x : {709.78, -708.39, -744.9, -745.1, 0x1p-30, -0x1p-30}) {
    EXPECT_LE(UlpError(Exp(x), std::exp(static_cast<long double>(x))), kBound64)
        << "exp " << Show(x);
    EXPECT_LE(UlpError(Expm1(x), std::expm1(static_cast<long double>(x))), kBound64)
        << "expm1 " << Show(x);
  }
  for (int j = 0; j <= 96; ++j) {
    const double x = j / 16.0;
    EXPECT_LE(UlpError(Erf(x), std::erf(static_cast<long double>(x))), kBound64)
        << "erf " << Show(x);
  }
}

// ---------------------------------------------------------------------------
// Determinism pins: exact results that must never change. A failure here means
// results changed: a rounding change (compiler flags, FMA contraction, x87) or
// an algorithm change, which must be deliberate and documented.

// Each pinned value is also the correctly rounded result (checked against the
// oracle when it was pinned), so a pin never freezes an error.
TEST(DetMathPins, F64BitPatterns) {
  EXPECT_SAME(Exp(1.0), 0x1.5bf0a8b145769p+1);   // e
  EXPECT_SAME(Log(10.0), 0x1.26bb1bbb55516p+1);  // ln 10
  EXPECT_SAME(Pow(2.0, 0.5), 0x1.6a09e667f3bcdp+0);
  EXPECT_SAME(Cbrt(2.0), 0x1.428a2f98d728bp+0);
  EXPECT_SAME(Rsqrt(2.0), 0x1.6a09e667f3bcdp-1);
  EXPECT_SAME(Asin(0.5), 0x1.0c152382d7366p-1);  // pi/6
  EXPECT_SAME(Acos(0.5), 0x1.0c152382d7366p+0);  // pi/3
  EXPECT_SAME(Sin(1e22), -0x1.b453ab76bf397p-1);
  EXPECT_SAME(Cos(1e22), 0x1.0be2cef01c8f4p-1);
  EXPECT_SAME(Tan(1e22), -0x1.a0f79c1b6b257p+0);
  EXPECT_SAME(Erf(0.5), 0x1.0a7ef5c18edd2p-1);
  EXPECT_SAME(Tanh(0.5), 0x1.d9353d7568af3p-2);
  EXPECT_SAME(Logistic(1.0), 0x1.764d4f5d5a2bdp-1);
  EXPECT_SAME(Expm1(1e-10), 0x1.b7cdfd9dda4e3p-34);
  EXPECT_SAME(Log1p(1e-10), 0x1.b7cdfd9d1d693p-34);
}

TEST(DetMathPins, F32BitPatterns) {
  EXPECT_SAME(Exp(1.0f), std::bit_cast<float>(0x402df854U));  // e
  EXPECT_SAME(Log(10.0f), std::bit_cast<float>(0x40135d8eU));
  EXPECT_SAME(Pow(2.0f, 0.5f), std::bit_cast<float>(0x3fb504f3U));
  EXPECT_SAME(Sin(1e30f), std::bit_cast<float>(0xbf4a89b0U));
  EXPECT_SAME(Erf(0.5f), std::bit_cast<float>(0x3f053f7bU));
  EXPECT_SAME(Tanh(0.5f), std::bit_cast<float>(0x3eec9a9fU));
  EXPECT_SAME(Logistic(1.0f), std::bit_cast<float>(0x3f3b26a8U));
}

/// FNV-1a over the result bits of every function on the same arguments: any
/// change in any result changes the checksum. The arguments span every binade
/// and sign, specials included.
TEST(DetMathPins, ChecksumOfAllFunctions) {
  uint64_t h = kFnv1aBasis;
  // The result's bytes in memory order, least significant first on x86-64.
  const auto mix = [&h](uint64_t bits) { h = Fnv1a(std::as_bytes(std::span(&bits, 1)), h); };
  Sampler sampler(Seed("Checksum", 0));
  for (int i = 0; i < 4096; ++i) {
    const double x =
        (i % 7 == 0) ? sampler.Uniform(-10, 10)
                     : std::bit_cast<double>(sampler.Bits());  // any pattern: NaN, inf, subnormal
    const double y = sampler.LogUniform(-20, 20, (i & 1) != 0);
    const float xf = static_cast<float>(x);
    const float yf = static_cast<float>(y);
    for (const UnarySpec& s : kUnarySpecs) {
      mix(std::bit_cast<uint64_t>(s.f64(x)));
      mix(std::bit_cast<uint32_t>(s.f32(xf)));
    }
    mix(std::bit_cast<uint64_t>(Pow(x, y)));
    mix(std::bit_cast<uint64_t>(Pow(y, x)));
    mix(std::bit_cast<uint64_t>(Atan2(x, y)));
    mix(std::bit_cast<uint32_t>(Pow(yf, xf)));
    mix(std::bit_cast<uint32_t>(Atan2(xf, yf)));
    mix(std::bit_cast<uint64_t>(RoundNearestEven(x * 0x1p-40)));
    mix(std::bit_cast<uint64_t>(RoundNearestAfz(x * 0x1p-40)));
    mix(std::bit_cast<uint64_t>(Floor(x * 0x1p-40)));
    mix(std::bit_cast<uint64_t>(Ceil(x * 0x1p-40)));
  }
  EXPECT_EQ(h, 0x7ee4540e9624772dULL) << std::hex << h;
}

}  // namespace
}  // namespace tpusim::detmath
