// ragged-dot in its three modes: hand-computed integer results, f32 results
// equal bit for bit to the dots of each group's rows (the same MXU numerics),
// rows and depth past the last group, and bad group sizes.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using testing::TryEval;
using value::Literal;

Literal S32(std::vector<int64_t> dims, std::vector<int32_t> values) {
  Literal l(hlo::Shape(hlo::PrimitiveType::kS32, std::move(dims)));
  EXPECT_EQ(static_cast<size_t>(l.element_count()), values.size());
  for (size_t i = 0; i < values.size(); ++i) l.data<int32_t>()[i] = values[i];
  return l;
}

/// Evaluator options whose run records into `record`.
EvaluatorOptions RecordingInto(RunRecord& record) {
  EvaluatorOptions options;
  options.record = &record;
  return options;
}

std::vector<int32_t> Values(const Literal& l) {
  return std::vector<int32_t>(l.data<int32_t>().begin(), l.data<int32_t>().end());
}

TEST(EvalRaggedDot, RowsTakeTheirGroupsWeightsAndRowsPastTheGroupsAreZero) {
  // 4 rows in groups of 1 and 2; row 3 is in no group.
  const char* text = R"(HloModule m
ENTRY e {
  a = s32[4,2] parameter(0)
  w = s32[2,2,3] parameter(1)
  sizes = s32[2] parameter(2)
  ROOT r = s32[4,3] ragged-dot(a, w, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})";
  const Literal a = S32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  // Group 0: {{1,0,0},{0,1,0}}; group 1: {{0,0,1},{1,1,1}}.
  const Literal w = S32({2, 2, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});
  const Literal r = Eval(text, {a, w, R1<int32_t>({1, 2})});
  EXPECT_EQ(Values(r), (std::vector<int32_t>{1, 2, 0, 4, 4, 7, 6, 6, 11, 0, 0, 0}));
}

TEST(EvalRaggedDot, GroupSizesPerBatchAndOuterRowDimension) {
  // Batch b, outer row dimension x, ragged rows m: group_sizes[b, x, g].
  const char* text = R"(HloModule m
ENTRY e {
  a = s32[2,2,3,1] parameter(0)
  w = s32[2,2,1,1] parameter(1)
  sizes = s32[2,2,2] parameter(2)
  ROOT r = s32[2,2,3,1] ragged-dot(a, w, sizes), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={3}, rhs_contracting_dims={2}, lhs_ragged_dims={2}, rhs_group_dims={0}
})";
  const Literal a = S32({2, 2, 3, 1}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1});
  // rhs[g, b] = 10 * (g + 1) + b.
  const Literal w = S32({2, 2, 1, 1}, {10, 11, 20, 21});
  const Literal sizes = S32({2, 2, 2}, {1, 2, 0, 3, 2, 0, 1, 1});
  const Literal r = Eval(text, {a, w, sizes});
  EXPECT_EQ(Values(r), (std::vector<int32_t>{10, 20, 20, 20, 20, 20, 11, 11, 0, 11, 21, 0}));
}

TEST(EvalRaggedDot, TheRunRecordsWhatEachGroupHeldPerBatchIndex) {
  // 4 rows per batch index: sizes {3, 2} hold 3 and 1 (the second group is
  // cut at the last row), sizes {0, 1} hold 0 and 1, for timing to see.
  const char* text = R"(HloModule m
ENTRY e {
  a = s32[2,4,1] parameter(0)
  w = s32[2,2,1,1] parameter(1)
  sizes = s32[2,2] parameter(2)
  ROOT r = s32[2,4,1] ragged-dot(a, w, sizes), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}
})";
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  RunRecord record;
  const std::vector<Literal> args = {S32({2, 4, 1}, {1, 1, 1, 1, 1, 1, 1, 1}),
                                     S32({2, 2, 1, 1}, {1, 2, 3, 4}), S32({2, 2}, {3, 2, 0, 1})};
  ASSERT_TRUE(Evaluator(RecordingInto(record)).Evaluate(**module, args).ok());
  const hlo::HloInstruction* root = (*module)->entry()->root();
  ASSERT_EQ(record.ragged_group_shares.count(root), 1u);
  EXPECT_EQ(record.ragged_group_shares.at(root).At(0), (std::vector<int64_t>{3, 1, 0, 1}));
}

