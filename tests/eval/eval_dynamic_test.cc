// Bounded dynamic dimensions: get-dimension-size, set-dimension-size,
// dynamic-reshape, sizes carried through elementwise ops, reductions over the
// valid elements only, and a clear error from ops that cannot honour them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/value/compare.h"
#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using testing::TryEval;
using ::testing::HasSubstr;
using value::Literal;

/// set-dimension-size to the size `n` (parameter 1), add one, reduce and get
/// the size back: what a TF program with a bounded dimension does.
constexpr char kTfLike[] = R"(HloModule tf_dynamic
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[6] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=6] set-dimension-size(x, n), dimensions={0}
  one = f32[6] constant({1, 1, 1, 1, 1, 1})
  e = f32[<=6] add(d, one)
  zero = f32[] constant(0)
  r = f32[] reduce(e, zero), dimensions={0}, to_apply=add
  sz = s32[] get-dimension-size(e), dimensions={0}
  ROOT t = (f32[], s32[], f32[<=6]) tuple(r, sz, e)
})";

TEST(EvalDynamic, SetSizeThenElementwiseReduceAndGetSize) {
  const Literal r =
      Eval(kTfLike, {R1<float>({1, 2, 3, 4, 100, 200}), Literal::CreateR0<int32_t>(4)});
  ASSERT_EQ(r.tuple_size(), 3);
  // (1+1) + (2+1) + (3+1) + (4+1): the padding (100, 200) is not reduced.
  EXPECT_EQ(r.tuple_element(0).data<float>()[0], 14.0f);
  EXPECT_EQ(r.tuple_element(1).data<int32_t>()[0], 4);
  const Literal& e = r.tuple_element(2);
  EXPECT_EQ(e.dynamic_size(0), 4);
  EXPECT_EQ(e.ShapeString(), "f32[<=6] sizes=4");
  // The padding is zero, whatever the op computed there.
  EXPECT_EQ(std::vector<float>(e.data<float>().begin(), e.data<float>().end()),
            (std::vector<float>{2, 3, 4, 5, 0, 0}));
}

TEST(EvalDynamic, SizeAtTheBoundIsTheWholeArray) {
  const Literal r = Eval(kTfLike, {R1<float>({1, 2, 3, 4, 5, 6}), Literal::CreateR0<int32_t>(6)});
  EXPECT_EQ(r.tuple_element(0).data<float>()[0], 27.0f);
  EXPECT_EQ(r.tuple_element(1).data<int32_t>()[0], 6);
  EXPECT_FALSE(r.tuple_element(2).HasPaddedDimension());
}

TEST(EvalDynamic, SizeOutsideTheBoundIsALocatedErrorNamingTheInstruction) {
  for (int32_t bad : {7, -1}) {
    const auto r = TryEval(kTfLike, {R1<float>({1, 2, 3, 4, 5, 6}), Literal::CreateR0<int32_t>(bad)});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(r.status().message(), HasSubstr("set-dimension-size d:"));
    EXPECT_THAT(r.status().message(), HasSubstr("size " + std::to_string(bad) + " is outside [0, 6]"));
  }
}

TEST(EvalDynamic, GetDimensionSizeOfAStaticDimensionIsItsSize) {
  const Literal r = Eval(R"(HloModule m
ENTRY e {
  p = f32[3,7] parameter(0)
  ROOT s = s32[] get-dimension-size(p), dimensions={1}
})",
                         {Literal(hlo::Shape(hlo::PrimitiveType::kF32, {3, 7}))});
  EXPECT_EQ(r.data<int32_t>()[0], 7);
}

TEST(EvalDynamic, DynamicReshapeTakesTheValidElementsInRowMajorOrder) {
  // A 2x<=3 matrix with 2 valid columns {{0,1},{3,4}} becomes <=4 x 1.
  const Literal r = Eval(R"(HloModule m
ENTRY e {
  p = s32[2,3] iota(), iota_dimension=1
  ten = s32[2,3] constant({{0, 0, 0}, {10, 10, 10}})
  q = s32[2,3] add(p, ten)
  two = s32[] constant(2)
  d = s32[2,<=3] set-dimension-size(q, two), dimensions={1}
  four = s32[] constant(4)
  one = s32[] constant(1)
  ROOT r = s32[<=6,1] dynamic-reshape(d, four, one)
})");
  EXPECT_EQ(r.dynamic_size(0), 4);
  EXPECT_EQ(r.dynamic_size(1), 1);
  EXPECT_EQ(std::vector<int32_t>(r.data<int32_t>().begin(), r.data<int32_t>().end()),
            (std::vector<int32_t>{0, 1, 10, 11, 0, 0}));
}

