// The SystemC engine end to end: layout effects, async overlap, megacore,
// the one-run-per-process rule, and the report writers. Each TEST runs in its
// own process (one SystemC run each).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/chip/work.h"
#include "sim/hlo/opcode.h"
#include "sim/timing/report.h"
#include "sim/timing/timing.h"
#include "tests/hlo/triangular_loop.h"
#include "tests/hlo/varying_programs.h"
#include "tests/timing/timing_test_util.h"

namespace tpusim::timing {
namespace {

using ::testing::HasSubstr;

int Unit(chip::Unit u) { return static_cast<int>(u); }

/// An HBM-bound kernel alone, to compare with it beside a copy in flight.
constexpr char kNegateAlone[] = R"(HloModule kernel
ENTRY e {
  x = f32[4096,4096]{1,0} parameter(0)
  ROOT n = f32[4096,4096]{1,0} negate(x)
})";

TEST(Engine, MinorToMajorSwapCopyCostsReadPlusWriteAndUsesTheTransposeUnit) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto swap = Parse(R"(HloModule swap
ENTRY e {
  p = f32[4096,4096]{1,0:T(8,128)} parameter(0)
  ROOT c = f32[4096,4096]{0,1:T(8,128)} copy(p)
})");
  auto same = Parse(R"(HloModule same
ENTRY e {
  p = f32[4096,4096]{1,0:T(8,128)} parameter(0)
  ROOT c = f32[4096,4096]{1,0:T(8,128)} copy(p)
})");
  ASSERT_NE(swap, nullptr);
  ASSERT_NE(same, nullptr);
  const std::vector<SimulationJob> jobs = {{swap.get(), &v5e, {}}, {same.get(), &v5e, {}}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const OpRecord& s = (*r)[0].ops.at(0);
  const OpRecord& n = (*r)[1].ops.at(0);
  const int64_t bytes = 2LL * 4096 * 4096 * 4;  // read one layout, write the other
  EXPECT_EQ(s.hbm_bytes, bytes);
  const double read_write_cycles =
      static_cast<double>(bytes) * v5e.clock.value() / v5e.hbm.bandwidth.value();
  EXPECT_GE(static_cast<double>(s.cycles), read_write_cycles);
  EXPECT_EQ(s.unit_cycles[Unit(chip::Unit::kXlu)],
            4096 * 4096 / 1024 * 16 / 2);  // vregs x 16 cycles / 2 XLUs
  EXPECT_EQ(n.unit_cycles[Unit(chip::Unit::kXlu)], 0);
  EXPECT_GT(s.cycles, n.cycles - 1);
}

TEST(Engine, TransposeBoundWhenHbmIsFast) {
  // With HBM and VMEM made fast, the same relayout is bound by the transpose unit.
  const arch::ChipConfig fast =
      Preset("tpu-v5e", {"hbm.bandwidth=100TB/s", "vmem.bandwidth=1000TB/s"});
  auto swap = Parse(R"(HloModule swap
ENTRY e {
  p = f32[4096,4096]{1,0:T(8,128)} parameter(0)
  ROOT c = f32[4096,4096]{0,1:T(8,128)} copy(p)
})");
  ASSERT_NE(swap, nullptr);
  auto r = SimulateModule(*swap, fast, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ops.at(0).bound_by, BoundBy::kXlu);
}

TEST(Engine, AsyncCopyOverlapsTheKernelsScheduledBetweenStartAndDone) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(R"(HloModule overlap, is_scheduled=true
ENTRY e {
  big = f32[1024,1024]{1,0} parameter(0)
  x = bf16[4096,4096]{1,0} parameter(1)
  cs = (f32[1024,1024]{1,0:S(1)}, f32[1024,1024]{1,0}, u32[]) copy-start(big)
  d = bf16[4096,4096]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  cd = f32[1024,1024]{1,0:S(1)} copy-done(cs)
  ROOT t = (bf16[4096,4096]{1,0}, f32[1024,1024]{1,0:S(1)}) tuple(d, cd)
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, v5e, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->ops.size(), 3u);
  const OpRecord& start = r->ops[0];
  const OpRecord& dot = r->ops[1];
  const OpRecord& done = r->ops[2];
  EXPECT_EQ(start.instruction->OpcodeSpelling(), "copy-start");
  EXPECT_EQ(start.cycles, 0);
  // The copy reads 4 MiB from HBM into VMEM: shorter than the dot, so done does not wait.
  EXPECT_EQ(start.hbm_bytes, 1024 * 1024 * 4);
  EXPECT_LT(start.unit_cycles[Unit(chip::Unit::kDma)], dot.cycles);
  EXPECT_EQ(done.cycles, 0);
  EXPECT_EQ(r->cycles, v5e.overhead.program_launch.value() + dot.cycles);
}

TEST(Engine, CopyDoneWaitsForAnUnfinishedCopy) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(R"(HloModule wait, is_scheduled=true
ENTRY e {
  big = f32[4096,4096]{1,0} parameter(0)
  cs = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0}, u32[]) copy-start(big)
  cd = f32[4096,4096]{1,0} copy-done(cs)
  ROOT n = f32[4096,4096]{1,0} negate(cd)
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, v5e, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->ops.size(), 3u);
  const int64_t dma = r->ops[0].unit_cycles[Unit(chip::Unit::kDma)];
  const int64_t bandwidth = v5e.hbm.bandwidth.value() / 100 * v5e.hbm.efficiency_percent;
  EXPECT_EQ(dma, v5e.overhead.dma_start.value() +
                     (2LL * 4096 * 4096 * 4 * v5e.clock.value() + bandwidth - 1) / bandwidth);
  EXPECT_EQ(r->ops[1].cycles, dma);
  EXPECT_EQ(r->ops[1].bound_by, BoundBy::kDma);
  // The program starts after its launch; the copy-start itself takes no time.
  EXPECT_EQ(r->ops[0].start_cycle, v5e.overhead.program_launch.value());
  EXPECT_EQ(r->ops[2].start_cycle, v5e.overhead.program_launch.value() + dma);
}

