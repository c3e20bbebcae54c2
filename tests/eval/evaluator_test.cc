// The evaluator core, data-movement and control-flow kernels: one exact-result
// test per opcode, plus errors, order independence and determinism.
#include "sim/eval/evaluator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/eval/eval_test_util.h"
#include "tests/hlo/nested_module.h"
#include "tests/hlo/triangular_loop.h"
#include "tests/hlo/varying_programs.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using testing::TryEval;
using value::Literal;
using ::tpusim::test::NestedModule;

/// A 2x3 s32 matrix {{0,1,2},{3,4,5}}.
Literal Matrix() {
  Literal m(hlo::Shape(hlo::PrimitiveType::kS32, {2, 3}));
  for (int32_t i = 0; i < 6; ++i) m.data<int32_t>()[i] = i;
  return m;
}

std::vector<int32_t> Values(const Literal& l) {
  const auto d = l.data<int32_t>();
  return {d.begin(), d.end()};
}

TEST(Evaluator, ParameterAndConstant) {
  Literal r = Eval(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  c = f32[2] constant({0.1, -2})
  ROOT t = (f32[2], f32[2]) tuple(p, c)
})",
                   {R1<float>({1.0f, 2.0f})});
  ASSERT_EQ(r.tuple_size(), 2);
  EXPECT_EQ(r.tuple_element(0), R1<float>({1.0f, 2.0f}));
  // The decimal text rounds once to f32.
  EXPECT_EQ(r.tuple_element(1), R1<float>({0.1f, -2.0f}));
}

TEST(Evaluator, ConstantOfEveryKind) {
  Literal r = Eval(R"(HloModule m
ENTRY e {
  a = u64[1] constant({18446744073709551615})
  b = bf16[] constant(1.00390625)
  c = pred[2] constant({true, false})
  ROOT t = (u64[1], bf16[], pred[2]) tuple(a, b, c)
})");
  ASSERT_EQ(r.tuple_size(), 3);
  EXPECT_EQ(r.tuple_element(0), R1<uint64_t>({UINT64_MAX}));
  EXPECT_EQ(r.tuple_element(1).data<value::BF16>()[0].ToFloat(), 1.0f);  // ties to even
  EXPECT_EQ(r.tuple_element(2), R1<bool>({true, false}));
}

TEST(Evaluator, Iota) {
  Literal r = Eval(R"(HloModule m
ENTRY e {
  ROOT i = s32[2,3] iota(), iota_dimension=1
})");
  EXPECT_EQ(Values(r), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
}

TEST(Evaluator, BroadcastReshapeBitcastTransposeCopy) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  v = s32[3] constant({7, 8, 9})
  b = s32[2,3] broadcast(v), dimensions={1}
  r = s32[3,2] reshape(p)
  c = s32[6] bitcast(p)
  t = s32[3,2] transpose(p), dimensions={1,0}
  k = s32[2,3] copy(p)
  ROOT out = (s32[2,3], s32[3,2], s32[6], s32[3,2], s32[2,3]) tuple(b, r, c, t, k)
})";
  Literal r = Eval(text, {Matrix()});
  ASSERT_EQ(r.tuple_size(), 5);
  EXPECT_EQ(Values(r.tuple_element(0)), (std::vector<int32_t>{7, 8, 9, 7, 8, 9}));
  EXPECT_EQ(Values(r.tuple_element(1)), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Values(r.tuple_element(2)), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Values(r.tuple_element(3)), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(r.tuple_element(4), Matrix());
}

