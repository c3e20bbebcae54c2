// Lowering without the engine: buffer sizes from layouts, what each
// instruction asks of each unit, loop trip counts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/chip/core_cost.h"
#include "sim/chip/mxu.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/parser.h"
#include "sim/timing/fused_attention.h"
#include "sim/timing/hlo_helpers.h"
#include "sim/timing/host_memory.h"
#include "sim/timing/kernel_cost.h"
#include "sim/timing/layout_bytes.h"
#include "sim/timing/program.h"
#include "tests/hlo/nested_module.h"
#include "tests/hlo/triangular_loop.h"
#include "tests/hlo/varying_programs.h"
#include "tests/timing/timing_test_util.h"

namespace tpusim::timing {
namespace {

hlo::Shape ShapeOf(const std::string& text) {
  auto s = hlo::ParseShape(text);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : hlo::Shape();
}

TEST(LayoutBytes, TilePadsTheMinorDimensions) {
  EXPECT_EQ(PhysicalBytes(ShapeOf("f32[3,5]{1,0}")), 60);
  EXPECT_EQ(PhysicalBytes(ShapeOf("f32[3,5]{1,0:T(8,128)}")), 8 * 128 * 4);
  // Minor-to-major {0,1}: dimension 0 is minor, so [5 rows of 3] pads to [8, 128].
  EXPECT_EQ(PhysicalBytes(ShapeOf("f32[3,5]{0,1:T(8,128)}")), 8 * 128 * 4);
  EXPECT_EQ(PhysicalBytes(ShapeOf("f32[9,130]{1,0:T(8,128)}")), 16 * 256 * 4);
  EXPECT_EQ(PhysicalBytes(ShapeOf("bf16[2,16,256]{2,1,0:T(8,128)(2,1)}")), 2 * 16 * 256 * 2);
  // A rank-1 array under a 2-D tile sees a leading dimension of 1.
  EXPECT_EQ(PhysicalBytes(ShapeOf("f32[5]{0:T(8,128)}")), 8 * 128 * 4);
  EXPECT_EQ(PhysicalBytes(ShapeOf("(f32[3,5]{1,0:T(8,128)}, s8[7]{0})")), 4096 + 7);
  EXPECT_EQ(PhysicalBytes(ShapeOf("pred[10]{0}")), 10);
}

TEST(LayoutBytes, ALayoutThatIsNoPermutationIsIgnored) {
  hlo::Shape s(hlo::PrimitiveType::kF32, {3, 5});
  s.mutable_layout().mutable_minor_to_major() = {5, 0};
  EXPECT_EQ(PhysicalBytes(s), 60);
  EXPECT_EQ(LaneDimension(s), 1);
}

TEST(LayoutBytes, VmemSpaceAndVregs) {
  EXPECT_TRUE(InVmem(ShapeOf("f32[8,128]{1,0:T(8,128)S(1)}")));
  EXPECT_FALSE(InVmem(ShapeOf("f32[8,128]{1,0:T(8,128)}")));
  EXPECT_EQ(VregCount(ShapeOf("f32[3,5]"), 8, 128), 1);
  EXPECT_EQ(VregCount(ShapeOf("f32[4,16,256]{2,1,0}"), 8, 128), 4 * 2 * 2);
  EXPECT_EQ(VregCount(ShapeOf("f32[4,16,256]{1,2,0}"), 8, 128), 4 * 32 * 1);
  EXPECT_EQ(VregCount(ShapeOf("f32[]"), 8, 128), 1);
  EXPECT_EQ(VregCount(ShapeOf("f32[2049]"), 8, 128), 3);
  EXPECT_EQ(LaneDimension(ShapeOf("f32[4,16]{0,1}")), 0);
  EXPECT_EQ(SublaneDimension(ShapeOf("f32[4,16]{0,1}")), 1);
}

/// The cost of the ROOT of the entry computation of `text` on `chip`.
KernelCost RootCost(const std::string& text, const arch::ChipConfig& chip) {
  auto module = Parse(text);
  if (module == nullptr) return {};
  const HostMemory host_memory(*module);
  KernelCoster coster(chip, host_memory);
  auto cost = coster.Cost(*module->entry()->root());
  EXPECT_TRUE(cost.ok()) << cost.status().message();
  return cost.ok() ? *cost : KernelCost{};
}

TEST(KernelCost, TilePaddingShowsInHbmBytesExactly) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  // Read a padded f32[3,5] (one 4 KiB tile), write a padded f32[3,5].
  const KernelCost tiled = RootCost(R"(HloModule m
ENTRY e {
  p = f32[3,5]{1,0:T(8,128)} parameter(0)
  ROOT n = f32[3,5]{1,0:T(8,128)} negate(p)
})",
                                    v5e);
  EXPECT_EQ(tiled.hbm_bytes, 2 * 8 * 128 * 4);
  // Without tiles: 60 B each way, rounded up to the 512 B access granularity.
  const KernelCost dense = RootCost(R"(HloModule m
ENTRY e {
  p = f32[3,5]{1,0} parameter(0)
  ROOT n = f32[3,5]{1,0} negate(p)
})",
                                    v5e);
  EXPECT_EQ(dense.hbm_bytes, 2 * 512);
}

TEST(KernelCost, VmemOperandsAddNoHbmBytes) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const KernelCost cost = RootCost(R"(HloModule m
ENTRY e {
  a = f32[256,256]{1,0:T(8,128)S(1)} parameter(0)
  b = f32[256,256]{1,0:T(8,128)} parameter(1)
  ROOT s = f32[256,256]{1,0:T(8,128)} add(a, b)
})",
                                   v5e);
  EXPECT_EQ(cost.hbm_bytes, 2 * 256 * 256 * 4);  // b read, s written; a is in VMEM
}

TEST(KernelCost, FusionMovesOnlyItsBoundary) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const KernelCost cost = RootCost(R"(HloModule m
fused {
  x = f32[1024,1024]{1,0} parameter(0)
  e = f32[1024,1024]{1,0} exponential(x)
  m = f32[1024,1024]{1,0} multiply(e, e)
  ROOT s = f32[1024,1024]{1,0} sine(m)
}
ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  ROOT f = f32[1024,1024]{1,0} fusion(p), kind=kLoop, calls=fused
})",
                                   v5e);
  EXPECT_EQ(cost.hbm_bytes, 2 * 1024 * 1024 * 4);
  EXPECT_EQ(cost.per_core.vector.cheap_ops, 1024);
  EXPECT_EQ(cost.per_core.vector.medium_ops, 1024);
  EXPECT_EQ(cost.per_core.vector.transcendental_ops, 1024);
}

TEST(KernelCost, HighestF32DotIsSixTimesTheDefaultPasses) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const auto dot = [&](const std::string& types, const std::string& extra) {
    return RootCost(R"(HloModule m
ENTRY e {
  a = )" + types + R"([512,512]{1,0} parameter(0)
  b = )" + types + R"([512,512]{1,0} parameter(1)
  ROOT d = f32[512,512]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})" +
                        extra + R"(
})",
                    v5e);
  };
  const chip::Mxu mxu(v5e);
  const KernelCost def = dot("f32", "");
  const KernelCost high = dot("f32", ", operand_precision={high,high}");
  const KernelCost highest = dot("f32", ", operand_precision={highest,highest}");
  const KernelCost algo = dot("f32", ", algorithm=dot_bf16_bf16_f32_x6");
  const KernelCost tf32 = dot("f32", ", algorithm=dot_tf32_tf32_f32");
  const KernelCost nine = dot("f32", ", algorithm=dot_bf16_bf16_f32_x9");
  const KernelCost bf16 = dot("bf16", ", operand_precision={highest,highest}");
  ASSERT_EQ(def.per_core.matmuls.size(), 1u);
  const int64_t base = mxu.WeightTiles(def.per_core.matmuls[0]);
  EXPECT_EQ(base, 4 * 4);
  EXPECT_EQ(mxu.WeightTiles(high.per_core.matmuls[0]), 3 * base);
  EXPECT_EQ(mxu.WeightTiles(highest.per_core.matmuls[0]), 6 * base);
  EXPECT_EQ(mxu.WeightTiles(algo.per_core.matmuls[0]), 6 * base);
  EXPECT_EQ(mxu.WeightTiles(tf32.per_core.matmuls[0]), 3 * base);  // the hi/lo split
  EXPECT_EQ(mxu.WeightTiles(nine.per_core.matmuls[0]), 9 * base);
  EXPECT_EQ(mxu.WeightTiles(bf16.per_core.matmuls[0]), base);  // bf16 operands: one piece
  EXPECT_EQ(def.flops, 2LL * 512 * 512 * 512);
}