// A copy in flight and a kernel share the TensorCore's HBM bandwidth
// (chip::HbmSharing): an HBM-bound kernel gets half of it while the copy
// runs, and the copy ends as much later as the kernel used HBM, so HBM moves
// the two one after the other. The copy-start's DMA span, which the trace
// draws, runs to the copy's end.
TEST(Engine, AKernelAndACopyInFlightShareTheHbmBandwidth) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto both = Parse(R"(HloModule both, is_scheduled=true
ENTRY e {
  big = f32[4096,4096]{1,0} parameter(0)
  x = f32[4096,4096]{1,0} parameter(1)
  cs = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0}, u32[]) copy-start(big)
  n = f32[4096,4096]{1,0} negate(x)
  cd = f32[4096,4096]{1,0} copy-done(cs)
  ROOT t = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0}) tuple(n, cd)
})");
  auto kernel = Parse(kNegateAlone);
  auto copy = Parse(R"(HloModule copy, is_scheduled=true
ENTRY e {
  big = f32[4096,4096]{1,0} parameter(0)
  cs = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0}, u32[]) copy-start(big)
  ROOT cd = f32[4096,4096]{1,0} copy-done(cs)
})");
  ASSERT_NE(both, nullptr);
  ASSERT_NE(kernel, nullptr);
  ASSERT_NE(copy, nullptr);
  const std::vector<SimulationJob> jobs = {
      {both.get(), &v5e, {}}, {kernel.get(), &v5e, {}}, {copy.get(), &v5e, {}}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TimingResult& shared = (*r)[0];
  const OpRecord& alone = (*r)[1].ops.at(0);
  const int64_t copy_alone = (*r)[2].ops.at(0).unit_cycles[Unit(chip::Unit::kDma)];
  const int64_t kernel_hbm = alone.unit_cycles[Unit(chip::Unit::kHbm)];
  ASSERT_EQ(alone.bound_by, BoundBy::kHbm);
  ASSERT_GT(copy_alone, kernel_hbm);  // the copy outlasts the kernel
  ASSERT_EQ(shared.ops.size(), 3u);
  const OpRecord& start = shared.ops[0];
  const OpRecord& negate = shared.ops[1];
  EXPECT_EQ(negate.cycles, 2 * kernel_hbm);
  EXPECT_GT(negate.cycles, alone.cycles);
  EXPECT_EQ(negate.bound_by, BoundBy::kHbm);
  EXPECT_EQ(start.unit_cycles[Unit(chip::Unit::kDma)], copy_alone + kernel_hbm);
  EXPECT_EQ(shared.cycles, v5e.overhead.program_launch.value() + copy_alone + kernel_hbm);
}

// Offloading an activation to host memory (`S(5)`) moves it over PCIe at
// the chip's PCIe bandwidth, on the DMA engine's PCIe side: the HBM-bound
// kernel beside it keeps its time, and the copy's 64 MiB take 64 MiB over
// v5e's 15 GB/s.
TEST(Engine, ACopyToHostMemoryCrossesPcie) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto both = Parse(R"(HloModule offload, is_scheduled=true
ENTRY e {
  act = f32[4096,4096]{1,0} parameter(0)
  x = f32[4096,4096]{1,0} parameter(1)
  cs = (f32[4096,4096]{1,0:S(5)}, f32[4096,4096]{1,0}, u32[]) copy-start(act)
  n = f32[4096,4096]{1,0} negate(x)
  cd = f32[4096,4096]{1,0:S(5)} copy-done(cs)
  ROOT t = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0:S(5)}) tuple(n, cd)
})");
  auto kernel = Parse(kNegateAlone);
  ASSERT_NE(both, nullptr);
  ASSERT_NE(kernel, nullptr);
  const std::vector<SimulationJob> jobs = {{both.get(), &v5e, {}}, {kernel.get(), &v5e, {}}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)[0].ops.size(), 3u);
  const OpRecord& start = (*r)[0].ops[0];
  const int64_t bytes = 4096LL * 4096 * 4;
  EXPECT_EQ(v5e.pcie.bandwidth.value(), 15'000'000'000);
  EXPECT_EQ(start.hbm_bytes, bytes);  // read from HBM; the host side is not HBM
  EXPECT_EQ(start.unit_cycles[Unit(chip::Unit::kDma)],
            v5e.overhead.dma_start.value() +
                (bytes * v5e.clock.value() + v5e.pcie.bandwidth.value() - 1) /
                    v5e.pcie.bandwidth.value());
  EXPECT_EQ((*r)[0].ops[1].cycles, (*r)[1].ops.at(0).cycles);
}

// An offload annotation (before XLA's host offloader) moves its operand over
// PCIe under the kernels that follow; the reload that reads it back queues
// behind it on PCIe, and the device waits for the reload.
TEST(Engine, AnOffloadRunsUnderTheNextKernelsAndItsReloadWaitsForIt) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto offload = Parse(R"(HloModule offload
ENTRY e {
  act = f32[4096,4096]{1,0} parameter(0)
  x = f32[4096,4096]{1,0} parameter(1)
  h = f32[4096,4096]{1,0} custom-call(act), custom_call_target="MoveToHost"
  n = f32[4096,4096]{1,0} negate(x)
  d = f32[4096,4096]{1,0} custom-call(h), custom_call_target="MoveToDevice"
  ROOT t = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0}) tuple(n, d)
})");
  auto kernel = Parse(kNegateAlone);
  ASSERT_NE(offload, nullptr);
  ASSERT_NE(kernel, nullptr);
  const std::vector<SimulationJob> jobs = {{offload.get(), &v5e, {}}, {kernel.get(), &v5e, {}}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)[0].ops.size(), 3u);
  const OpRecord& to_host = (*r)[0].ops[0];
  const OpRecord& n = (*r)[0].ops[1];
  const OpRecord& to_device = (*r)[0].ops[2];
  const int64_t bytes = 4096LL * 4096 * 4;
  const int64_t pcie =
      v5e.overhead.dma_start.value() +
      (bytes * v5e.clock.value() + v5e.pcie.bandwidth.value() - 1) / v5e.pcie.bandwidth.value();
  const int64_t launch = v5e.overhead.program_launch.value();
  EXPECT_EQ(to_host.cycles, 0);  // the device goes on at once
  EXPECT_EQ(to_host.hbm_bytes, bytes);
  EXPECT_EQ(to_host.unit_cycles[Unit(chip::Unit::kDma)], pcie);
  // The offload does not take HBM from the kernel under it.
  EXPECT_EQ(n.cycles, (*r)[1].ops.at(0).cycles);
  ASSERT_LT(n.start_cycle + n.cycles, launch + pcie);
  // The reload starts when the offload ends and takes as long.
  EXPECT_EQ(to_device.bound_by, BoundBy::kDma);
  EXPECT_EQ(to_device.hbm_bytes, bytes);  // written to HBM; read from the host
  EXPECT_EQ(to_device.start_cycle + to_device.unit_cycles[Unit(chip::Unit::kDma)],
            launch + 2 * pcie);
  EXPECT_EQ((*r)[0].cycles, to_device.start_cycle + to_device.cycles);
}

