// Shape inference per opcode. Most tests write the instruction under test
// without a shape, so the parser infers it, and compare the result's text; the
// rest call InferShape directly to see its errors and what it refuses to infer.
#include "sim/hlo/shape_inference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>

#include "sim/hlo/parser.h"

namespace tpusim::hlo {
namespace {

using ::testing::HasSubstr;

/// A module of `computations` and an ENTRY computation of `body`, whose ROOT
/// is the instruction under test.
std::string Module(std::string_view body, std::string_view computations = "") {
  return std::string("HloModule m\n\n") + std::string(computations) + "\nENTRY main {\n" +
         std::string(body) + "\n}\n";
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << text;
  return parsed.ok() ? std::move(parsed).value() : nullptr;
}

/// The shape the parser inferred for the entry ROOT (written without a shape),
/// or the parse error.
std::string RootShape(std::string_view body, std::string_view computations = "") {
  StatusOr<std::unique_ptr<HloModule>> parsed =
      ParseHloModule(Module(body, computations), "test.hlo");
  if (!parsed.ok()) return "error: " + parsed.status().message();
  return (*parsed)->entry()->root()->shape().ToString(/*print_layout=*/false);
}

/// InferShape on the entry ROOT of a module that parses (shapes written out).
StatusOr<Shape> InferRoot(std::string_view body, std::string_view computations = "") {
  std::unique_ptr<HloModule> m = Parse(Module(body, computations));
  if (m == nullptr) return Internal("did not parse");
  return InferShape(*m->entry()->root());
}

constexpr std::string_view kAdd = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

// --- elementwise --------------------------------------------------------------

TEST(InferElementwise, UnaryKeepsTheOperandShapeWithoutItsLayout) {
  EXPECT_EQ(RootShape("p = bf16[8,128]{1,0:T(8,128)(2,1)} parameter(0)\n ROOT r = exponential(p)"),
            "bf16[8,128]");
  EXPECT_EQ(RootShape("p = (f32[2], token[]) parameter(0)\n ROOT r = copy(p)"),
            "(f32[2], token[])");
}

TEST(InferElementwise, AbsRealAndImagOfComplexAreReal) {
  EXPECT_EQ(RootShape("p = c64[3] parameter(0)\n ROOT r = abs(p)"), "f32[3]");
  EXPECT_EQ(RootShape("p = c128[3] parameter(0)\n ROOT r = real(p)"), "f64[3]");
  EXPECT_EQ(RootShape("p = c64[3] parameter(0)\n ROOT r = imag(p)"), "f32[3]");
  EXPECT_EQ(RootShape("p = s32[3] parameter(0)\n ROOT r = abs(p)"), "s32[3]");
}

TEST(InferElementwise, PredicatesAndComplexConstruction) {
  EXPECT_EQ(RootShape("p = f16[4] parameter(0)\n ROOT r = is-finite(p)"), "pred[4]");
  EXPECT_EQ(RootShape("p = f32[4] parameter(0)\n q = f32[4] parameter(1)\n ROOT r = compare(p, q), "
                      "direction=LT"),
            "pred[4]");
  EXPECT_EQ(RootShape("p = f64[4] parameter(0)\n q = f64[4] parameter(1)\n ROOT r = complex(p, q)"),
            "c128[4]");
}

TEST(InferElementwise, BinaryOpsKeepDynamicDimensions) {
  EXPECT_EQ(
      RootShape("p = s32[<=4,2] parameter(0)\n q = s32[4,2] parameter(1)\n ROOT r = add(q, p)"),
      "s32[<=4,2]");
}

TEST(InferElementwise, AScalarOperandStandsForAnArray) {
  EXPECT_EQ(RootShape("p = u32[] parameter(0)\n q = u32[2] parameter(1)\n ROOT r = add(p, q)"),
            "u32[2]");
}

TEST(InferElementwise, SelectAndClampTakeTheirValueOperandsShape) {
  EXPECT_EQ(
      RootShape(
          "c = pred[2,3] parameter(0)\n a = f32[2,3] parameter(1)\n b = f32[2,3] parameter(2)\n"
          " ROOT r = select(c, a, b)"),
      "f32[2,3]");
  EXPECT_EQ(
      RootShape("lo = f32[] parameter(0)\n x = f32[4] parameter(1)\n hi = f32[] parameter(2)\n"
                " ROOT r = clamp(lo, x, hi)"),
      "f32[4]");
}

TEST(InferElementwise, MismatchedOperandsNameBothShapes) {
  StatusOr<Shape> s =
      InferRoot("p = f32[2] parameter(0)\n q = f32[3] parameter(1)\n ROOT r = f32[2] add(p, q)");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(),
            "operand 1 has shape f32[3] but add expects f32[2] (the shape of operand 0)");
}

TEST(InferElementwise, TypeRulesOfUnaryOps) {
  StatusOr<Shape> s = InferRoot("p = s32[2] parameter(0)\n ROOT r = f32[2] sqrt(p)");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("sqrt needs a floating-point or complex operand"));
  s = InferRoot("p = f32[2] parameter(0)\n ROOT r = f32[2] popcnt(p)");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("popcnt needs an integer operand"));
}