// 1024 token rows over 8 experts' 512x256 weights.
constexpr char kMoeRows[] = R"(HloModule m
ENTRY e {
  a = bf16[1024,512]{1,0} parameter(0)
  w = bf16[8,512,256]{2,1,0} parameter(1)
  s = s32[8]{0} parameter(2)
  ROOT r = bf16[1024,256]{1,0} ragged-dot(a, w, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})";
// A ragged contracting dimension: 4 groups of the depth of a [64,1024] x
// [1024,256] product.
constexpr char kMoeDepth[] = R"(HloModule m
ENTRY e {
  a = bf16[64,1024]{1,0} parameter(0)
  b = bf16[1024,256]{1,0} parameter(1)
  s = s32[4]{0} parameter(2)
  ROOT r = f32[4,64,256]{2,1,0} ragged-dot(a, b, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
})";

TEST(KernelCost, ARaggedDotIsOneMatmulPerGroupThatCanHoldRowsOfEqualShare) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const chip::Mxu mxu(v5e);
  // Each expert's weights are loaded once, and the rows split evenly (without
  // a values run the group sizes are unknown).
  const KernelCost rows = RootCost(kMoeRows, v5e);
  ASSERT_EQ(rows.per_core.matmuls.size(), 1u);
  const chip::MatmulWork& per_group = rows.per_core.matmuls[0];
  EXPECT_EQ(per_group.batch, 8);
  EXPECT_EQ(per_group.m, 128);
  EXPECT_EQ(per_group.k, 512);
  EXPECT_EQ(per_group.n, 256);
  EXPECT_EQ(mxu.WeightTiles(per_group), 8 * (512 / 128) * (256 / 128));
  EXPECT_EQ(rows.flops, 2LL * 1024 * 512 * 256);
  // Every expert's weights are read: 8 x 512 x 256 bf16, plus the rows,
  // the sizes' 512-byte access and the result.
  EXPECT_EQ(rows.hbm_bytes, 8 * 512 * 256 * 2 + 1024 * 512 * 2 + 512 + 1024 * 256 * 2);

  // Decode: 2 token rows can reach 2 of the 8 experts at most, so 2 matmuls
  // of one row, and 2 of the 8 experts' weights read.
  const KernelCost decode = RootCost(R"(HloModule m
ENTRY e {
  a = bf16[2,512]{1,0} parameter(0)
  w = bf16[8,512,256]{2,1,0} parameter(1)
  s = s32[8]{0} parameter(2)
  ROOT r = bf16[2,256]{1,0} ragged-dot(a, w, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})",
                                     v5e);
  ASSERT_EQ(decode.per_core.matmuls.size(), 1u);
  EXPECT_EQ(decode.per_core.matmuls[0].batch, 2);
  EXPECT_EQ(decode.per_core.matmuls[0].m, 1);
  EXPECT_EQ(decode.hbm_bytes, 2 * 512 * 256 * 2 + 2 * 512 * 2 + 512 + 2 * 256 * 2);
  // The same inside a fusion, its operands in another order: the weights
  // are found through the fusion's parameter.
  const KernelCost fused = RootCost(R"(HloModule m
moe {
  s = s32[8]{0} parameter(0)
  w = bf16[8,512,256]{2,1,0} parameter(1)
  a = bf16[2,512]{1,0} parameter(2)
  ROOT r = bf16[2,256]{1,0} ragged-dot(a, w, s), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
}
ENTRY e {
  s = s32[8]{0} parameter(0)
  w = bf16[8,512,256]{2,1,0} parameter(1)
  a = bf16[2,512]{1,0} parameter(2)
  ROOT f = bf16[2,256]{1,0} fusion(s, w, a), kind=kOutput, calls=moe
})",
                                    v5e);
  EXPECT_EQ(fused.hbm_bytes, decode.hbm_bytes);

  // A ragged contracting dimension: one [64,256] result per group, each over
  // an equal share of the depth.
  const KernelCost depth = RootCost(kMoeDepth, v5e);
  ASSERT_EQ(depth.per_core.matmuls.size(), 1u);
  EXPECT_EQ(depth.per_core.matmuls[0].batch, 4);
  EXPECT_EQ(depth.per_core.matmuls[0].m, 64);
  EXPECT_EQ(depth.per_core.matmuls[0].k, 256);
  EXPECT_EQ(depth.flops, 2LL * 64 * 1024 * 256);
}

/// The cost of the ROOT ragged-dot of `text` on `chip`, its groups having
/// held `shares` in the execution costed.
KernelCost RaggedRootCost(const std::string& text, const arch::ChipConfig& chip,
                          std::vector<int64_t> shares) {
  auto module = Parse(text);
  if (module == nullptr) return {};
  const RaggedGroupSharesOfRun known = {{module->entry()->root(), std::move(shares)}};
  const HostMemory host_memory(*module);
  KernelCoster coster(chip, host_memory, &known);
  auto cost = coster.Cost(*module->entry()->root());
  EXPECT_TRUE(cost.ok()) << cost.status().message();
  return cost.ok() ? *cost : KernelCost{};
}

TEST(KernelCost, ARaggedDotWhoseGroupSharesAreKnownIsOneMatmulPerShare) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  // Skewed routing: 4 of the 8 experts hold all 1024 rows, two of them 200
  // each (one entry of 2 matmuls), in increasing order of rows.
  const KernelCost skewed = RaggedRootCost(kMoeRows, v5e, {600, 0, 200, 200, 24, 0, 0, 0});
  ASSERT_EQ(skewed.per_core.matmuls.size(), 3u);
  const std::vector<std::pair<int64_t, int64_t>> batch_and_rows = {
      {skewed.per_core.matmuls[0].batch, skewed.per_core.matmuls[0].m},
      {skewed.per_core.matmuls[1].batch, skewed.per_core.matmuls[1].m},
      {skewed.per_core.matmuls[2].batch, skewed.per_core.matmuls[2].m}};
  EXPECT_EQ(batch_and_rows,
            (std::vector<std::pair<int64_t, int64_t>>{{1, 24}, {2, 200}, {1, 600}}));
  EXPECT_EQ(skewed.per_core.matmuls[2].k, 512);
  EXPECT_EQ(skewed.per_core.matmuls[2].n, 256);
  EXPECT_EQ(skewed.flops, 2LL * 1024 * 512 * 256);
  // Only the 4 experts that hold rows have their weights read.
  EXPECT_EQ(skewed.hbm_bytes, 4 * 512 * 256 * 2 + 1024 * 512 * 2 + 512 + 1024 * 256 * 2);
  // The MXU loads the weight tiles of the 4 experts that hold rows; with
  // the shares unknown, of all 8.
  const KernelCost equal = RootCost(kMoeRows, v5e);
  const chip::Mxu mxu(v5e);
  int64_t skewed_tiles = 0;
  for (const chip::MatmulWork& m : skewed.per_core.matmuls) skewed_tiles += mxu.WeightTiles(m);
  EXPECT_EQ(skewed_tiles, 4 * (512 / 128) * (256 / 128));
  EXPECT_EQ(mxu.WeightTiles(equal.per_core.matmuls[0]), 8 * (512 / 128) * (256 / 128));
  // Rows in no group do no work.
  const KernelCost half = RaggedRootCost(kMoeRows, v5e, {256, 256, 0, 0, 0, 0, 0, 0});
  ASSERT_EQ(half.per_core.matmuls.size(), 1u);
  EXPECT_EQ(half.per_core.matmuls[0].batch, 2);
  EXPECT_EQ(half.flops, 2LL * 512 * 512 * 256);
  // Shares that are not one per group are not this ragged-dot's: equal shares.
  EXPECT_EQ(RaggedRootCost(kMoeRows, v5e, {1024, 0, 0}).hbm_bytes, equal.hbm_bytes);

  // Per batch index: [2, 64 rows] over 2 batches of 4 experts; each batch
  // index has its own shares and its own experts' weights.
  const KernelCost batched = RaggedRootCost(R"(HloModule m
ENTRY e {
  a = bf16[2,64,512]{2,1,0} parameter(0)
  w = bf16[2,4,512,256]{3,2,1,0} parameter(1)
  s = s32[2,4]{1,0} parameter(2)
  ROOT r = bf16[2,64,256]{2,1,0} ragged-dot(a, w, s), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}
})",
                                            v5e, {64, 0, 0, 0, 32, 32, 0, 0});
  ASSERT_EQ(batched.per_core.matmuls.size(), 2u);
  EXPECT_EQ(batched.per_core.matmuls[0].batch, 2);  // the two 32-row groups
  EXPECT_EQ(batched.per_core.matmuls[0].m, 32);
  EXPECT_EQ(batched.per_core.matmuls[1].batch, 1);
  EXPECT_EQ(batched.per_core.matmuls[1].m, 64);
  EXPECT_EQ(batched.hbm_bytes, 3 * 512 * 256 * 2 + 2 * 64 * 512 * 2 + 512 + 2 * 64 * 256 * 2);

  // A ragged contracting dimension: each group's result over its own depth.
  const KernelCost depth = RaggedRootCost(kMoeDepth, v5e, {1000, 0, 24, 0});
  ASSERT_EQ(depth.per_core.matmuls.size(), 2u);
  EXPECT_EQ(depth.per_core.matmuls[0].k, 24);
  EXPECT_EQ(depth.per_core.matmuls[0].m, 64);
  EXPECT_EQ(depth.per_core.matmuls[1].k, 1000);
  EXPECT_EQ(depth.flops, 2LL * 64 * 1024 * 256);
}

