// Comparing arrays: ulp distance by ordered bit patterns, NaN and infinity
// handling, tolerances, exactness, incompatible shapes.
#include "sim/value/compare.h"

#include <gtest/gtest.h>

#include <bit>
#include <complex>
#include <cstdint>
#include <limits>
#include <vector>

namespace tpusim::value {
namespace {

Literal F32(std::vector<float> values) { return Literal::CreateR1<float>(values); }

/// A bf16 vector with the given raw bit patterns.
Literal Bf16Bits(std::vector<uint16_t> bits) {
  Literal literal(hlo::Shape(hlo::PrimitiveType::kBF16, {static_cast<int64_t>(bits.size())}));
  for (size_t i = 0; i < bits.size(); ++i) literal.data<uint16_t>()[i] = bits[i];
  return literal;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kMax = std::numeric_limits<float>::max();
constexpr float kDenormMin = std::numeric_limits<float>::denorm_min();

TEST(UlpDistance, CountsRepresentableFloatsBetweenTwoValues) {
  const Literal a = F32({1.0f, 1.0f, 0.0f, -0.0f, kMax, -kDenormMin, kNan, kNan, 2.0f});
  const Literal b = F32({1.0f, 1.0000002f, -0.0f, kDenormMin, kInf, kDenormMin, kNan, 1.0f, -2.0f});
  EXPECT_EQ(UlpDistance(a, b, 0), 0u);
  EXPECT_EQ(UlpDistance(a, b, 1), 2u);          // 1 + 2 ulp (ulp of 1 is 2^-23)
  EXPECT_EQ(UlpDistance(a, b, 2), 0u);          // +0 and -0 are the same point
  EXPECT_EQ(UlpDistance(a, b, 3), 1u);          // -0 to the smallest denormal
  EXPECT_EQ(UlpDistance(a, b, 4), 1u);          // largest finite to infinity
  EXPECT_EQ(UlpDistance(a, b, 5), 2u);          // across zero
  EXPECT_EQ(UlpDistance(a, b, 6), 0u);          // NaN against NaN
  EXPECT_EQ(UlpDistance(a, b, 7), std::nullopt);  // NaN against a number
  EXPECT_EQ(UlpDistance(a, b, 8), 2u * 0x40000000u);  // 2 and -2: twice 2's bit pattern
}

TEST(UlpDistance, Bf16UsesItsOwnSixteenBitGrid) {
  // 1.0 = 0x3F80, next bf16 up = 0x3F81; -1.0 = 0xBF80.
  const Literal a = Bf16Bits({0x3F80, 0x3F80, 0x8000, 0x7F80});
  const Literal b = Bf16Bits({0x3F81, 0xBF80, 0x0000, 0x7F7F});
  EXPECT_EQ(UlpDistance(a, b, 0), 1u);
  EXPECT_EQ(UlpDistance(a, b, 1), 2u * 0x3F80u);
  EXPECT_EQ(UlpDistance(a, b, 2), 0u);
  EXPECT_EQ(UlpDistance(a, b, 3), 1u);  // infinity and the largest finite bf16
}

TEST(UlpDistance, IntegersAreTheirDifferenceAndMixedTypesUndefined) {
  const Literal a = Literal::CreateR1<int32_t>({1, -2});
  const Literal b = Literal::CreateR1<int32_t>({4, 3});
  EXPECT_EQ(UlpDistance(a, b, 0), 3u);
  EXPECT_EQ(UlpDistance(a, b, 1), 5u);
  EXPECT_EQ(UlpDistance(F32({1.0f}), Bf16Bits({0x3F80}), 0), std::nullopt);
  const Literal pred = Literal::CreateR1<bool>({true});
  EXPECT_EQ(UlpDistance(pred, pred, 0), std::nullopt);
}

TEST(CompareLiterals, IdenticalOutputsHaveNoDifference) {
  const Literal a = F32({1.0f, kNan, -kInf});
  const LiteralComparison c = CompareLiterals(a, a, ErrorSpec{});
  EXPECT_TRUE(c.compared);
  EXPECT_TRUE(c.within_tolerance());
  EXPECT_EQ(c.elements, 3);
  EXPECT_EQ(c.differing, 0);
  EXPECT_EQ(c.max_abs_error, 0.0);
  EXPECT_EQ(c.max_ulp, 0u);
  EXPECT_EQ(c.worst_index, -1);
}

TEST(CompareLiterals, MeasuresErrorsAndCountsElementsBeyondTolerance) {
  const Literal before = F32({1.0f, 100.0f, 0.0f, 4.0f});
  const Literal after = F32({1.0f, 100.05f, 1e-6f, 4.5f});
  ErrorSpec tolerance;
  tolerance.rtol = 1e-3;  // 100 -> 100.05 passes (0.05 <= 1e-5 + 0.1)
  tolerance.atol = 1e-5;  // 0 -> 1e-6 passes
  const LiteralComparison c = CompareLiterals(before, after, tolerance);
  EXPECT_EQ(c.differing, 3);
  EXPECT_EQ(c.beyond_tolerance, 1);  // only 4 -> 4.5
  EXPECT_FALSE(c.within_tolerance());
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(c.max_rel_error, 0.125);  // the element at 0 has no relative error
  EXPECT_EQ(c.worst_index, 3);
  // The largest ulp distance is 0 -> 1e-6 (1e-6f's bit pattern), not 4 -> 4.5 (2^20).
  EXPECT_EQ(c.max_ulp, std::bit_cast<uint32_t>(1e-6f));
}

TEST(CompareLiterals, MaxUlpAdmitsCloseValuesAtolWouldReject) {
  const Literal before = F32({1.0f});
  const Literal after = F32({1.0000002f});  // 2 ulp
  ErrorSpec strict;
  EXPECT_EQ(CompareLiterals(before, after, strict).beyond_tolerance, 1);
  strict.ulp = 2;
  EXPECT_EQ(CompareLiterals(before, after, strict).beyond_tolerance, 0);
  strict.ulp = 1;
  EXPECT_EQ(CompareLiterals(before, after, strict).beyond_tolerance, 1);
}

TEST(CompareLiterals, NanOnOneSideAndInfinityAgainstFiniteAreBeyondTolerance) {
  const Literal before = F32({kNan, 1.0f, kInf, 0.0f});
  const Literal after = F32({1.0f, kNan, 3.0f, -0.0f});
  const LiteralComparison c = CompareLiterals(before, after, ErrorSpec{});
  EXPECT_EQ(c.nan_mismatches, 2);
  EXPECT_EQ(c.differing, 4);         // -0 is not +0 bit for bit
  EXPECT_EQ(c.beyond_tolerance, 3);  // but it is within tolerance
  EXPECT_EQ(c.max_abs_error, kInf);
}

TEST(CompareLiterals, IncompatibleShapesAreNotCompared) {
  const LiteralComparison c =
      CompareLiterals(F32({1.0f, 2.0f}), F32({1.0f, 2.0f, 3.0f}), ErrorSpec{});
  EXPECT_FALSE(c.compared);
  EXPECT_FALSE(c.within_tolerance());
}

TEST(CompareLiterals, ExactRefusesWhatToleranceAdmits) {
  // -0 against +0 and two NaNs with different payloads: equal values, other bits.
  Literal before = F32({0.0f, 1.0f, kNan});
  Literal after = F32({-0.0f, 1.0f, -kNan});
  ErrorSpec exact;
  exact.exact = true;
  const LiteralComparison strict = CompareLiterals(before, after, exact);
  EXPECT_EQ(strict.beyond_tolerance, 2);
  EXPECT_EQ(strict.first_beyond_index, 0);
  const LiteralComparison loose = CompareLiterals(before, after, ErrorSpec{});
  EXPECT_EQ(loose.beyond_tolerance, 0);
  EXPECT_EQ(loose.first_beyond_index, -1);
}

TEST(CompareLiterals, FirstBeyondIndexIsTheFirstElementOutsideTheSpec) {
  ErrorSpec tolerance;
  tolerance.atol = 0.1;
  const LiteralComparison c =
      CompareLiterals(F32({1.0f, 2.0f, 3.0f, 4.0f}), F32({1.05f, 2.0f, 3.5f, 9.0f}), tolerance);
  EXPECT_EQ(c.beyond_tolerance, 2);
  EXPECT_EQ(c.first_beyond_index, 2);
  EXPECT_EQ(c.worst_index, 3);
}

TEST(CompareLiterals, ComplexElementsUseTheModulusOfTheirDifference) {
  using C = std::complex<float>;
  const Literal before = Literal::CreateR1<C>({C(3, 4), C(1, 0)});
  const Literal after = Literal::CreateR1<C>({C(0, 0), C(1, 0)});
  ErrorSpec tolerance;
  tolerance.atol = 5;
  const LiteralComparison c = CompareLiterals(before, after, tolerance);
  EXPECT_EQ(c.differing, 1);
  EXPECT_EQ(c.beyond_tolerance, 0);  // |(3,4) - 0| = 5 <= atol
  EXPECT_DOUBLE_EQ(c.max_abs_error, 5.0);
  EXPECT_EQ(c.max_ulp, std::nullopt);
}

TEST(CompareLiterals, IntegersCompareAsNumbersWithoutUlps) {
  const LiteralComparison c = CompareLiterals(Literal::CreateR1<int32_t>({5, 7}),
                                           Literal::CreateR1<int32_t>({5, 9}), ErrorSpec{});
  EXPECT_EQ(c.differing, 1);
  EXPECT_EQ(c.beyond_tolerance, 1);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 2.0);
  EXPECT_EQ(c.max_ulp, std::nullopt);
}

}  // namespace
}  // namespace tpusim::value