TEST(Evaluator, BitcastThatChangesTheCountReadsTheTiledMemoryOrder) {
  // s32[4,2,2] T(2,2) stores element [i,j,k] at offset 4i+2j+k (iota below
  // holds that offset). s32[3,4] T(2,2) pads to 4 rows of 2x2 tiles: [R,C] is
  // at offset (R/2*2 + C/2)*4 + R%2*2 + C%2. Back the other way, the padding
  // row 3 reads as zeros.
  Literal r = Eval(R"(HloModule m
ENTRY e {
  i = s32[16] iota(), iota_dimension=0
  p = s32[4,2,2]{2,1,0:T(2,2)} reshape(i)
  a = s32[3,4]{1,0:T(2,2)} bitcast(p)
  j = s32[12] iota(), iota_dimension=0
  q = s32[3,4]{1,0:T(2,2)} reshape(j)
  b = s32[4,2,2]{2,1,0:T(2,2)} bitcast(q)
  ROOT out = (s32[3,4], s32[4,2,2]) tuple(a, b)
})");
  ASSERT_EQ(r.tuple_size(), 2);
  EXPECT_EQ(Values(r.tuple_element(0)),
            (std::vector<int32_t>{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13}));
  EXPECT_EQ(Values(r.tuple_element(1)),
            (std::vector<int32_t>{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 0, 0, 10, 11, 0, 0}));
}

TEST(Evaluator, BitcastThatChangesTheCountWithoutTiledLayoutsIsUnimplemented) {
  auto r = TryEval(R"(HloModule m
ENTRY e {
  p = s32[6] parameter(0)
  ROOT b = s32[4] bitcast(p)
})", {R1<int32_t>({1, 2, 3, 4, 5, 6})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("single-level tiled layouts"), std::string::npos)
      << r.status().message();
}

TEST(Evaluator, SliceAndReverse) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  s = s32[1,2] slice(p), slice={[1:2], [0:3:2]}
  v = s32[2,3] reverse(p), dimensions={0,1}
  ROOT t = (s32[1,2], s32[2,3]) tuple(s, v)
})";
  Literal r = Eval(text, {Matrix()});
  EXPECT_EQ(Values(r.tuple_element(0)), (std::vector<int32_t>{3, 5}));
  EXPECT_EQ(Values(r.tuple_element(1)), (std::vector<int32_t>{5, 4, 3, 2, 1, 0}));
}

TEST(Evaluator, DynamicSliceClampsStartIndices) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = s32[1,2] dynamic-slice(p, i, j), dynamic_slice_sizes={1,2}
})";
  EXPECT_EQ(
      Values(Eval(text, {Matrix(), Literal::CreateR0<int32_t>(1), Literal::CreateR0<int32_t>(0)})),
      (std::vector<int32_t>{3, 4}));
  // Out of range starts clamp to [0, dim - size].
  EXPECT_EQ(
      Values(Eval(text, {Matrix(), Literal::CreateR0<int32_t>(5), Literal::CreateR0<int32_t>(7)})),
      (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(Values(Eval(
                text, {Matrix(), Literal::CreateR0<int32_t>(-3), Literal::CreateR0<int32_t>(-1)})),
            (std::vector<int32_t>{0, 1}));
}

TEST(Evaluator, DynamicUpdateSliceClampsStartIndices) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  u = s32[1,2] constant({{-1, -2}})
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = s32[2,3] dynamic-update-slice(p, u, i, j)
})";
  EXPECT_EQ(
      Values(Eval(text, {Matrix(), Literal::CreateR0<int32_t>(0), Literal::CreateR0<int32_t>(1)})),
      (std::vector<int32_t>{0, -1, -2, 3, 4, 5}));
  EXPECT_EQ(
      Values(Eval(text, {Matrix(), Literal::CreateR0<int32_t>(9), Literal::CreateR0<int32_t>(9)})),
      (std::vector<int32_t>{0, 1, 2, 3, -1, -2}));
}

TEST(Evaluator, PadWithNegativeAndInteriorPadding) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  z = s32[] constant(-9)
  ROOT d = s32[3,4] pad(p, z), padding=1_0x-1_0_1
})";
  // Rows: one low. Columns: 0 _ 1 _ 2 (interior 1) cropped by one on the low side.
  EXPECT_EQ(Values(Eval(text, {Matrix()})),
            (std::vector<int32_t>{-9, -9, -9, -9, -9, 1, -9, 2, -9, 4, -9, 5}));
}

