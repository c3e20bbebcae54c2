// Narrow float formats: every bit pattern decoded and re-encoded, the
// constants of each format written from its definition, the special-value
// rules, ties to even, single rounding from double, and a brute-force oracle
// (nearest of all representable values) on random inputs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/value/float_formats.h"
#include "sim/value/random.h"

namespace tpusim::value {
namespace {

using hlo::PrimitiveType;
using Kind = FloatFormat::Kind;

constexpr PrimitiveType kNarrowTypes[] = {
    PrimitiveType::kF16,        PrimitiveType::kBF16,       PrimitiveType::kF8E5M2,
    PrimitiveType::kF8E4M3,     PrimitiveType::kF8E4M3FN,   PrimitiveType::kF8E4M3B11FNUZ,
    PrimitiveType::kF8E5M2FNUZ, PrimitiveType::kF8E4M3FNUZ, PrimitiveType::kF8E3M4,
    PrimitiveType::kF8E8M0FNU,  PrimitiveType::kF4E2M1FN,
};

std::string TypeName(const testing::TestParamInfo<PrimitiveType>& info) {
  return std::string(hlo::PrimitiveTypeName(info.param));
}

uint32_t CodeCount(PrimitiveType t) { return 1u << FloatFormatOf(t).total_bits; }

uint64_t Bits(double d) { return std::bit_cast<uint64_t>(d); }
uint32_t Bits(float f) { return std::bit_cast<uint32_t>(f); }
double NextUp(double d) { return std::bit_cast<double>(Bits(d) + 1); }    // d > 0
double NextDown(double d) { return std::bit_cast<double>(Bits(d) - 1); }  // d > 0
double Pow2(int e) { return std::ldexp(1.0, e); }  // test-only reference; exact

/// What a finite input too large for the format becomes (by its Kind).
uint32_t ExpectedOverflow(const FloatFormat& f, bool negative) {
  const uint32_t sign = negative ? f.sign_mask() : 0u;
  switch (f.kind) {
    case Kind::kIeee:
      return sign | (((1u << f.exponent_bits) - 1u) << f.mantissa_bits);
    case Kind::kFiniteNan:
      return sign | 0x7Fu;
    case Kind::kFnuz:
      return 0x80u;
    case Kind::kFinite:
      return sign | 0x7u;
    case Kind::kExponentOnly:
      return 0xFFu;
  }
  return 0;
}

/// The tie winner between adjacent codes `lower` and `lower + 1`: the even
/// significand, which is the even code, except in e8m0 whose significand is
/// always the implicit 1, so a tie always rounds up (as in ml_dtypes).
uint32_t TieWinner(const FloatFormat& f, uint32_t lower) {
  if (f.kind == Kind::kExponentOnly) return lower + 1;
  return lower % 2 == 0 ? lower : lower + 1;
}

/// Brute force: the nearest of all non-negative finite values (ties as
/// TieWinner), with the format's overflow, zero and sign rules on top. Codes
/// of non-negative values increase with the value in every format, so the
/// lower neighbour is found by bisection.
uint32_t Oracle(PrimitiveType type, double x) {
  const FloatFormat& f = FloatFormatOf(type);
  const bool negative = std::signbit(x);
  const double ax = std::fabs(x);
  if (negative && !f.is_signed()) return 0xFFu;
  const uint32_t max_code = f.max_finite_code();
  const double max_value = NarrowFloatToDouble(type, max_code);
  // The value just past the largest finite one, on the format's grid.
  const double beyond =
      max_value + Pow2(f.kind == Kind::kExponentOnly
                           ? 127
                           : static_cast<int>(std::ilogb(max_value)) - f.mantissa_bits);
  uint32_t code;
  if (NarrowFloatToDouble(type, 0) > ax) {
    code = 0;  // e8m0 below its smallest value
  } else {
    uint32_t lower = 0;  // largest code whose value is <= ax
    uint32_t upper = max_code + 1;
    while (upper - lower > 1) {
      const uint32_t mid = (lower + upper) / 2;
      (NarrowFloatToDouble(type, mid) <= ax ? lower : upper) = mid;
    }
    const double lo = NarrowFloatToDouble(type, lower);
    const double hi = lower == max_code ? beyond : NarrowFloatToDouble(type, lower + 1);
    const double below = ax - lo;
    const double above = hi - ax;
    code = below < above ? lower : below > above ? lower + 1 : TieWinner(f, lower);
  }
  if (code > max_code) return ExpectedOverflow(f, negative);
  if (code == 0 && f.kind == Kind::kFnuz) return 0;
  return code | (negative ? f.sign_mask() : 0u);
}

class NarrowFloatTest : public testing::TestWithParam<PrimitiveType> {};

INSTANTIATE_TEST_SUITE_P(AllFormats, NarrowFloatTest, testing::ValuesIn(kNarrowTypes), TypeName);

TEST_P(NarrowFloatTest, EveryPatternRoundTripsExceptNanCanonicalisation) {
  const PrimitiveType t = GetParam();
  for (uint32_t code = 0; code < CodeCount(t); ++code) {
    const double d = NarrowFloatToDouble(t, code);
    const float f = NarrowFloatToFloat(t, code);
    if (NarrowFloatIsNan(t, code)) {
      EXPECT_TRUE(std::isnan(d) && std::isnan(f)) << code;
      // Re-encoding gives the format's one canonical NaN of that sign.
      EXPECT_TRUE(NarrowFloatIsNan(t, NarrowFloatFromDouble(t, d))) << code;
      EXPECT_EQ(NarrowFloatFromDouble(t, d), NarrowFloatFromFloat(t, f)) << code;
      continue;
    }
    EXPECT_EQ(NarrowFloatFromDouble(t, d), code) << "code " << code << " value " << d;
    EXPECT_EQ(NarrowFloatFromFloat(t, f), code) << "code " << code;
    EXPECT_EQ(Bits(static_cast<double>(f)), Bits(d)) << "float decode differs at " << code;
  }
}

TEST_P(NarrowFloatTest, NanCountMatchesFormat) {
  const PrimitiveType t = GetParam();
  const FloatFormat& f = FloatFormatOf(t);
  int nans = 0;
  for (uint32_t code = 0; code < CodeCount(t); ++code) nans += NarrowFloatIsNan(t, code) ? 1 : 0;
  int expected = 0;
  switch (f.kind) {
    case Kind::kIeee:
      expected = 2 * ((1 << f.mantissa_bits) - 1);
      break;
    case Kind::kFiniteNan:
      expected = 2;
      break;
    case Kind::kFnuz:
      expected = 1;
      break;
    case Kind::kFinite:
      expected = 0;
      break;
    case Kind::kExponentOnly:
      expected = 1;
      break;
  }
  EXPECT_EQ(nans, expected);
}

TEST_P(NarrowFloatTest, MidpointsRoundToEvenAndNeighboursToNearest) {
  const PrimitiveType t = GetParam();
  const uint32_t max_code = FloatFormatOf(t).max_finite_code();
  int checked = 0;
  for (uint32_t c = 0; c < max_code; ++c) {
    const double lo = NarrowFloatToDouble(t, c);
    const double hi = NarrowFloatToDouble(t, c + 1);
    const double mid = (lo + hi) / 2;  // exact: both have few significant bits
    const uint32_t even = TieWinner(FloatFormatOf(t), c);
    EXPECT_EQ(NarrowFloatFromDouble(t, mid), even) << "midpoint of codes " << c << ", " << c + 1;
    EXPECT_EQ(NarrowFloatFromFloat(t, static_cast<float>(mid)), even) << c;
    EXPECT_EQ(NarrowFloatFromDouble(t, NextDown(mid)), c) << c;
    EXPECT_EQ(NarrowFloatFromDouble(t, NextUp(mid)), c + 1) << c;
    EXPECT_EQ(NarrowFloatFromDouble(t, -mid), Oracle(t, -mid)) << c;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST_P(NarrowFloatTest, MatchesBruteForceNearestOnRandomInputs) {
  const PrimitiveType t = GetParam();
  const FloatFormat& f = FloatFormatOf(t);
  Random random(20240601, static_cast<uint64_t>(t));
  // Exponents from well below the smallest subnormal to past the largest value.
  const int lowest = f.min_exponent() - f.mantissa_bits - 4;
  const int highest = f.bias + 4;
  for (int i = 0; i < 50000; ++i) {
    const int exponent = static_cast<int>(random.UniformInt(lowest, highest));
    const double significand = 1.0 + random.UniformDouble();
    const double x = (random.NextU32() & 1 ? -1.0 : 1.0) * std::ldexp(significand, exponent);
    ASSERT_EQ(NarrowFloatFromDouble(t, x), Oracle(t, x)) << "x = " << x;
    const float xf = static_cast<float>(x);
    if (std::isfinite(xf)) {
      ASSERT_EQ(NarrowFloatFromFloat(t, xf), Oracle(t, xf)) << "x = " << xf;
    }
  }
}

struct KnownValue {
  PrimitiveType type;
  uint32_t code;
  double value;
};

// Written from each format's definition (bias, widths, special codes) and
// checked against the constants ml_dtypes publishes (max, min normal,
// denorm_min).
const KnownValue kKnownValues[] = {
    {PrimitiveType::kF16, 0x3C00, 1.0},
    {PrimitiveType::kF16, 0x7BFF, 65504.0},
    {PrimitiveType::kF16, 0x0400, 0x1p-14},
    {PrimitiveType::kF16, 0x0001, 0x1p-24},
    {PrimitiveType::kF16, 0xC000, -2.0},
    {PrimitiveType::kF16, 0x3555, 0.333251953125},
    {PrimitiveType::kBF16, 0x3F80, 1.0},
    {PrimitiveType::kBF16, 0x7F7F, 0x1.FEp127},
    {PrimitiveType::kBF16, 0x0080, 0x1p-126},
    {PrimitiveType::kBF16, 0x0001, 0x1p-133},
    {PrimitiveType::kBF16, 0x4049, 3.140625},
    {PrimitiveType::kF8E5M2, 0x3C, 1.0},
    {PrimitiveType::kF8E5M2, 0x7B, 57344.0},
    {PrimitiveType::kF8E5M2, 0x04, 0x1p-14},
    {PrimitiveType::kF8E5M2, 0x01, 0x1p-16},
    {PrimitiveType::kF8E4M3, 0x38, 1.0},
    {PrimitiveType::kF8E4M3, 0x77, 240.0},
    {PrimitiveType::kF8E4M3, 0x08, 0x1p-6},
    {PrimitiveType::kF8E4M3, 0x01, 0x1p-9},
    {PrimitiveType::kF8E4M3FN, 0x38, 1.0},
    {PrimitiveType::kF8E4M3FN, 0x7E, 448.0},
    {PrimitiveType::kF8E4M3FN, 0x78, 256.0},  // finite here, infinity in f8e4m3
    {PrimitiveType::kF8E4M3FN, 0x08, 0x1p-6},
    {PrimitiveType::kF8E4M3FN, 0x01, 0x1p-9},
    {PrimitiveType::kF8E4M3FN, 0xFE, -448.0},
    {PrimitiveType::kF8E4M3B11FNUZ, 0x58, 1.0},
    {PrimitiveType::kF8E4M3B11FNUZ, 0x7F, 30.0},
    {PrimitiveType::kF8E4M3B11FNUZ, 0x08, 0x1p-10},
    {PrimitiveType::kF8E4M3B11FNUZ, 0x01, 0x1p-13},
    {PrimitiveType::kF8E5M2FNUZ, 0x40, 1.0},
    {PrimitiveType::kF8E5M2FNUZ, 0x7F, 57344.0},
    {PrimitiveType::kF8E5M2FNUZ, 0x04, 0x1p-15},
    {PrimitiveType::kF8E5M2FNUZ, 0x01, 0x1p-17},
    {PrimitiveType::kF8E4M3FNUZ, 0x40, 1.0},
    {PrimitiveType::kF8E4M3FNUZ, 0x7F, 240.0},
    {PrimitiveType::kF8E4M3FNUZ, 0x08, 0x1p-7},
    {PrimitiveType::kF8E4M3FNUZ, 0x01, 0x1p-10},
    {PrimitiveType::kF8E4M3FNUZ, 0xFF, -240.0},
    {PrimitiveType::kF8E3M4, 0x30, 1.0},
    {PrimitiveType::kF8E3M4, 0x6F, 15.5},
    {PrimitiveType::kF8E3M4, 0x10, 0.25},
    {PrimitiveType::kF8E3M4, 0x01, 0x1p-6},
    {PrimitiveType::kF8E8M0FNU, 0x7F, 1.0},
    {PrimitiveType::kF8E8M0FNU, 0x80, 2.0},
    {PrimitiveType::kF8E8M0FNU, 0x00, 0x1p-127},
    {PrimitiveType::kF8E8M0FNU, 0xFE, 0x1p127},
    {PrimitiveType::kF4E2M1FN, 0x0, 0.0},
    {PrimitiveType::kF4E2M1FN, 0x1, 0.5},
    {PrimitiveType::kF4E2M1FN, 0x2, 1.0},
    {PrimitiveType::kF4E2M1FN, 0x3, 1.5},
    {PrimitiveType::kF4E2M1FN, 0x4, 2.0},
    {PrimitiveType::kF4E2M1FN, 0x5, 3.0},
    {PrimitiveType::kF4E2M1FN, 0x6, 4.0},
    {PrimitiveType::kF4E2M1FN, 0x7, 6.0},
    {PrimitiveType::kF4E2M1FN, 0xF, -6.0},
};

TEST(NarrowFloatKnownValues, DecodeAndEncode) {
  for (const KnownValue& k : kKnownValues) {
    SCOPED_TRACE(std::string(hlo::PrimitiveTypeName(k.type)) + " code " + std::to_string(k.code));
    EXPECT_EQ(NarrowFloatToDouble(k.type, k.code), k.value);
    EXPECT_EQ(NarrowFloatFromDouble(k.type, k.value), k.code);
  }
}

TEST(NarrowFloatKnownValues, MaxFiniteIsTheLargestDecodedValue) {
  for (PrimitiveType t : kNarrowTypes) {
    double largest = 0;
    for (uint32_t c = 0; c < CodeCount(t); ++c) {
      const double d = NarrowFloatToDouble(t, c);
      if (std::isfinite(d) && d > largest) largest = d;
    }
    EXPECT_EQ(largest, NarrowFloatToDouble(t, FloatFormatOf(t).max_finite_code()))
        << hlo::PrimitiveTypeName(t);
  }
}

struct SpecialCase {
  PrimitiveType type;
  // Results for: +inf, -inf, +NaN, -NaN, +0, -0, 1e300, -1e300, 1e-300, -1e-300.
  uint32_t expected[10];
};

const SpecialCase kSpecialCases[] = {
    {PrimitiveType::kF16, {0x7C00, 0xFC00, 0x7E00, 0xFE00, 0, 0x8000, 0x7C00, 0xFC00, 0, 0x8000}},
    {PrimitiveType::kBF16, {0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0, 0x8000, 0x7F80, 0xFF80, 0, 0x8000}},
    {PrimitiveType::kF8E5M2, {0x7C, 0xFC, 0x7E, 0xFE, 0, 0x80, 0x7C, 0xFC, 0, 0x80}},
    {PrimitiveType::kF8E4M3, {0x78, 0xF8, 0x7C, 0xFC, 0, 0x80, 0x78, 0xF8, 0, 0x80}},
    {PrimitiveType::kF8E3M4, {0x70, 0xF0, 0x78, 0xF8, 0, 0x80, 0x70, 0xF0, 0, 0x80}},
    // fn: no infinity, so inf and overflow become NaN, keeping the sign.
    {PrimitiveType::kF8E4M3FN, {0x7F, 0xFF, 0x7F, 0xFF, 0, 0x80, 0x7F, 0xFF, 0, 0x80}},
    // fnuz: one NaN, 0x80, and no negative zero.
    {PrimitiveType::kF8E4M3FNUZ, {0x80, 0x80, 0x80, 0x80, 0, 0, 0x80, 0x80, 0, 0}},
    {PrimitiveType::kF8E5M2FNUZ, {0x80, 0x80, 0x80, 0x80, 0, 0, 0x80, 0x80, 0, 0}},
    {PrimitiveType::kF8E4M3B11FNUZ, {0x80, 0x80, 0x80, 0x80, 0, 0, 0x80, 0x80, 0, 0}},
    // e8m0: unsigned with no zero; zeros and negatives are NaN, tiny values
    // the smallest power 2^-127.
    {PrimitiveType::kF8E8M0FNU, {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0xFF}},
    // f4e2m1fn: saturates; NaN follows ml_dtypes (+NaN -> -0, -NaN -> +0).
    {PrimitiveType::kF4E2M1FN, {0x7, 0xF, 0x8, 0x0, 0, 0x8, 0x7, 0xF, 0, 0x8}},
};

TEST(NarrowFloatSpecials, InfinityNanZeroOverflowUnderflow) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inputs[10] = {inf, -inf, nan, -nan, 0.0, -0.0, 1e300, -1e300, 1e-300, -1e-300};
  for (const SpecialCase& s : kSpecialCases) {
    for (int i = 0; i < 10; ++i) {
      EXPECT_EQ(NarrowFloatFromDouble(s.type, inputs[i]), s.expected[i])
          << hlo::PrimitiveTypeName(s.type) << " input " << inputs[i] << " (case " << i << ")";
    }
  }
}

TEST(NarrowFloatSpecials, OverflowThresholds) {
  using P = PrimitiveType;
  // IEEE formats overflow once the value rounds past the largest finite one.
  EXPECT_EQ(NarrowFloatFromDouble(P::kF16, 65519.0), 0x7BFFu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF16, 65520.0), 0x7C00u);  // tie with 65536: even is inf
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E5M2, 61439.0), 0x7Bu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E5M2, 61440.0), 0x7Cu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E4M3, 247.0), 0x77u);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E4M3, 248.0), 0x78u);
  EXPECT_EQ(Bf16FromFloat(std::numeric_limits<float>::max()), 0x7F80u);
  // fn: 464 is the tie between 448 (even code 0x7E) and 480 (0x7F, NaN).
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E4M3FN, 464.0), 0x7Eu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E4M3FN, NextUp(464.0)), 0x7Fu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E4M3FN, -500.0), 0xFFu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E4M3FNUZ, 250.0), 0x80u);
  // f4e2m1fn saturates at ±6; 5 is the tie between 4 (even) and 6.
  EXPECT_EQ(NarrowFloatFromDouble(P::kF4E2M1FN, 5.0), 0x6u);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF4E2M1FN, 100.0), 0x7u);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF4E2M1FN, -7.0), 0xFu);
  // e8m0 rounds on the exponent grid: 1.5 * 2^k is a tie and goes up.
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E8M0FNU, 1.5), 0x80u);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E8M0FNU, 1.4), 0x7Fu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E8M0FNU, 3.0), 0x81u);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E8M0FNU, 0x1.6p127), 0xFEu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E8M0FNU, 0x1.8p127), 0xFFu);
  EXPECT_EQ(NarrowFloatFromDouble(P::kF8E8M0FNU, 0x1.2p-127), 0x00u);
}