TEST(KernelCost, MinorDimensionSwapGoesThroughTheTransposeUnit) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const KernelCost swap = RootCost(R"(HloModule m
ENTRY e {
  p = f32[4096,4096]{1,0:T(8,128)} parameter(0)
  ROOT c = f32[4096,4096]{0,1:T(8,128)} copy(p)
})",
                                   v5e);
  EXPECT_EQ(swap.per_core.vector.xlu_vregs, 4096 * 4096 / 1024);
  EXPECT_EQ(swap.hbm_bytes, 2LL * 4096 * 4096 * 4);
  const KernelCost major = RootCost(R"(HloModule m
ENTRY e {
  p = f32[4,512,512]{2,1,0:T(8,128)} parameter(0)
  ROOT c = f32[4,512,512]{2,0,1:T(8,128)} copy(p)
})",
                                    v5e);
  EXPECT_EQ(major.per_core.vector.xlu_vregs, 0);  // lanes stay on dimension 2
  const KernelCost transpose = RootCost(R"(HloModule m
ENTRY e {
  p = f32[256,512]{1,0} parameter(0)
  ROOT t = f32[512,256]{1,0} transpose(p), dimensions={1,0}
})",
                                        v5e);
  EXPECT_EQ(transpose.per_core.vector.xlu_vregs, 512 * 256 / 1024);
}

TEST(KernelCost, LaneReductionUsesTheTransposeUnit) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const KernelCost cost = RootCost(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1024]{0} reduce(p, z), dimensions={1}, to_apply=add
})",
                                   v5e);
  EXPECT_EQ(cost.per_core.vector.cheap_ops, 1024);
  EXPECT_EQ(cost.per_core.vector.xlu_vregs, 1024 / 8);
}

TEST(KernelCost, F16WindowsWidenTheirOperandOncePerWindowElement) {
  const arch::ChipConfig v4 = Preset("tpu-v4");
  const int64_t widen = v4.vpu.f16_load_ops;
  // A 2x2 stride-2 f16 window sum whose operand and result have `layout`.
  const auto pool = [&](const std::string& operand, const std::string& result,
                        const std::string& layout) {
    return RootCost(R"(HloModule m
add {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}
ENTRY e {
  x = f16[)" + operand + "]{" + layout + R"(:T(8,128)(2,1)} parameter(0)
  z = f16[] constant(0)
  ROOT r = f16[)" + result + "]{" + layout +
                        R"(:T(8,128)(2,1)} reduce-window(x, z), window={size=1x1x2x2 stride=1x1x2x2}, to_apply=add
})",
                    v4);
  };
  // Channels on the lanes: the window crosses no lane; 128x16x16 f16
  // elements are 1 x (16/8) x 16 = 32 vregs of 8x128.
  const KernelCost channels = pool("1,128,16,16", "1,128,8,8", "1,3,2,0");
  const int64_t operand_vregs = 32, result_vregs = 8, window = 4;
  const int64_t cores = v4.tensorcores_per_chip;  // megacore: split evenly
  // The kernel's boundary widens the operand and the init value (one vreg)
  // once and rounds the result; the window's other three visits widen the
  // operand again; one add per window element and result vreg.
  const int64_t convert =
      (window * operand_vregs + 1) * widen + result_vregs * v4.vpu.f16_store_ops;
  const auto share = [&](int64_t ops) { return (ops + cores - 1) / cores; };
  EXPECT_EQ(channels.per_core.vector.convert_ops, share(convert));
  EXPECT_EQ(channels.per_core.vector.cheap_ops, share(convert + window * result_vregs));
  EXPECT_EQ(channels.per_core.vector.xlu_vregs, 0);
  // The width on the lanes: each operand vreg (4 x 32 x 2 of them) is
  // gathered across lanes once per window element on that dimension, and the
  // adds wait for it.
  const KernelCost width = pool("1,4,256,256", "1,4,128,128", "3,2,1,0");
  const int64_t width_vregs = 4 * 32 * 2;
  EXPECT_EQ(width.per_core.vector.xlu_vregs, 2 * width_vregs / cores);
  EXPECT_EQ(width.per_core.vector.xlu_waited_vregs, 2 * width_vregs / cores);
}

TEST(KernelCost, Int8WeightsConvertedInAFusionAreReadAsInt8) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const KernelCost cost = RootCost(R"(HloModule m
fused {
  x = bf16[256,1024]{1,0} parameter(0)
  w = s8[1024,2048]{1,0} parameter(1)
  c = bf16[1024,2048]{1,0} convert(w)
  ROOT d = bf16[256,2048]{1,0} dot(x, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  x = bf16[256,1024]{1,0} parameter(0)
  w = s8[1024,2048]{1,0} parameter(1)
  ROOT f = bf16[256,2048]{1,0} fusion(x, w), kind=kOutput, calls=fused
})",
                                   v5e);
  EXPECT_EQ(cost.hbm_bytes, 256 * 1024 * 2 + 1024 * 2048 + 256 * 2048 * 2);
  ASSERT_EQ(cost.per_core.matmuls.size(), 1u);
  EXPECT_EQ(cost.per_core.matmuls[0].input, chip::MxuInput::kBf16);
}

TEST(KernelCost, MegacoreSplitsTheWorkAcrossTensorCores) {
  const arch::ChipConfig v4 = Preset("tpu-v4");
  const KernelCost cost = RootCost(R"(HloModule m
ENTRY e {
  a = bf16[1024,512]{1,0} parameter(0)
  b = bf16[512,256]{1,0} parameter(1)
  ROOT d = bf16[1024,256]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                   v4);
  ASSERT_EQ(cost.per_core.matmuls.size(), 1u);
  EXPECT_EQ(cost.per_core.matmuls[0].m, 512);
  EXPECT_EQ(cost.per_core.hbm_bytes * 2, cost.hbm_bytes);
}

TEST(KernelCost, F16ConversionsAreCountedApartForTheMxuToWaitOn) {
  arch::ChipConfig v4 = Preset("tpu-v4");
  const std::string text = R"(HloModule m
ENTRY e {
  a = f16[1024,1024]{1,0:T(8,128)(2,1)} parameter(0)
  b = f16[1024,1024]{1,0:T(8,128)(2,1)} parameter(1)
  ROOT d = f16[1024,1024]{1,0:T(8,128)(2,1)} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  const KernelCost cost = RootCost(text, v4);
  // Two operands widened, one result rounded: 1024 vregs each, split over 2 TCs.
  const int64_t expected = (v4.vpu.f16_load_ops * 2 + v4.vpu.f16_store_ops) * 1024 / 2;
  EXPECT_EQ(cost.per_core.vector.convert_ops, expected);
  EXPECT_EQ(cost.per_core.vector.cheap_ops, expected + 1024 / 2);  // plus the result pops
  v4.mxu.convert_exposed_percent = 0;
  const int64_t overlapped = chip::CoreCost(v4).UnitBusy(chip::Unit::kMxu, cost.per_core);
  v4.mxu.convert_exposed_percent = 50;
  const int64_t half = chip::CoreCost(v4).UnitBusy(chip::Unit::kMxu, cost.per_core);
  EXPECT_EQ(half - overlapped, (expected / v4.vpu.alus_per_slot + 1) / 2);
}

/// A Pallas kernel's custom call with `estimate` as its cost_estimate.
std::string PallasKernel(const std::string& estimate) {
  return R"(HloModule m
ENTRY e {
  a = bf16[1024,1024]{1,0} parameter(0)
  b = bf16[1024,1024]{1,0} parameter(1)
  ROOT k = bf16[1024,1024]{1,0} custom-call(a, b), custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"body": "", "cost_estimate": )" +
         estimate + R"(}}
})";
}

