// Elementwise kernels: one exact-result test per opcode, XLA's integer edge
// cases, and bf16 numerics (f32 math rounded once).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "sim/det_math/det_math.h"
#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using value::BF16;
using value::Literal;

std::string UnaryHlo(std::string_view op, std::string_view in, std::string_view out,
                     std::string_view attrs = "") {
  return "HloModule m\nENTRY e {\n  p = " + std::string(in) +
         " parameter(0)\n  ROOT r = " + std::string(out) + " " + std::string(op) + "(p)" +
         std::string(attrs) + "\n}\n";
}

std::string BinaryHlo(std::string_view op, std::string_view in, std::string_view out,
                      std::string_view attrs = "") {
  return "HloModule m\nENTRY e {\n  a = " + std::string(in) +
         " parameter(0)\n  b = " + std::string(in) +
         " parameter(1)\n  ROOT r = " + std::string(out) + " " + std::string(op) + "(a, b)" +
         std::string(attrs) + "\n}\n";
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

struct FloatUnaryCase {
  const char* op;
  float (*fn)(float);
};

TEST(EvalElementwise, FloatUnaryOpsEqualDetmathExactly) {
  const FloatUnaryCase cases[] = {
      {"exponential", detmath::Exp},
      {"exponential-minus-one", detmath::Expm1},
      {"log", detmath::Log},
      {"log-plus-one", detmath::Log1p},
      {"logistic", detmath::Logistic},
      {"tanh", detmath::Tanh},
      {"sine", detmath::Sin},
      {"cosine", detmath::Cos},
      {"tan", detmath::Tan},
      {"atan", detmath::Atan},
      {"asin", detmath::Asin},
      {"acos", detmath::Acos},
      {"sinh", detmath::Sinh},
      {"cosh", detmath::Cosh},
      {"asinh", detmath::Asinh},
      {"acosh", detmath::Acosh},
      {"atanh", detmath::Atanh},
      {"erf", detmath::Erf},
      {"sqrt", detmath::Sqrt},
      {"rsqrt", detmath::Rsqrt},
      {"cbrt", detmath::Cbrt},
      {"floor", detmath::Floor},
      {"ceil", detmath::Ceil},
      {"round-nearest-afz", detmath::RoundNearestAfz},
      {"round-nearest-even", detmath::RoundNearestEven},
  };
  const std::vector<float> inputs = {0.25f, -0.5f, 0.75f, 1.5f, 2.5f, -3.7f, 1e-3f, 0.0f};
  for (const auto& c : cases) {
    Literal result = Eval(UnaryHlo(c.op, "f32[8]", "f32[8]"),
                          {Literal::CreateR1<float>(std::span<const float>(inputs))});
    ASSERT_EQ(result.element_count(), 8) << c.op;
    for (size_t i = 0; i < inputs.size(); ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(result.data<float>()[i]),
                std::bit_cast<uint32_t>(c.fn(inputs[i])))
          << c.op << "(" << inputs[i] << ")";
    }
  }
}

TEST(EvalElementwise, RankZeroOperandOfABinaryOpBroadcasts) {
  // The verifier accepts a scalar operand of a binary op or compare, as older
  // XLA did (a corpus module adds u32[] to u32[2]): it applies to every element.
  const Literal sum = Eval(R"(HloModule m
ENTRY e {
  s = u32[] parameter(0)
  v = u32[3] parameter(1)
  ROOT a = u32[3] subtract(s, v)
}
)", {Literal::CreateR0<uint32_t>(10), R1<uint32_t>({1, 2, 3})});
  EXPECT_EQ(sum, R1<uint32_t>({9, 8, 7}));
  const Literal less = Eval(R"(HloModule m
ENTRY e {
  v = f32[3] parameter(0)
  s = f32[] parameter(1)
  ROOT c = pred[3] compare(v, s), direction=LT
}
)", {R1<float>({1, 2, 3}), Literal::CreateR0<float>(2)});
  EXPECT_EQ(less, R1<bool>({true, false, false}));
}