// --- data movement ------------------------------------------------------------

TEST(InferDataMovement, TransposePermutesDimensions) {
  EXPECT_EQ(RootShape("p = f32[2,3,5] parameter(0)\n ROOT r = transpose(p), dimensions={2,0,1}"),
            "f32[5,2,3]");
}

TEST(InferDataMovement, SliceRoundsStridedSizesUp) {
  EXPECT_EQ(RootShape("p = f32[10,8] parameter(0)\n ROOT r = slice(p), slice={[1:10:3], [0:8]}"),
            "f32[3,8]");
}

TEST(InferDataMovement, DynamicSliceAndUpdateSlice) {
  EXPECT_EQ(RootShape("p = f32[10,8] parameter(0)\n i = s32[] parameter(1)\n"
                      " ROOT r = dynamic-slice(p, i, i), dynamic_slice_sizes={2,8}"),
            "f32[2,8]");
  EXPECT_EQ(
      RootShape("p = f32[10,8] parameter(0)\n u = f32[2,8] parameter(1)\n i = s32[] parameter(2)\n"
                " ROOT r = dynamic-update-slice(p, u, i, i)"),
      "f32[10,8]");
}

TEST(InferDataMovement, PadAddsEdgesAndInteriorAndMayRemoveElements) {
  EXPECT_EQ(RootShape("p = f32[4,5] parameter(0)\n z = f32[] parameter(1)\n ROOT r = pad(p, z), "
                      "padding=1_2_1x-1_0"),
            "f32[10,4]");
}

TEST(InferDataMovement, ConcatenateSumsTheConcatenatedDimension) {
  EXPECT_EQ(RootShape("a = f32[2,3] parameter(0)\n b = f32[2,5] parameter(1)\n"
                      " ROOT r = concatenate(a, b, a), dimensions={1}"),
            "f32[2,11]");
}

TEST(InferDataMovement, TupleAndGetTupleElement) {
  EXPECT_EQ(RootShape("a = f32[2]{0} parameter(0)\n b = s32[] parameter(1)\n ROOT r = tuple(a, b)"),
            "(f32[2], s32[])");
  EXPECT_EQ(
      RootShape(
          "p = (f32[2], (s32[], u8[3])) parameter(0)\n ROOT r = get-tuple-element(p), index=1"),
      "(s32[], u8[3])");
}

TEST(InferDataMovement, ReverseKeepsTheShape) {
  EXPECT_EQ(RootShape("p = f32[2,3] parameter(0)\n ROOT r = reverse(p), dimensions={1}"),
            "f32[2,3]");
}

// --- contractions ---------------------------------------------------------------

