#include "sim/base/arith.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace tpusim {
namespace {

TEST(Arith, SatAddAndSatMulAreExactBelowTheLimitAndStopAtInt64Max) {
  EXPECT_EQ(SatAdd(2, 3), 5);
  EXPECT_EQ(SatAdd(kInt64Max - 1, 1), kInt64Max);
  EXPECT_EQ(SatAdd(kInt64Max, 1), kInt64Max);
  EXPECT_EQ(SatAdd(kInt64Max, kInt64Max), kInt64Max);
  EXPECT_EQ(SatMul(6, 7), 42);
  EXPECT_EQ(SatMul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(SatMul(int64_t{1} << 32, int64_t{1} << 32), kInt64Max);
  EXPECT_EQ(SatMul(kInt64Max, 0), 0);
}

TEST(Arith, CeilDivRoundUpAndMulDivCeilRoundUpExactly) {
  EXPECT_EQ(CeilDiv(0, 8), 0);
  EXPECT_EQ(CeilDiv(8, 8), 1);
  EXPECT_EQ(CeilDiv(9, 8), 2);
  EXPECT_EQ(RoundUp(9, 8), 16);
  EXPECT_EQ(RoundUp(kInt64Max, 1'000), kInt64Max);
  // 10^12 * 10^12 / 3 needs more than 64 bits in between.
  EXPECT_EQ(MulDivCeil(1'000'000'000'000, 1'000'000'000'000, 3'000'000'000'000), 333'333'333'334);
  EXPECT_EQ(MulDivCeil(kInt64Max, 2, 1), kInt64Max);
}

}  // namespace
}  // namespace tpusim
