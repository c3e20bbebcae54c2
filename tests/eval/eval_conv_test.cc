// convolution: padding, strides, dilations, reversal, feature groups, and
// exactly dot's MXU numerics.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using value::Literal;

Literal S32(std::vector<int64_t> dims, std::vector<int32_t> values) {
  Literal l(hlo::Shape(hlo::PrimitiveType::kS32, std::move(dims)));
  std::copy(values.begin(), values.end(), l.data<int32_t>().begin());
  return l;
}

std::vector<int32_t> Values(const Literal& l) {
  return {l.data<int32_t>().begin(), l.data<int32_t>().end()};
}

std::string Conv1d(std::string_view in, std::string_view kernel, std::string_view out,
                   std::string_view attrs) {
  return "HloModule m\nENTRY e {\n  x = s32" + std::string(in) + " parameter(0)\n  k = s32" +
         std::string(kernel) + " parameter(1)\n  ROOT c = s32" + std::string(out) +
         " convolution(x, k), " + std::string(attrs) + "\n}\n";
}

TEST(EvalConv, PaddedOneDimensional) {
  const std::string text =
      Conv1d("[1,5,1]", "[3,1,1]", "[1,5,1]", "window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f");
  EXPECT_EQ(Values(Eval(text, {S32({1, 5, 1}, {1, 2, 3, 4, 5}), S32({3, 1, 1}, {1, 2, 3})})),
            (std::vector<int32_t>{8, 14, 20, 26, 14}));
}

TEST(EvalConv, WindowReversalFlipsTheKernel) {
  const std::string text =
      Conv1d("[1,5,1]", "[3,1,1]", "[1,5,1]",
             "window={size=3 pad=1_1 rhs_reversal=1}, dim_labels=b0f_0io->b0f");
  EXPECT_EQ(Values(Eval(text, {S32({1, 5, 1}, {1, 2, 3, 4, 5}), S32({3, 1, 1}, {1, 2, 3})}))[1],
            10);
}

TEST(EvalConv, StrideAndBothDilations) {
  // lhs_dilate=2 turns {1,2,3} into {1,0,2,0,3}; rhs_dilate=2 puts the two
  // taps two apart.
  const std::string text =
      Conv1d("[1,3,1]", "[2,1,1]", "[1,3,1]",
             "window={size=2 rhs_dilate=2 lhs_dilate=2}, dim_labels=b0f_0io->b0f");
  EXPECT_EQ(Values(Eval(text, {S32({1, 3, 1}, {1, 2, 3}), S32({2, 1, 1}, {1, 1})})),
            (std::vector<int32_t>{3, 0, 5}));
  const std::string strided =
      Conv1d("[1,5,1]", "[2,1,1]", "[1,2,1]", "window={size=2 stride=3}, dim_labels=b0f_0io->b0f");
  EXPECT_EQ(Values(Eval(strided, {S32({1, 5, 1}, {1, 2, 3, 4, 5}), S32({2, 1, 1}, {1, 10})})),
            (std::vector<int32_t>{21, 54}));
}

TEST(EvalConv, FeatureGroupsConvolveEachGroupAlone) {
  const std::string text =
      Conv1d("[1,2,2]", "[1,1,2]", "[1,2,2]",
             "window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2");
  EXPECT_EQ(Values(Eval(text, {S32({1, 2, 2}, {1, 2, 3, 4}), S32({1, 1, 2}, {10, 100})})),
            (std::vector<int32_t>{10, 200, 30, 400}));
}

TEST(EvalConv, OneByOneConvolutionEqualsDotBitForBit) {
  const char* conv = R"(HloModule m
ENTRY e {
  x = f32[2,1,1,200] parameter(0)
  k = f32[1,1,200,3] parameter(1)
  ROOT c = f32[2,1,1,3] convolution(x, k), window={size=1x1}, dim_labels=b01f_01io->b01f
})";
  const char* dot = R"(HloModule m
ENTRY e {
  x = f32[2,200] parameter(0)
  k = f32[200,3] parameter(1)
  ROOT d = f32[2,3] dot(x, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {2, 1, 1, 200}));
  Literal k(hlo::Shape(hlo::PrimitiveType::kF32, {1, 1, 200, 3}));
  for (int64_t i = 0; i < x.element_count(); ++i) x.SetFromDouble(i, 0.01 * i - 1.337);
  for (int64_t i = 0; i < k.element_count(); ++i) k.SetFromDouble(i, 0.7 - 0.0031 * i);
  Literal x2(hlo::Shape(hlo::PrimitiveType::kF32, {2, 200}));
  Literal k2(hlo::Shape(hlo::PrimitiveType::kF32, {200, 3}));
  std::copy(x.bytes().begin(), x.bytes().end(), x2.mutable_bytes().begin());
  std::copy(k.bytes().begin(), k.bytes().end(), k2.mutable_bytes().begin());
  Literal c = Eval(conv, {x, k});
  Literal d = Eval(dot, {x2, k2});
  ASSERT_EQ(c.bytes().size(), d.bytes().size());
  EXPECT_TRUE(std::equal(c.bytes().begin(), c.bytes().end(), d.bytes().begin()));
}

TEST(EvalConv, BatchGroupsPairOutputFeatureGroupsWithInputBatchGroups) {
  // Two batch groups of one batch each: output feature 0 reads batch 0 with
  // weight 10, output feature 1 reads batch 1 with weight 100.
  const std::string text = Conv1d("[2,1,1]", "[1,1,2]", "[1,1,2]",
                                  "window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2");
  EXPECT_EQ(Eval(text, {S32({2, 1, 1}, {1, 2}), S32({1, 1, 2}, {10, 100})}),
            S32({1, 1, 2}, {10, 200}));
}

TEST(EvalConv, BothGroupCountsAboveOneIsAnError) {
  const std::string text = Conv1d(
      "[2,1,2]", "[1,1,2]", "[1,1,2]",
      "window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2, feature_group_count=2");
  auto r = testing::TryEval(text, {S32({2, 1, 2}, {1, 2, 3, 4}), S32({1, 1, 2}, {1, 1})});
  ASSERT_FALSE(r.ok());
}

}  // namespace
}  // namespace tpusim::eval