TEST(InferDot, BatchThenLhsFreeThenRhsFreeDimensions) {
  EXPECT_EQ(RootShape("a = bf16[2,6,1024,64] parameter(0)\n b = bf16[2,6,128,64] parameter(1)\n"
                      " ROOT r = dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3},"
                      " rhs_batch_dims={0,1}, rhs_contracting_dims={3}"),
            "bf16[2,6,1024,128]");
  EXPECT_EQ(RootShape("a = f32[3,2] parameter(0)\n b = f32[2,4] parameter(1)\n"
                      " ROOT r = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
            "f32[3,4]");
}

TEST(InferDot, MismatchedContractingSizesAreAnError) {
  StatusOr<Shape> s = InferRoot(
      "a = f32[2,3] parameter(0)\n b = f32[4,5] parameter(1)\n"
      " ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "dot contracting dimension 0 has size 3 in lhs f32[2,3] but 4 in rhs f32[4,5]");
}

TEST(InferRaggedDot, FreeModeDropsTheRhsGroupDimension) {
  EXPECT_EQ(RootShape("a = f32[19,11,5] parameter(0)\n w = f32[3,5,7] parameter(1)\n"
                      " s = s64[19,3] parameter(2)\n"
                      " ROOT r = ragged-dot(a, w, s), lhs_contracting_dims={2},"
                      " rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}"),
            "f32[19,11,7]");
}

TEST(InferRaggedDot, ContractingModePutsTheGroupsFirst) {
  EXPECT_EQ(RootShape("a = f32[11,19,5] parameter(0)\n b = f32[19,5,7] parameter(1)\n"
                      " s = s64[19,3] parameter(2)\n"
                      " ROOT r = ragged-dot(a, b, s), lhs_contracting_dims={1,2},"
                      " rhs_contracting_dims={0,1}, lhs_ragged_dims={2}"),
            "f32[3,11,7]");
}

TEST(InferRaggedDot, BatchModeIsADotsShape) {
  EXPECT_EQ(RootShape("a = bf16[4,5,3] parameter(0)\n b = bf16[4,3,2] parameter(1)\n"
                      " s = s32[2] parameter(2)\n"
                      " ROOT r = ragged-dot(a, b, s), lhs_batch_dims={0}, rhs_batch_dims={0},"
                      " lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}"),
            "bf16[4,5,2]");
}

TEST(InferRaggedDot, GroupSizesMustBeIndexedByTheOuterRowDimensions) {
  StatusOr<Shape> s = InferRoot(
      "a = f32[19,11,5] parameter(0)\n w = f32[3,5,7] parameter(1)\n s = s64[11,3] parameter(2)\n"
      " ROOT r = f32[19,11,7] ragged-dot(a, w, s), lhs_contracting_dims={2},"
      " rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "ragged-dot's group_sizes s64[11,3] must be [g] or [19,g] (the lhs batch dimensions, "
            "then those of the ragged one's kind before it)");
}

TEST(InferRaggedDot, FreeModeNeedsAnRhsGroupDimensionOfTheGroupCount) {
  StatusOr<Shape> missing = InferRoot(
      "a = f32[6,5] parameter(0)\n w = f32[3,5,7] parameter(1)\n s = s32[3] parameter(2)\n"
      " ROOT r = f32[6,3,7] ragged-dot(a, w, s), lhs_contracting_dims={1},"
      " rhs_contracting_dims={1}, lhs_ragged_dims={0}");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("needs exactly one rhs_group_dims entry"),
            std::string::npos)
      << missing.status().message();
  StatusOr<Shape> mismatched = InferRoot(
      "a = f32[6,5] parameter(0)\n w = f32[3,5,7] parameter(1)\n s = s32[2] parameter(2)\n"
      " ROOT r = f32[6,7] ragged-dot(a, w, s), lhs_contracting_dims={1},"
      " rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}");
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.status().message(),
            "ragged-dot's rhs group dimension has 3 groups but group_sizes s32[2] has 2");
}

TEST(InferConvolution, StridedPaddedDilatedWindow) {
  // Spatial: padded 44+32+45 = 121, dilated window (3-1)*2+1 = 5, (121-5)/4+1 = 30.
  EXPECT_EQ(RootShape("x = f32[256,32,32,1] parameter(0)\n k = f32[3,3,1,8] parameter(1)\n"
                      " ROOT r = convolution(x, k), window={size=3x3 stride=4x5 pad=44_45x60_60 "
                      "rhs_dilate=2x3},"
                      " dim_labels=b01f_01io->f01b"),
            "f32[8,30,30,256]");
}

TEST(InferConvolution, FeatureGroupsAndMatmulForm) {
  EXPECT_EQ(
      RootShape(
          "x = bf16[1,256,56,56] parameter(0)\n k = bf16[256,1,3,3] parameter(1)\n"
          " ROOT r = convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01,"
          " feature_group_count=256"),
      "bf16[1,256,56,56]");
  EXPECT_EQ(RootShape("x = bf16[8,128] parameter(0)\n k = bf16[128,64] parameter(1)\n"
                      " ROOT r = convolution(x, k), dim_labels=bf_io->bf"),
            "bf16[8,64]");
}