TEST(KernelCost, PallasKernelsAreTimedFromTheirCostEstimate) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  constexpr int64_t kFlops = int64_t{2} << 30;  // a 1024^3 matmul
  const KernelCost cost = RootCost(
      PallasKernel(R"({"flops": "2147483648", "transcendentals": "1048576", "bytes_accessed": "6291456"})"),
      v5e);
  EXPECT_EQ(cost.flops, kFlops);
  EXPECT_EQ(cost.hbm_bytes, 6291456);
  EXPECT_EQ(cost.per_core.hbm_bytes, 6291456);
  // The FLOPs at the MXUs' full rate: the estimate's MACs over the MACs per
  // cycle of all MXUs, plus one fill and drain.
  const chip::CoreCost core(v5e);
  const int64_t macs_per_cycle = v5e.mxu.rows * v5e.mxu.cols * v5e.mxu.count_per_core;
  EXPECT_EQ(core.UnitBusy(chip::Unit::kMxu, cost.per_core),
            kFlops / 2 / macs_per_cycle + v5e.mxu.rows + v5e.mxu.cols);
  // Transcendentals as the VPU's medium class, one per element: 1024 vregs.
  EXPECT_EQ(cost.per_core.vector.medium_ops, 1048576 / (8 * 128));

  // Numbers rather than strings mean the same; omitted fields are zero.
  const KernelCost numbers =
      RootCost(PallasKernel(R"({"flops": 2147483648, "bytes_accessed": 6291456})"), v5e);
  EXPECT_EQ(numbers.flops, kFlops);
  EXPECT_EQ(numbers.hbm_bytes, 6291456);
  EXPECT_EQ(numbers.per_core.vector.medium_ops, 0);
}

TEST(KernelCost, AKernelWithoutAUsableEstimateIsTimedByItsBoundaryBytes) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const int64_t boundary = 3 * 1024 * 1024 * 2;  // a and b read, k written
  for (const std::string estimate : {R"({"flops": "-5"})", R"({"flops": "many"})",
                                     R"({"bytes_accessed": 1.5})", R"("none")"}) {
    const KernelCost cost = RootCost(PallasKernel(estimate), v5e);
    EXPECT_EQ(cost.flops, 0) << estimate;
    EXPECT_EQ(cost.hbm_bytes, boundary) << estimate;
    EXPECT_TRUE(cost.per_core.matmuls.empty()) << estimate;
  }
}

/// Activations offloaded in one loop and read back in a second one, with
/// annotations only (before XLA's host offloader), plus a host-executed
/// computation and a parameter the header alone places on the host.
constexpr char kOffloadLoops[] =
    R"(HloModule offload, entry_computation_layout={(f32[8,1024]{1,0}, f32[1024]{0:S(5)})->f32[1024]{0}}

fwd_body {
  p = (s32[], f32[8,1024], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  buf = f32[8,1024] get-tuple-element(p), index=1
  act = f32[1024] get-tuple-element(p), index=2
  off = f32[1024] custom-call(act), custom_call_target="MoveToHost"
  row = f32[1,1024] reshape(off)
  zero = s32[] constant(0)
  put = f32[8,1024] dynamic-update-slice(buf, row, i, zero)
  e = f32[1024] exponential(act)
  ROOT t = (s32[], f32[8,1024], f32[1024]) tuple(next, put, e)
}

eight_layers {
  p = (s32[], f32[8,1024], f32[1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}

bwd_body {
  q = (s32[], f32[8,1024], f32[1024]) parameter(0)
  j = s32[] get-tuple-element(q), index=0
  one = s32[] constant(1)
  next = s32[] add(j, one)
  saved = f32[8,1024] get-tuple-element(q), index=1
  zero = s32[] constant(0)
  got = f32[1,1024] dynamic-slice(saved, j, zero), dynamic_slice_sizes={1,1024}
  flat = f32[1024] reshape(got)
  back = f32[1024] custom-call(flat), custom_call_target="MoveToDevice"
  g = f32[1024] get-tuple-element(q), index=2
  m = f32[1024] multiply(g, back)
  ROOT t = (s32[], f32[8,1024], f32[1024]) tuple(next, saved, m)
}

host_fn {
  a = f32[1024] parameter(0)
  ROOT neg = f32[1024] negate(a)
}, execution_thread="host"

ENTRY e {
  x = f32[8,1024] parameter(0)
  stored = f32[1024] parameter(1)
  zero = s32[] constant(0)
  alloc = f32[8,1024] custom-call(), custom_call_target="AllocateBuffer"
  first = f32[1024] reshape(x)
  init = (s32[], f32[8,1024], f32[1024]) tuple(zero, alloc, first)
  fwd = (s32[], f32[8,1024], f32[1024]) while(init), condition=eight_layers, body=fwd_body
  saved = f32[8,1024] get-tuple-element(fwd), index=1
  last = f32[1024] get-tuple-element(fwd), index=2
  start = ((f32[1024]), f32[1024], u32[]) custom-call-start(last), async_execution_thread="host", custom_call_target="HostExecute", called_computations={host_fn}
  done = f32[1024] custom-call-done(start)
  again = f32[1024] custom-call(done), custom_call_target="MoveToHost"
  binit = (s32[], f32[8,1024], f32[1024]) tuple(zero, saved, last)
  bwd = (s32[], f32[8,1024], f32[1024]) while(binit), condition=eight_layers, body=bwd_body
  grad = f32[1024] get-tuple-element(bwd), index=2
  ROOT sum = f32[1024] add(grad, stored)
})";

TEST(HostMemory, AnnotationsPlaceTheOffloadedValuesAndTheirBufferOnTheHost) {
  auto module = Parse(kOffloadLoops);
  ASSERT_NE(module, nullptr);
  const HostMemory host(*module);
  const auto on_host = [&](const char* name, int64_t element = HostMemory::kWhole) {
    const hlo::HloInstruction* inst = Named(*module, name);
    EXPECT_NE(inst, nullptr) << name;
    return inst != nullptr && host.Holds(*inst, element);
  };
  // What the forward loop offloads, and the buffer it writes it into, which
  // the loop's state carries out and into the backward loop.
  EXPECT_TRUE(on_host("off"));
  EXPECT_TRUE(on_host("row"));
  EXPECT_TRUE(on_host("put"));
  EXPECT_TRUE(on_host("buf"));
  EXPECT_TRUE(on_host("fwd", 1));
  EXPECT_TRUE(on_host("saved"));
  EXPECT_TRUE(on_host("got"));
  EXPECT_TRUE(on_host("flat"));
  // What stays on the device: the loop's other state, the reloaded value.
  EXPECT_FALSE(on_host("act"));
  EXPECT_FALSE(on_host("fwd", 2));
  EXPECT_FALSE(on_host("back"));
  EXPECT_FALSE(on_host("m"));
  EXPECT_FALSE(on_host("bwd", 2));
  // A host computation's result; a parameter the header places.
  EXPECT_TRUE(on_host("done"));
  EXPECT_TRUE(on_host("stored"));
  EXPECT_FALSE(on_host("x"));
}

TEST(HostMemory, JaxMemoryKindsAreHostMoves) {
  auto module = Parse(R"(HloModule kinds
ENTRY e {
  p = f32[1024] parameter(0)
  host = f32[1024] custom-call(p), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="pinned_host"}
  dev = f32[1024] custom-call(host), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="device"}
  ROOT other = f32[1024] custom-call(dev), custom_call_target="annotate_device_placement", frontend_attributes={_xla_buffer_placement="unpinned_host"}
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(HostMoveOf(*Named(*module, "host")), HostMove::kToHost);
  EXPECT_EQ(HostMoveOf(*Named(*module, "dev")), HostMove::kToDevice);
  EXPECT_EQ(HostMoveOf(*Named(*module, "other")), HostMove::kNone);
  const HostMemory host(*module);
  EXPECT_TRUE(host.Holds(*Named(*module, "host")));
  EXPECT_FALSE(host.Holds(*Named(*module, "dev")));
}

TEST(KernelCost, WhatCrossesBetweenHostMemoryAndHbmGoesOverPcie) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(kOffloadLoops);
  ASSERT_NE(module, nullptr);
  const HostMemory host(*module);
  const KernelCoster coster(v5e, host);
  const auto cost = [&](const char* name) {
    const hlo::HloInstruction* inst = Named(*module, name);
    EXPECT_NE(inst, nullptr) << name;
    StatusOr<KernelCost> c =
        inst != nullptr ? coster.Cost(*inst) : StatusOr<KernelCost>(KernelCost{});
    EXPECT_TRUE(c.ok()) << name << ": " << c.status().message();
    return c.ok() ? *c : KernelCost{};
  };
  constexpr int64_t kRow = 1024 * 4;
  // The offload: a copy the device does not wait for, read from HBM.
  const KernelCost off = cost("off");
  EXPECT_EQ(off.kind, StepKind::kAsyncStart);
  EXPECT_EQ(off.per_core.host_bytes, kRow);
  EXPECT_EQ(off.hbm_bytes, kRow);
  // Writing it into its buffer and reading it back happen on the host, as
  // part of the transfers.
  for (const char* host_side : {"row", "put", "got", "flat"})
    EXPECT_EQ(cost(host_side).kind, StepKind::kFree) << host_side;
  // The reload: read over PCIe, written to HBM.
  const KernelCost back = cost("back");
  EXPECT_EQ(back.kind, StepKind::kKernel);
  EXPECT_EQ(back.per_core.host_bytes, kRow);
  EXPECT_EQ(back.hbm_bytes, kRow);
  // A kernel reading host memory itself reads it over PCIe too.
  const KernelCost sum = cost("sum");
  EXPECT_EQ(sum.per_core.host_bytes, kRow);
  EXPECT_EQ(sum.hbm_bytes, 2 * kRow);  // grad read, sum written
  // An annotation that moves nothing, and an allocation, cost nothing.
  EXPECT_EQ(cost("again").kind, StepKind::kFree);
  EXPECT_EQ(cost("alloc").kind, StepKind::kFree);
  // The host computation takes its device operand over PCIe; its compute is
  // the host's.
  const KernelCost start = cost("start");
  EXPECT_EQ(start.kind, StepKind::kAsyncStart);
  EXPECT_EQ(start.per_core.host_bytes, kRow);
  EXPECT_EQ(start.per_core.dma_bytes, kRow);
  // Kernels with nothing on the host are untouched.
  EXPECT_EQ(cost("m").per_core.host_bytes, 0);
  EXPECT_EQ(cost("e").per_core.host_bytes, 0);
}

// Notes to XLA's passes run no kernel in the compiled program; a custom call
// tpusim does not know still costs its bytes.
TEST(KernelCost, CompilerAnnotationsAreFree) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  for (const char* target :
       {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "ShardBarrierTo",
        "ShardBarrierFrom", "LayoutConstraint", "SetBound"}) {
    const std::string module = R"(HloModule m
ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  ROOT a = f32[1024,1024]{1,0} custom-call(p), custom_call_target=")" +
                               std::string(target) +
                               R"("
})";
    const KernelCost cost = RootCost(module, v5e);
    EXPECT_EQ(cost.kind, StepKind::kFree) << target;
  }
  const KernelCost opaque = RootCost(R"(HloModule m
ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  ROOT a = f32[1024,1024]{1,0} custom-call(p), custom_call_target="SomethingElse"
})",
                                     v5e);
  EXPECT_EQ(opaque.kind, StepKind::kKernel);
  EXPECT_EQ(opaque.hbm_bytes, 2 * 1024 * 1024 * 4);
}