TEST(EvalDynamic, DynamicReshapeWithSizesThatDoNotHoldTheElementsIsAnError) {
  const auto r = TryEval(R"(HloModule m
ENTRY e {
  p = s32[6] iota(), iota_dimension=0
  three = s32[] constant(3)
  d = s32[<=6] set-dimension-size(p, three), dimensions={0}
  two = s32[] constant(2)
  ROOT r = s32[<=3,2] dynamic-reshape(d, two, two)
})");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("dynamic-reshape r:"));
  EXPECT_THAT(r.status().message(), HasSubstr("3 valid elements, the result sizes hold 4"));
}

TEST(EvalDynamic, ReduceOverAKeptDynamicDimensionKeepsItsSize) {
  // max over dimension 1 of a <=4 x 2 matrix with 3 valid rows.
  const Literal r = Eval(R"(HloModule m
max {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY e {
  p = s32[4,2] iota(), iota_dimension=0
  three = s32[] constant(3)
  d = s32[<=4,2] set-dimension-size(p, three), dimensions={0}
  init = s32[] constant(-100)
  ROOT r = s32[<=4] reduce(d, init), dimensions={1}, to_apply=max
})");
  EXPECT_EQ(r.dynamic_size(0), 3);
  EXPECT_EQ(std::vector<int32_t>(r.data<int32_t>().begin(), r.data<int32_t>().end()),
            (std::vector<int32_t>{0, 1, 2, 0}));
}

TEST(EvalDynamic, DynamicUpdateSliceWritesWithinTheSizeAndKeepsIt) {
  // A stack of rows bounded at 4: grow the size, then write the new row.
  const Literal r = Eval(R"(HloModule m
ENTRY e {
  p = s32[4,2] broadcast(s32[] constant(-1)), dimensions={}
  two = s32[] constant(2)
  three = s32[] constant(3)
  zero = s32[] constant(0)
  stack = s32[<=4,2] set-dimension-size(p, two), dimensions={0}
  grown = s32[<=4,2] set-dimension-size(stack, three), dimensions={0}
  row = s32[1,2] broadcast(s32[] constant(7)), dimensions={}
  ROOT r = s32[<=4,2] dynamic-update-slice(grown, row, two, zero)
})");
  EXPECT_EQ(r.dynamic_size(0), 3);
  // Rows 0 and 1 as they were, row 2 written, row 3 padding.
  EXPECT_EQ(std::vector<int32_t>(r.data<int32_t>().begin(), r.data<int32_t>().end()),
            (std::vector<int32_t>{-1, -1, -1, -1, 7, 7, 0, 0}));
  // Writing past the size, into the padding, is refused, naming the index.
  const auto past = TryEval(R"(HloModule m
ENTRY e {
  p = s32[4,2] broadcast(s32[] constant(-1)), dimensions={}
  two = s32[] constant(2)
  zero = s32[] constant(0)
  stack = s32[<=4,2] set-dimension-size(p, two), dimensions={0}
  row = s32[1,2] broadcast(s32[] constant(7)), dimensions={}
  ROOT r = s32[<=4,2] dynamic-update-slice(stack, row, two, zero)
})");
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(past.status().message(), HasSubstr("dynamic-update-slice r:"));
  EXPECT_THAT(past.status().message(),
              HasSubstr("reaches index 2 of dimension 0, past the operand's size 2"));
}

TEST(EvalDynamic, AnOpThatCannotHonourTheSizesSaysSoNamingIt) {
  const auto r = TryEval(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  two = s32[] constant(2)
  d = f32[<=4] set-dimension-size(p, two), dimensions={0}
  ROOT s = f32[<=2] slice(d), slice={[0:2]}
})",
                         {R1<float>({1, 2, 3, 4})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(r.status().message(), HasSubstr("slice s:"));
  EXPECT_THAT(r.status().message(), HasSubstr("not supported with dynamic dimension"));
}

TEST(EvalDynamic, ComparisonSeesOnlyTheValidElementsAndTheSizes) {
  const Literal a = Eval(kTfLike, {R1<float>({1, 2, 3, 4, 100, 200}), Literal::CreateR0<int32_t>(4)});
  const Literal b = Eval(kTfLike, {R1<float>({1, 2, 3, 4, -7, 9}), Literal::CreateR0<int32_t>(4)});
  const Literal c = Eval(kTfLike, {R1<float>({1, 2, 3, 4, 0, 0}), Literal::CreateR0<int32_t>(5)});
  // Different padding, same valid elements: equal.
  EXPECT_EQ(a, b);
  value::ErrorSpec exact;
  exact.exact = true;
  EXPECT_TRUE(value::CompareLiterals(a.tuple_element(2), b.tuple_element(2), exact)
                  .within_tolerance());
  // Different sizes: not equal, and not compared element by element.
  EXPECT_FALSE(a.tuple_element(2) == c.tuple_element(2));
  EXPECT_FALSE(value::CompareLiterals(a.tuple_element(2), c.tuple_element(2), exact).compared);
}

/// The form XLA's dynamic padder leaves at the edges of a dynamic shape: a
/// dynamic array padded to its bounds with its sizes beside it
/// (PadToStatic), static ops on it, and the result made dynamic again with
/// those sizes (SliceToDynamic).
constexpr char kPadderEdges[] = R"(HloModule padder_edges
ENTRY e {
  flat = f32[8] parameter(0)
  x = f32[2,4] reshape(flat)
  n = s32[] parameter(1)
  d = f32[2,<=4] set-dimension-size(x, n), dimensions={1}
  p = (f32[2,4], s32[], s32[]) custom-call(d), custom_call_target="PadToStatic"
  data = f32[2,4] get-tuple-element(p), index=0
  rows = s32[] get-tuple-element(p), index=1
  cols = s32[] get-tuple-element(p), index=2
  twice = f32[2,4] add(data, data)
  ROOT back = f32[2,<=4] custom-call(twice, rows, cols), custom_call_target="SliceToDynamic"
})";

