#include "sim/value/random.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tpusim::value {
namespace {

// Known-answer vectors of Random123 (kat_vectors: philox4x32 10 CTR KEY -> OUT).
TEST(Philox4x32Test, MatchesRandom123KnownAnswers) {
  using Words = std::array<uint32_t, 4>;
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Golden values: inputs generated from a seed are part of every scenario's
// golden outputs, so these must never change. A failure here means golden
// files everywhere would change too.
TEST(RandomTest, GoldenBitsForSeed42) {
  Random r(42);
  const uint32_t expected[] = {0x9ceaf053u, 0x77f5493bu, 0x12bf50adu,
                               0x5742b3d7u, 0xfcdb2127u, 0x53ba6cfdu};
  for (uint32_t e : expected) EXPECT_EQ(r.NextU32(), e);

  Random stream7(42, 7);
  EXPECT_EQ(stream7.NextU64(), 0xe55410cc67ee6f2cull);
  EXPECT_EQ(stream7.NextU64(), 0x557398d36c7eca35ull);
  EXPECT_EQ(stream7.NextU64(), 0x600f6196e5dde940ull);
}

TEST(RandomTest, GoldenNormalsForSeed42) {
  Random r(42);
  const uint64_t expected[] = {0xbfda4cf416d42f64ull, 0xc000a7952386200aull, 0xbfff5e3d9afd7a85ull,
                               0xbfe092ac23fd0bf5ull, 0x3fe5b508b87d06a7ull, 0x3ff2c18c747e4a19ull};
  for (uint64_t e : expected) EXPECT_EQ(std::bit_cast<uint64_t>(r.Normal()), e);
}

TEST(RandomTest, FillNormalGivesWhatNormalGivesWhateverTheLengths) {
  // Lengths odd and even, shorter and longer than one batch of pairs, and
  // mixed with Normal() calls, so that a spare passes both ways.
  Random one_by_one(7, 3), filled(7, 3);
  for (size_t length :
       {size_t{1}, size_t{0}, size_t{5}, size_t{16}, size_t{17}, size_t{3}, size_t{1000}}) {
    std::vector<double> expected(length), actual(length);
    for (double& x : expected) x = one_by_one.Normal();
    filled.FillNormal(actual);
    for (size_t i = 0; i < length; ++i) {
      ASSERT_EQ(std::bit_cast<uint64_t>(actual[i]), std::bit_cast<uint64_t>(expected[i]))
          << "length " << length << ", element " << i;
    }
    ASSERT_EQ(std::bit_cast<uint64_t>(filled.Normal()),
              std::bit_cast<uint64_t>(one_by_one.Normal()))
        << "after length " << length;
  }
  EXPECT_EQ(filled.NextU32(), one_by_one.NextU32());  // the same words drawn
}

TEST(RandomTest, GoldenUniformsForSeed42) {
  Random ints(42);
  const int64_t expected_ints[] = {2, 2, 3, -4, 3, 0, -4, -1};
  for (int64_t e : expected_ints) EXPECT_EQ(ints.UniformInt(-5, 5), e);
  Random doubles(42);
  EXPECT_EQ(doubles.UniformDouble(), 0x1.dfd524ee73abcp-2);
  EXPECT_EQ(doubles.UniformDouble(), 0x1.5d0acf5c4afd4p-2);
}

TEST(RandomTest, SeedsAndStreamsDiffer) {
  Random a(1), b(2), c(1, 1);
  const uint32_t first = a.NextU32();
  EXPECT_NE(first, b.NextU32());
  EXPECT_NE(first, c.NextU32());
  Random again(1);
  EXPECT_EQ(again.NextU32(), first);
}

TEST(RandomTest, UniformIntCoversTheRangeEvenly) {
  Random r(7);
  // A range of 3 does not divide 2^64: modulo alone would favour 0 slightly.
  std::vector<int> counts(3);
  constexpr int kDraws = 300000;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t v = r.UniformInt(10, 12);
    ASSERT_GE(v, 10);
    ASSERT_LE(v, 12);
    ++counts[v - 10];
  }
  for (int c : counts) EXPECT_NEAR(c, kDraws / 3, 1500);  // ~5.8 standard deviations
  // Degenerate and full ranges.
  EXPECT_EQ(r.UniformInt(5, 5), 5);
  r.UniformInt(INT64_MIN, INT64_MAX);
  const int64_t wide = r.UniformInt(-1, INT64_MAX);
  EXPECT_GE(wide, -1);
}

TEST(RandomTest, UniformDoubleIsInUnitInterval) {
  Random r(3);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = r.UniformDouble();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
}

TEST(RandomTest, NormalHasUnitMomentsAndSymmetricTails) {
  Random r(11);
  constexpr int kDraws = 200000;
  double sum = 0, sum_sq = 0, sum_4 = 0;
  int beyond_2 = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double x = r.Normal();
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum_sq += x * x;
    sum_4 += x * x * x * x;
    beyond_2 += std::fabs(x) > 2 ? 1 : 0;
  }
  EXPECT_NEAR(sum / kDraws, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / kDraws, 1.0, 0.015);
  EXPECT_NEAR(sum_4 / kDraws, 3.0, 0.1);                               // kurtosis of a normal
  EXPECT_NEAR(static_cast<double>(beyond_2) / kDraws, 0.0455, 0.002);  // P(|x| > 2)
}

TEST(RandomDeathTest, EmptyRangeIsACallerBug) {
  Random r(1);
  EXPECT_DEATH(r.UniformInt(3, 2), "lo <= hi");
}

}  // namespace
}  // namespace tpusim::value