TEST(EvalRaggedDot, ARaggedDotInALoopRecordsTheGroupsOfEachExecution) {
  // Iteration i routes i rows to the first group and 4 - i to the second,
  // as a scan over layers routes each layer's tokens its own way.
  const char* text = R"(HloModule m
cond {
  p = (s32[], s32[4,1]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[4,1]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = s32[4,1] get-tuple-element(p), index=1
  w = s32[2,1,1] constant({{{1}}, {{2}}})
  four = s32[] constant(4)
  rest = s32[] subtract(four, i)
  first = s32[1] reshape(i)
  second = s32[1] reshape(rest)
  sizes = s32[2] concatenate(first, second), dimensions={0}
  r = s32[4,1] ragged-dot(a, w, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], s32[4,1]) tuple(next, r)
}
ENTRY e {
  a = s32[4,1] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], s32[4,1]) tuple(zero, a)
  ROOT w = (s32[], s32[4,1]) while(t), condition=cond, body=body
})";
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  RunRecord record;
  const std::vector<Literal> args = {S32({4, 1}, {1, 1, 1, 1})};
  ASSERT_TRUE(Evaluator(RecordingInto(record)).Evaluate(**module, args).ok());
  ASSERT_EQ(record.ragged_group_shares.size(), 1u);
  const ExecutionSeries<std::vector<int64_t>>& shares = record.ragged_group_shares.begin()->second;
  EXPECT_EQ(record.ragged_group_shares.begin()->first->name(), "r");
  ASSERT_EQ(shares.executions(), 3);
  EXPECT_EQ(shares.At(0), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(shares.At(1), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(shares.At(2), (std::vector<int64_t>{2, 2}));
}

TEST(EvalRaggedDot, AnSpmdRunRecordsEveryDevicesGroups) {
  // Each of 3 partitions routes its 4 rows by its own row of the table:
  // device 0 {1, 3}, device 1 {4, 0}, device 2 {0, 0}. Device 0's groups are
  // the record's own; the others' are kept by device number.
  const char* text = R"(HloModule m, num_partitions=3
ENTRY e {
  a = s32[4,1] parameter(0)
  w = s32[2,1,1] parameter(1)
  table = s32[3,2] constant({{1, 3}, {4, 0}, {0, 0}})
  id = u32[] partition-id()
  zero = u32[] constant(0)
  row = s32[1,2] dynamic-slice(table, id, zero), dynamic_slice_sizes={1,2}
  sizes = s32[2] reshape(row)
  ROOT r = s32[4,1] ragged-dot(a, w, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})";
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  RunRecord record;
  const std::vector<Literal> args = {S32({4, 1}, {1, 1, 1, 1}), S32({2, 1, 1}, {1, 2})};
  const std::vector<std::vector<Literal>> per_device(3, args);
  const auto results = Evaluator(RecordingInto(record)).EvaluateSpmd(**module, per_device);
  ASSERT_TRUE(results.ok()) << results.status().message();
  EXPECT_EQ(Values((*results)[1]), (std::vector<int32_t>{1, 1, 1, 1}));
  const hlo::HloInstruction* root = (*module)->entry()->root();
  ASSERT_EQ(record.ragged_group_shares.count(root), 1u);
  EXPECT_EQ(record.ragged_group_shares.at(root).At(0), (std::vector<int64_t>{1, 3}));
  ASSERT_EQ(record.device_ragged_group_shares.size(), 2u);
  EXPECT_EQ(record.device_ragged_group_shares.at(1).at(root).At(0), (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(record.device_ragged_group_shares.at(2).at(root).At(0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(record.device_ragged_group_shares.count(0), 0u);
}

TEST(EvalRaggedDot, ARaggedContractingDimensionGivesOneProductPerGroup) {
  // k = 4 in groups of 1, 0 and 2: result g sums its own k only; k = 3 is
  // in no group.
  const char* text = R"(HloModule m
ENTRY e {
  a = s32[2,4] parameter(0)
  b = s32[4,1] parameter(1)
  sizes = s32[3] parameter(2)
  ROOT r = s32[3,2,1] ragged-dot(a, b, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
})";
  const Literal a = S32({2, 4}, {1, 2, 3, 4, 10, 20, 30, 40});
  const Literal b = S32({4, 1}, {1, 100, 10000, 1000000});
  const Literal r = Eval(text, {a, b, R1<int32_t>({1, 0, 2})});
  EXPECT_EQ(Values(r), (std::vector<int32_t>{1, 10, 0, 0, 30200, 302000}));
}

TEST(EvalRaggedDot, ARaggedBatchDimensionIsADot) {
  const std::string dims =
      "lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}";
  const Literal a = S32({2, 1, 2}, {1, 2, 3, 4});
  const Literal b = S32({2, 2, 1}, {5, 6, 7, 8});
  const Literal ragged = Eval(
      "HloModule m\nENTRY e {\n  a = s32[2,1,2] parameter(0)\n"
      "  b = s32[2,2,1] parameter(1)\n  s = s32[1] parameter(2)\n"
      "  ROOT r = s32[2,1,1] ragged-dot(a, b, s), " +
          dims + ", lhs_ragged_dims={0}\n}\n",
      {a, b, R1<int32_t>({0})});
  EXPECT_EQ(Values(ragged), (std::vector<int32_t>{17, 53}));
}

TEST(EvalRaggedDot, EachGroupHasTheNumericsOfADotOfItsRows) {
  // Full-mantissa f32 values at DEFAULT precision: a group's rows come out
  // bit for bit as a dot of those rows with the group's weights.
  Literal a(hlo::Shape(hlo::PrimitiveType::kF32, {5, 3}));
  Literal w(hlo::Shape(hlo::PrimitiveType::kF32, {2, 3, 2}));
  uint32_t state = 7;
  for (Literal* l : {&a, &w}) {
    for (float& x : l->data<float>()) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
    }
  }
  const Literal ragged = Eval(R"(HloModule m
ENTRY e {
  a = f32[5,3] parameter(0)
  w = f32[2,3,2] parameter(1)
  s = s32[2] parameter(2)
  ROOT r = f32[5,2] ragged-dot(a, w, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})",
                              {a, w, R1<int32_t>({2, 3})});
  const Literal dense = Eval(R"(HloModule m
ENTRY e {
  a = f32[5,3] parameter(0)
  w = f32[2,3,2] parameter(1)
  w0 = f32[1,3,2] slice(w), slice={[0:1], [0:3], [0:2]}
  w1 = f32[1,3,2] slice(w), slice={[1:2], [0:3], [0:2]}
  a0 = f32[2,3] slice(a), slice={[0:2], [0:3]}
  a1 = f32[3,3] slice(a), slice={[2:5], [0:3]}
  d0 = f32[2,1,2] dot(a0, w0), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  d1 = f32[3,1,2] dot(a1, w1), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT c = f32[5,1,2] concatenate(d0, d1), dimensions={0}
})",
                             {a, w});
  ASSERT_EQ(ragged.element_count(), dense.element_count());
  for (int64_t i = 0; i < ragged.element_count(); ++i) {
    EXPECT_EQ(ragged.data<float>()[i], dense.data<float>()[i]) << "element " << i;
  }
}

TEST(EvalRaggedDot, AnEmptyDepthGivesZeros) {
  const Literal r = Eval(R"(HloModule m
ENTRY e {
  a = s32[3,0] parameter(0)
  w = s32[2,0,2] parameter(1)
  s = s32[2] parameter(2)
  ROOT r = s32[3,2] ragged-dot(a, w, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})",
                         {S32({3, 0}, {}), S32({2, 0, 2}, {}), R1<int32_t>({1, 2})});
  EXPECT_EQ(Values(r), (std::vector<int32_t>(6, 0)));
}

TEST(EvalRaggedDot, ANegativeGroupSizeIsAnErrorAtTheInstruction) {
  const StatusOr<Literal> r =
      TryEval(R"(HloModule m
ENTRY e {
  a = s32[2,1] parameter(0)
  w = s32[2,1,1] parameter(1)
  s = s32[2] parameter(2)
  ROOT r = s32[2,1] ragged-dot(a, w, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})",
              {S32({2, 1}, {1, 2}), S32({2, 1, 1}, {3, 4}), R1<int32_t>({1, -1})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.status().message().find(":6:3: error: ragged-dot r: group_sizes holds a negative size, -1"),
      std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace tpusim::eval