TEST(Evaluator, Concatenate) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  c = s32[2,1] constant({{10}, {11}})
  ROOT d = s32[2,4] concatenate(p, c), dimensions={1}
})";
  EXPECT_EQ(Values(Eval(text, {Matrix()})), (std::vector<int32_t>{0, 1, 2, 10, 3, 4, 5, 11}));
}

TEST(Evaluator, TupleAndGetTupleElement) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[2,3] parameter(0)
  q = f32[] constant(2.5)
  t = (s32[2,3], f32[]) tuple(p, q)
  ROOT g = f32[] get-tuple-element(t), index=1
})";
  EXPECT_EQ(Eval(text, {Matrix()}), Literal::CreateR0<float>(2.5f));
}

TEST(Evaluator, CallAndFusion) {
  const char* text = R"(HloModule m
double {
  x = s32[3] parameter(0)
  ROOT y = s32[3] add(x, x)
}
fused {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  ROOT m = s32[3] multiply(a, b)
}
ENTRY e {
  p = s32[3] parameter(0)
  c = s32[3] call(p), to_apply=double
  ROOT f = s32[3] fusion(c, p), kind=kLoop, calls=fused
})";
  EXPECT_EQ(Eval(text, {R1<int32_t>({1, 2, 3})}), R1<int32_t>({2, 8, 18}));
}

const char* kCountingLoop = R"(HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], s32[]) tuple(j, n)
}
ENTRY e {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=0
})";

TEST(Evaluator, WhileRunsUntilConditionIsFalse) {
  EXPECT_EQ(Eval(kCountingLoop, {Literal::CreateR0<int32_t>(10)}), Literal::CreateR0<int32_t>(10));
}

TEST(Evaluator, TheRunRecordsTheIterationsOfEveryExecutionOfALoop) {
  auto module = hlo::ParseHloModule(test::kTriangularLoop);
  ASSERT_TRUE(module.ok()) << module.status().message();
  RunRecord record;
  EvaluatorOptions options;
  options.record = &record;
  Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {1024}));  // zeros
  ASSERT_TRUE(Evaluator(options).Evaluate(**module, std::span(&x, 1)).ok());
  const hlo::HloInstruction* outer = (*module)->entry()->root()->operand(0);
  const hlo::HloInstruction* inner = nullptr;
  for (const auto& i : outer->called_computation(hlo::AttrId::kBody)->instructions()) {
    if (i->name() == "inner") inner = i.get();
  }
  ASSERT_EQ(record.trip_counts.count(outer), 1u);
  EXPECT_EQ(record.trip_counts.at(outer), ExecutionSeries<int64_t>(4));
  ASSERT_EQ(record.trip_counts.count(inner), 1u);
  const ExecutionSeries<int64_t>& inner_trips = record.trip_counts.at(inner);
  EXPECT_EQ(inner_trips.executions(), 4);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(inner_trips.At(i), i);
}

TEST(Evaluator, TheRunRecordsTheBranchOfEveryExecutionOfAConditional) {
  auto module = hlo::ParseHloModule(test::kAlternatingBranch);
  ASSERT_TRUE(module.ok()) << module.status().message();
  RunRecord record;
  EvaluatorOptions options;
  options.record = &record;
  Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {65536}));  // zeros
  ASSERT_TRUE(Evaluator(options).Evaluate(**module, std::span(&x, 1)).ok());
  ASSERT_EQ(record.branches.size(), 1u);
  EXPECT_EQ(record.branches.begin()->first->name(), "c");
  const ExecutionSeries<int64_t>& taken = record.branches.begin()->second;
  EXPECT_EQ(taken.executions(), 4);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(taken.At(i), i % 2) << i;  // even: true (0)
}