/// A Transformer Engine attention call on q bf16[2,256,4,64] (batch, sequence,
/// heads, head dimension) and two K/V heads, its mask and window attributes
/// `extra`.
std::string TransformerEngineAttention(const std::string& target, const std::string& extra,
                                       int64_t q_len = 256) {
  const std::string q = "bf16[2," + std::to_string(q_len) + ",4,64]{3,2,1,0}";
  const std::string result =
      target == "te_fused_attn_forward_ffi"
          ? "(" + q + ", f32[2,4," + std::to_string(q_len) +
                ",1]{3,2,1,0}, u32[2,4]{1,0}, u8[288]{0})"
          : "(" + q + ", bf16[2,256,2,64]{3,2,1,0}, bf16[2,256,2,64]{3,2,1,0}, u8[1024]{0})";
  return R"(HloModule m
ENTRY e {
  q = )" +
         q + R"( parameter(0)
  k = bf16[2,256,2,64]{3,2,1,0} parameter(1)
  v = bf16[2,256,2,64]{3,2,1,0} parameter(2)
  ROOT a = )" +
         result + R"( custom-call(q, k, v), custom_call_target=")" + target +
         R"(", api_version=API_VERSION_TYPED_FFI, backend_config={attn_heads = 4 : i64, dropout_probability = 0.000000e+00 : f64, input_batch = 2 : i64, is_training = true, kv_max_seqlen = 256 : i64, num_gqa_groups = 2 : i64, q_max_seqlen = )" +
         std::to_string(q_len) + R"( : i64, qk_head_dim = 64 : i64, v_head_dim = 64 : i64)" +
         extra + "}\n}";
}

// A fused attention of another backend's library costs its products at the
// MXUs and one exp per attended pair, as TPU's flash-attention kernel counts
// its own work (sim/timing/fused_attention.h); the mask sets the pairs.
TEST(KernelCost, FusedAttentionIsTimedByTheProductsItsMaskLeaves) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const std::string forward = "te_fused_attn_forward_ffi";
  // Causal (top left): 256 * 257 / 2 pairs per head, 2 batches x 4 query
  // heads, 2 * (64 + 64) FLOPs per pair.
  const int64_t causal_pairs = 2 * 4 * (256 * 257 / 2);
  const KernelCost causal =
      RootCost(TransformerEngineAttention(forward, ", mask_type = 2 : i64"), v5e);
  EXPECT_EQ(causal.flops, causal_pairs * 2 * 128);
  EXPECT_EQ(causal.per_core.vector.medium_ops, (causal_pairs + 1023) / 1024);
  EXPECT_FALSE(causal.per_core.matmuls.empty());
  // q, k, v read; the output, the softmax statistics and the RNG state
  // written; the u8 workspace is scratch.
  EXPECT_EQ(causal.hbm_bytes, 262144 + 2 * 131072 + 262144 + 2 * 4 * 256 * 4 + 32);
  // Padding with causal (3) counts the same pairs: the maximum lengths.
  EXPECT_EQ(RootCost(TransformerEngineAttention(forward, ", mask_type = 3 : i64"), v5e).flops,
            causal.flops);
  // No mask, a padding mask: every pair.
  for (const char* mask : {", mask_type = 0 : i64", ", mask_type = 1 : i64"}) {
    EXPECT_EQ(RootCost(TransformerEngineAttention(forward, mask), v5e).flops,
              2 * 4 * 256 * 256 * 2 * 128)
        << mask;
  }
  // 128 queries over 256 keys: aligned to the top left, query i sees i + 1
  // keys; to the bottom right, i + 129.
  EXPECT_EQ(RootCost(TransformerEngineAttention(forward, ", mask_type = 2 : i64", 128), v5e).flops,
            int64_t{2} * 4 * (128 * 129 / 2) * 2 * 128);
  EXPECT_EQ(RootCost(TransformerEngineAttention(forward, ", mask_type = 4 : i64", 128), v5e).flops,
            int64_t{2} * 4 * (128 * 129 + 127 * 128 / 2) * 2 * 128);
  // A sliding window of 15 keys left of the diagonal: 16 keys from query 15 on.
  EXPECT_EQ(
      RootCost(TransformerEngineAttention(forward,
                                          ", mask_type = 2 : i64, window_size_left = 15 : i64, "
                                          "window_size_right = 0 : i64"),
               v5e)
          .flops,
      int64_t{2} * 4 * (120 + 241 * 16) * 2 * 128);
  // The gradient: five products per pair, 2.5 times the forward FLOPs.
  const KernelCost backward = RootCost(
      TransformerEngineAttention("te_fused_attn_backward_ffi", ", mask_type = 2 : i64"), v5e);
  EXPECT_EQ(backward.flops, causal_pairs * 2 * (3 * 64 + 2 * 64));
  EXPECT_EQ(backward.per_core.vector.medium_ops, causal.per_core.vector.medium_ops);
  // Without a dimension the call says nothing: its bytes only.
  const std::string without = TransformerEngineAttention(forward, ", mask_type = 2 : i64");
  const KernelCost unsized =
      RootCost(without.substr(0, without.find("qk_head_dim")) + "v_head_dim = 64 : i64}\n}", v5e);
  EXPECT_EQ(unsized.flops, 0);
  EXPECT_TRUE(unsized.per_core.matmuls.empty());
}