TEST(EvalElementwise, AbsNegateSignOnFloats) {
  Literal in = R1<float>({-2.0f, -0.0f, 3.0f, kNan});
  EXPECT_EQ(Eval(UnaryHlo("abs", "f32[4]", "f32[4]"), {in}).data<float>()[0], 2.0f);
  Literal neg = Eval(UnaryHlo("negate", "f32[4]", "f32[4]"), {in});
  EXPECT_EQ(neg.data<float>()[0], 2.0f);
  EXPECT_FALSE(std::signbit(neg.data<float>()[1]));
  Literal sign = Eval(UnaryHlo("sign", "f32[4]", "f32[4]"), {in});
  EXPECT_EQ(sign.data<float>()[0], -1.0f);
  EXPECT_TRUE(std::signbit(sign.data<float>()[1]));
  EXPECT_EQ(sign.data<float>()[2], 1.0f);
  EXPECT_TRUE(std::isnan(sign.data<float>()[3]));
}

TEST(EvalElementwise, IntegerUnaryOpsWrapAndCount) {
  Literal in = R1<int32_t>({INT32_MIN, -5, 0, 12});
  EXPECT_EQ(Eval(UnaryHlo("abs", "s32[4]", "s32[4]"), {in}), R1<int32_t>({INT32_MIN, 5, 0, 12}));
  EXPECT_EQ(Eval(UnaryHlo("negate", "s32[4]", "s32[4]"), {in}),
            R1<int32_t>({INT32_MIN, 5, 0, -12}));
  EXPECT_EQ(Eval(UnaryHlo("sign", "s32[4]", "s32[4]"), {in}), R1<int32_t>({-1, -1, 0, 1}));
  EXPECT_EQ(Eval(UnaryHlo("not", "s32[4]", "s32[4]"), {in}), R1<int32_t>({INT32_MAX, 4, -1, -13}));
  EXPECT_EQ(Eval(UnaryHlo("popcnt", "s32[4]", "s32[4]"), {in}), R1<int32_t>({1, 31, 0, 2}));
  EXPECT_EQ(Eval(UnaryHlo("count-leading-zeros", "s32[4]", "s32[4]"), {in}),
            R1<int32_t>({0, 0, 32, 28}));
  // Sub-byte: clz counts within the 4 bits of an s4.
  Literal s4 = Literal(hlo::Shape(hlo::PrimitiveType::kS4, {2}));
  s4.data<int8_t>()[0] = 1;
  s4.data<int8_t>()[1] = -8;
  Literal clz = Eval(UnaryHlo("count-leading-zeros", "s4[2]", "s4[2]"), {s4});
  EXPECT_EQ(clz.data<int8_t>()[0], 3);
  EXPECT_EQ(clz.data<int8_t>()[1], 0);
}

TEST(EvalElementwise, NotOnPredIsLogical) {
  Literal in = R1<bool>({true, false});
  EXPECT_EQ(Eval(UnaryHlo("not", "pred[2]", "pred[2]"), {in}), R1<bool>({false, true}));
}

TEST(EvalElementwise, IsFiniteGivesPred) {
  Literal in = R1<float>({1.0f, kInf, kNan, -0.0f});
  EXPECT_EQ(Eval(UnaryHlo("is-finite", "f32[4]", "pred[4]"), {in}),
            R1<bool>({true, false, false, true}));
}