// --- reductions -------------------------------------------------------------------

TEST(InferReduce, DropsTheReducedDimensions) {
  EXPECT_EQ(RootShape("p = f32[2,6,1024] parameter(0)\n z = f32[] parameter(1)\n"
                      " ROOT r = reduce(p, z), dimensions={2,0}, to_apply=add",
                      kAdd),
            "f32[6]");
}

TEST(InferReduce, VariadicReduceGivesATuple) {
  EXPECT_EQ(
      RootShape(
          "p = f32[4,4] parameter(0)\n q = s32[4,4] parameter(1)\n z = f32[] parameter(2)\n"
          " i = s32[] parameter(3)\n ROOT r = reduce(p, q, z, i), dimensions={1}, to_apply=add",
          kAdd),
      "(f32[4], s32[4])");
}

TEST(InferReduce, ReduceWindowAndSelectAndScatter) {
  EXPECT_EQ(
      RootShape("p = f32[5,30,31] parameter(0)\n z = f32[] parameter(1)\n"
                " ROOT r = reduce-window(p, z), window={size=1x2x3 pad=0_0x0_1x1_1}, to_apply=add",
                kAdd),
      "f32[5,30,31]");
  EXPECT_EQ(
      RootShape("p = f32[4,5] parameter(0)\n s = f32[2,2] parameter(1)\n z = f32[] parameter(2)\n"
                " ROOT r = select-and-scatter(p, s, z), window={size=2x3 stride=2x3 pad=0_0x0_1},"
                " select=add, scatter=add",
                kAdd),
      "f32[4,5]");
}

TEST(InferReduce, SortAndMap) {
  EXPECT_EQ(RootShape("a = f64[2,8] parameter(0)\n b = s32[2,8] parameter(1)\n"
                      " ROOT r = sort(a, b), dimensions={1}, to_apply=add",
                      kAdd),
            "(f64[2,8], s32[2,8])");
  EXPECT_EQ(RootShape("a = f32[4] parameter(0)\n b = f32[4] parameter(1)\n"
                      " ROOT r = map(a, b), dimensions={0}, to_apply=add",
                      kAdd),
            "f32[4]");
}

// --- gather and scatter ---------------------------------------------------------

TEST(InferGather, EmbeddingLookupWithImplicitIndexVector) {
  EXPECT_EQ(
      RootShape(
          "t = f32[512,16] parameter(0)\n i = u32[128] parameter(1)\n"
          " ROOT r = gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},"
          " index_vector_dim=1, slice_sizes={1,16}"),
      "f32[128,16]");
}

TEST(InferGather, OffsetDimsInterleaveWithBatchDims) {
  EXPECT_EQ(RootShape("t = f32[200,100,300] parameter(0)\n i = s32[10,2] parameter(1)\n"
                      " ROOT r = gather(t, i), offset_dims={0,2}, collapsed_slice_dims={1}, "
                      "start_index_map={0,1},"
                      " index_vector_dim=1, slice_sizes={4,1,300}"),
            "f32[4,10,300]");
}

TEST(InferScatter, GivesTheOperandShapes) {
  EXPECT_EQ(
      RootShape("t = f32[200,100,300] parameter(0)\n i = s64[10,2] parameter(1)\n u = f32[10,300] "
                "parameter(2)\n"
                " ROOT r = scatter(t, i, u), update_window_dims={1}, inserted_window_dims={0,1},"
                " scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add",
                kAdd),
      "f32[200,100,300]");
}

// --- control flow -----------------------------------------------------------------