// PCIe is full duplex: a prefetch from host memory and an offload issued
// while it is in flight move at once, each at the full bandwidth; a transfer
// from the host issued while an offload is still going out waits for it (it
// may read back what the offload carries).
TEST(Engine, PcieCarriesAnOffloadAndAPrefetchAtOnceButAReadBackWaits) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const auto module = [](bool prefetch_first) {
    const std::string prefetch =
        "  cs = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0:S(5)}, u32[]) copy-start(held)\n";
    const std::string offload =
        "  h = f32[4096,4096]{1,0} custom-call(act), custom_call_target=\"MoveToHost\"\n";
    return std::string(
               R"(HloModule duplex, is_scheduled=true, entry_computation_layout={(f32[4096,4096]{1,0:S(5)}, f32[4096,4096]{1,0})->(f32[4096,4096]{1,0}, f32[4096,4096]{1,0})}
ENTRY e {
  held = f32[4096,4096]{1,0:S(5)} parameter(0)
  act = f32[4096,4096]{1,0} parameter(1)
)") + (prefetch_first ? prefetch + offload : offload + prefetch) +
           R"(  cd = f32[4096,4096]{1,0} copy-done(cs)
  ROOT t = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0}) tuple(cd, h)
})";
  };
  auto both_ways = Parse(module(true));
  auto read_back = Parse(module(false));
  ASSERT_NE(both_ways, nullptr);
  ASSERT_NE(read_back, nullptr);
  const std::vector<SimulationJob> jobs = {{both_ways.get(), &v5e, {}},
                                           {read_back.get(), &v5e, {}}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const int64_t bytes = 4096LL * 4096 * 4;
  const int64_t pcie =
      v5e.overhead.dma_start.value() +
      (bytes * v5e.clock.value() + v5e.pcie.bandwidth.value() - 1) / v5e.pcie.bandwidth.value();
  const int64_t launch = v5e.overhead.program_launch.value();
  EXPECT_EQ((*r)[0].cycles, launch + pcie);
  EXPECT_EQ((*r)[0].pcie_bytes, 2 * bytes);
  EXPECT_EQ((*r)[1].cycles, launch + 2 * pcie);
}

// The offload that nothing reads back still ends the run.
TEST(Engine, TheRunEndsWhenItsLastOffloadDoes) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto offload = Parse(R"(HloModule offload
ENTRY e {
  act = f32[4096,4096]{1,0} parameter(0)
  ROOT h = f32[4096,4096]{1,0} custom-call(act), custom_call_target="MoveToHost"
})");
  ASSERT_NE(offload, nullptr);
  auto r = SimulateModule(*offload, v5e, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const int64_t bytes = 4096LL * 4096 * 4;
  EXPECT_EQ(r->cycles, v5e.overhead.program_launch.value() + v5e.overhead.dma_start.value() +
                           (bytes * v5e.clock.value() + v5e.pcie.bandwidth.value() - 1) /
                               v5e.pcie.bandwidth.value());
}

