#include <gtest/gtest.h>

#include <string>

#include "sim/arch/chip_config.h"
#include "sim/arch/preset_loader.h"
#include "sim/chip/core_cost.h"
#include "sim/chip/memory.h"
#include "sim/chip/mxu.h"
#include "sim/chip/vector_unit.h"

namespace tpusim::chip {
namespace {

const std::string kModels = TPUSIM_MODELS_DIR;

arch::ChipConfig Load(const std::string& name) {
  StatusOr<arch::ChipConfig> c = arch::LoadChipPreset(name, kModels);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : arch::ChipConfig{};
}

// tiny-chip: 1 TC, 1 MXU of 2x2, vregs of 2x4, 1 ALU, 1 XLU at 8 cycles/vreg,
// 1 GHz, HBM 16 B/cycle with 32 B granularity, VMEM 64 B/cycle and 64 KiB.
arch::ChipConfig Tiny() { return Load(kModels + "/test/tiny-chip.yaml"); }

TEST(Mxu, TilesCoverPaddedContractionAndColumnsPerPass) {
  Mxu mxu(Tiny());
  // k = 3 -> 2 tiles of depth 2; n = 5 -> 3 tiles of 2 columns.
  EXPECT_EQ(mxu.WeightTiles({.batch = 1, .m = 4, .k = 3, .n = 5}), 6);
  EXPECT_EQ(mxu.WeightTiles({.batch = 2, .m = 4, .k = 3, .n = 5, .passes = 6}), 72);
  // int8 at rate 2: a tile is 4 deep.
  EXPECT_EQ(mxu.WeightTiles({.batch = 1, .m = 4, .k = 4, .n = 2, .input = MxuInput::kInt8}), 1);
}

TEST(Mxu, TileStreamsRowsPaddedToWholeVregsPlusOneFillAndDrain) {
  Mxu mxu(Tiny());
  // m = 5 pads to 6 rows (sublanes 2); 6 tiles x 6 cycles + fill 2 + drain 2.
  EXPECT_EQ(mxu.MatmulCycles({.batch = 1, .m = 5, .k = 3, .n = 5}), 6 * 6 + 4);
  // m = 1 pads to 2 rows.
  EXPECT_EQ(mxu.MatmulCycles({.batch = 1, .m = 1, .k = 2, .n = 2}), 2 + 4);
  EXPECT_EQ(mxu.MatmulCycles({.batch = 1, .m = 0, .k = 2, .n = 2}), 0);
}

TEST(Mxu, HighestIsSixTimesTheDefaultPasses) {
  Mxu mxu(Load("tpu-v5e"));
  const MatmulWork one{.batch = 1, .m = 1024, .k = 1024, .n = 1024, .passes = 1};
  MatmulWork six = one;
  six.passes = 6;
  EXPECT_EQ(mxu.WeightTiles(six), 6 * mxu.WeightTiles(one));
}

TEST(Mxu, LargeSquareMatmulReachesEveryPresetPeakWithinOnePercent) {
  for (const char* name : {"tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7x"}) {
    const arch::ChipConfig chip = Load(name);
    Mxu mxu(chip);
    const int64_t n = 16384;
    const int64_t cycles = mxu.MatmulCycles({.batch = 1, .m = n, .k = n, .n = n});
    const double flops_per_core =
        2.0 * n * n * n / (static_cast<double>(cycles) / chip.clock.value());
    const double peak_per_core =
        static_cast<double>(chip.peak.bf16.value()) / chip.tensorcores_per_chip;
    EXPECT_NEAR(flops_per_core / peak_per_core, 1.0, 0.01) << name;
  }
}

TEST(Vpu, CostClassesAndAlus) {
  Vpu vpu(Tiny());
  EXPECT_EQ(vpu.vreg_elements(), 8);
  EXPECT_EQ(vpu.Cycles({.cheap_ops = 3, .medium_ops = 2, .transcendental_ops = 1}), 3 + 8 + 16);
  Vpu v5e(Load("tpu-v5e"));  // 4 ALUs per slot
  EXPECT_EQ(v5e.Cycles({.cheap_ops = 9}), 3);
}

TEST(Xlu, VregsSpreadOverUnits) {
  EXPECT_EQ(Xlu(Tiny()).Cycles(3), 24);
  EXPECT_EQ(Xlu(Load("tpu-v5e")).Cycles(3), 24);  // 3 vregs x 16 cycles / 2 XLUs
}

TEST(Hbm, AccessesRoundUpToGranularityAndBandwidthSetsCycles) {
  Hbm hbm(Tiny());
  EXPECT_EQ(hbm.AccessBytes(0), 0);
  EXPECT_EQ(hbm.AccessBytes(1), 32);
  EXPECT_EQ(hbm.AccessBytes(64), 64);
  EXPECT_EQ(hbm.Cycles(160), 10);
  EXPECT_EQ(hbm.Cycles(161), 11);
}

TEST(Hbm, ChipBandwidthIsSharedByTensorCores) {
  // 2 TCs, 1.05 GHz, 1200 GB/s: 600 GB/s each at full efficiency.
  const arch::ChipConfig v4 = Load("tpu-v4");
  EXPECT_EQ(Hbm(v4).Cycles(600'000'000 * v4.hbm.efficiency_percent / 100), 1'050'000'000 / 1000);
}

TEST(Hbm, TimingUsesTheAchievableBandwidth) {
  arch::ChipConfig chip = Tiny();  // 16 GB/s peak, 1 GHz, one TensorCore
  EXPECT_EQ(Hbm(chip).Cycles(16'000), 1000);
  chip.hbm.efficiency_percent = 50;
  EXPECT_EQ(Hbm(chip).Cycles(16'000), 2000);
}

TEST(CoreCost, PipelineExposesTheFirstAndLastBlockAndChargesEachStep) {
  arch::ChipConfig chip = Tiny();  // 16 GB/s, 1 GHz: 16 bytes per cycle
  CoreWork work;
  work.hbm_bytes = 16'000;
  work.hbm_write_bytes = 4'000;
  EXPECT_EQ(CoreCost(chip).PipelineEdgeCycles(work), 0);  // pipeline_block 0: fully overlapped
  EXPECT_EQ(CoreCost(chip).PipelineStepCycles(work), 0);
  chip.vmem.pipeline_block = Bytes(1'600);
  chip.overhead.pipeline_step = Cycles(10);
  // Exposed: one 1600 B input block and one 1600 B output block = 200 cycles;
  // 16000 / 1600 = 10 steps of 10 cycles.
  EXPECT_EQ(CoreCost(chip).PipelineEdgeCycles(work), 200);
  EXPECT_EQ(CoreCost(chip).PipelineStepCycles(work), 100);
  // A kernel smaller than a block exposes all of it, in one step.
  work.hbm_bytes = 800;
  work.hbm_write_bytes = 160;
  EXPECT_EQ(CoreCost(chip).PipelineEdgeCycles(work), 800 / 16);
  EXPECT_EQ(CoreCost(chip).PipelineStepCycles(work), 10);
}

TEST(Vmem, MatmulThatFitsMovesEachByteOnce) {
  Vmem vmem(Tiny());  // 64 KiB, 32 KiB usable
  EXPECT_EQ(vmem.StreamedMatmulBytes(
                {.lhs_bytes = 1000, .rhs_bytes = 2000, .out_bytes = 500, .m = 10, .n = 10}),
            3500);
  // Both operands too large: 128x128 f32 blocks (4 x 256^2 > 16 KiB), lhs read
  // ceil(1000/128) = 8 times, rhs ceil(600/128) = 5 times.
  EXPECT_EQ(vmem.StreamedMatmulBytes(
                {.lhs_bytes = 40000, .rhs_bytes = 50000, .out_bytes = 7, .m = 600, .n = 1000}),
            40000 * 8 + 50000 * 5 + 7);
  EXPECT_EQ(vmem.Cycles(64), 1);
}

TEST(CoreCost, MxuWaitsForTheExposedShareOfAMatmulKernelsF16Conversions) {
  arch::ChipConfig chip = Tiny();  // 1 ALU: one vreg op per cycle
  CoreWork work;
  work.matmuls.push_back({.batch = 1, .m = 2, .k = 2, .n = 2});  // 2 + 4 cycles
  work.vector = {.cheap_ops = 120, .convert_ops = 100};
  EXPECT_EQ(CoreCost(chip).UnitBusy(Unit::kMxu, work), 6);  // percent 0: fully overlapped
  chip.mxu.convert_exposed_percent = 30;
  EXPECT_EQ(CoreCost(chip).UnitBusy(Unit::kMxu, work), 6 + 30);
  EXPECT_EQ(CoreCost(chip).UnitBusy(Unit::kVpu, work), 120);  // the VPU still does them all
  chip.mxu.convert_exposed_percent = 100;
  EXPECT_EQ(CoreCost(chip).UnitBusy(Unit::kMxu, work), 6 + 100);
  work.matmuls.clear();  // a kernel without a matmul: nothing waits
  EXPECT_EQ(CoreCost(chip).UnitBusy(Unit::kMxu, work), 0);
}

TEST(CoreCost, TheVpuWaitsForTheGathersItsAddsNeed) {
  CoreCost cost(Tiny());  // 1 ALU; 8 cycles per XLU vreg
  CoreWork work;
  work.vector = {.cheap_ops = 5, .xlu_vregs = 3};
  EXPECT_EQ(cost.UnitBusy(Unit::kVpu, work), 5);  // independent transposes overlap
  work.vector.xlu_waited_vregs = 2;
  EXPECT_EQ(cost.UnitBusy(Unit::kVpu, work), 5 + 2 * 8);
  EXPECT_EQ(cost.UnitBusy(Unit::kXlu, work), 3 * 8);  // the XLU's own time is unchanged
}

// A copy to or from host memory moves at the chip's PCIe bandwidth, shared
// by its TensorCores, after the DMA start-up; without a PCIe bandwidth it
// crosses HBM like any other copy.
TEST(Dma, HostMemoryCopiesCrossPcie) {
  arch::ChipConfig chip = Tiny();  // 1 GHz, HBM 16 B/cycle, dma_start 10
  EXPECT_EQ(Dma(chip).Cycles(0, 160), 10 + 160 / 16);
  chip.pcie.bandwidth = BytesPerSecond(2'000'000'000);  // 2 B/cycle
  EXPECT_FALSE(Dma(chip).OverPcie(0));
  EXPECT_TRUE(Dma(chip).OverPcie(160));
  EXPECT_EQ(Dma(chip).Cycles(0, 160), 10 + 80);
  EXPECT_EQ(Dma(chip).Cycles(160, 160), 10 + 80);  // its HBM side is faster
  chip.tensorcores_per_chip = 2;
  EXPECT_EQ(Dma(chip).Cycles(0, 160), 10 + 160);
}

TEST(HbmSharing, WithoutCopiesInFlightTheKernelRunsAlone) {
  const HbmSharing sharing(/*begin=*/50, /*cycles=*/100, /*hbm_cycles=*/100, /*copies_end=*/50);
  EXPECT_EQ(sharing.KernelCycles(), 100);
  EXPECT_EQ(sharing.CopyEnd(40), 40);  // a copy that ended before the kernel
}

// An HBM-bound kernel and a copy split the bandwidth evenly; whichever
// finishes first hands the other all of it. HBM stays busy throughout, so
// the last to finish does so after the two's work added up.
TEST(HbmSharing, AnHbmBoundKernelAndTheCopiesSplitTheBandwidth) {
  const HbmSharing long_copy(1000, 100, 100, 1300);
  EXPECT_EQ(long_copy.KernelCycles(), 200);  // half the bandwidth all along
  EXPECT_EQ(long_copy.CopyEnd(1050), 1100);  // half the bandwidth meanwhile ...
  EXPECT_EQ(long_copy.CopyEnd(1300), 1400);  // ... all of it after: 100 + 300
  const HbmSharing short_copy(0, 100, 100, 30);
  EXPECT_EQ(short_copy.CopyEnd(30), 60);
  EXPECT_EQ(short_copy.KernelCycles(), 130);  // 30 cycles of it went to the copy
}

// A kernel that needs HBM for at most half its time keeps its rate; the
// copies get the rest, so they take the kernel's HBM time longer.
TEST(HbmSharing, AKernelNeedingLittleHbmIsNotSlowed) {
  const HbmSharing sharing(/*begin=*/0, /*cycles=*/400, /*hbm_cycles=*/100, /*copies_end=*/1000);
  EXPECT_EQ(sharing.KernelCycles(), 400);
  EXPECT_EQ(sharing.CopyEnd(300), 400);  // at 3/4 of the bandwidth meanwhile
  EXPECT_EQ(sharing.CopyEnd(1000), 1100);
  EXPECT_EQ(HbmSharing(0, 400, 100, 30).KernelCycles(), 400);
  EXPECT_EQ(HbmSharing(0, 400, 100, 30).CopyEnd(30), 40);
}

// A kernel needing HBM for three quarters of its time gets half while the
// copies run: it takes 2 x 150 = 300 cycles instead of 200 when they outlast
// it, and 200 + 50 x (300 - 200) / 150 when they end after 2 x 50.
TEST(HbmSharing, AMostlyHbmBoundKernelSlowsWhileTheCopiesRun) {
  EXPECT_EQ(HbmSharing(0, 200, 150, 500).KernelCycles(), 300);
  EXPECT_EQ(HbmSharing(0, 200, 150, 500).CopyEnd(500), 650);
  EXPECT_EQ(HbmSharing(0, 200, 150, 50).KernelCycles(), 234);  // 233.3 rounded up
  EXPECT_EQ(HbmSharing(0, 200, 150, 50).CopyEnd(50), 100);
}

TEST(CoreCost, EachUnitAnswersForItsOwnWork) {
  CoreCost cost(Tiny());
  CoreWork work;
  work.matmuls.push_back({.batch = 1, .m = 2, .k = 2, .n = 2});
  work.vector = {.cheap_ops = 5, .xlu_vregs = 1};
  work.hbm_bytes = 32;
  work.vmem_bytes = 128;
  work.dma_bytes = 16;
  const UnitCycles busy = cost.Busy(work);
  EXPECT_EQ(busy[static_cast<int>(Unit::kMxu)], 2 + 4);
  EXPECT_EQ(busy[static_cast<int>(Unit::kVpu)], 5);
  EXPECT_EQ(busy[static_cast<int>(Unit::kXlu)], 8);
  EXPECT_EQ(busy[static_cast<int>(Unit::kHbm)], 2);
  EXPECT_EQ(busy[static_cast<int>(Unit::kVmem)], 2);
  EXPECT_EQ(busy[static_cast<int>(Unit::kDma)], 10 + 1);
  EXPECT_EQ(UnitName(Unit::kXlu), "transpose");
}

}  // namespace
}  // namespace tpusim::chip