TEST(EvalElementwise, FloatBinaryArithmetic) {
  Literal a = R1<float>({7.0f, -7.5f, 1.0f});
  Literal b = R1<float>({2.0f, 2.0f, 3.0f});
  EXPECT_EQ(Eval(BinaryHlo("add", "f32[3]", "f32[3]"), {a, b}), R1<float>({9.0f, -5.5f, 4.0f}));
  EXPECT_EQ(Eval(BinaryHlo("subtract", "f32[3]", "f32[3]"), {a, b}),
            R1<float>({5.0f, -9.5f, -2.0f}));
  EXPECT_EQ(Eval(BinaryHlo("multiply", "f32[3]", "f32[3]"), {a, b}),
            R1<float>({14.0f, -15.0f, 3.0f}));
  EXPECT_EQ(Eval(BinaryHlo("divide", "f32[3]", "f32[3]"), {a, b}),
            R1<float>({3.5f, -3.75f, 1.0f / 3.0f}));
  EXPECT_EQ(Eval(BinaryHlo("remainder", "f32[3]", "f32[3]"), {a, b}),
            R1<float>({1.0f, -1.5f, 1.0f}));
  EXPECT_EQ(Eval(BinaryHlo("power", "f32[3]", "f32[3]"), {a, b}), R1<float>({49.0f, 56.25f, 1.0f}));
  Literal atan2 = Eval(BinaryHlo("atan2", "f32[3]", "f32[3]"), {a, b});
  EXPECT_EQ(atan2.data<float>()[0], detmath::Atan2(7.0f, 2.0f));
}

TEST(EvalElementwise, MaximumAndMinimumPropagateNanAndOrderZeros) {
  Literal a = R1<float>({kNan, 1.0f, -0.0f, 3.0f});
  Literal b = R1<float>({1.0f, kNan, 0.0f, 2.0f});
  Literal max = Eval(BinaryHlo("maximum", "f32[4]", "f32[4]"), {a, b});
  EXPECT_TRUE(std::isnan(max.data<float>()[0]));
  EXPECT_TRUE(std::isnan(max.data<float>()[1]));
  EXPECT_FALSE(std::signbit(max.data<float>()[2]));
  EXPECT_EQ(max.data<float>()[3], 3.0f);
  Literal min = Eval(BinaryHlo("minimum", "f32[4]", "f32[4]"), {a, b});
  EXPECT_TRUE(std::isnan(min.data<float>()[0]));
  EXPECT_TRUE(std::signbit(min.data<float>()[2]));
  EXPECT_EQ(min.data<float>()[3], 2.0f);
}

TEST(EvalElementwise, IntegerDivisionFollowsXla) {
  Literal a = R1<int32_t>({7, -7, 5, INT32_MIN, INT32_MIN});
  Literal b = R1<int32_t>({2, 2, 0, -1, 0});
  EXPECT_EQ(Eval(BinaryHlo("divide", "s32[5]", "s32[5]"), {a, b}),
            R1<int32_t>({3, -3, -1, INT32_MIN, -1}));
  EXPECT_EQ(Eval(BinaryHlo("remainder", "s32[5]", "s32[5]"), {a, b}),
            R1<int32_t>({1, -1, 5, 0, INT32_MIN}));
  Literal ua = R1<uint32_t>({7, 9});
  Literal ub = R1<uint32_t>({0, 0});
  EXPECT_EQ(Eval(BinaryHlo("divide", "u32[2]", "u32[2]"), {ua, ub}),
            R1<uint32_t>({UINT32_MAX, UINT32_MAX}));
  EXPECT_EQ(Eval(BinaryHlo("remainder", "u32[2]", "u32[2]"), {ua, ub}), R1<uint32_t>({7, 9}));
}