// A kernel bound by its MXUs needs HBM for under half its time: the copy in
// flight takes what it leaves and does not slow it.
TEST(Engine, ACopyInFlightDoesNotSlowAKernelThatNeedsLittleHbm) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto both = Parse(R"(HloModule both, is_scheduled=true
ENTRY e {
  big = f32[1024,1024]{1,0} parameter(0)
  x = bf16[4096,4096]{1,0} parameter(1)
  cs = (f32[1024,1024]{1,0}, f32[1024,1024]{1,0}, u32[]) copy-start(big)
  d = bf16[4096,4096]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  cd = f32[1024,1024]{1,0} copy-done(cs)
  ROOT t = (bf16[4096,4096]{1,0}, f32[1024,1024]{1,0}) tuple(d, cd)
})");
  auto kernel = Parse(R"(HloModule kernel
ENTRY e {
  x = bf16[4096,4096]{1,0} parameter(0)
  ROOT d = bf16[4096,4096]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_NE(both, nullptr);
  ASSERT_NE(kernel, nullptr);
  const std::vector<SimulationJob> jobs = {{both.get(), &v5e, {}}, {kernel.get(), &v5e, {}}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const OpRecord& alone = (*r)[1].ops.at(0);
  ASSERT_EQ(alone.bound_by, BoundBy::kMxu);
  ASSERT_EQ((*r)[0].ops.size(), 3u);
  const OpRecord& start = (*r)[0].ops[0];
  const OpRecord& dot = (*r)[0].ops[1];
  EXPECT_EQ(dot.cycles, alone.cycles);
  EXPECT_EQ(dot.bound_by, BoundBy::kMxu);
  // The copy ran slower than alone (at the bandwidth the dot left), still
  // within the dot.
  const int64_t span = start.unit_cycles[Unit(chip::Unit::kDma)];
  const int64_t hbm = v5e.hbm.bandwidth.value() / 100 * v5e.hbm.efficiency_percent;
  const int64_t copy_alone =
      v5e.overhead.dma_start.value() + (2LL * 1024 * 1024 * 4 * v5e.clock.value() + hbm - 1) / hbm;
  EXPECT_GT(span, copy_alone);
  EXPECT_LT(span, dot.cycles);
}

/// Each instruction's runs and the cycles summed over them.
std::map<std::string, std::pair<int64_t, int64_t>> RunsAndCycles(const TimingResult& r) {
  std::map<std::string, std::pair<int64_t, int64_t>> totals;
  for (const OpRecord& op : r.ops) {
    totals[op.instruction->name()].first += op.runs;
    totals[op.instruction->name()].second += op.TotalCycles();
  }
  return totals;
}

// A loop fast-forwards only from an iteration that ended with the copies in
// flight as it started: here the copy started before the loop holds up the
// DMA queue, so the first iterations' copies wait behind it and take longer
// than the later ones. Fast-forwarded or simulated iteration by iteration, the
// cycles and every instruction's runs and cycles are the same, on a
// single-core chip and on a megacore one.
TEST(Engine, LoopsFastForwardWithTheCyclesOfEveryIterationSimulated) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  const arch::ChipConfig v4 = Preset("tpu-v4");
  auto module = Parse(R"(HloModule loop, is_scheduled=true
cond {
  p = (s32[], f32[512,512]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(40)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[512,512]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[512,512]{1,0} get-tuple-element(p), index=1
  cs = (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[]) copy-start(x)
  e = f32[512,512]{1,0} exponential(x)
  cd = f32[512,512]{1,0} copy-done(cs)
  y = f32[512,512]{1,0} add(e, cd)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[512,512]{1,0}) tuple(next, y)
}
ENTRY e {
  big = f32[4096,4096]{1,0} parameter(0)
  x = f32[512,512]{1,0} parameter(1)
  bs = (f32[4096,4096]{1,0}, f32[4096,4096]{1,0}, u32[]) copy-start(big)
  zero = s32[] constant(0)
  t = (s32[], f32[512,512]{1,0}) tuple(zero, x)
  w = (s32[], f32[512,512]{1,0}) while(t), condition=cond, body=body
  bd = f32[4096,4096]{1,0} copy-done(bs)
  ROOT r = f32[512,512]{1,0} get-tuple-element(w), index=1
})");
  ASSERT_NE(module, nullptr);
  TimingOptions every_iteration;
  every_iteration.fast_forward_loops = false;
  const std::vector<SimulationJob> jobs = {{module.get(), &v5e, {}},
                                           {module.get(), &v5e, every_iteration},
                                           {module.get(), &v4, {}},
                                           {module.get(), &v4, every_iteration}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (size_t chip = 0; chip < 2; ++chip) {
    const TimingResult& fast = (*r)[2 * chip];
    const TimingResult& slow = (*r)[2 * chip + 1];
    EXPECT_EQ(fast.cycles, slow.cycles) << fast.chip;
    EXPECT_EQ(fast.flops, slow.flops) << fast.chip;
    EXPECT_EQ(fast.hbm_bytes, slow.hbm_bytes) << fast.chip;
    EXPECT_EQ(RunsAndCycles(fast), RunsAndCycles(slow)) << fast.chip;
    EXPECT_EQ(RunsAndCycles(fast).at("cd").first, 40);
    // Iteration by iteration, the first copies wait behind the big one...
    std::vector<int64_t> waits;
    for (const OpRecord& op : slow.ops) {
      if (op.instruction->name() == "cd") waits.push_back(op.cycles);
    }
    ASSERT_EQ(waits.size(), 40u);
    EXPECT_GT(waits.front(), waits.back()) << fast.chip;
    // ... and the fast run simulated the iterations until one repeated, then
    // stood for the rest with one record per instruction.
    EXPECT_LT(fast.ops.size(), slow.ops.size()) << fast.chip;
    EXPECT_TRUE(std::any_of(fast.ops.begin(), fast.ops.end(),
                            [](const OpRecord& op) { return op.runs > 1; }))
        << fast.chip;
  }
}

// A loop that prefetches the next iteration's operand (its copy-start ends
// the body, still in flight when the next iteration starts) fast-forwards
// once an iteration ends with the copy as far ahead as it started with:
// the same cycles, runs and totals as simulating every iteration, from a
// handful of records.
TEST(Engine, ALoopWithAPrefetchInFlightFastForwards) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(R"(HloModule prefetch, is_scheduled=true
cond {
  p = (s32[], f32[512,512]{1,0}, (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(1000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[512,512]{1,0}, (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[512,512]{1,0} get-tuple-element(p), index=1
  prefetched = (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[]) get-tuple-element(p), index=2
  w = f32[512,512]{1,0} copy-done(prefetched)
  e = f32[512,512]{1,0} exponential(x)
  y = f32[512,512]{1,0} add(e, w)
  next_w = (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[]) copy-start(y)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[512,512]{1,0}, (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[])) tuple(next, y, next_w)
}
ENTRY e {
  x = f32[512,512]{1,0} parameter(0)
  first = (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[]) copy-start(x)
  zero = s32[] constant(0)
  t = (s32[], f32[512,512]{1,0}, (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[])) tuple(zero, x, first)
  w = (s32[], f32[512,512]{1,0}, (f32[512,512]{1,0}, f32[512,512]{1,0}, u32[])) while(t), condition=cond, body=body
  ROOT r = f32[512,512]{1,0} get-tuple-element(w), index=1
})");
  ASSERT_NE(module, nullptr);
  TimingOptions every_iteration;
  every_iteration.fast_forward_loops = false;
  const std::vector<SimulationJob> jobs = {{module.get(), &v5e, {}},
                                           {module.get(), &v5e, every_iteration}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TimingResult& fast = (*r)[0];
  const TimingResult& slow = (*r)[1];
  EXPECT_EQ(fast.cycles, slow.cycles);
  EXPECT_EQ(RunsAndCycles(fast), RunsAndCycles(slow));
  EXPECT_EQ(RunsAndCycles(fast).at("next_w").first, 1000);
  EXPECT_LT(fast.ops.size(), 50u);
  EXPECT_EQ(slow.ops.size(), 1u + 6 * 1000 + 1);
}

// A prefetch for the next iteration: the body's copy-done of its state's
// element 2 waits for the copy the previous iteration started as that
// element (the first iteration, for the one started before the loop), and
// a copy-done of the loop's result for the last iteration's.
TEST(Engine, ACopyDoneWaitsForTheCopyTheLoopStateCarries) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(R"(HloModule carried, is_scheduled=true
cond {
  p = (s32[], f32[8]{0}, (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]{0}, (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[])) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8]{0} get-tuple-element(p), index=1
  prefetched = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) get-tuple-element(p), index=2
  w = f32[2048,2048]{1,0} copy-done(prefetched)
  next_w = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) copy-start(w)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[8]{0}, (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[])) tuple(next, x, next_w)
}
ENTRY e {
  x = f32[8]{0} parameter(0)
  big = f32[2048,2048]{1,0} parameter(1)
  first = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) copy-start(big)
  zero = s32[] constant(0)
  t = (s32[], f32[8]{0}, (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[])) tuple(zero, x, first)
  loop = (s32[], f32[8]{0}, (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[])) while(t), condition=cond, body=body
  carried = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) get-tuple-element(loop), index=2
  ROOT last = f32[2048,2048]{1,0} copy-done(carried)
})");
  ASSERT_NE(module, nullptr);
  TimingOptions every_iteration;
  every_iteration.fast_forward_loops = false;
  const std::vector<SimulationJob> jobs = {{module.get(), &v5e, every_iteration}};
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Each copy-start, then the copy-done that waits for it.
  std::vector<const OpRecord*> starts, dones;
  for (const OpRecord& op : (*r)[0].ops) {
    const std::string opcode = op.instruction->OpcodeSpelling();
    if (opcode == "copy-start") starts.push_back(&op);
    if (opcode == "copy-done") dones.push_back(&op);
  }
  ASSERT_EQ(starts.size(), 4u);  // first, then one per iteration
  ASSERT_EQ(dones.size(), 4u);   // one per iteration, then last
  for (size_t k = 0; k < 4; ++k) {
    const int64_t copy_end =
        starts[k]->start_cycle + starts[k]->unit_cycles[Unit(chip::Unit::kDma)];
    EXPECT_GT(dones[k]->cycles, 0) << k;  // the copy outlasts the small kernels between
    EXPECT_EQ(dones[k]->start_cycle + dones[k]->cycles, copy_end) << k;
  }
}