TEST(Evaluator, WhileOverIterationCapIsAnError) {
  EvaluatorOptions options;
  options.max_while_iterations = 5;
  auto r = TryEval(kCountingLoop, {Literal::CreateR0<int32_t>(10)}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  // sim/ states the loop and the limit; how to raise it is the caller's to say.
  EXPECT_TRUE(r.status().message().ends_with("while w: loop did not finish within 5 iterations"))
      << r.status().message();
  options.raise_while_iterations = "raise it with the caller's flag";
  r = TryEval(kCountingLoop, {Literal::CreateR0<int32_t>(10)}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().message().ends_with(
      "while w: loop did not finish within 5 iterations; raise it with the caller's flag"))
      << r.status().message();
}

TEST(Evaluator, ComputationsNestedTooDeeplyAreALocatedErrorNotAStackOverflow) {
  for (const std::string how : {"call", "fusion", "while"}) {
    auto r = TryEval(NestedModule(100'000, how), {Literal::CreateR0<int32_t>(0)});
    ASSERT_FALSE(r.ok()) << how;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << how;
    EXPECT_NE(r.status().message().find(": calls nest too deeply (more than 64 levels"),
              std::string::npos)
        << how << ": " << r.status().message();
    // The memory estimate walks the same nesting before values are computed.
    auto module = hlo::ParseHloModule(NestedModule(100'000, how));
    ASSERT_TRUE(module.ok()) << module.status().message();
    EXPECT_EQ(Evaluator::EstimatePeakBytes(**module).status().code(), StatusCode::kInvalidArgument)
        << how;
  }
}

TEST(Evaluator, ComputationsNestedUpToTheLimitRun) {
  EXPECT_EQ(Eval(NestedModule(63, "call"), {Literal::CreateR0<int32_t>(0)}),
            Literal::CreateR0<int32_t>(1));
  EXPECT_EQ(Eval(NestedModule(63, "while"), {Literal::CreateR0<int32_t>(0)}),
            Literal::CreateR0<int32_t>(10));
}

constexpr char kEndlessLoop[] = R"(HloModule endless

cond {
  p = f32[1024] parameter(0)
  ROOT t = pred[] constant(true)
}

body {
  p = f32[1024] parameter(0)
  ROOT e = f32[1024] exponential(p)
}

ENTRY main {
  z = f32[1024] parameter(0)
  ROOT forever = f32[1024] while(z), condition=cond, body=body
})";

TEST(Evaluator, AnEndlessLoopIsRefusedByItsWorkBudgetNamingTheLoop) {
  // Per iteration: cond's constant (64 + 1) and the exponential (64 + 1024).
  EvaluatorOptions options;
  options.max_loop_work = 1153 * 1000;
  auto r = TryEval(kEndlessLoop, {Literal(hlo::Shape(hlo::PrimitiveType::kF32, {1024}))}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(r.status().message().ends_with(
      "while forever: loop did not finish within its work budget: 1001 iterations did "
      "1154153 units of work (an instruction is 64, plus its result's elements), "
      "more than the limit of 1153000"))
      << r.status().message();
  options.raise_loop_work = "raise it with the caller's flag";
  r = TryEval(kEndlessLoop, {Literal(hlo::Shape(hlo::PrimitiveType::kF32, {1024}))}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().message().ends_with(
      "more than the limit of 1153000; raise it with the caller's flag"))
      << r.status().message();
  // The default refuses it well before max_while_iterations (2^24).
  EXPECT_LT(EvaluatorOptions().max_loop_work / 1153, EvaluatorOptions().max_while_iterations);
}

/// kEndlessLoop's loop as the body of another endless loop.
std::string EndlessInnerLoop() {
  const std::string endless = kEndlessLoop;
  return endless.substr(0, endless.find("ENTRY")) + R"(outer_body {
  p = f32[1024] parameter(0)
  ROOT inner = f32[1024] while(p), condition=cond, body=body
}

ENTRY main {
  z = f32[1024] parameter(0)
  ROOT outer = f32[1024] while(z), condition=cond, body=outer_body
})";
}

// An endless loop inside another loop: the inner one never returns, so its own
// budget (counted from its own start) refuses it, and the error names it, not
// the outer loop that is still in its first iteration.
TEST(Evaluator, AnEndlessLoopInsideALoopIsRefusedNamingTheInnerLoop) {
  EvaluatorOptions options;
  options.max_loop_work = 1153 * 1000;
  auto r = TryEval(EndlessInnerLoop(), {Literal(hlo::Shape(hlo::PrimitiveType::kF32, {1024}))},
                   options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  // The same iterations and work as the loop alone (kEndlessLoop).
  EXPECT_NE(r.status().message().find(
                "while inner: loop did not finish within its work budget: 1001 iterations did "
                "1154153 units of work"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(r.status().message().find("outer"), std::string::npos) << r.status().message();
  // With the iteration cap below the budget, the cap blames the inner loop too.
  options.max_while_iterations = 5;
  r = TryEval(EndlessInnerLoop(), {Literal(hlo::Shape(hlo::PrimitiveType::kF32, {1024}))}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("while inner: loop did not finish within 5 iterations"),
            std::string::npos)
      << r.status().message();
}

TEST(Evaluator, ALoopWithinItsWorkBudgetRuns) {
  EvaluatorOptions options;
  options.max_loop_work = 10'000;
  EXPECT_EQ(Eval(kCountingLoop, {Literal::CreateR0<int32_t>(10)}, options),
            Literal::CreateR0<int32_t>(10));
}

TEST(Evaluator, ConditionalPredAndIndexForms) {
  const char* pred_form = R"(HloModule m
neg {
  x = s32[] parameter(0)
  ROOT y = s32[] negate(x)
}
same {
  x = s32[] parameter(0)
  ROOT y = s32[] copy(x)
}
ENTRY e {
  p = pred[] parameter(0)
  v = s32[] constant(4)
  ROOT c = s32[] conditional(p, v, v), true_computation=neg, false_computation=same
})";
  EXPECT_EQ(Eval(pred_form, {Literal::CreateR0<bool>(true)}), Literal::CreateR0<int32_t>(-4));
  EXPECT_EQ(Eval(pred_form, {Literal::CreateR0<bool>(false)}), Literal::CreateR0<int32_t>(4));
  const char* index_form = R"(HloModule m
b0 {
  x = s32[] parameter(0)
  ROOT y = s32[] negate(x)
}
b1 {
  x = s32[] parameter(0)
  ROOT y = s32[] add(x, x)
}
ENTRY e {
  i = s32[] parameter(0)
  v = s32[] constant(4)
  w = s32[] constant(5)
  ROOT c = s32[] conditional(i, v, w), branch_computations={b0, b1}
})";
  EXPECT_EQ(Eval(index_form, {Literal::CreateR0<int32_t>(0)}), Literal::CreateR0<int32_t>(-4));
  EXPECT_EQ(Eval(index_form, {Literal::CreateR0<int32_t>(1)}), Literal::CreateR0<int32_t>(10));
  // Out of range (either side): the last branch.
  EXPECT_EQ(Eval(index_form, {Literal::CreateR0<int32_t>(7)}), Literal::CreateR0<int32_t>(10));
  EXPECT_EQ(Eval(index_form, {Literal::CreateR0<int32_t>(-1)}), Literal::CreateR0<int32_t>(10));
}

TEST(Evaluator, MapAppliesScalarComputation) {
  const char* text = R"(HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] subtract(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT m = f32[3] map(x, y), dimensions={0}, to_apply=f
})";
  EXPECT_EQ(Eval(text, {R1<float>({5, 6, 7}), R1<float>({1, 2, 3})}), R1<float>({4, 4, 4}));
}

TEST(Evaluator, CopyStartAndDoneDeliverTheOperand) {
  const char* text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  s = (f32[2], f32[2], u32[]) copy-start(p)
  ROOT d = f32[2] copy-done(s)
})";
  EXPECT_EQ(Eval(text, {R1<float>({1, 2})}), R1<float>({1, 2}));
}