TEST(EvalElementwise, IntegerArithmeticWrapsAtTheBitWidth) {
  Literal a = R1<int8_t>({127, -128, 3});
  Literal b = R1<int8_t>({1, 1, 4});
  EXPECT_EQ(Eval(BinaryHlo("add", "s8[3]", "s8[3]"), {a, b}), R1<int8_t>({-128, -127, 7}));
  EXPECT_EQ(Eval(BinaryHlo("subtract", "s8[3]", "s8[3]"), {a, b}), R1<int8_t>({126, 127, -1}));
  EXPECT_EQ(Eval(BinaryHlo("multiply", "s8[3]", "s8[3]"), {a, b}), R1<int8_t>({127, -128, 12}));
  EXPECT_EQ(Eval(BinaryHlo("maximum", "s8[3]", "s8[3]"), {a, b}), R1<int8_t>({127, 1, 4}));
  EXPECT_EQ(Eval(BinaryHlo("minimum", "s8[3]", "s8[3]"), {a, b}), R1<int8_t>({1, -128, 3}));
  EXPECT_EQ(Eval(BinaryHlo("power", "s8[3]", "s8[3]"), {a, b}), R1<int8_t>({127, -128, 81}));
  // s4 wraps at 4 bits: 7 + 1 = -8.
  Literal s4(hlo::Shape(hlo::PrimitiveType::kS4, {1}));
  s4.data<int8_t>()[0] = 7;
  Literal one(hlo::Shape(hlo::PrimitiveType::kS4, {1}));
  one.data<int8_t>()[0] = 1;
  EXPECT_EQ(Eval(BinaryHlo("add", "s4[1]", "s4[1]"), {s4, one}).data<int8_t>()[0], -8);
}

TEST(EvalElementwise, IntegerPowerWithNegativeExponent) {
  Literal a = R1<int32_t>({1, 2, -1, 3});
  Literal b = R1<int32_t>({-3, -1, -1, 0});
  EXPECT_EQ(Eval(BinaryHlo("power", "s32[4]", "s32[4]"), {a, b}), R1<int32_t>({1, 0, 0, 1}));
}

TEST(EvalElementwise, BitwiseOps) {
  Literal a = R1<uint32_t>({0b1100, 0xFFFF0000u});
  Literal b = R1<uint32_t>({0b1010, 0x00FFFF00u});
  EXPECT_EQ(Eval(BinaryHlo("and", "u32[2]", "u32[2]"), {a, b}),
            R1<uint32_t>({0b1000, 0x00FF0000u}));
  EXPECT_EQ(Eval(BinaryHlo("or", "u32[2]", "u32[2]"), {a, b}), R1<uint32_t>({0b1110, 0xFFFFFF00u}));
  EXPECT_EQ(Eval(BinaryHlo("xor", "u32[2]", "u32[2]"), {a, b}),
            R1<uint32_t>({0b0110, 0xFF00FF00u}));
}

TEST(EvalElementwise, ShiftsSaturateOutOfRangeAmounts) {
  Literal a = R1<int32_t>({-16, -16, 1, 1});
  Literal b = R1<int32_t>({2, 32, 31, -1});
  EXPECT_EQ(Eval(BinaryHlo("shift-left", "s32[4]", "s32[4]"), {a, b}),
            R1<int32_t>({-64, 0, INT32_MIN, 0}));
  EXPECT_EQ(Eval(BinaryHlo("shift-right-arithmetic", "s32[4]", "s32[4]"), {a, b}),
            R1<int32_t>({-4, -1, 0, 0}));
  EXPECT_EQ(Eval(BinaryHlo("shift-right-logical", "s32[4]", "s32[4]"), {a, b}),
            R1<int32_t>({0x3FFFFFFC, 0, 0, 0}));
}