// A copy started before a conditional and waited for in its branch, and one
// started at the end of the branch and waited for after it: each done waits
// for its own copy, whichever branch ran.
TEST(Engine, ACopyDoneWaitsForTheCopyAConditionalPassesInOrOut) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(R"(HloModule branchy, is_scheduled=true
on_true {
  p = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) parameter(0)
  w = f32[2048,2048]{1,0} copy-done(p)
  ROOT s = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) copy-start(w)
}
on_false {
  q = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) parameter(0)
  v = f32[2048,2048]{1,0} copy-done(q)
  ROOT u = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) copy-start(v)
}
ENTRY e {
  big = f32[2048,2048]{1,0} parameter(0)
  c = pred[] parameter(1)
  first = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) copy-start(big)
  r = (f32[2048,2048]{1,0}, f32[2048,2048]{1,0}, u32[]) conditional(c, first, first), true_computation=on_true, false_computation=on_false
  ROOT last = f32[2048,2048]{1,0} copy-done(r)
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, v5e, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->ops.size(), 4u);  // first, the branch's done and start, last
  for (size_t k : {0u, 2u}) {
    const OpRecord& start = r->ops[k];
    const OpRecord& done = r->ops[k + 1];
    ASSERT_EQ(start.instruction->OpcodeSpelling(), "copy-start") << k;
    ASSERT_EQ(done.instruction->OpcodeSpelling(), "copy-done") << k;
    EXPECT_GT(done.cycles, 0) << k;
    EXPECT_EQ(done.start_cycle + done.cycles,
              start.start_cycle + start.unit_cycles[Unit(chip::Unit::kDma)])
        << k;
  }
  EXPECT_EQ(r->cycles, r->ops[3].start_cycle + r->ops[3].cycles);
}

/// Times each of `options` on `module` on a v5e in one SystemC run.
StatusOr<std::vector<TimingResult>> TimeEach(const hlo::HloModule& module,
                                             const std::vector<TimingOptions>& options) {
  static const arch::ChipConfig v5e = Preset("tpu-v5e");
  std::vector<SimulationJob> jobs;
  for (const TimingOptions& o : options) jobs.push_back({&module, &v5e, o});
  return AllTimed(SimulateBatch(jobs));
}

TEST(Engine, EachExecutionOfAnInnerLoopRunsTheIterationsTheValuesRunSaw) {
  auto module = Parse(test::kTriangularLoop);
  ASSERT_NE(module, nullptr);
  const hlo::HloInstruction* inner = Named(*module, "inner");
  ASSERT_NE(inner, nullptr);
  // The inner loop runs 0, 1, 2 and 3 times, as a values run records it;
  // then 0, 1, 2 or 3 times at every execution.
  std::vector<TimingOptions> options(5);
  for (int64_t k = 0; k < 4; ++k) {
    options[0].trip_counts[inner].Append(k);
    options[k + 1].trip_counts[inner] = ExecutionSeries<int64_t>(k);
  }
  auto r = TimeEach(*module, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(RunsAndCycles((*r)[0]).at("square").first, 6);
  // Each outer iteration costs what it costs in the loop whose inner trip
  // count is always its own: the run is the mean of the four.
  int64_t cycles = 0;
  int64_t flops = 0;
  for (size_t k = 1; k < 5; ++k) {
    EXPECT_EQ(RunsAndCycles((*r)[k])["square"].first, 4 * static_cast<int64_t>(k - 1));
    cycles += (*r)[k].cycles;
    flops += (*r)[k].flops;
  }
  EXPECT_GT((*r)[0].cycles, (*r)[1].cycles);
  EXPECT_EQ(4 * (*r)[0].cycles, cycles);
  EXPECT_EQ(4 * (*r)[0].flops, flops);
}

/// Two layers of a mixture of experts in a loop: the tokens go through the
/// experts their router picked (`sizes`, the same operand in both layers
/// here; a values run records each layer's own groups).
constexpr char kExpertLayers[] = R"(HloModule layers
cond {
  p = (s32[], bf16[1024,512]{1,0}, bf16[4,512,512]{2,1,0}, s32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], bf16[1024,512]{1,0}, bf16[4,512,512]{2,1,0}, s32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = bf16[1024,512]{1,0} get-tuple-element(p), index=1
  experts = bf16[4,512,512]{2,1,0} get-tuple-element(p), index=2
  sizes = s32[4]{0} get-tuple-element(p), index=3
  moe = bf16[1024,512]{1,0} ragged-dot(x, experts, sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], bf16[1024,512]{1,0}, bf16[4,512,512]{2,1,0}, s32[4]{0}) tuple(next, moe, experts, sizes)
}
ENTRY e {
  x = bf16[1024,512]{1,0} parameter(0)
  experts = bf16[4,512,512]{2,1,0} parameter(1)
  sizes = s32[4]{0} parameter(2)
  zero = s32[] constant(0)
  t = (s32[], bf16[1024,512]{1,0}, bf16[4,512,512]{2,1,0}, s32[4]{0}) tuple(zero, x, experts, sizes)
  ROOT w = (s32[], bf16[1024,512]{1,0}, bf16[4,512,512]{2,1,0}, s32[4]{0}) while(t), condition=cond, body=body
})";

