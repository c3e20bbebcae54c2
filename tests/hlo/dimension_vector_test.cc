// DimensionVector: inline storage up to six entries, heap beyond, with the
// value semantics of a std::vector.
#include "sim/hlo/dimension_vector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tpusim::hlo {
namespace {

using ::testing::ElementsAre;

/// True when v's entries live inside the object itself (no heap block).
bool IsInline(const DimensionVector& v) {
  const auto* object = reinterpret_cast<const char*>(&v);
  const auto* entries = reinterpret_cast<const char*>(v.data());
  return entries >= object && entries < object + sizeof(DimensionVector);
}

TEST(DimensionVectorTest, SmallListsStayInline) {
  DimensionVector v = {8, 128};
  EXPECT_TRUE(IsInline(v));
  EXPECT_EQ(v.capacity(), DimensionVector::kInlineCapacity);
  EXPECT_THAT(v, ElementsAre(8, 128));
  for (int64_t i = 0; i < 4; ++i) v.push_back(i);
  EXPECT_TRUE(IsInline(v));
  EXPECT_THAT(v, ElementsAre(8, 128, 0, 1, 2, 3));
}

TEST(DimensionVectorTest, SpillsToTheHeapKeepingEntries) {
  DimensionVector v = {1, 2, 3, 4, 5, 6};
  v.push_back(7);
  EXPECT_FALSE(IsInline(v));
  EXPECT_GE(v.capacity(), 7u);
  EXPECT_THAT(v, ElementsAre(1, 2, 3, 4, 5, 6, 7));
  v.pop_back();
  EXPECT_EQ(v.back(), 6);
  EXPECT_EQ(v.front(), 1);
  v.resize(9, -1);
  EXPECT_THAT(v, ElementsAre(1, 2, 3, 4, 5, 6, -1, -1, -1));
  v.clear();
  EXPECT_TRUE(v.empty());
}

TEST(DimensionVectorTest, CopiesAndMovesInlineAndHeapLists) {
  const DimensionVector small = {3, 2, 1, 0};
  const std::vector<int64_t> long_list = {0, 1, 2, 3, 4, 5, 6, 7};
  const DimensionVector big = long_list;

  DimensionVector small_copy = small;
  DimensionVector big_copy = big;
  EXPECT_EQ(small_copy, small);
  EXPECT_EQ(big_copy, big);
  EXPECT_NE(big_copy.data(), big.data());

  const int64_t* heap_block = big_copy.data();
  DimensionVector moved_big = std::move(big_copy);
  EXPECT_EQ(moved_big.data(), heap_block);  // the block is taken, not copied
  EXPECT_EQ(moved_big, big);
  EXPECT_TRUE(big_copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_TRUE(IsInline(big_copy));

  DimensionVector moved_small = std::move(small_copy);
  EXPECT_TRUE(IsInline(moved_small));
  EXPECT_EQ(moved_small, small);

  // Assignments replace the entries whichever storage either side uses.
  moved_small = big;
  EXPECT_THAT(moved_small, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  moved_big = small;
  EXPECT_EQ(moved_big, small);
  moved_big = std::move(moved_small);
  EXPECT_EQ(moved_big, big);
  moved_big = {5};
  EXPECT_THAT(moved_big, ElementsAre(5));
  EXPECT_FALSE(moved_big == small);
}

TEST(DimensionVectorTest, IsAContiguousRangeOfInt64) {
  DimensionVector v = {4, 5, 6};
  const std::span<const int64_t> view = v;
  EXPECT_EQ(view.data(), v.data());
  EXPECT_EQ(view.size(), 3u);
  const DimensionVector from_span(view.subspan(1));
  EXPECT_THAT(from_span, ElementsAre(5, 6));
  v[0] = 9;
  int64_t sum = 0;
  for (int64_t d : v) sum += d;
  EXPECT_EQ(sum, 20);
}

}  // namespace
}  // namespace tpusim::hlo