// The closed form against counting query by query, over lengths, alignments
// and windows that cross every edge; and a length no loop could count.
TEST(FusedAttention, AttendedPairsCountsEveryQuerysKeys) {
  for (int64_t q_len : {1, 5, 16, 37}) {
    for (int64_t kv_len : {1, 7, 16, 50}) {
      for (bool causal : {false, true}) {
        for (int64_t diagonal : {int64_t{0}, kv_len - q_len}) {
          for (int64_t left : {-1, 0, 3, 20, 1000}) {
            for (int64_t right : {-1, 0, 2, 40}) {
              AttentionWork w;
              w.q_len = q_len;
              w.kv_len = kv_len;
              w.causal = causal;
              w.diagonal = diagonal;
              w.window_left = left;
              w.window_right = right;
              int64_t counted = 0;
              for (int64_t i = 0; i < q_len; ++i) {
                for (int64_t j = 0; j < kv_len; ++j) {
                  const int64_t offset = j - (i + diagonal);  // keys right of the diagonal
                  const bool seen = (!causal || offset <= 0) && (right < 0 || offset <= right) &&
                                    (left < 0 || -offset <= left);
                  counted += seen ? 1 : 0;
                }
              }
              EXPECT_EQ(AttendedPairs(w), counted) << q_len << " " << kv_len << " " << causal << " "
                                                   << diagonal << " " << left << " " << right;
            }
          }
        }
      }
    }
  }
  AttentionWork longest;
  longest.q_len = longest.kv_len = int64_t{1} << 31;
  longest.causal = true;
  EXPECT_EQ(AttendedPairs(longest), (int64_t{1} << 31) * ((int64_t{1} << 31) + 1) / 2);
}

/// XLA's cuDNN attention on [batch, heads, sequence, dimension] operands:
/// queries and keys of 64, values of 32 per head.
std::string CudnnAttention(const std::string& target, const std::string& mask) {
  const bool backward = target.ends_with("Backward");
  const std::string result = backward ? "(bf16[2,4,256,64]{3,2,1,0}, bf16[2,4,256,64]{3,2,1,0}, "
                                        "bf16[2,4,256,32]{3,2,1,0}, u8[0]{0})"
                                      : "(bf16[2,4,256,32]{3,2,1,0}, u8[0]{0})";
  return R"(HloModule m
ENTRY e {
  q = bf16[2,4,256,64]{3,2,1,0} parameter(0)
  k = bf16[2,4,256,64]{3,2,1,0} parameter(1)
  v = bf16[2,4,256,32]{3,2,1,0} parameter(2)
  ROOT a = )" +
         result + R"( custom-call(q, k, v), custom_call_target=")" + target +
         R"(", backend_config={"operation_queue_id":"0","cudnn_fmha_backend_config":{"fmha_scale":0.125,"dropout_rate":0,"intermediate_tensor_shape":{"element_type":"BF16","dimensions":["2","4","256","256"]})" +
         mask + "}}\n}";
}

TEST(KernelCost, CudnnAttentionTakesItsScoresShapeFromItsConfig) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const int64_t all_pairs = 2 * 4 * 256 * 256;
  const int64_t causal_pairs = 2 * 4 * (256 * 257 / 2);
  EXPECT_EQ(RootCost(CudnnAttention("__cudnn$fmhaSoftmax", ""), v5e).flops, all_pairs * 2 * 96);
  EXPECT_EQ(RootCost(CudnnAttention("__cudnn$fmhaSoftmax", R"(,"mask_type":"CAUSAL")"), v5e).flops,
            causal_pairs * 2 * 96);
  EXPECT_EQ(RootCost(CudnnAttention("__cudnn$fmhaSoftmax", R"(,"is_causal_mask":true)"), v5e).flops,
            causal_pairs * 2 * 96);
  // A window of 16 keys, the query's own included.
  EXPECT_EQ(RootCost(CudnnAttention("__cudnn$fmhaSoftmax",
                                    R"(,"mask_type":"CAUSAL","sliding_window_length":16)"),
                     v5e)
                .flops,
            int64_t{2} * 4 * (120 + 241 * 16) * 2 * 96);
  // The gradient's value dimension comes from dV against dK.
  EXPECT_EQ(
      RootCost(CudnnAttention("__cudnn$fmhaSoftmaxBackward", R"(,"mask_type":"PADDING_CAUSAL")"),
               v5e)
          .flops,
      causal_pairs * 2 * (3 * 64 + 2 * 32));
  // The mask by its number; fields of another type say nothing.
  EXPECT_EQ(RootCost(CudnnAttention("__cudnn$fmhaSoftmax", R"(,"mask_type":2)"), v5e).flops,
            causal_pairs * 2 * 96);
  EXPECT_EQ(RootCost(CudnnAttention(
                         "__cudnn$fmhaSoftmax",
                         R"(,"mask_type":[2],"is_causal_mask":"yes","sliding_window_length":"x")"),
                     v5e)
                .flops,
            all_pairs * 2 * 96);
  // Scores whose rows do not divide the queries are no attention tpusim knows.
  std::string odd = CudnnAttention("__cudnn$fmhaSoftmax", "");
  odd.replace(odd.find(R"("256","256")"), 11, R"("255","256")");
  EXPECT_EQ(RootCost(odd, v5e).flops, 0);
}

