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

TEST(ResolveRaggedDot, TheRaggedDimensionsKindPicksTheModeAndWhatIndexesTheSizes) {
  using Dims = std::vector<int64_t>;
  const Dims none;
  // Free: lhs [b=2, x=3, m=5, k=4], rhs [g=6, b=2, k=4, n=7], sizes [b, x, g].
  StatusOr<RaggedDotDimensions> rows = ResolveRaggedDot(
      Shape(PrimitiveType::kF32, {2, 3, 5, 4}), Shape(PrimitiveType::kF32, {6, 2, 4, 7}),
      Shape(PrimitiveType::kS32, {2, 3, 6}), Dims{0}, Dims{3}, Dims{1}, Dims{2}, Dims{2}, Dims{0});
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(rows->mode, RaggedDotMode::kNonContracting);
  EXPECT_EQ(rows->groups, 6);
  EXPECT_EQ(rows->rhs_group, 0);
  EXPECT_THAT(rows->rhs_free, ElementsAre(3));
  EXPECT_THAT(rows->group_sizes_lhs_dims, ElementsAre(0, 1));
  // Contracting: lhs [m=11, x=19, k=5], contracting {1,2}, sizes [x, g].
  StatusOr<RaggedDotDimensions> depth = ResolveRaggedDot(
      Shape(PrimitiveType::kF32, {11, 19, 5}), Shape(PrimitiveType::kF32, {19, 5, 7}),
      Shape(PrimitiveType::kS64, {19, 3}), none, Dims{1, 2}, none, Dims{0, 1}, Dims{2}, none);
  ASSERT_TRUE(depth.ok()) << depth.status().message();
  EXPECT_EQ(depth->mode, RaggedDotMode::kContracting);
  EXPECT_THAT(depth->group_sizes_lhs_dims, ElementsAre(1));
  // Batch, with sizes [g]: one set for every row.
  StatusOr<RaggedDotDimensions> batch = ResolveRaggedDot(
      Shape(PrimitiveType::kF32, {4, 5, 3}), Shape(PrimitiveType::kF32, {4, 3, 2}),
      Shape(PrimitiveType::kS32, {2}), Dims{0}, Dims{2}, Dims{0}, Dims{1}, Dims{0}, none);
  ASSERT_TRUE(batch.ok()) << batch.status().message();
  EXPECT_EQ(batch->mode, RaggedDotMode::kBatch);
  EXPECT_THAT(batch->group_sizes_lhs_dims, IsEmpty());
  // A batch dimension out of range, which indexes the sizes, is refused, not read.
  EXPECT_FALSE(ResolveRaggedDot(Shape(PrimitiveType::kF32, {2, 5, 4}),
                                Shape(PrimitiveType::kF32, {3, 2, 4, 6}),
                                Shape(PrimitiveType::kS32, {2, 3}), Dims{7}, Dims{2}, Dims{1},
                                Dims{2}, Dims{1}, Dims{0})
                   .ok());
  // A group dimension outside free mode is refused.
  EXPECT_FALSE(ResolveRaggedDot(Shape(PrimitiveType::kF32, {4, 5, 3}),
                                Shape(PrimitiveType::kF32, {4, 3, 2}),
                                Shape(PrimitiveType::kS32, {2}), Dims{0}, Dims{2}, Dims{0}, Dims{1},
                                Dims{0}, Dims{2})
                   .ok());
}

}  // namespace
}  // namespace tpusim::hlo