TEST(Evaluator, AsyncStartUpdateDoneRunTheWrappedComputation) {
  const char* text = R"(HloModule m
wrapped {
  x = f32[2] parameter(0)
  ROOT y = f32[4] concatenate(x, x), dimensions={0}
}
ENTRY e {
  p = f32[2] parameter(0)
  s = ((f32[2]), f32[4], s32[]) async-start(p), calls=wrapped
  u = ((f32[2]), f32[4], s32[]) async-update(s), calls=wrapped
  ROOT d = f32[4] async-done(u), calls=wrapped
})";
  EXPECT_EQ(Eval(text, {R1<float>({1, 2})}), R1<float>({1, 2, 1, 2}));
}

TEST(Evaluator, PassThroughOpsAndDeviceIds) {
  const char* text = R"(HloModule m
ENTRY e {
  p = s32[3] parameter(0)
  tok = token[] after-all()
  d = s32[3] add-dependency(p, tok)
  t = (s32[3]) tuple(d)
  b = (s32[3]) opt-barrier(t)
  g = s32[3] get-tuple-element(b), index=0
  r = u32[] replica-id()
  q = u32[] partition-id()
  ROOT out = (s32[3], u32[], u32[], token[]) tuple(g, r, q, tok)
})";
  auto module = hlo::ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message();
  std::vector<Literal> args = {R1<int32_t>({1, 2, 3})};
  auto r = Evaluator().Evaluate(**module, args, DeviceId{.replica_id = 2, .partition_id = 5});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tuple_element(0), R1<int32_t>({1, 2, 3}));
  EXPECT_EQ(r->tuple_element(1), Literal::CreateR0<uint32_t>(2));
  EXPECT_EQ(r->tuple_element(2), Literal::CreateR0<uint32_t>(5));
  EXPECT_TRUE(r->tuple_element(3).shape().IsToken());
}

