// The verifier on small modules. Each negative test holds one mistake and pins
// the whole message: file, line and column of the offending instruction, its
// name, and what was expected against what was found.
#include "sim/hlo/verifier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "sim/hlo/parser.h"
#include "tests/hlo/nested_module.h"

namespace tpusim::hlo {
namespace {

/// The verifier's message for a module that parses but must not verify.
std::string VerifyError(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(text, "v.hlo");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return "parse error: " + parsed.status().message();
  const Status status = VerifyModule(**parsed);
  EXPECT_FALSE(status.ok()) << "verified, but should not have:\n" << text;
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

/// The verifier's status for a module that parses.
Status Verify(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(text, "v.hlo");
  if (!parsed.ok()) return parsed.status();
  return VerifyModule(**parsed);
}

constexpr std::string_view kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

/// `computations` followed by an ENTRY computation `body`. With kAdd, the
/// body's first line is line 10.
std::string WithComputations(std::string_view computations, std::string_view body) {
  return "HloModule m\n" + std::string(computations) + "\nENTRY main {\n" + std::string(body) +
         "}\n";
}

// --- operands -------------------------------------------------------------------

TEST(VerifyOperands, BinaryOperandsMustHaveTheSameShape) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  q = f32[3] parameter(1)
  ROOT r = f32[2] add(p, q)
}
)"),
            "v.hlo:5:3: error: r: operand 1 has shape f32[3] but add expects f32[2] (the shape of "
            "operand 0)");
}

TEST(VerifyOperands, BinaryOperandsMustHaveTheSameElementType) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  q = s32[2] parameter(1)
  ROOT r = f32[2] multiply(p, q)
}
)"),
            "v.hlo:5:3: error: r: operand 1 has shape s32[2] but multiply expects f32[2] (the "
            "shape of operand 0)");
}

TEST(VerifyOperands, FixedArityOpcodesTakeTheirOperandCount) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = f32[2] add(p)
}
)"),
            "v.hlo:4:3: error: r: add takes 2 operands, found 1");
}

TEST(VerifyOperands, ReduceTakesInputsAndInitsInPairs) {
  EXPECT_EQ(
      VerifyError(WithComputations(kAdd, R"(  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z, z), dimensions={0}, to_apply=add
)")),
      "v.hlo:12:3: error: r: reduce takes N inputs followed by N init values, found 3 operands");
}

TEST(VerifyOperands, SelectPredicateMustMatchTheValues) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  c = pred[3] parameter(0)
  p = f32[2] parameter(1)
  ROOT r = f32[2] select(c, p, p)
}
)"),
            "v.hlo:5:3: error: r: operand 0 has shape pred[3] but select expects dimensions {2} "
            "(those of operand 1)");
}

TEST(VerifyOperands, UnaryMathNeedsFloatingPoint) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = s32[2] parameter(0)
  ROOT r = pred[2] is-finite(p)
}
)"),
            "v.hlo:4:3: error: r: is-finite needs a floating-point operand, found s32[2]");
}

// --- attributes -------------------------------------------------------------------

TEST(VerifyAttributes, ReduceNeedsToApply) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}
}
)"),
            "v.hlo:5:3: error: r: reduce needs the attribute to_apply");
}

TEST(VerifyAttributes, CompareNeedsADirection) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = pred[2] compare(p, p)
}
)"),
            "v.hlo:4:3: error: r: compare needs the attribute direction");
}

// XLA's BroadcastOfScalarDoesntNeedDimensionsAttr: a scalar has no
// dimension to place, so its broadcast may leave dimensions= out; any other
// operand's may not.
TEST(VerifyAttributes, OnlyAScalarsBroadcastMayLeaveOutDimensions) {
  EXPECT_TRUE(Verify(R"(HloModule m
ENTRY main {
  p = f32[] parameter(0)
  ROOT r = f32[2,3] broadcast(p)
}
)").ok());
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = f32[2,3] broadcast(p)
}
)"),
            "v.hlo:4:3: error: r: broadcast needs the attribute dimensions");
}

TEST(VerifyAttributes, CustomCallNeedsATarget) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = f32[2] custom-call(p)
}
)"),
            "v.hlo:4:3: error: r: custom-call needs the attribute custom_call_target");
}