TEST(InferControlFlow, WhileCallConditionalAndFusion) {
  constexpr std::string_view kComputations = R"(
id {
  ROOT state = (s32[], f32[2]) parameter(0)
}
first {
  ROOT x = f32[2] parameter(0)
}
)";
  EXPECT_EQ(RootShape("p = (s32[], f32[2]) parameter(0)\n ROOT r = while(p), condition=id, body=id",
                      kComputations),
            "(s32[], f32[2])");
  EXPECT_EQ(RootShape("p = f32[2] parameter(0)\n ROOT r = call(p), to_apply=first", kComputations),
            "f32[2]");
  EXPECT_EQ(RootShape("p = f32[2] parameter(0)\n ROOT r = fusion(p), kind=kLoop, calls=first",
                      kComputations),
            "f32[2]");
  EXPECT_EQ(RootShape("b = s32[] parameter(0)\n p = f32[2] parameter(1)\n"
                      " ROOT r = conditional(b, p, p), branch_computations={first, first}",
                      kComputations),
            "f32[2]");
}

// --- collectives and async pairs -------------------------------------------------------

TEST(InferCollectives, AllGatherAndReduceScatterUseTheGroupSize) {
  EXPECT_EQ(
      RootShape("p = f32[128,32] parameter(0)\n"
                " ROOT r = all-gather(p), replica_groups={{0,2,4,6},{1,3,5,7}}, dimensions={1}"),
      "f32[128,128]");
  EXPECT_EQ(
      RootShape("p = f32[4,8] parameter(0)\n"
                " ROOT r = reduce-scatter(p), replica_groups={{0,1}}, dimensions={1}, to_apply=add",
                kAdd),
      "f32[4,4]");
  EXPECT_EQ(RootShape("p = bf16[128,128] parameter(0)\n"
                      " ROOT r = all-gather(p), replica_groups=[1,128]<=[128], dimensions={0}"),
            "bf16[16384,128]");
}

TEST(InferCollectives, ImplicitGroupsAreNotInferable) {
  StatusOr<Shape> s = InferRoot(
      "p = f32[4] parameter(0)\n ROOT r = f32[8] all-gather(p), replica_groups={}, dimensions={0}");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnimplemented);
}

TEST(InferCollectives, ReduceScatterNeedsADivisibleDimension) {
  StatusOr<Shape> s = InferRoot(
      "p = f32[4,7] parameter(0)\n"
      " ROOT r = f32[4,3] reduce-scatter(p), replica_groups={{0,1}}, dimensions={1}, to_apply=add",
      kAdd);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("is not divisible by the replica group size 2"));
}

TEST(InferCollectives, SeveralOperandsGiveTuples) {
  EXPECT_EQ(RootShape("a = f32[4] parameter(0)\n b = bf16[2] parameter(1)\n ROOT r = all-reduce(a, "
                      "b), to_apply=add",
                      kAdd),
            "(f32[4], bf16[2])");
  EXPECT_EQ(RootShape("a = f32[128,4] parameter(0)\n b = f32[128,4] parameter(1)\n"
                      " ROOT r = all-to-all(a, b), replica_groups={{0,1}}"),
            "(f32[128,4], f32[128,4])");
}

TEST(InferCollectives, StartOpsAndTheirDoneOps) {
  EXPECT_EQ(RootShape("p = f32[1] parameter(0)\n s = (f32[1], f32[2]) all-gather-start(p), "
                      "replica_groups={{0,1}},"
                      " dimensions={0}\n ROOT r = all-gather-done(s)"),
            "f32[2]");
  EXPECT_EQ(RootShape("p = f32[1] parameter(0)\n ROOT r = collective-permute-start(p), "
                      "source_target_pairs={{0,1}}"),
            "(f32[1], f32[1], u32[], u32[])");
  EXPECT_EQ(RootShape("p = f32[2,3] parameter(0)\n s = copy-start(p)\n ROOT r = copy-done(s)"),
            "f32[2,3]");
  EXPECT_EQ(RootShape("p = f32[2] parameter(0)\n s = f32[2] all-reduce-start(p), to_apply=add\n"
                      " ROOT r = all-reduce-done(s)",
                      kAdd),
            "f32[2]");
  EXPECT_EQ(
      RootShape(
          "p = f32[2] parameter(0)\n s = ((f32[2]), f32[1], s32[]) reduce-scatter-start(p),"
          " replica_groups={{0,1}}, dimensions={0}, to_apply=add\n ROOT r = reduce-scatter-done(s)",
          kAdd),
      "f32[1]");
}