TEST(Evaluator, DomainPassesItsOperandThrough) {
  const char* text = R"(HloModule m
ENTRY e {
  p = u32[] parameter(0)
  ROOT d = u32[] domain(p), domain={kind="sharding", entry={maximal device=1}, exit={}}
})";
  EXPECT_EQ(Eval(text, {Literal::CreateR0<uint32_t>(7)}), Literal::CreateR0<uint32_t>(7));
}

TEST(Evaluator, InstructionsOutOfTextOrderRunAfterTheirOperands) {
  // A ROOT written first and an operand used before its definition line.
  const char* text = R"(HloModule m
ENTRY e {
  ROOT r = s32[] add(b, a)
  b = s32[] multiply(a, a)
  a = s32[] parameter(0)
})";
  EXPECT_EQ(Eval(text, {Literal::CreateR0<int32_t>(3)}), Literal::CreateR0<int32_t>(12));
}

TEST(Evaluator, DeadUnsupportedInstructionsAreNotRun) {
  const char* text = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  dead = f32[4] custom-call(p), custom_call_target="Mystery"
  ROOT r = f32[4] negate(p)
})";
  EXPECT_EQ(Eval(text, {R1<float>({1, 2, 3, 4})}), R1<float>({-1, -2, -3, -4}));
}