TEST(VerifyAttributes, ReduceDimensionsMustBeInRange) {
  EXPECT_EQ(VerifyError(WithComputations(kAdd, R"(  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={2}, to_apply=add
)")),
            "v.hlo:12:3: error: r: dimensions={2} of reduce: dimension 2 is out of range for the "
            "input of rank 1");
}

TEST(VerifyAttributes, TransposeNeedsAPermutation) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2,3] parameter(0)
  ROOT r = f32[2,2] transpose(p), dimensions={0,0}
}
)"),
            "v.hlo:4:3: error: r: dimensions={0,0} of transpose: dimension 0 appears twice");
}

TEST(VerifyAttributes, GetTupleElementIndexMustBeInRange) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = (f32[2], s32[]) parameter(0)
  ROOT r = f32[2] get-tuple-element(p), index=2
}
)"),
      "v.hlo:4:3: error: r: index=2 is out of range for operand (f32[2], s32[]) with 2 elements");
}

TEST(VerifyAttributes, IotaDimensionMustBeInRange) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  ROOT r = s32[4] iota(), iota_dimension=1
}
)"),
            "v.hlo:3:3: error: r: iota_dimension=1 is out of range for s32[4]");
}

// --- shapes --------------------------------------------------------------------------

TEST(VerifyShapes, StatedShapeMustMatchTheInferredOne) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = f32[3] negate(p)
}
)"),
      "v.hlo:4:3: error: r: negate of these operands and attributes has shape f32[2], but the "
      "instruction's shape is f32[3]");
}

TEST(VerifyShapes, GetTupleElementOfAnArray) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = f32[2] get-tuple-element(p), index=0
}
)"),
            "v.hlo:4:3: error: r: operand 0 of get-tuple-element must be a tuple, found f32[2]");
}

TEST(VerifyShapes, BroadcastDimensionOutOfRange) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[3] parameter(0)
  ROOT r = f32[2,3] broadcast(p), dimensions={2}
}
)"),
            "v.hlo:4:3: error: r: broadcast dimension 2 is out of range for result f32[2,3]");
}

TEST(VerifyShapes, BroadcastSizesMustAgree) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[3] parameter(0)
  ROOT r = f32[3,2] broadcast(p), dimensions={1}
}
)"),
      "v.hlo:4:3: error: r: broadcast maps operand dimension 0 of f32[3] to result dimension 1 of "
      "f32[3,2], but their sizes differ");
}

TEST(VerifyShapes, ReshapeKeepsTheElementCount) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[6] parameter(0)
  ROOT r = f32[4] reshape(p)
}
)"),
      "v.hlo:4:3: error: r: reshape of f32[6] (6 elements) cannot produce f32[4] (4 elements)");
}

TEST(VerifyShapes, ConvertKeepsTheDimensions) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[6] parameter(0)
  ROOT r = s32[5] convert(p)
}
)"),
      "v.hlo:4:3: error: r: convert keeps the dimensions of its operand f32[6], found s32[5]");
}

TEST(VerifyShapes, BitcastConvertToANarrowerTypeAddsAMinorDimension) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT r = s16[4] bitcast-convert(p)
}
)"),
      "v.hlo:4:3: error: r: bitcast-convert of f32[4] to s16 has shape s16[4,2], found s16[4]");
}

TEST(VerifyShapes, SliceMustStayInBounds) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[10] parameter(0)
  ROOT r = f32[10] slice(p), slice={[2:12]}
}
)"),
            "v.hlo:4:3: error: r: slice range [2:12:1] of dimension 0 does not fit size 10 (needs "
            "0 <= start "
            "<= limit <= size and stride > 0)");
}

TEST(VerifyShapes, DynamicSliceNeedsOneIndexPerDimension) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[10,8] parameter(0)
  i = s32[] parameter(1)
  ROOT r = f32[2,8] dynamic-slice(p, i), dynamic_slice_sizes={2,8}
}
)"),
            "v.hlo:5:3: error: r: dynamic-slice needs one start index per operand dimension (2), "
            "found 1");
}

TEST(VerifyShapes, DynamicUpdateSliceUpdateMustFit) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  u = f32[5] parameter(1)
  i = s32[] parameter(2)
  ROOT r = f32[4] dynamic-update-slice(p, u, i)
}
)"),
      "v.hlo:6:3: error: r: update f32[5] of dynamic-update-slice does not fit in operand f32[4]");
}