TEST(EvalElementwise, MulhiIsTheHighHalfOfTheDoubleWidthProduct) {
  // s32: 0x40000000 * 8 = 2^33 -> 2; -1 * 1 = -1 -> all ones; INT32_MIN^2 = 2^62.
  EXPECT_EQ(Eval(BinaryHlo("mulhi", "s32[3]", "s32[3]"),
                 {R1<int32_t>({0x40000000, -1, INT32_MIN}), R1<int32_t>({8, 1, INT32_MIN})}),
            R1<int32_t>({2, -1, 0x40000000}));
  // u32: the same bits read unsigned; 0xFFFFFFFF * 1 has a high half of 0.
  EXPECT_EQ(Eval(BinaryHlo("mulhi", "u32[2]", "u32[2]"),
                 {R1<uint32_t>({0xFFFFFFFFu, 0xFFFFFFFFu}), R1<uint32_t>({1, 0xFFFFFFFFu})}),
            R1<uint32_t>({0, 0xFFFFFFFEu}));
  // 64 bits need the 128-bit product: 2^62 * 8 = 2^65 -> 2.
  EXPECT_EQ(Eval(BinaryHlo("mulhi", "s64[2]", "s64[2]"),
                 {R1<int64_t>({int64_t{1} << 62, -3}), R1<int64_t>({8, 5})}),
            R1<int64_t>({2, -1}));
  // A float mulhi is not an HLO op.
  EXPECT_FALSE(
      testing::TryEval(BinaryHlo("mulhi", "f32[1]", "f32[1]"), {R1<float>({2}), R1<float>({3})})
          .ok());
}

TEST(EvalElementwise, CompareAllDirections) {
  Literal a = R1<float>({1.0f, 2.0f, kNan});
  Literal b = R1<float>({2.0f, 2.0f, 1.0f});
  auto cmp = [&](const char* dir) {
    return Eval(BinaryHlo("compare", "f32[3]", "pred[3]", std::string(", direction=") + dir),
                {a, b});
  };
  EXPECT_EQ(cmp("EQ"), R1<bool>({false, true, false}));
  EXPECT_EQ(cmp("NE"), R1<bool>({true, false, true}));
  EXPECT_EQ(cmp("LT"), R1<bool>({true, false, false}));
  EXPECT_EQ(cmp("LE"), R1<bool>({true, true, false}));
  EXPECT_EQ(cmp("GT"), R1<bool>({false, false, false}));
  EXPECT_EQ(cmp("GE"), R1<bool>({false, true, false}));
  Literal ua = R1<uint32_t>({1, 0xFFFFFFFFu});
  Literal ub = R1<uint32_t>({2, 1});
  EXPECT_EQ(Eval(BinaryHlo("compare", "u32[2]", "pred[2]", ", direction=LT"), {ua, ub}),
            R1<bool>({true, false}));
}

TEST(EvalElementwise, CompareTotalOrder) {
  Literal a = R1<float>({-0.0f, kNan, -kNan, -kInf});
  Literal b = R1<float>({0.0f, kInf, -kInf, -kNan});
  EXPECT_EQ(
      Eval(BinaryHlo("compare", "f32[4]", "pred[4]", ", direction=LT, type=TOTALORDER"), {a, b}),
      R1<bool>({true, false, true, false}));
  EXPECT_EQ(Eval(BinaryHlo("compare", "f32[4]", "pred[4]", ", direction=LT"), {a, b}),
            R1<bool>({false, false, false, false}));
}

TEST(EvalElementwise, SelectAndClamp) {
  const char* select = R"(HloModule m
ENTRY e {
  p = pred[3] parameter(0)
  a = s32[3] parameter(1)
  b = s32[3] parameter(2)
  ROOT r = s32[3] select(p, a, b)
})";
  EXPECT_EQ(
      Eval(select, {R1<bool>({true, false, true}), R1<int32_t>({1, 2, 3}), R1<int32_t>({4, 5, 6})}),
      R1<int32_t>({1, 5, 3}));
  const char* clamp = R"(HloModule m
ENTRY e {
  lo = f32[] constant(0)
  x = f32[4] parameter(0)
  hi = f32[] constant(1)
  ROOT r = f32[4] clamp(lo, x, hi)
})";
  Literal clamped = Eval(clamp, {R1<float>({-1.0f, 0.5f, 2.0f, kNan})});
  EXPECT_EQ(clamped.data<float>()[0], 0.0f);
  EXPECT_EQ(clamped.data<float>()[1], 0.5f);
  EXPECT_EQ(clamped.data<float>()[2], 1.0f);
  EXPECT_TRUE(std::isnan(clamped.data<float>()[3]));
}