TEST(EvalDynamic, PadToStaticGivesThePaddedArrayAndItsSizesAndSliceToDynamicTakesThemBack) {
  const Literal r =
      Eval(kPadderEdges, {R1<float>({1, 2, 3, 4, 5, 6, 7, 8}), Literal::CreateR0<int32_t>(3)});
  // The padding (column 3) is zero in the static array, so twice it is zero;
  // the sizes come back as PadToStatic gave them: 2 rows, 3 columns.
  EXPECT_EQ(r.ShapeString(), "f32[2,<=4] sizes=2,3");
  EXPECT_EQ(std::vector<float>(r.data<float>().begin(), r.data<float>().end()),
            (std::vector<float>{2, 4, 6, 0, 10, 12, 14, 0}));
}

TEST(EvalDynamic, PadToStaticAndSliceToDynamicCheckTheirForms) {
  const auto wrong_sizes = TryEval(R"(HloModule m
ENTRY e {
  flat = f32[8] parameter(0)
  x = f32[2,4] reshape(flat)
  ROOT p = (f32[2,4], s32[]) custom-call(x), custom_call_target="PadToStatic"
})",
                                   {R1<float>({1, 2, 3, 4, 5, 6, 7, 8})});
  ASSERT_FALSE(wrong_sizes.ok());
  EXPECT_EQ(wrong_sizes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong_sizes.status().message(), HasSubstr("custom-call p:"));
  EXPECT_THAT(wrong_sizes.status().message(), HasSubstr("one s32[] size per dimension"));

  for (int32_t bad : {5, -1}) {
    const auto beyond = TryEval(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  n = s32[] parameter(1)
  ROOT d = f32[<=4] custom-call(x, n), custom_call_target="SliceToDynamic"
})",
                                {R1<float>({1, 2, 3, 4}), Literal::CreateR0<int32_t>(bad)});
    ASSERT_FALSE(beyond.ok());
    EXPECT_EQ(beyond.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(beyond.status().message(),
                HasSubstr("size " + std::to_string(bad) + " of dimension 0 is outside [0, 4]"));
  }
}

}  // namespace
}  // namespace tpusim::eval