TEST(TripCount, CountedLoopWithConstantBounds) {
  auto module = Parse(R"(HloModule m
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(3)
  next = s32[] add(i, one)
  x = f32[8] get-tuple-element(p), index=1
  y = f32[8] exponential(x)
  ROOT t = (s32[], f32[8]) tuple(next, y)
}
ENTRY e {
  zero = s32[] constant(1)
  x = f32[8] parameter(0)
  t = (s32[], f32[8]) tuple(zero, x)
  ROOT w = (s32[], f32[8]) while(t), condition=cond, body=body
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(KnownTripCount(*module->entry()->root()).value(), 3);  // i = 1, 4, 7
  auto program = LowerModule(*module, Preset("tpu-v5e"), TimingOptions{});
  ASSERT_TRUE(program.ok()) << program.status().message();
  // The loop once (begin; compare; add, exponential; end) with its trip
  // count, then the final compare.
  ASSERT_EQ(program->steps.size(), 6u);
  EXPECT_EQ(program->loop_trips[program->steps[0].control].device0, ExecutionSeries<int64_t>(3));
}

/// `for (i = start; i DIRECTION limit; i += step)` with an i of `type`, as a
/// while loop whose body does some work.
std::string CountedLoop(const std::string& type, const std::string& start,
                        const std::string& direction, const std::string& limit,
                        const std::string& step) {
  return "HloModule m\ncond {\n  p = (" + type + "[], f32[8]) parameter(0)\n  i = " + type +
         "[] get-tuple-element(p), index=0\n  n = " + type + "[] constant(" + limit +
         ")\n  ROOT c = pred[] compare(i, n), direction=" + direction +
         "\n}\nbody {\n  p = (" + type + "[], f32[8]) parameter(0)\n  i = " + type +
         "[] get-tuple-element(p), index=0\n  s = " + type + "[] constant(" + step +
         ")\n  next = " + type + "[] add(i, s)\n  x = f32[8] get-tuple-element(p), index=1\n"
         "  y = f32[8] exponential(x)\n  ROOT t = (" + type + "[], f32[8]) tuple(next, y)\n}\n"
         "ENTRY e {\n  a = " + type + "[] constant(" + start +
         ")\n  x = f32[8] parameter(0)\n  t = (" + type + "[], f32[8]) tuple(a, x)\n"
         "  ROOT w = (" + type + "[], f32[8]) while(t), condition=cond, body=body\n}\n";
}

TEST(TripCount, CounterWrapsAroundItsTypeAsXlasAddDoes) {
  struct Case {
    std::string type, start, direction, limit, step;
    int64_t trips;
  };
  for (const Case& c : std::vector<Case>{
           {"s32", "0", "LT", "10", "3", 4},
           {"s32", "10", "GE", "0", "-2", 6},
           {"s32", "5", "LT", "5", "1", 0},
           {"s32", "5", "GT", "0", "0", -1},  // step 0: never ends
           // s8 from 0 down by 1: -128 wraps to 127, which ends `i < 10`.
           {"s8", "0", "LT", "10", "-1", 129},
           // 0, 100, -56, 44, -112, -12, 88, -68, 32, -124, -24, 76, -80, 20, 120.
           {"s8", "0", "LT", "120", "100", 14},
           {"s8", "0", "LE", "127", "1", -1},  // 127 + 1 wraps to -128
           {"u8", "250", "GE", "3", "1", 6},   // 250..255, then 0
           {"u64", "18446744073709551600", "LT", "18446744073709551610", "4", 3},
           {"u64", "0", "LT", "18446744073709551615", "1", -2},
           {"s64", "-9223372036854775808", "LT", "9223372036854775807", "1", -2},
           {"s32", "0", "LE", "2147483647", "1", -1},
           {"s32", "0", "LT", "10", "-1", -3},  // wraps after 2^31 iterations
       }) {
    const std::string text = CountedLoop(c.type, c.start, c.direction, c.limit, c.step);
    auto module = Parse(text);
    ASSERT_NE(module, nullptr) << text;
    const auto trips = KnownTripCount(*module->entry()->root());
    const std::string what = c.type + " " + c.start + " " + c.direction + " " + c.limit +
                             " by " + c.step;
    if (c.trips >= 0) {
      ASSERT_TRUE(trips.ok()) << what << ": " << trips.status().message();
      EXPECT_EQ(trips.value(), c.trips) << what;
      continue;
    }
    ASSERT_FALSE(trips.ok()) << what;
    const std::string why = c.trips == -1 ? "never ends" : c.trips == -2 ? "more than tpusim counts"
                                                                          : "wraps around";
    EXPECT_THAT(trips.status().message(), testing::HasSubstr(why)) << what;
    // Timing refuses the loop at the while, rather than timing it once.
    auto program = LowerModule(*module, Preset("tpu-v5e"), TimingOptions{});
    ASSERT_FALSE(program.ok()) << what;
    EXPECT_THAT(program.status().message(), testing::HasSubstr("w: "));
    EXPECT_THAT(program.status().message(), testing::HasSubstr(why));
  }
}

TEST(TripCount, UnrecognisedLoopTakesTheOptionDefault) {
  auto module = Parse(R"(HloModule m
cond {
  p = (f32[]) parameter(0)
  x = f32[] get-tuple-element(p), index=0
  z = f32[] constant(0)
  ROOT gt = pred[] compare(x, z), direction=GT
}
body {
  p = (f32[]) parameter(0)
  x = f32[] get-tuple-element(p), index=0
  h = f32[] constant(0.5)
  m = f32[] multiply(x, h)
  ROOT t = (f32[]) tuple(m)
}
ENTRY e {
  x = f32[] parameter(0)
  t = (f32[]) tuple(x)
  ROOT w = (f32[]) while(t), condition=cond, body=body
})");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(KnownTripCount(*module->entry()->root()).value(), std::nullopt);
  TimingOptions options;
  options.default_trip_count = 5;
  auto program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_TRUE(program.ok());
  // The loop once: begin, the test, the body's multiply, end; then the test
  // that ends it.
  ASSERT_EQ(program->steps.size(), 5u);
  EXPECT_EQ(program->steps[0].role, StepRole::kLoopBegin);
  EXPECT_EQ(program->loop_trips[program->steps[0].control].device0, ExecutionSeries<int64_t>(5));
  EXPECT_EQ(program->steps[0].partner, 3u);
  EXPECT_EQ(program->steps[3].role, StepRole::kLoopEnd);
  EXPECT_EQ(program->steps[3].partner, 0u);
  EXPECT_EQ(program->steps[4].inst->name(), "gt");
  // A trip count given for the loop (e.g. from a functional run) wins.
  options.trip_counts[module->entry()->root()] = ExecutionSeries<int64_t>(7);
  auto given = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->loop_trips[given->steps[0].control].device0, ExecutionSeries<int64_t>(7));
}

TEST(Lowering, OnlyTheLoopsAroundWhatChangesBetweenExecutionsAreMarkedAsVarying) {
  auto module = Parse(test::kTriangularLoop);
  ASSERT_NE(module, nullptr);
  const hlo::HloInstruction* inner = Named(*module, "inner");
  ASSERT_NE(inner, nullptr);
  // Steps: outer begin, its test, inner begin, its test, the body's add and
  // square, inner end, ...
  TimingOptions options;
  for (int64_t i = 0; i < 4; ++i) options.trip_counts[inner].Append(i);
  auto program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_TRUE(program.ok()) << program.status().message();
  ASSERT_EQ(program->steps[0].inst->name(), "outer");
  ASSERT_EQ(program->steps[2].inst->name(), "inner");
  EXPECT_TRUE(program->steps[0].varies);   // its iterations differ: no fast-forward
  EXPECT_FALSE(program->steps[2].varies);  // each execution's iterations are alike
  EXPECT_EQ(program->loop_trips[program->steps[2].control].device0, options.trip_counts[inner]);
  // The same inner trip count every time: nothing varies.
  options.trip_counts[inner] = ExecutionSeries<int64_t>(2);
  program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_FALSE(program->steps[0].varies);
  EXPECT_FALSE(program->steps[2].varies);
}

/// The steps of `program` as role letters (I instruction, [ ] loop, < >
/// branch begin and end) and the instructions' names.
std::vector<std::string> StepNames(const Program& program) {
  std::vector<std::string> names;
  for (const Step& step : program.steps) {
    switch (step.role) {
      case StepRole::kInstruction:
        names.push_back(step.inst->name());
        break;
      case StepRole::kLoopBegin:
        names.push_back("[");
        break;
      case StepRole::kLoopEnd:
        names.push_back("]");
        break;
      case StepRole::kBranch:
        names.push_back("<");
        break;
      case StepRole::kBranchEnd:
        names.push_back(">");
        break;
    }
  }
  return names;
}

TEST(Lowering, AConditionalLowersTheBranchesItsExecutionsTake) {
  auto module = Parse(test::kAlternatingBranch);
  ASSERT_NE(module, nullptr);
  const hlo::HloInstruction* c = Named(*module, "c");
  ASSERT_NE(c, nullptr);
  // Branches 0, 1, 0, 1: both are lowered, one after the other, and the loop
  // is not fast-forwarded.
  TimingOptions options;
  for (int64_t k = 0; k < 4; ++k) options.branches[c].Append(k % 2);
  auto program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(StepNames(*program),
            (std::vector<std::string>{"[", "lt", "parity", "even", "<", "square", ">", "root", ">",
                                      "next", "]", "lt"}));
  ASSERT_EQ(program->conditionals.size(), 1u);
  const Conditional& conditional = program->conditionals[0];
  EXPECT_EQ(conditional.taken.device0, options.branches[c]);
  EXPECT_EQ(conditional.branch_begins, (std::vector<size_t>{5, 7}));
  EXPECT_EQ(program->steps[4].partner, 8u);
  EXPECT_EQ(program->steps[6].partner, 8u);
  EXPECT_TRUE(program->steps[0].varies);
  // Always the false branch (an index past the last is the last): only it
  // is lowered, and the loop's iterations are alike.
  options.branches.clear();
  options.conditional_branch = 7;
  program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(StepNames(*program), (std::vector<std::string>{"[", "lt", "parity", "even", "<", "root",
                                                           ">", "next", "]", "lt"}));
  EXPECT_EQ(program->conditionals[0].taken.device0, ExecutionSeries<int64_t>(1));
  EXPECT_EQ(program->conditionals[0].branch_begins, (std::vector<size_t>{SIZE_MAX, 5}));
  EXPECT_FALSE(program->steps[0].varies);
  // Device 1 always squares, device 0 always takes the root: both branches
  // are lowered, device 1 has its own series, and each device's iterations
  // are alike.
  options.device_branches[1][c] = ExecutionSeries<int64_t>(0);
  program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(program->conditionals[0].branch_begins, (std::vector<size_t>{5, 7}));
  EXPECT_EQ(program->conditionals[0].taken.On(0), ExecutionSeries<int64_t>(1));
  EXPECT_EQ(program->conditionals[0].taken.On(1), ExecutionSeries<int64_t>(0));
  EXPECT_EQ(program->conditionals[0].taken.On(2), ExecutionSeries<int64_t>(1));
  EXPECT_FALSE(program->steps[0].varies);
  // A device that takes what device 0 takes has no series of its own.
  options.device_branches[1][c] = ExecutionSeries<int64_t>(1);
  program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_TRUE(program->conditionals[0].taken.differing.empty());
}