TEST(VerifyShapes, PadMayNotMakeADimensionNegative) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[0] pad(p, z), padding=-3_0
}
)"),
            "v.hlo:5:3: error: r: padding of pad makes dimension 0 of f32[2] negative (-1)");
}

TEST(VerifyShapes, ConcatenateOperandsAgreeOutsideTheConcatenatedDimension) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT r = f32[2,8] concatenate(a, b), dimensions={1}
}
)"),
            "v.hlo:5:3: error: r: operand 1 has shape f32[4,5] but concatenate along dimension 1 "
            "expects the "
            "other dimensions of operand 0 f32[2,3]");
}

TEST(VerifyShapes, DotContractingSizesMustMatch) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  a = f32[2,3] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)"),
            "v.hlo:5:3: error: d: dot contracting dimension 0 has size 3 in lhs f32[2,3] but 4 in "
            "rhs f32[4,5]");
}

TEST(VerifyShapes, DotBatchDimensionListsPair) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  a = f32[2,3,4] parameter(0)
  b = f32[2,4,5] parameter(1)
  ROOT d = f32[2,3,2,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}
)"),
            "v.hlo:5:3: error: d: dot has 1 lhs_batch_dims but 0 rhs_batch_dims");
}

TEST(VerifyShapes, ConvolutionDimLabelsMustGiveEveryDimensionARole) {
  // A '?' label parses (XLA writes it for custom calls) but a convolution
  // cannot be computed with a dimension that is neither batch, feature nor
  // spatial.
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  x = f32[2,5,3,1] parameter(0)
  k = f32[3,1,3,8] parameter(1)
  ROOT c = f32[2,3,8,1] convolution(x, k), window={size=3}, dim_labels=b0f?_0?io->b0f?
}
)"),
            "v.hlo:5:3: error: c: dim_labels b0f?_0?io->b0f? of convolution label a dimension "
            "'?' (no role): every operand and result dimension of a convolution must be batch, "
            "feature or spatial");
  // A custom call just keeps such labels.
  EXPECT_TRUE(Verify(R"(HloModule m
ENTRY main {
  ROOT r = f32[100]{0} custom-call(), window={size=2x2}, dim_labels=?b01f_0?1io->b01?f, custom_call_target="target"
}
)")
                  .ok());
}

TEST(VerifyShapes, ConvolutionFeatureSizesMustMatch) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  x = f32[1,4,4,3] parameter(0)
  k = f32[3,3,2,8] parameter(1)
  ROOT c = f32[1,2,2,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
}
)"),
            "v.hlo:5:3: error: c: convolution input feature size 3 divided by feature_group_count "
            "1 must equal "
            "the kernel input feature size 2");
}

TEST(VerifyShapes, GatherSliceMustFitTheOperand) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  t = f32[512,16] parameter(0)
  i = s32[128] parameter(1)
  ROOT g = f32[128,32] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,32}
}
)"),
      "v.hlo:5:3: error: g: slice_sizes={1,32} of gather does not fit in operand f32[512,16]");
}

TEST(VerifyShapes, ScatterUpdatesHaveTheRankTheDimensionNumbersGive) {
  EXPECT_EQ(VerifyError(WithComputations(kAdd, R"(  t = f32[200,300] parameter(0)
  i = s32[10,1] parameter(1)
  u = f32[10,300,1] parameter(2)
  ROOT s = f32[200,300] scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
)")),
            "v.hlo:13:3: error: s: updates f32[10,300,1] of scatter must have rank 2 "
            "(update_window_dims plus "
            "the scatter batch dimensions)");
}

TEST(VerifyShapes, AllGatherMultipliesByTheGroupSize) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  ROOT r = f32[6] all-gather(p), replica_groups={{0,1}}, dimensions={0}
}
)"),
      "v.hlo:4:3: error: r: all-gather of these operands and attributes has shape f32[8], but the "
      "instruction's shape is f32[6]");
}

TEST(VerifyShapes, ReduceScatterNeedsADivisibleDimension) {
  EXPECT_EQ(VerifyError(WithComputations(kAdd, R"(  p = f32[4,7] parameter(0)
  ROOT r = f32[4,3] reduce-scatter(p), replica_groups={{0,1}}, dimensions={1}, to_apply=add
)")),
            "v.hlo:11:3: error: r: dimension 1 of operand f32[4,7] is not divisible by the replica "
            "group size 2");
}

TEST(VerifyShapes, CopyDoneTakesTheStartTuple) {
  EXPECT_EQ(VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = f32[2] copy-done(p)
}
)"),
            "v.hlo:4:3: error: r: operand of copy-done must be the tuple of its start op (at least "
            "1 element), "
            "found f32[2]");
}