TEST(NarrowFloatRounding, DoubleRoundsOnceNotThroughFloat) {
  // 1 + 2^-8 is the bf16 midpoint between 1 and 1 + 2^-7. Just above it, the
  // double must round up; rounding through float first would land exactly on
  // the midpoint and then tie to even (down to 1).
  const double x = 1.0 + 0x1p-8 + 0x1p-30;
  ASSERT_EQ(static_cast<double>(static_cast<float>(x)), 1.0 + 0x1p-8);
  EXPECT_EQ(NarrowFloatFromDouble(PrimitiveType::kBF16, x), 0x3F81u);
  EXPECT_EQ(Bf16FromFloat(static_cast<float>(x)), 0x3F80u);  // the double-rounded answer
  // The same trap in f8e4m3fn: 1 + 2^-4 is the midpoint between 1 and 1.125.
  const double y = 1.0 + 0x1p-4 + 0x1p-40;
  EXPECT_EQ(NarrowFloatFromDouble(PrimitiveType::kF8E4M3FN, y), 0x39u);
  // And in the subnormal range of f16: halfway between 0 and 2^-24, plus a hair.
  EXPECT_EQ(NarrowFloatFromDouble(PrimitiveType::kF16, 0x1p-25 + 0x1p-60), 0x0001u);
  EXPECT_EQ(NarrowFloatFromDouble(PrimitiveType::kF16, 0x1p-25), 0x0000u);
}