TEST(Lowering, AConditionalWhoseBranchesIssueNothingCostsNothing) {
  auto module = Parse(R"(HloModule m
same {
  ROOT x = f32[8] parameter(0)
}
ENTRY e {
  x = f32[8] parameter(0)
  p = pred[] parameter(1)
  c = f32[8] conditional(p, x, x), true_computation=same, false_computation=same
  ROOT y = f32[8] negate(c)
})");
  ASSERT_NE(module, nullptr);
  auto program = LowerModule(*module, Preset("tpu-v5e"), TimingOptions());
  ASSERT_TRUE(program.ok()) << program.status().message();
  EXPECT_EQ(StepNames(*program), (std::vector<std::string>{"y"}));
  EXPECT_TRUE(program->conditionals.empty());
}

TEST(Lowering, TheInstructionCapOutsideEveryLoopNamesTheInstructionThatReachedIt) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  a = f32[8] add(x, x)
  ROOT b = f32[8] multiply(a, a)
})");
  ASSERT_NE(module, nullptr);
  TimingOptions options;
  options.max_executed_instructions = 1;
  auto program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(program.status().message(),
            "test.hlo:5:3: error: b: the module's program reaches the limit of 1 instructions "
            "here (each loop body counted once)");
  // How to raise it is the caller's to say (sim/ knows no flags).
  options.raise_executed_instructions = "raise it with the caller's flag";
  program = LowerModule(*module, Preset("tpu-v5e"), options);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().message(),
            "test.hlo:5:3: error: b: the module's program reaches the limit of 1 instructions "
            "here (each loop body counted once); raise it with the caller's flag");
}

// A loop whose iterations issue no work costs nothing, however many trips.
TEST(Lowering, LoopsWithoutWorkCostNothing) {
  TimingOptions options;
  auto idle = Parse(R"(HloModule m
cond {
  p = (f32[8]) parameter(0)
  ROOT c = pred[] constant(true)
}
body {
  p = (f32[8]) parameter(0)
  x = f32[8] get-tuple-element(p), index=0
  ROOT t = (f32[8]) tuple(x)
}
ENTRY e {
  x = f32[8] parameter(0)
  t = (f32[8]) tuple(x)
  ROOT w = (f32[8]) while(t), condition=cond, body=body
})");
  ASSERT_NE(idle, nullptr);
  options.default_trip_count = 4'000'000'000'000;
  auto empty = LowerModule(*idle, Preset("tpu-v5e"), options);
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_TRUE(empty->steps.empty());
}

TEST(Lowering, UnsupportedAlgorithmIsALocatedError) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  a = f32[8,8] parameter(0)
  ROOT d = f32[8,8] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_f64_f64_f64
})");
  ASSERT_NE(module, nullptr);
  auto program = LowerModule(*module, Preset("tpu-v5e"), TimingOptions{});
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(program.status().message().find("test.hlo:4:3"), std::string::npos)
      << program.status().message();
}

/// The message's first line (the located error, without the source excerpt).
std::string FirstLine(const Status& status) {
  return status.message().substr(0, status.message().find('\n'));
}

TEST(Lowering, AnUnboundedDimensionIsAnErrorAtItsInstruction) {
  auto module = Parse(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  q = (f32[8], f32[?,784]) parameter(1)
  ROOT n = f32[8] negate(p)
})");
  ASSERT_NE(module, nullptr);
  const auto program = LowerModule(*module, Preset("tpu-v5e"), TimingOptions{});
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(FirstLine(program.status()),
            "test.hlo:4:3: error: q: shape f32[?,784] has an unbounded dimension 0: timing needs "
            "a size or a bound (<=N)");
}

// Counts saturate rather than wrap (sim/base/arith.h); one that saturated
// once showed as 9223372036854775807 FLOPs, a %FLOP column off by far, and a
// row of 0 FLOPs where the runs' sum wrapped. Now it is an input error.
TEST(Lowering, CountsPast64BitsAreALocatedErrorNotASaturatedNumber) {
  // 2 x 2^20 x 2^21 x 2^22 = 2^64 FLOPs in one dot.
  auto dot = Parse(R"(HloModule m
ENTRY e {
  a = f32[1048576,2097152] parameter(0)
  b = f32[2097152,4194304] parameter(1)
  ROOT d = f32[1048576,4194304] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(dot, nullptr);
  auto program = LowerModule(*dot, Preset("tpu-v5e"), TimingOptions{});
  EXPECT_EQ(program.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FirstLine(program.status()),
            "test.hlo:5:3: error: d: its FLOPs reach 2^63: more than tpusim counts in 64 bits");
  // 2^61 FLOPs a run fits; the fourth run takes the module's sum to 2^63.
  auto loop = Parse(R"(HloModule m
cond {
  p = (s32[], f32[1048576,1048576]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[1048576,1048576]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[1048576,1048576] get-tuple-element(p), index=1
  y = f32[1048576,1048576] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[1048576,1048576]) tuple(next, y)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[1048576,1048576] parameter(0)
  t = (s32[], f32[1048576,1048576]) tuple(zero, x)
  ROOT w = (s32[], f32[1048576,1048576]) while(t), condition=cond, body=body
})");
  ASSERT_NE(loop, nullptr);
  program = LowerModule(*loop, Preset("tpu-v5e"), TimingOptions{});
  EXPECT_EQ(FirstLine(program.status()),
            "test.hlo:14:3: error: y: the module's FLOPs, summed over every run (each loop "
            "iteration), reach 2^63 here: more than tpusim counts in 64 bits");
  // Three runs (3 x 2^61 FLOPs and the adds) still fit.
  TimingOptions three;
  three.trip_counts[loop->entry()->root()] = ExecutionSeries<int64_t>(3);
  program = LowerModule(*loop, Preset("tpu-v5e"), three);
  EXPECT_TRUE(program.ok()) << program.status().message();
}

TEST(KernelCost, AFusionInAFusionIsPartOfTheSameKernel) {
  // The same dot and exponential, fused flat and with the dot in a fusion of
  // its own inside the outer one; the same entry calls either.
  const std::string entry = R"(
ENTRY e {
  a = f32[128,256] parameter(0)
  b = f32[256,128] parameter(1)
  ROOT f = f32[128,128] fusion(a, b), kind=kOutput, calls=outer
})";
  const std::string flat = R"(HloModule m
outer {
  a = f32[128,256] parameter(0)
  b = f32[256,128] parameter(1)
  d = f32[128,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = f32[128,128] exponential(d)
})" + entry;
  const std::string nested = R"(HloModule m
inner {
  a = f32[128,256] parameter(0)
  b = f32[256,128] parameter(1)
  ROOT d = f32[128,128] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
outer {
  a = f32[128,256] parameter(0)
  b = f32[256,128] parameter(1)
  d = f32[128,128] fusion(a, b), kind=kOutput, calls=inner
  ROOT e = f32[128,128] exponential(d)
})" + entry;
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const KernelCost flat_cost = RootCost(flat, v5e);
  const KernelCost nested_cost = RootCost(nested, v5e);
  EXPECT_EQ(flat_cost.flops, 2 * 128 * 256 * 128 + 128 * 128);
  EXPECT_EQ(nested_cost.flops, flat_cost.flops);
  EXPECT_EQ(nested_cost.hbm_bytes, flat_cost.hbm_bytes);
  ASSERT_EQ(nested_cost.per_core.matmuls.size(), 1u);
  EXPECT_EQ(nested_cost.per_core.vector.transcendental_ops,
            flat_cost.per_core.vector.transcendental_ops);
}

TEST(Lowering, ComputationsNested100000DeepAreALocatedErrorNotAStackOverflow) {
  // Calls and loops are walked into, and a fusion's kernel takes in the
  // fusions fused into it: each stops at the same depth, as values mode does.
  for (const std::string how : {"call", "while", "fusion"}) {
    auto module = Parse(test::NestedModule(100'000, how));
    ASSERT_NE(module, nullptr);
    auto program = LowerModule(*module, Preset("tpu-v5e"), TimingOptions{});
    EXPECT_EQ(program.status().code(), StatusCode::kInvalidArgument) << how;
    EXPECT_THAT(FirstLine(program.status()), ::testing::HasSubstr(": calls nest too deeply"))
        << how;
    EXPECT_TRUE(FirstLine(program.status()).starts_with("test.hlo:")) << how;
  }
}

}  // namespace
}  // namespace tpusim::timing