TEST(VerifyShapes, AsyncStartListsItsOperandsFirst) {
  EXPECT_EQ(VerifyError(R"(HloModule m
wrapped {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
ENTRY main {
  p = f32[4] parameter(0)
  s = ((f32[5]), f32[4], s32[]) async-start(p), calls=wrapped
  ROOT d = f32[4] async-done(s)
}
)"),
            "v.hlo:8:3: error: s: element 0 of async-start must be its operands (f32[4]), found "
            "(f32[5])");
}

TEST(VerifyShapes, AsyncWrapperResultIsTheWrappedOpsResult) {
  EXPECT_EQ(VerifyError(WithComputations(kAdd, R"(  p = f32[4] parameter(0)
  s = ((f32[4]), f32[4], s32[]) reduce-scatter-start(p), replica_groups={{0,1}}, dimensions={0}, to_apply=add
  ROOT d = f32[4] reduce-scatter-done(s)
)")),
            "v.hlo:11:3: error: s: element 1 of reduce-scatter-start must be the reduce-scatter "
            "result f32[2], "
            "found f32[4]");
}

// --- called computations ----------------------------------------------------------------

TEST(VerifyCalls, ReducerTakesTwoScalarsPerInput) {
  EXPECT_EQ(VerifyError(R"(HloModule m
add3 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  z = f32[] parameter(2)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[8] parameter(0)
  c = f32[] constant(0)
  ROOT r = f32[] reduce(p, c), dimensions={0}, to_apply=add3
}
)"),
            "v.hlo:11:3: error: r: to_apply computation add3 of reduce takes 3 parameters but "
            "reduce passes 2");
}

TEST(VerifyCalls, ReducerReturnsTheInitType) {
  EXPECT_EQ(VerifyError(R"(HloModule m
to_int {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = s32[] convert(x)
}
ENTRY main {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=to_int
}
)"),
            "v.hlo:10:3: error: r: to_apply computation to_int of reduce returns s32[] but reduce "
            "needs f32[]");
}

TEST(VerifyCalls, SortComparatorReturnsPred) {
  EXPECT_EQ(VerifyError(WithComputations(kAdd, R"(  p = f32[8] parameter(0)
  ROOT r = f32[8] sort(p), dimensions={0}, to_apply=add
)")),
            "v.hlo:11:3: error: r: comparator computation add of sort returns f32[] but sort needs "
            "pred[]");
}

TEST(VerifyCalls, MapParametersHaveTheOperandTypes) {
  EXPECT_EQ(VerifyError(WithComputations(kAdd, R"(  p = f32[4] parameter(0)
  q = s32[4] parameter(1)
  ROOT r = f32[4] map(p, q), dimensions={0}, to_apply=add
)")),
            "v.hlo:12:3: error: r: parameter 1 of to_apply computation add of map has shape f32[] "
            "but map "
            "passes s32[]");
}

TEST(VerifyCalls, WhileBodyReturnsTheLoopState) {
  EXPECT_EQ(VerifyError(R"(HloModule m
cond {
  c = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  b = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  ROOT t = (s32[]) tuple(i)
}
ENTRY main {
  p = (s32[], f32[2]) parameter(0)
  ROOT w = (s32[], f32[2]) while(p), condition=cond, body=body
}
)"),
            "v.hlo:15:3: error: w: body computation body of while returns (s32[]) but while needs "
            "(s32[], "
            "f32[2])");
}

TEST(VerifyCalls, WhileConditionReturnsPred) {
  EXPECT_EQ(VerifyError(R"(HloModule m
cond {
  c = s32[] parameter(0)
  ROOT n = s32[] negate(c)
}
body {
  ROOT b = s32[] parameter(0)
}
ENTRY main {
  p = s32[] parameter(0)
  ROOT w = s32[] while(p), condition=cond, body=body
}
)"),
            "v.hlo:11:3: error: w: condition computation cond of while returns s32[] but while "
            "needs pred[]");
}

TEST(VerifyCalls, ConditionalBranchTakesItsOperand) {
  EXPECT_EQ(VerifyError(R"(HloModule m
on_true {
  ROOT t = f32[2] parameter(0)
}
on_false {
  f = f32[3] parameter(0)
  ROOT s = f32[2] slice(f), slice={[0:2]}
}
ENTRY main {
  c = pred[] parameter(0)
  p = f32[2] parameter(1)
  ROOT r = f32[2] conditional(c, p, p), true_computation=on_true, false_computation=on_false
}
)"),
            "v.hlo:12:3: error: r: parameter 0 of branch 1 computation on_false of conditional has "
            "shape f32[3] "
            "but conditional passes f32[2]");
}

TEST(VerifyCalls, ConditionalSelectorType) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
branch {
  ROOT t = f32[2] parameter(0)
}
ENTRY main {
  c = s32[] parameter(0)
  p = f32[2] parameter(1)
  ROOT r = f32[2] conditional(c, p, p), true_computation=branch, false_computation=branch
}
)"),
      "v.hlo:8:3: error: r: the selector (operand 0) of conditional must be pred[], found s32[]");
}