TEST(InferCollectives, SendRecvPairs) {
  EXPECT_EQ(
      RootShape("p = f32[64] parameter(0)\n t = after-all()\n ROOT r = send(p, t), channel_id=1"),
      "(f32[64], u32[], token[])");
  EXPECT_EQ(RootShape("t = after-all()\n v = (f32[64], u32[], token[]) recv(t), channel_id=1\n "
                      "ROOT r = recv-done(v)"),
            "(f32[64], token[])");
}

TEST(InferCollectives, ReplicaAndPartitionIds) {
  EXPECT_EQ(RootShape("ROOT r = replica-id()"), "u32[]");
  EXPECT_EQ(RootShape("ROOT r = partition-id()"), "u32[]");
}

// --- dynamic shapes and special ops ------------------------------------------------------

TEST(InferSpecial, DimensionSizes) {
  EXPECT_EQ(RootShape("p = f32[4,4] parameter(0)\n n = s32[] parameter(1)\n"
                      " ROOT r = set-dimension-size(p, n), dimensions={1}"),
            "f32[4,<=4]");
  EXPECT_EQ(
      RootShape("p = f32[4,<=4] parameter(0)\n ROOT r = get-dimension-size(p), dimensions={1}"),
      "s32[]");
}

TEST(InferSpecial, TopKTriangularSolveAndCholesky) {
  EXPECT_EQ(RootShape("p = bf16[1,50000] parameter(0)\n ROOT r = topk(p), k=10, largest=true"),
            "(bf16[1,10], s32[1,10])");
  EXPECT_EQ(
      RootShape(
          "a = f32[4,4] parameter(0)\n b = f32[4,3] parameter(1)\n"
          " ROOT r = triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE"),
      "f32[4,3]");
  EXPECT_EQ(RootShape("p = f32[1,291,291] parameter(0)\n ROOT r = cholesky(p), lower=true"),
            "f32[1,291,291]");
}

TEST(InferSpecial, BatchNorm) {
  EXPECT_EQ(
      RootShape("x = f32[2,3,4] parameter(0)\n s = f32[3] parameter(1)\n o = f32[3] parameter(2)\n"
                " ROOT r = batch-norm-training(x, s, o), epsilon=0.001, feature_index=1"),
      "(f32[2,3,4], f32[3], f32[3])");
  EXPECT_EQ(RootShape("x = f32[2,3,4] parameter(0)\n s = f32[3] parameter(1)\n"
                      " ROOT r = batch-norm-grad(x, s, s, s, x), epsilon=0.001, feature_index=1"),
            "(f32[2,3,4], f32[3], f32[3])");
}

TEST(InferSpecial, FftTypes) {
  EXPECT_EQ(RootShape("p = f32[3,9] parameter(0)\n ROOT r = fft(p), fft_type=RFFT, fft_length={9}"),
            "c64[3,5]");
  EXPECT_EQ(
      RootShape("p = c64[3,5] parameter(0)\n ROOT r = fft(p), fft_type=IRFFT, fft_length={9}"),
      "f32[3,9]");
  EXPECT_EQ(RootShape("p = c64[4] parameter(0)\n ROOT r = fft(p), fft_type=FFT, fft_length={4}"),
            "c64[4]");
}

// --- what cannot be inferred ----------------------------------------------------------------

TEST(InferNotInferable, ResultsThatOnlyTheTextGives) {
  for (std::string_view body : {
           "p = f32[3] parameter(0)\n ROOT r = f32[2,3] broadcast(p), dimensions={1}",
           "p = f32[6] parameter(0)\n ROOT r = f32[2,3] reshape(p)",
           "p = f32[6] parameter(0)\n ROOT r = s32[6] convert(p)",
           "ROOT r = s32[4] iota(), iota_dimension=0",
           "p = f32[6] parameter(0)\n ROOT r = f32[6] custom-call(p), custom_call_target=\"foo\"",
       }) {
    StatusOr<Shape> s = InferRoot(body);
    ASSERT_FALSE(s.ok()) << body;
    EXPECT_EQ(s.status().code(), StatusCode::kUnimplemented) << body;
  }
}

TEST(InferNotInferable, TheParserSaysWhyAShapeIsMissing) {
  EXPECT_THAT(RootShape("p = f32[6] parameter(0)\n ROOT r = convert(p)"),
              HasSubstr("the shape of convert cannot be inferred"));
}

}  // namespace
}  // namespace tpusim::hlo