TEST(Engine, ARaggedDotInALoopIsTimedWithTheGroupsOfEachExecution) {
  auto module = Parse(kExpertLayers);
  ASSERT_NE(module, nullptr);
  const hlo::HloInstruction* moe = Named(*module, "moe");
  const std::vector<int64_t> one_expert = {128, 0, 0, 0};
  const std::vector<int64_t> all_experts = {256, 256, 256, 256};
  std::vector<TimingOptions> options(3);
  options[0].ragged_group_shares[moe].Append(one_expert);
  options[0].ragged_group_shares[moe].Append(all_experts);
  options[1].ragged_group_shares[moe] = ExecutionSeries(one_expert);
  options[2].ragged_group_shares[moe] = ExecutionSeries(all_experts);
  auto r = TimeEach(*module, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto light = RunsAndCycles((*r)[1]).at("moe");
  const auto heavy = RunsAndCycles((*r)[2]).at("moe");
  const auto layers = RunsAndCycles((*r)[0]).at("moe");
  EXPECT_LT(light.second, heavy.second);
  EXPECT_EQ(2 * layers.second, light.second + heavy.second);
  EXPECT_EQ(2 * (*r)[0].cycles, (*r)[1].cycles + (*r)[2].cycles);
  int64_t moe_flops = 0;
  for (const OpRecord& op : (*r)[0].ops) {
    if (op.instruction == moe) moe_flops += op.TotalFlops();
  }
  EXPECT_EQ(moe_flops, 2LL * (128 + 1024) * 512 * 512);  // one expert's rows, then all
}

TEST(Engine, EachExecutionOfAConditionalRunsTheBranchTheValuesRunSaw) {
  auto module = Parse(test::kAlternatingBranch);
  ASSERT_NE(module, nullptr);
  const hlo::HloInstruction* c = Named(*module, "c");
  ASSERT_NE(c, nullptr);
  // Branches 0, 1, 0, 1 as a values run records them; then always the
  // square, and always the root.
  std::vector<TimingOptions> options(3);
  for (int64_t k = 0; k < 4; ++k) options[0].branches[c].Append(k % 2);
  options[1].conditional_branch = 0;
  options[2].branches[c] = ExecutionSeries<int64_t>(1);
  auto r = TimeEach(*module, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const auto alternating = RunsAndCycles((*r)[0]);
  const auto squares = RunsAndCycles((*r)[1]);
  const auto roots = RunsAndCycles((*r)[2]);
  EXPECT_EQ(alternating.at("square").first, 2);
  EXPECT_EQ(alternating.at("root").first, 2);
  EXPECT_EQ(squares.at("square").first, 4);
  EXPECT_EQ(squares.count("root"), 0u);
  EXPECT_EQ(roots.at("root").first, 4);
  EXPECT_EQ(roots.count("square"), 0u);
  // Each iteration costs what its branch costs: the run is the mean of the
  // two that always take one.
  EXPECT_NE((*r)[1].cycles, (*r)[2].cycles);
  EXPECT_EQ(2 * (*r)[0].cycles, (*r)[1].cycles + (*r)[2].cycles);
  EXPECT_EQ(2 * (*r)[0].flops, (*r)[1].flops + (*r)[2].flops);
}

/// A loop of two billion iterations of one add (and the loop test).
constexpr char kLongLoop[] = R"(HloModule m
cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2000000000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[8] get-tuple-element(p), index=1
  ROOT t = (s32[], f32[8]) tuple(next, x)
}
ENTRY e {
  zero = s32[] constant(0)
  x = f32[8] parameter(0)
  t = (s32[], f32[8]) tuple(zero, x)
  ROOT w = (s32[], f32[8]) while(t), condition=cond, body=body
})";

TEST(Engine, TwoBillionIterationsFastForwardAfterTheFirst) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(kLongLoop);
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, v5e, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  // One iteration simulated (lt, next), its copies for the rest, the last test.
  ASSERT_EQ(r->ops.size(), 5u);
  const std::map<std::string, std::pair<int64_t, int64_t>> totals = RunsAndCycles(*r);
  EXPECT_EQ(totals.at("next").first, 2'000'000'000);
  EXPECT_EQ(totals.at("lt").first, 2'000'000'001);
  EXPECT_EQ(r->cycles, v5e.overhead.program_launch.value() + totals.at("next").second +
                           totals.at("lt").second);
}

// A loop simulated iteration by iteration stops at the cap on instructions
// simulated one by one, named with how far it got and what to change.
TEST(Engine, TheCapOnSimulatedInstructionsNamesTheLoopAndHowFarItGot) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(kLongLoop);
  ASSERT_NE(module, nullptr);
  TimingOptions options;
  options.fast_forward_loops = false;
  options.max_executed_instructions = 1000;
  options.raise_executed_instructions = "raise it with the caller's flag";
  auto r = SimulateModule(*module, v5e, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(),
            "test.hlo:20:3: error: w: simulating this loop iteration by iteration reached the "
            "limit of 1000 executed instructions after 500 of its 2000000000 iterations "
            "(iterations that meet other devices, leave copies in flight or cost otherwise than "
            "the one before are not fast-forwarded); raise it with the caller's flag or lower "
            "its trip count");
}

// One SystemC run for a batch: a job stopped by its input (before the run)
// or by the cap (during it) has its own error, and the job between them is
// timed.
TEST(Engine, ABatchGivesEachJobItsOwnResultOrError) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto loop = Parse(kLongLoop);
  auto small = Parse(R"(HloModule small
ENTRY e {
  p = f32[1024]{0} parameter(0)
  ROOT n = f32[1024]{0} negate(p)
})");
  ASSERT_NE(loop, nullptr);
  ASSERT_NE(small, nullptr);
  TimingOptions capped;
  capped.fast_forward_loops = false;
  capped.max_executed_instructions = 1000;
  TimingOptions slowed;
  slowed.device_slowdown[3] = 2;
  const std::vector<SimulationJob> jobs = {
      {small.get(), &v5e, slowed}, {small.get(), &v5e, {}}, {loop.get(), &v5e, capped}};
  const std::vector<StatusOr<TimingResult>> r = SimulateBatch(jobs);
  ASSERT_EQ(r.size(), 3u);
  ASSERT_FALSE(r[0].ok());
  EXPECT_EQ(r[0].status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r[0].status().message(),
            "test.hlo: error: slowdown of device 3: needs a device below 1 and a factor of at "
            "least 1");
  ASSERT_TRUE(r[1].ok()) << r[1].status().message();
  ASSERT_EQ(r[1]->ops.size(), 1u);
  EXPECT_EQ(r[1]->cycles, v5e.overhead.program_launch.value() + r[1]->ops[0].TotalCycles());
  ASSERT_FALSE(r[2].ok());
  EXPECT_EQ(r[2].status().code(), StatusCode::kResourceExhausted);
  // The process's one run is used up: a second batch times nothing.
  const std::vector<StatusOr<TimingResult>> again = SimulateBatch(std::span(jobs).subspan(1, 1));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].status().code(), StatusCode::kFailedPrecondition);
}

TEST(Engine, MegacoreRunsBothTensorCoresInStep) {
  const arch::ChipConfig v4 = Preset("tpu-v4");
  auto module = Parse(R"(HloModule mc
ENTRY e {
  a = bf16[8192,8192]{1,0} parameter(0)
  d = bf16[8192,8192]{1,0} dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = bf16[8192,8192]{1,0} negate(d)
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, v4, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->tensorcores, 2);
  ASSERT_EQ(r->ops.size(), 2u);
  // Half of 64 x 64 tiles per core over 4 MXUs, 8192 rows each, + fill/drain.
  EXPECT_EQ(r->ops[0].unit_cycles[Unit(chip::Unit::kMxu)], 64 * 32 / 4 * 8192 + 256);
  const int64_t launch = v4.overhead.program_launch.value();
  EXPECT_EQ(r->ops[1].start_cycle, launch + r->ops[0].cycles);
  EXPECT_EQ(r->cycles, launch + r->ops[0].cycles + r->ops[1].cycles);
}

TEST(Engine, RunsOncePerProcess) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module =
      Parse("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(SimulateModule(*module, v5e, {}).ok());
  auto again = SimulateModule(*module, v5e, {});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
}

TEST(Engine, InputErrorsDoNotUseUpTheRun) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto bad = Parse(R"(HloModule m
ENTRY e {
  a = f32[8,8] parameter(0)
  ROOT d = f32[8,8] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_f64_f64_f64
})");
  auto good =
      Parse("HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  ROOT n = f32[8] negate(p)\n}\n");
  ASSERT_NE(bad, nullptr);
  ASSERT_NE(good, nullptr);
  auto failed = SimulateModule(*bad, v5e, {});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("test.hlo:4:3"), std::string::npos);
  EXPECT_TRUE(SimulateModule(*good, v5e, {}).ok());
}