TEST(VerifyCalls, CallPassesEveryParameter) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
f {
  ROOT x = f32[2] parameter(0)
}
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = f32[2] call(p, p), to_apply=f
}
)"),
      "v.hlo:7:3: error: r: to_apply computation f of call takes 1 parameter but call passes 2");
}

TEST(VerifyCalls, FusionParametersMatchItsOperands) {
  EXPECT_EQ(VerifyError(R"(HloModule m
fused {
  x = f32[3] parameter(0)
  ROOT n = f32[3] negate(x)
}
ENTRY main {
  p = f32[2] parameter(0)
  ROOT r = f32[3] fusion(p), kind=kLoop, calls=fused
}
)"),
            "v.hlo:8:3: error: r: parameter 0 of called computation fused of fusion has shape "
            "f32[3] but fusion "
            "passes f32[2]");
}

TEST(VerifyCalls, AComputationMayNotCallItself) {
  EXPECT_EQ(VerifyError(R"(HloModule m
loop {
  x = f32[] parameter(0)
  ROOT r = f32[] call(x), to_apply=loop
}
ENTRY main {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=loop
}
)"),
            "v.hlo:4:3: error: r: computation loop calls itself (through loop)");
}

// --- graph and module ----------------------------------------------------------------------

TEST(VerifyGraph, DataCycle) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  a = f32[2] add(b, b)
  b = f32[2] add(a, a)
  ROOT r = f32[2] add(a, p)
}
)"),
      "v.hlo:4:3: error: a: instruction depends on itself through operands or control predecessors "
      "(a -> b -> a)");
}

TEST(VerifyGraph, ControlCycle) {
  EXPECT_EQ(
      VerifyError(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  a = f32[2] negate(p), control-predecessors={b}
  b = f32[2] negate(p), control-predecessors={a}
  ROOT r = f32[2] add(a, b)
}
)"),
      "v.hlo:4:3: error: a: instruction depends on itself through operands or control predecessors "
      "(a -> b -> a)");
}

TEST(VerifyEntry, EntryParametersMatchTheEntryComputationLayout) {
  EXPECT_EQ(VerifyError(R"(HloModule m, entry_computation_layout={(f32[4]{0})->f32[8]{0}}
ENTRY main {
  p = f32[8] parameter(0)
  ROOT r = f32[8] negate(p)
}
)"),
            "v.hlo:3:3: error: p: entry parameter 0 has shape f32[8] but entry_computation_layout "
            "gives f32[4]");
}

TEST(VerifyEntry, EntryResultMatchesTheEntryComputationLayout) {
  EXPECT_EQ(VerifyError(R"(HloModule m, entry_computation_layout={(f32[8]{0})->s32[8]{0}}
ENTRY main {
  p = f32[8] parameter(0)
  ROOT r = f32[8] negate(p)
}
)"),
            "v.hlo:4:3: error: r: the entry result has shape f32[8] but entry_computation_layout "
            "gives s32[8]");
}