TEST(EvalElementwise, ConvertFollowsXla) {
  Literal f = R1<float>({3.7f, -3.7f, 1e10f, -1e10f, kNan});
  EXPECT_EQ(Eval(UnaryHlo("convert", "f32[5]", "s32[5]"), {f}),
            R1<int32_t>({3, -3, INT32_MAX, INT32_MIN, 0}));
  EXPECT_EQ(Eval(UnaryHlo("convert", "f32[5]", "u8[5]"), {f}), R1<uint8_t>({3, 0, 255, 0, 0}));
  EXPECT_EQ(Eval(UnaryHlo("convert", "f32[5]", "pred[5]"), {f}),
            R1<bool>({true, true, true, true, true}));
  // int -> int wraps.
  EXPECT_EQ(Eval(UnaryHlo("convert", "s32[2]", "s8[2]"), {R1<int32_t>({300, -129})}),
            R1<int8_t>({44, 127}));
  // s64 -> bf16 rounds once: 2^63 + 2^55 + 1 is just above a bf16 tie, so it
  // rounds up, where going through the nearest double would land on the tie
  // and round to even (down).
  const int64_t x = (int64_t{1} << 62) + (int64_t{1} << 54) + 1;
  Literal bf = Eval(UnaryHlo("convert", "s64[1]", "bf16[1]"), {R1<int64_t>({x})});
  EXPECT_EQ(bf.data<BF16>()[0].ToDouble(), std::ldexp(1.0, 62) + std::ldexp(1.0, 55));
  // f32 -> bf16 rounds to nearest even.
  Literal r = Eval(UnaryHlo("convert", "f32[1]", "bf16[1]"), {R1<float>({1.00390625f})});
  EXPECT_EQ(r.data<BF16>()[0].ToFloat(), 1.0f);
}

TEST(EvalElementwise, BitcastConvertChangingWidthAddsOrDropsTheMinorDimension) {
  // f32 1.0 is 0x3F800000: little-endian u16 halves 0x0000, 0x3F80.
  const Literal halves = Eval(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT b = u16[2,2] bitcast-convert(p)
}
)", {R1<float>({1.0f, -2.0f})});
  const auto h = halves.data<uint16_t>();
  EXPECT_EQ(h[0], 0x0000);
  EXPECT_EQ(h[1], 0x3F80);
  EXPECT_EQ(h[2], 0x0000);
  EXPECT_EQ(h[3], 0xC000);
  Literal bytes(hlo::Shape(hlo::PrimitiveType::kU8, {1, 4}));
  const uint8_t b[] = {0x00, 0x00, 0x80, 0x3F};
  std::copy(b, b + 4, bytes.data<uint8_t>().begin());
  const Literal joined = Eval(R"(HloModule m
ENTRY e {
  p = u8[1,4] parameter(0)
  ROOT b = f32[1] bitcast-convert(p)
}
)", {bytes});
  EXPECT_EQ(joined.data<float>()[0], 1.0f);
  auto wrong = testing::TryEval(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT b = u16[2,4] bitcast-convert(p)
}
)", {R1<float>({1.0f, -2.0f})});
  ASSERT_FALSE(wrong.ok());
}

TEST(EvalElementwise, StochasticConvertRoundsUpWhenTheRandomBitsAreBelowTheFraction) {
  // 2.25: fraction 0.25 -> 2^30 of 2^32. Random 2^30 - 1 rounds up, 2^30 not.
  const char* text = R"(HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  r = u32[6] parameter(1)
  ROOT c = s32[6] stochastic-convert(x, r)
}
)";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Literal out = Eval(text, {R1<float>({2.25f, 2.25f, -2.25f, nan, 1e10f, -1e10f}),
                                  R1<uint32_t>({(1u << 30) - 1, 1u << 30, 0, 0, 0, 0})});
  EXPECT_EQ(out, R1<int32_t>({3, 2, -3, 0, INT32_MAX, INT32_MIN}));
}

