#include "sim/hlo/dot_dimensions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace tpusim::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(DotFreeDimensions, AreTheDimensionsNeitherBatchNorContractingInIncreasingOrder) {
  const std::vector<int64_t> batch = {2};
  const std::vector<int64_t> contracting = {3, 0};
  EXPECT_THAT(DotFreeDimensions(5, batch, contracting), ElementsAre(1, 4));
}

TEST(DotFreeDimensions, OfAPlainMatmulAreTheRowsOfLhsAndTheColumnsOfRhs) {
  const std::vector<int64_t> none;
  const std::vector<int64_t> lhs_contracting = {1};
  const std::vector<int64_t> rhs_contracting = {0};
  EXPECT_THAT(DotFreeDimensions(2, none, lhs_contracting), ElementsAre(0));
  EXPECT_THAT(DotFreeDimensions(2, none, rhs_contracting), ElementsAre(1));
}

TEST(DotFreeDimensions, AVectorContractedAwayHasNone) {
  const std::vector<int64_t> none;
  const std::vector<int64_t> contracting = {0};
  EXPECT_THAT(DotFreeDimensions(1, none, contracting), IsEmpty());
  EXPECT_THAT(DotFreeDimensions(0, none, none), IsEmpty());
}

}  // namespace
}  // namespace tpusim::hlo