TEST(Engine, ARunPastTheHorizonIsRefusedNamingTheInstruction) {
  // 512 MiB through HBM at 1 byte per second: about 5e17 cycles, past 2^53,
  // where SystemC's picoseconds would wrap and the double would round.
  const arch::ChipConfig crawling = Preset("tpu-v5e", {"hbm.bandwidth=1B/s"});
  auto module = Parse(R"(HloModule m
ENTRY e {
  p = f32[134217728] parameter(0)
  ROOT n = f32[134217728] negate(p)
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, crawling, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("test.hlo:4:3: error: n takes "), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("horizon of 2^53 cycles"), std::string::npos);
}
TEST(Report, JsonTraceAndTableDescribeTheRun) {
  const arch::ChipConfig v5e = Preset("tpu-v5e");
  auto module = Parse(R"(HloModule report
ENTRY e {
  a = bf16[1024,1024]{1,0} parameter(0)
  d = bf16[1024,1024]{1,0} dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT e = bf16[1024,1024]{1,0} exponential(d)
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, v5e, {});
  ASSERT_TRUE(r.ok()) << r.status().message();

  const nlohmann::json j = nlohmann::json::parse(TimingJson(*r));
  EXPECT_EQ(j["chip"], "tpu-v5e");
  EXPECT_EQ(j["cycles"], r->cycles);
  EXPECT_DOUBLE_EQ(j["time_us"].get<double>(), r->time_us);
  EXPECT_EQ(j["flops"], 2LL * 1024 * 1024 * 1024 + 1024 * 1024);
  EXPECT_EQ(j["hbm_bytes"], r->hbm_bytes);
  ASSERT_EQ(j["ops"].size(), 2u);
  EXPECT_EQ(j["ops"][0]["name"], "d");
  EXPECT_EQ(j["ops"][0]["opcode"], "dot");
  EXPECT_EQ(j["ops"][0]["bound_by"], "MXU");
  EXPECT_EQ(j["ops"][1]["start_cycle"], v5e.overhead.program_launch.value() + r->ops[0].cycles);
  // The fixed part of the dot: its start-up and its pipeline's exposed ends.
  EXPECT_EQ(j["ops"][0]["overhead_cycles"], r->ops[0].overhead_cycles);
  EXPECT_GT(r->ops[0].overhead_cycles, v5e.overhead.kernel_start.value());
  EXPECT_LT(r->ops[0].overhead_cycles, r->ops[0].cycles);
  for (const char* key : {"start_cycle", "cycles", "flops", "hbm_bytes"})
    EXPECT_TRUE(j["ops"][1].contains(key));

  const nlohmann::json t = nlohmann::json::parse(TimingTraceJson(*r));
  int unit_tracks = 0;
  int mxu_slices = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["tid"] != 0) ++unit_tracks;
    if (e["ph"] == "X" && e["tid"] == 1 + Unit(chip::Unit::kMxu)) ++mxu_slices;
  }
  EXPECT_EQ(unit_tracks, chip::kUnitCount);
  EXPECT_EQ(mxu_slices, 1);

  const std::string table = FormatOpTable(*r);
  EXPECT_NE(table.find("bound by"), std::string::npos);
  EXPECT_NE(table.find("MXU"), std::string::npos);
  EXPECT_LT(table.find("\nd "), table.find("\ne "));  // the dot takes longer: listed first
}

TEST(Report, TableRowsAreInstructionsAndNameTheirComputationWhenNamesRepeat) {
  // `r` is a negate in the entry and an add in the called computation: two
  // rows of their own opcodes, each saying whose it is. `n` is unique.
  auto module = Parse(R"(HloModule twice
inner {
  x = f32[1024]{0} parameter(0)
  ROOT r = f32[1024]{0} add(x, x)
}
ENTRY e {
  a = f32[1024]{0} parameter(0)
  c = f32[1024]{0} call(a), to_apply=inner
  n = f32[1024]{0} exponential(c)
  ROOT r = f32[1024]{0} negate(n)
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, Preset("tpu-v5e"), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string table = FormatOpTable(*r);
  EXPECT_NE(table.find("\ninner/r "), std::string::npos) << table;
  EXPECT_NE(table.find("\ne/r "), std::string::npos) << table;
  EXPECT_NE(table.find("\nn "), std::string::npos) << table;
  const size_t add = table.find("\ninner/r ");
  EXPECT_NE(table.substr(add, table.find('\n', add + 1) - add).find(" add "), std::string::npos);
}

TEST(Report, CustomCallsWithoutACostEstimateAreNamed) {
  // `k` states its cost; `opaque` and `mine` do not, and say so.
  auto module = Parse(R"(HloModule kernels
ENTRY e {
  a = f32[1024]{0} parameter(0)
  k = f32[1024]{0} custom-call(a), custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"cost_estimate": {"flops": "4096", "bytes_accessed": "8192"}}}
  opaque = f32[1024]{0} custom-call(k), custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"body": ""}}
  ROOT mine = f32[1024]{0} custom-call(opaque), custom_call_target="my_kernel"
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, Preset("tpu-v5e"), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_THAT(FormatOpTable(*r),
              HasSubstr("\nnote: 2 custom calls without a cost estimate, timed by the bytes read "
                        "and written only: opaque (tpu_custom_call), mine (my_kernel)\n"));
  const nlohmann::json j = nlohmann::json::parse(TimingJson(*r));
  EXPECT_EQ(j["unestimated_custom_calls"], nlohmann::json({"opaque", "mine"}));
  EXPECT_EQ(j["ops"][0]["flops"], 4096);
  EXPECT_EQ(j["ops"][0]["hbm_bytes"], 8192);
}