TEST(Evaluator, UnsupportedOpcodeNamesOpcodeAndLocation) {
  const char* text = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = u64[2] rng-get-and-update-state(), delta=4096
})";
  auto r = TryEval(text, {R1<float>({1, 2, 3, 4})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("<input>:4:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("rng-get-and-update-state r"), std::string::npos);
  EXPECT_FALSE(Evaluator::IsOpcodeImplemented(hlo::HloOpcode::kRngGetAndUpdateState));
  EXPECT_TRUE(Evaluator::IsOpcodeImplemented(hlo::HloOpcode::kDot));
  EXPECT_TRUE(Evaluator::IsOpcodeImplemented(hlo::HloOpcode::kParameter));
  // Every elementwise opcode (opcode.def's cost column, which timing reads
  // too) has the elementwise kernel.
  for (int i = 0; i < hlo::kHloOpcodeCount; ++i) {
    const auto opcode = static_cast<hlo::HloOpcode>(i);
    if (hlo::IsElementwise(opcode)) {
      EXPECT_TRUE(Evaluator::IsOpcodeImplemented(opcode)) << hlo::HloOpcodeName(opcode);
    }
  }
}

TEST(Evaluator, PublicCustomCallTargets) {
  const char* text = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  s = f32[2] custom-call(p), custom_call_target="Sharding", sharding={replicated}
  h = f32[2] custom-call(s), custom_call_target="MoveToHost"
  d = f32[2] custom-call(h), custom_call_target="MoveToDevice"
  f = f32[2] custom-call(d), custom_call_target="SPMDFullToShardShape"
  g = f32[2] custom-call(f), custom_call_target="SPMDShardToFullShape"
  b = f32[3] custom-call(), custom_call_target="AllocateBuffer"
  ROOT t = (f32[2], f32[3]) tuple(g, b)
})";
  Literal r = Eval(text, {R1<float>({1, 2})});
  ASSERT_EQ(r.tuple_size(), 2);
  EXPECT_EQ(r.tuple_element(0), R1<float>({1, 2}));
  EXPECT_EQ(r.tuple_element(1), R1<float>({0, 0, 0}));
}

TEST(Evaluator, UnknownCustomCallTargetIsUnimplemented) {
  const char* text = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[4] custom-call(p), custom_call_target="Mystery"
})";
  auto r = TryEval(text, {R1<float>({1, 2, 3, 4})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("\"Mystery\""), std::string::npos) << r.status().message();
}

TEST(Evaluator, WrongArgumentsAreInvalidArgument) {
  const char* text = R"(HloModule m
ENTRY e {
  ROOT p = f32[4] parameter(0)
})";
  EXPECT_EQ(TryEval(text, {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TryEval(text, {R1<float>({1, 2})}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TryEval(text, {R1<int32_t>({1, 2, 3, 4})}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(Evaluator, InconsistentAttributesAreErrorsNotCrashes) {
  // The parser does not verify; the kernels must still never read or write
  // outside a value.
  const char* bodies[] = {
      "p = s32[3] parameter(0)\n  ROOT r = s32[2,3] broadcast(p), dimensions={5}",
      "p = s32[3] parameter(0)\n  c = s32[2,3] iota(), iota_dimension=0\n"
      "  ROOT r = s32[3,2] transpose(c), dimensions={0,0}",
      "p = s32[3] parameter(0)\n  ROOT r = s32[4] slice(p), slice={[0:4]}",
      "p = s32[3] parameter(0)\n  i = s32[] constant(0)\n"
      "  ROOT r = s32[4] dynamic-slice(p, i), dynamic_slice_sizes={4}",
      "p = s32[3] parameter(0)\n  q = s32[2] constant({1, 2})\n"
      "  ROOT r = s32[9] concatenate(p, q), dimensions={0}",
      "p = s32[3] parameter(0)\n  i = s32[1] constant({0})\n"
      "  ROOT r = s32[1,5] gather(p, i), offset_dims={1}, collapsed_slice_dims={}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={5}",
  };
  for (const char* body : bodies) {
    const std::string text = std::string("HloModule m\nENTRY e {\n  ") + body + "\n}\n";
    auto r = TryEval(text, {R1<int32_t>({1, 2, 3})});
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().message();
    EXPECT_NE(r.status().message().find(" r: "), std::string::npos) << r.status().message();
  }
}

TEST(Evaluator, ValueOverMaxBytesIsResourceExhausted) {
  EvaluatorOptions options;
  options.max_bytes = 1024;
  auto r = TryEval(R"(HloModule m
ENTRY e {
  ROOT i = s32[1000] iota(), iota_dimension=0
})",
                   {}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace tpusim::eval