TEST(EvalElementwise, BitcastConvertKeepsBits) {
  Literal f = R1<float>({1.0f, -2.0f});
  EXPECT_EQ(Eval(UnaryHlo("bitcast-convert", "f32[2]", "u32[2]"), {f}),
            R1<uint32_t>({0x3F800000u, 0xC0000000u}));
  Literal s4(hlo::Shape(hlo::PrimitiveType::kS4, {1}));
  s4.data<int8_t>()[0] = -1;
  Literal u4 = Eval(UnaryHlo("bitcast-convert", "s4[1]", "u4[1]"), {s4});
  EXPECT_EQ(u4.data<uint8_t>()[0], 15);
}

TEST(EvalElementwise, ReducePrecisionToBf16MatchesRoundingToBf16) {
  const std::vector<float> inputs = {1.00390625f, 1.01171875f, 3.14159265f, 1e-40f, 3.4e38f};
  Literal in = Literal::CreateR1<float>(std::span<const float>(inputs));
  Literal r = Eval(
      UnaryHlo("reduce-precision", "f32[5]", "f32[5]", ", exponent_bits=8, mantissa_bits=7"), {in});
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(r.data<float>()[i], value::Bf16ToFloat(value::Bf16FromFloat(inputs[i]))) << i;
  }
  // Fewer exponent bits: overflow to inf, underflow to zero.
  Literal small =
      Eval(UnaryHlo("reduce-precision", "f32[2]", "f32[2]", ", exponent_bits=5, mantissa_bits=10"),
           {R1<float>({70000.0f, 1e-8f})});
  EXPECT_EQ(small.data<float>()[0], kInf);
  EXPECT_EQ(small.data<float>()[1], 0.0f);
}

// Issue 3: bf16 elementwise results equal f32 math rounded once.
TEST(EvalElementwise, Bf16MathIsF32MathRoundedOnce) {
  std::vector<BF16> a, b;
  for (int i = 0; i < 64; ++i) {
    a.push_back(BF16::FromFloat(0.37f * static_cast<float>(i) - 11.0f));
    b.push_back(BF16::FromFloat(1.0f + 0.113f * static_cast<float>(i)));
  }
  Literal la(hlo::Shape(hlo::PrimitiveType::kBF16, {64}));
  Literal lb(hlo::Shape(hlo::PrimitiveType::kBF16, {64}));
  std::copy(a.begin(), a.end(), la.data<BF16>().begin());
  std::copy(b.begin(), b.end(), lb.data<BF16>().begin());
  Literal div = Eval(BinaryHlo("divide", "bf16[64]", "bf16[64]"), {la, lb});
  Literal exp = Eval(UnaryHlo("exponential", "bf16[64]", "bf16[64]"), {la});
  Literal tanh = Eval(UnaryHlo("tanh", "bf16[64]", "bf16[64]"), {la});
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(div.data<BF16>()[i].bits(), BF16::FromFloat(a[i].ToFloat() / b[i].ToFloat()).bits());
    EXPECT_EQ(exp.data<BF16>()[i].bits(), BF16::FromFloat(detmath::Exp(a[i].ToFloat())).bits());
    EXPECT_EQ(tanh.data<BF16>()[i].bits(), BF16::FromFloat(detmath::Tanh(a[i].ToFloat())).bits());
  }
}

TEST(EvalElementwise, OrderedOpsOnComplexAreErrorsNamingTheInstruction) {
  const Literal z(hlo::Shape(hlo::PrimitiveType::kC64, {1}));
  auto result = testing::TryEval(BinaryHlo("maximum", "c64[1]", "c64[1]"), {z, z});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("maximum r"), std::string::npos);
}

}  // namespace
}  // namespace tpusim::eval
