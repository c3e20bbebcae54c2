// gather (row lookup, index_vector_dim forms, clamping) and scatter
// (combining, order, skipped out-of-bounds windows).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using value::Literal;

/// A 3x2 table {{0,1},{10,11},{20,21}}.
Literal Table() {
  Literal t(hlo::Shape(hlo::PrimitiveType::kS32, {3, 2}));
  const int32_t values[] = {0, 1, 10, 11, 20, 21};
  std::copy(std::begin(values), std::end(values), t.data<int32_t>().begin());
  return t;
}

std::vector<int32_t> Values(const Literal& l) {
  return {l.data<int32_t>().begin(), l.data<int32_t>().end()};
}

TEST(EvalGather, EmbeddingLookupClampsOutOfRangeRows) {
  const char* text = R"(HloModule m
ENTRY e {
  t = s32[3,2] parameter(0)
  i = s32[4] parameter(1)
  ROOT g = s32[4,2] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
})";
  EXPECT_EQ(Values(Eval(text, {Table(), R1<int32_t>({2, 0, 7, -1})})),
            (std::vector<int32_t>{20, 21, 0, 1, 20, 21, 0, 1}));
}

TEST(EvalGather, ExplicitIndexVectorPicksWindows) {
  // Each index is a (row, column) pair; 1x1 windows, nothing collapsed.
  const char* text = R"(HloModule m
ENTRY e {
  t = s32[3,2] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2,1,1] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1}
})";
  Literal idx(hlo::Shape(hlo::PrimitiveType::kS32, {2, 2}));
  const int32_t values[] = {1, 1, 2, 0};
  std::copy(std::begin(values), std::end(values), idx.data<int32_t>().begin());
  EXPECT_EQ(Values(Eval(text, {Table(), idx})), (std::vector<int32_t>{11, 20}));
}

const char* kScatterAdd = R"(HloModule m
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY e {
  o = s32[5] parameter(0)
  i = s32[4] parameter(1)
  u = s32[4] parameter(2)
  ROOT s = s32[5] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";

TEST(EvalScatter, AddsUpdatesAndSkipsOutOfBoundsIndices) {
  EXPECT_EQ(Values(Eval(kScatterAdd, {R1<int32_t>({1, 1, 1, 1, 1}), R1<int32_t>({1, 3, 1, 7}),
                                      R1<int32_t>({10, 20, 30, 40})})),
            (std::vector<int32_t>{1, 41, 1, 21, 1}));
  EXPECT_EQ(Values(Eval(kScatterAdd, {R1<int32_t>({0, 0, 0, 0, 0}), R1<int32_t>({-1, 4, 0, 5}),
                                      R1<int32_t>({10, 20, 30, 40})})),
            (std::vector<int32_t>{30, 0, 0, 0, 20}));
}

TEST(EvalScatter, OverwritesApplyInUpdateOrder) {
  const char* text = R"(HloModule m
second {
  x = s32[] parameter(0)
  ROOT y = s32[] parameter(1)
}
ENTRY e {
  o = s32[3] parameter(0)
  i = s32[2] parameter(1)
  u = s32[2] parameter(2)
  ROOT s = s32[3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=second
})";
  EXPECT_EQ(Values(Eval(text, {R1<int32_t>({0, 0, 0}), R1<int32_t>({2, 2}), R1<int32_t>({5, 6})})),
            (std::vector<int32_t>{0, 0, 6}));
}

TEST(EvalScatter, RowWindows) {
  const char* text = R"(HloModule m
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY e {
  t = s32[3,2] parameter(0)
  i = s32[2,1] parameter(1)
  u = s32[2,2] parameter(2)
  ROOT s = s32[3,2] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})";
  Literal idx(hlo::Shape(hlo::PrimitiveType::kS32, {2, 1}));
  idx.data<int32_t>()[0] = 2;
  idx.data<int32_t>()[1] = 0;
  Literal upd(hlo::Shape(hlo::PrimitiveType::kS32, {2, 2}));
  const int32_t values[] = {100, 200, 300, 400};
  std::copy(std::begin(values), std::end(values), upd.data<int32_t>().begin());
  EXPECT_EQ(Values(Eval(text, {Table(), idx, upd})),
            (std::vector<int32_t>{300, 401, 10, 11, 120, 221}));
}


/// [[0, 1, 2], [10, 11, 12]] and per-row column indices [[2], [0]].
std::vector<Literal> BatchedRowsAndColumns() {
  Literal rows(hlo::Shape(hlo::PrimitiveType::kF32, {2, 3}));
  const float v[] = {0, 1, 2, 10, 11, 12};
  std::copy(v, v + 6, rows.data<float>().begin());
  Literal columns(hlo::Shape(hlo::PrimitiveType::kS32, {2, 1}));
  columns.data<int32_t>()[0] = 2;
  return {std::move(rows), std::move(columns)};
}

TEST(EvalGather, BatchingDimensionsIndexTheirOwnRow) {
  // Row b of the operand is read with indices[b]: out = {op[0][2], op[1][0]}.
  const Literal out = Eval(R"(HloModule m
ENTRY e {
  op = f32[2,3] parameter(0)
  ix = s32[2,1] parameter(1)
  ROOT g = f32[2] gather(op, ix), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}
}
)", BatchedRowsAndColumns());
  EXPECT_EQ(out, R1<float>({2, 10}));
}

TEST(EvalScatter, BatchingDimensionsWriteIntoTheirOwnRow) {
  std::vector<Literal> args = BatchedRowsAndColumns();
  args.push_back(R1<float>({5, 7}));
  const Literal out = Eval(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  op = f32[2,3] parameter(0)
  ix = s32[2,1] parameter(1)
  up = f32[2] parameter(2)
  ROOT s = f32[2,3] scatter(op, ix, up), update_window_dims={}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=1, to_apply=add
}
)", std::move(args));
  // Row 0 column 2 gets +5, row 1 column 0 gets +7.
  const auto o = out.data<float>();
  const float expected[] = {0, 1, 7, 17, 11, 12};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(o[i], expected[i]) << i;
}

}  // namespace
}  // namespace tpusim::eval