TEST(Report, TheDynamicPaddersCallsAreKernelsOverTheirArraysNotOpaqueCalls) {
  // PadToStatic and SliceToDynamic move a 4 KiB array between its dynamic
  // form and its bounds: read once and written once, the sizes beside it, as
  // any kernel's arrays (each s32[] size one 512-byte HBM access on v5e).
  auto module = Parse(R"(HloModule padder
ENTRY e {
  x = f32[8,128]{1,0} parameter(0)
  n = s32[] parameter(1)
  d = f32[<=8,128]{1,0} set-dimension-size(x, n), dimensions={0}
  p = (f32[8,128]{1,0}, s32[], s32[]) custom-call(d), custom_call_target="PadToStatic"
  data = f32[8,128]{1,0} get-tuple-element(p), index=0
  rows = s32[] get-tuple-element(p), index=1
  cols = s32[] get-tuple-element(p), index=2
  ROOT back = f32[<=8,128]{1,0} custom-call(data, rows, cols), custom_call_target="SliceToDynamic"
})");
  ASSERT_NE(module, nullptr);
  auto r = SimulateModule(*module, Preset("tpu-v5e"), {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const nlohmann::json j = nlohmann::json::parse(TimingJson(*r));
  EXPECT_FALSE(j.contains("unestimated_custom_calls")) << j.dump();
  std::map<std::string, int64_t> hbm_bytes;
  for (const nlohmann::json& op : j["ops"]) hbm_bytes[op["name"]] = op["hbm_bytes"];
  EXPECT_EQ(hbm_bytes["p"], 4096 + 4096 + 2 * 512);
  EXPECT_EQ(hbm_bytes["back"], 4096 + 2 * 512 + 4096);
}

/// The types an elementwise op is built with in ElementwiseModule when they
/// are not f32 throughout: integer ops, ops with a pred, complex or converted
/// result, select's predicate and stochastic-convert's random bits.
struct ElementwiseSignature {
  hlo::HloOpcode opcode;
  std::string_view in = "f32";
  std::string_view out = "f32";
  std::string_view attrs = "";
  std::vector<std::string> operands = {};  ///< empty: `in` for each operand
};

const std::vector<ElementwiseSignature>& NonF32Signatures() {
  using hlo::HloOpcode;
  static const std::vector<ElementwiseSignature> kSignatures = {
      {HloOpcode::kAnd, "s32", "s32"},
      {HloOpcode::kClz, "s32", "s32"},
      {HloOpcode::kNot, "s32", "s32"},
      {HloOpcode::kOr, "s32", "s32"},
      {HloOpcode::kPopulationCount, "s32", "s32"},
      {HloOpcode::kShiftLeft, "s32", "s32"},
      {HloOpcode::kShiftRightArithmetic, "s32", "s32"},
      {HloOpcode::kShiftRightLogical, "s32", "s32"},
      {HloOpcode::kXor, "s32", "s32"},
      {HloOpcode::kCompare, "f32", "pred", ", direction=LT"},
      {HloOpcode::kIsFinite, "f32", "pred"},
      {HloOpcode::kConvert, "f32", "s32"},
      {HloOpcode::kBitcastConvert, "f32", "s32"},
      {HloOpcode::kStochasticConvert, "f32", "bf16", "", {"f32", "u32"}},
      {HloOpcode::kSelect, "f32", "f32", "", {"pred", "f32", "f32"}},
      {HloOpcode::kComplex, "f32", "c64"},
      {HloOpcode::kReal, "c64", "f32"},
      {HloOpcode::kImag, "c64", "f32"},
      {HloOpcode::kReducePrecision, "f32", "f32", ", exponent_bits=5, mantissa_bits=10"},
  };
  return kSignatures;
}

/// A module whose root `r` is one `opcode` over [256,128] operands of types it
/// takes (opcode.def's elementwise ops).
std::string ElementwiseModule(hlo::HloOpcode opcode) {
  const std::string name(hlo::HloOpcodeName(opcode));
  ElementwiseSignature signature{opcode};
  for (const ElementwiseSignature& s : NonF32Signatures()) {
    if (s.opcode == opcode) signature = s;
  }
  const std::string in(signature.in), out(signature.out), attrs(signature.attrs);
  std::vector<std::string> operands = signature.operands;
  if (operands.empty()) operands.assign(static_cast<size_t>(hlo::HloOpcodeArity(opcode)), "f32");
  std::string text = "HloModule m\nENTRY e {\n", args;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string type = operands[i] == "f32" ? in : operands[i];
    text += "  p" + std::to_string(i) + " = " + type + "[256,128] parameter(" + std::to_string(i) +
            ")\n";
    args += (i ? ", p" : "p") + std::to_string(i);
  }
  return text + "  ROOT r = " + out + "[256,128] " + name + "(" + args + ")" + attrs + "\n}\n";
}

// Every elementwise opcode of opcode.def costs VPU work and counts one FLOP
// per element: exponential-minus-one and log-plus-one once cost nothing,
// missing from timing's own list of elementwise ops.
TEST(Engine, EveryElementwiseOpcodeCostsVectorWorkAndFlops) {
  const arch::ChipConfig v5e = IdealPreset("tpu-v5e");
  std::vector<std::unique_ptr<hlo::HloModule>> modules;
  std::vector<std::string> names;
  std::vector<SimulationJob> jobs;
  for (int i = 0; i < hlo::kHloOpcodeCount; ++i) {
    const auto opcode = static_cast<hlo::HloOpcode>(i);
    if (!hlo::IsElementwise(opcode)) continue;
    modules.push_back(Parse(ElementwiseModule(opcode)));
    ASSERT_NE(modules.back(), nullptr) << ElementwiseModule(opcode);
    names.emplace_back(hlo::HloOpcodeName(opcode));
    jobs.push_back({modules.back().get(), &v5e, {}});
  }
  EXPECT_GE(jobs.size(), 55u);
  auto r = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (size_t j = 0; j < jobs.size(); ++j) {
    const OpRecord& op = Op((*r)[j].ops, "r");
    EXPECT_EQ(op.flops, 256 * 128) << names[j];
    EXPECT_GT(op.unit_cycles[Unit(chip::Unit::kVpu)], 0) << names[j];
  }
  // The cost classes differ: an exp's element costs more than an add's.
  const auto vpu = [&](const std::string& name) {
    for (size_t j = 0; j < names.size(); ++j) {
      if (names[j] == name) return Op((*r)[j].ops, "r").unit_cycles[Unit(chip::Unit::kVpu)];
    }
    return int64_t{-1};
  };
  EXPECT_GT(vpu("exponential-minus-one"), vpu("add"));
  EXPECT_EQ(vpu("exponential-minus-one"), vpu("exponential"));
  EXPECT_GT(vpu("sine"), vpu("exponential"));
}

}  // namespace
}  // namespace tpusim::timing