// Hand-built IR reaches states the parser rejects.
TEST(VerifyEntry, HandBuiltNegativeSizeAndMissingRoot) {
  auto build = [](bool with_root) {
    auto module = std::make_unique<HloModule>("m");
    auto computation = std::make_unique<HloComputation>("main");
    auto p = std::make_unique<HloInstruction>("p", HloOpcode::kParameter,
                                              Shape(PrimitiveType::kF32, {-5}));
    p->set_parameter_number(0);
    p->set_location({3, 3});
    HloInstruction* param = computation->AddInstruction(std::move(p));
    computation->SetParameter(0, param);
    computation->set_location({2, 1});
    if (with_root) computation->set_root(param);
    module->set_entry(module->AddComputation(std::move(computation)));
    return module;
  };
  Status status = VerifyModule(*build(/*with_root=*/false));
  EXPECT_EQ(status.message(), "<input>:2:1: error: computation main has no ROOT instruction");
  status = VerifyModule(*build(/*with_root=*/true));
  EXPECT_EQ(status.message(), "<input>:3:3: error: p: shape f32[-5] has a negative dimension size");
}

// --- modules that verify -------------------------------------------------------------------

TEST(VerifyAccepts, ATrainingStepShapedModule) {
  const Status status = Verify(
      R"(HloModule step, entry_computation_layout={(f32[8,4]{1,0}, f32[4,2]{1,0})->(f32[8,2]{1,0}, f32[])}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

cond {
  st = (s32[], f32[8,2]) parameter(0)
  i = get-tuple-element(st), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  st = (s32[], f32[8,2]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  v = f32[8,2] get-tuple-element(st), index=1
  one = s32[] constant(1)
  j = add(i, one)
  h = f32[] constant(0.5)
  hb = f32[8,2] broadcast(h), dimensions={}
  w = multiply(v, hb)
  ROOT out = tuple(j, w)
}

ENTRY main {
  x = f32[8,4]{1,0} parameter(0)
  k = f32[4,2]{1,0} parameter(1)
  d = f32[8,2]{1,0} dot(x, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = s32[] constant(0)
  init = tuple(zero, d)
  loop = (s32[], f32[8,2]) while(init), condition=cond, body=body
  y = get-tuple-element(loop), index=1
  z = f32[] constant(0)
  total = f32[] reduce(y, z), dimensions={0,1}, to_apply=add
  ROOT r = tuple(y, total)
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifyAccepts, DotAndConvolutionMayChooseTheirResultType) {
  const Status status = Verify(R"(HloModule m
ENTRY main {
  a = bf16[8,128] parameter(0)
  b = s8[128,64] parameter(1)
  d = f32[8,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[8,64] convolution(a, b), dim_labels=bf_io->bf
  ROOT r = tuple(d, c)
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifyAccepts, AsyncPairsWithContextElements) {
  const Status status = Verify(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
wrapped {
  w = f32[2,8] parameter(0)
  ROOT a = f32[2,8] all-to-all(w), replica_groups={{0,1}}, dimensions={0}
}
ENTRY main {
  p = f32[2,8] parameter(0)
  cs = (f32[2,8]{1,0:S(1)}, f32[2,8], u32[]{:S(2)}) copy-start(p)
  cd = f32[2,8]{1,0:S(1)} copy-done(cs)
  ags = (f32[2,8], f32[4,8]) all-gather-start(cd), replica_groups={{0,1}}, dimensions={0}
  agd = f32[4,8] all-gather-done(ags)
  rss = ((f32[4,8]), f32[2,8], s32[]) reduce-scatter-start(agd), replica_groups={{0,1}}, dimensions={0}, to_apply=add
  rsd = f32[2,8] reduce-scatter-done(rss)
  as = ((f32[2,8]), f32[2,8], u32[], u32[]) async-start(rsd), calls=wrapped
  ad = f32[2,8] async-done(as), calls=wrapped
  cps = (f32[2,8], f32[2,8], u32[], u32[]) collective-permute-start(ad), source_target_pairs={{0,1},{1,0}}
  ROOT cpd = f32[2,8] collective-permute-done(cps)
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifyAccepts, TheFormsXlasShapeInferenceGivesThatItsParserTestsWrite) {
  // all-to-all's tuple form is a tuple even of one operand; a permute's
  // start may leave out its two u32[] context values; a scalar's
  // reduce-window and select-and-scatter may leave out their empty window;
  // after-all may order after values, not only tokens.
  const Status status = Verify(std::string(R"(HloModule m)") + std::string(kAdd) + R"(
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}

ENTRY e {
  x = f32[128,32] parameter(0)
  a2a = (f32[128,32]) all-to-all(x), replica_groups={}
  v = f32[8] parameter(1)
  one = (f32[8], f32[8]) collective-permute-start(v), source_target_pairs={{0,1}}
  one_done = f32[8] collective-permute-done(one)
  two = ((f32[8], f32[8]), (f32[8], f32[8])) collective-permute-start(v, v), source_target_pairs={{0,1}}
  two_done = (f32[8], f32[8]) collective-permute-done(two)
  after = token[] after-all(v, one_done)
  s = f32[] parameter(2)
  rw = f32[] reduce-window(s, s), to_apply=add
  ROOT sas = f32[] select-and-scatter(s, rw, s), select=ge, scatter=add
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
  // Left out on an array, the window is the empty one, and wrong for it.
  EXPECT_EQ(VerifyError(std::string(R"(HloModule m)") + std::string(kAdd) + R"(
ENTRY e {
  x = f32[4] parameter(0)
  i = f32[] constant(0)
  ROOT rw = f32[4] reduce-window(x, i), to_apply=add
}
)"),
            "v.hlo:11:3: error: rw: window of reduce-window has 0 dimensions but the input has 1");
}

TEST(VerifyAccepts, DynamicShapesAgreeWithTheirBounds) {
  const Status status = Verify(R"(HloModule m
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}
ENTRY main {
  p = s32[4,2] parameter(0)
  n = s32[] parameter(1)
  d = s32[<=4,2] set-dimension-size(p, n), dimensions={0}
  z = s32[] constant(0)
  r1 = s32[2] reduce(d, z), dimensions={0}, to_apply=add
  u = f32[?,3] custom-call(), custom_call_target="make"
  e = f32[?,3] exponential(u)
  ROOT t = tuple(r1, e)
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifyAccepts, RealModuleLeniencies) {
  // XLA's own test modules use each of these; see verifier.cc and
  // shape_inference*.cc for why each is accepted.
  const Status status = Verify(R"(HloModule m
wrapped_add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  s = f32[] add(x, y)
  ROOT t = (f32[]) tuple(s)
}
ENTRY main {
  c = u32[] constant(1)
  v = u32[2] parameter(0)
  a = u32[2] add(c, v)
  tok = token[] after-all()
  snd = (s32[2], u32[], token[]) send(a, tok), channel_id=1, is_host_transfer=true
  sd = token[] send-done(snd), channel_id=1
  rcv = (u32[2], u32[], token[]) recv(tok), channel_id=2
  rd = (u32[2], token[]) recv-done(rcv), channel_id=2
  bundle = (u32[2], u32[], token[]) tuple(a, c, sd)
  f = f32[4] parameter(1)
  z = f32[] constant(0)
  total = f32[] reduce(f, z), dimensions={0}, to_apply=wrapped_add
  ROOT r = ((u32[2], token[]), f32[]) tuple(bundle, total)
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifyAccepts, CollectivesWithImplicitGroupsAreNotResized) {
  const Status status = Verify(R"(HloModule m, replica_count=4
ENTRY main {
  p = f32[4] parameter(0)
  ROOT r = f32[16] all-gather(p), replica_groups={}, dimensions={0}
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifyAccepts, BitcastConvertBetweenWidths) {
  const Status status = Verify(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  n = s16[4,2] bitcast-convert(p)
  w = f32[4] bitcast-convert(n)
  s = u32[4] bitcast-convert(w)
  ROOT t = tuple(n, w, s)
}
)");
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifyAccepts, VerifyingALargeModuleIsFast) {
  // A chain of 20'000 adds: deep enough to overflow a recursive walk.
  std::string text = "HloModule big\nENTRY main {\n  v0 = f32[8] parameter(0)\n";
  for (int i = 1; i <= 20'000; ++i) {
    text += "  v" + std::to_string(i) + " = f32[8] add(v" + std::to_string(i - 1) + ", v0)\n";
  }
  text += "  ROOT r = f32[8] negate(v20000)\n}\n";
  const Status status = Verify(text);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifyAccepts, ComputationsNested100000DeepAreWalkedWithoutRecursion) {
  // Each check of a call, fusion or loop looks one level down; none recurses
  // as deep as the nesting (timing and values refuse it with a located error).
  for (const std::string how : {"call", "fusion", "while"}) {
    const Status status = Verify(test::NestedModule(100'000, how));
    EXPECT_TRUE(status.ok()) << how << ": " << status.message();
  }
}

}  // namespace
}  // namespace tpusim::hlo