TEST(Bf16FastPath, MatchesGenericEncoder) {
  auto check = [](uint32_t float_bits) {
    const float f = std::bit_cast<float>(float_bits);
    ASSERT_EQ(Bf16FromFloat(f), NarrowFloatFromFloat(PrimitiveType::kBF16, f))
        << std::hex << float_bits;
  };
  // Around every bf16 value: exact, just below and at and above the midpoint.
  for (uint32_t code = 0; code < 0x10000; ++code) {
    for (uint32_t low : {0x0000u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) check((code << 16) | low);
  }
  // And a sweep over all float patterns.
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    check(static_cast<uint32_t>(bits));
  }
}

TEST(Bf16FastPath, DecodeIsTheTopHalfOfAFloat) {
  for (uint32_t code = 0; code < 0x10000; ++code) {
    const float f = Bf16ToFloat(static_cast<uint16_t>(code));
    EXPECT_EQ(Bits(f), code << 16);
    if (!std::isnan(f)) {
      EXPECT_EQ(Bits(NarrowFloatToFloat(PrimitiveType::kBF16, code)), code << 16);
    }
  }
}

TEST(NarrowFloatWrapper, TypedRoundTrip) {
  EXPECT_EQ(BF16::FromFloat(1.0f).bits(), 0x3F80);
  EXPECT_EQ(BF16::FromDouble(3.140625).ToFloat(), 3.140625f);
  EXPECT_EQ(F8E4M3FN::FromFloat(448.0f).bits(), 0x7E);
  EXPECT_TRUE(F8E4M3FN::FromFloat(1000.0f).IsNan());
  EXPECT_EQ(F4E2M1FN::FromDouble(-1.5).bits(), 0xB);
  EXPECT_EQ(F8E8M0FNU::FromBits(0x7F).ToDouble(), 1.0);
  EXPECT_EQ(F16::FromFloat(65504.0f).bits(), 0x7BFF);
  static_assert(sizeof(BF16) == 2 && sizeof(F8E5M2) == 1 && sizeof(F4E2M1FN) == 1);
}

TEST(NarrowFloatFormats, OnlyNarrowTypesHaveAFormat) {
  EXPECT_FALSE(IsNarrowFloat(PrimitiveType::kF32));
  EXPECT_FALSE(IsNarrowFloat(PrimitiveType::kS8));
  for (PrimitiveType t : kNarrowTypes) EXPECT_TRUE(IsNarrowFloat(t));
  EXPECT_DEATH(FloatFormatOf(PrimitiveType::kF64), "not a narrow float type");
}

}  // namespace
}  // namespace tpusim::value
