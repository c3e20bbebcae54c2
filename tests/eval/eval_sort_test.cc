// sort: ascending and descending, along any dimension, variadic, stable, and
// deterministic for a comparator that is not a strict weak order; topk.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using value::Literal;

TEST(EvalSort, SortsEachRowAlongTheSortDimension) {
  const char* text = R"(HloModule m
gt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  p = s32[3,2] parameter(0)
  ROOT s = s32[3,2] sort(p), dimensions={0}, to_apply=gt
})";
  Literal p(hlo::Shape(hlo::PrimitiveType::kS32, {3, 2}));
  const int32_t values[] = {1, 9, 5, 2, 3, 7};  // columns {1,5,3} and {9,2,7}
  std::copy(std::begin(values), std::end(values), p.data<int32_t>().begin());
  Literal r = Eval(text, {p});
  EXPECT_EQ(std::vector<int32_t>(r.data<int32_t>().begin(), r.data<int32_t>().end()),
            (std::vector<int32_t>{5, 9, 3, 7, 1, 2}));
}

TEST(EvalSort, VariadicSortIsStableOnEqualKeys) {
  const char* text = R"(HloModule m
lt {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  v0 = s32[] parameter(2)
  v1 = s32[] parameter(3)
  ROOT c = pred[] compare(k0, k1), direction=LT
}
ENTRY e {
  k = f32[6] parameter(0)
  v = s32[6] iota(), iota_dimension=0
  ROOT s = (f32[6], s32[6]) sort(k, v), dimensions={0}, is_stable=true, to_apply=lt
})";
  Literal r = Eval(text, {R1<float>({2, 1, 2, 0, 1, 2})});
  ASSERT_EQ(r.tuple_size(), 2);
  EXPECT_EQ(r.tuple_element(0), R1<float>({0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(r.tuple_element(1), R1<int32_t>({3, 1, 4, 0, 2, 5}));
}

TEST(EvalSort, NanKeysWithPlainLessThanGiveAFixedPermutation) {
  const char* text = R"(HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = f32[5] parameter(0)
  ROOT s = f32[5] sort(p), dimensions={0}, to_apply=lt
})";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Literal r = Eval(text, {R1<float>({3, nan, 1, 2, nan})});
  // Merge of runs {3,nan} {1,2} {nan}: NaN never compares less, nothing is
  // less than NaN, so it stays where the merges leave it.
  const auto d = r.data<float>();
  EXPECT_EQ(d[0], 1.0f);
  EXPECT_EQ(d[1], 2.0f);
  EXPECT_EQ(d[2], 3.0f);
  EXPECT_TRUE(std::isnan(d[3]));
  EXPECT_TRUE(std::isnan(d[4]));
}

TEST(EvalSort, TotalOrderComparatorPutsNansLast) {
  const char* text = R"(HloModule m
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  p = f32[4] parameter(0)
  ROOT s = f32[4] sort(p), dimensions={0}, to_apply=lt
})";
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Literal r = Eval(text, {R1<float>({nan, 0.0f, -0.0f, -1.0f})});
  const auto d = r.data<float>();
  EXPECT_EQ(d[0], -1.0f);
  EXPECT_TRUE(std::signbit(d[1]));
  EXPECT_FALSE(std::signbit(d[2]));
  EXPECT_TRUE(std::isnan(d[3]));
}

TEST(EvalTopK, LargestPerRowWithLowerIndexFirstOnTies) {
  const char* text = R"(HloModule m
ENTRY e {
  p = f32[2,4] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) topk(p), k=2, largest=true
})";
  Literal p(hlo::Shape(hlo::PrimitiveType::kF32, {2, 4}));
  const float values[] = {1, 5, 3, 5, -1, -0.5f, -2, -3};
  std::copy(std::begin(values), std::end(values), p.data<float>().begin());
  Literal r = Eval(text, {p});
  ASSERT_EQ(r.tuple_size(), 2);
  const auto v = r.tuple_element(0).data<float>();
  EXPECT_EQ(std::vector<float>(v.begin(), v.end()), (std::vector<float>{5, 5, -0.5f, -1}));
  const auto i = r.tuple_element(1).data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(i.begin(), i.end()), (std::vector<int32_t>{1, 3, 1, 0}));
}

TEST(EvalTopK, SmallestOfIntegers) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[5] parameter(0)
  ROOT t = (s32[3], s32[3]) topk(p), k=3, largest=false
})";
  Literal r = Eval(text, {R1<int32_t>({4, -7, 0, 9, -7})});
  EXPECT_EQ(r.tuple_element(0), R1<int32_t>({-7, -7, 0}));
  EXPECT_EQ(r.tuple_element(1), R1<int32_t>({1, 4, 2}));
}

TEST(EvalTopK, TheTopKCustomCallIsTheLargestKOrTheComparatorsFirstK) {
  // XLA's TopK custom call (what TopkRewriter makes of a sort and a slice):
  // k from the result, the largest first, ties in index order; with a
  // comparator, the first k in its order (here LT: the smallest).
  const Literal p = R1<int32_t>({4, -7, 0, 9, -7, 9});
  const Literal largest = Eval(R"(HloModule m
ENTRY e {
  p = s32[6] parameter(0)
  ROOT t = (s32[3], s32[3]) custom-call(p), custom_call_target="TopK"
})",
                               {p});
  EXPECT_EQ(largest.tuple_element(0), R1<int32_t>({9, 9, 4}));
  EXPECT_EQ(largest.tuple_element(1), R1<int32_t>({3, 5, 0}));
  const Literal smallest = Eval(R"(HloModule m
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  p = s32[6] parameter(0)
  ROOT t = (s32[2], s32[2]) custom-call(p), custom_call_target="TopK", to_apply=less
})",
                                {p});
  EXPECT_EQ(smallest.tuple_element(0), R1<int32_t>({-7, -7}));
  EXPECT_EQ(smallest.tuple_element(1), R1<int32_t>({1, 4}));
}

}  // namespace
}  // namespace tpusim::eval
