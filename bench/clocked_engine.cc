#include "bench/clocked_engine.h"

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "sim/chip/core_cost.h"

namespace tpusim::bench {
namespace {

/// One unit: busy for a number of cycles, counted down on every rising edge.
class ClockedUnit : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk;
  int64_t remaining = 0;

  SC_HAS_PROCESS(ClockedUnit);
  explicit ClockedUnit(sc_core::sc_module_name name) : sc_core::sc_module(name), clk("clk") {
    SC_METHOD(Tick);
    sensitive << clk.pos();
    dont_initialize();
  }

 private:
  void Tick() {
    if (remaining > 0) --remaining;
  }
};

class ClockedCore : public sc_core::sc_module {
 public:
  sc_core::sc_in<bool> clk;

  SC_HAS_PROCESS(ClockedCore);
  ClockedCore(sc_core::sc_module_name name, const timing::Program& program,
              const chip::CoreCost& cost, int64_t* end, int64_t* running)
      : sc_core::sc_module(name),
        clk("clk"),
        program_(program),
        cost_(cost),
        end_(end),
        running_(running),
        done_at_(program.async_count, 0),
        over_pcie_(program.async_count, false) {
    for (int u = 0; u < chip::kUnitCount; ++u) {
      units_[u] = std::make_unique<ClockedUnit>(("unit" + std::to_string(u)).c_str());
      units_[u]->clk(clk);
    }
    SC_THREAD(Run);
  }

 private:
  void Tick() {
    sc_core::wait(clk.posedge_event());
    ++now_;
  }

  void Run() {
    const int dma = static_cast<int>(chip::Unit::kDma);
    // The host hands the device its program before the first kernel runs.
    while (now_ < cost_.program_launch()) Tick();
    // Every iteration of every loop, none fast-forwarded: the reference.
    std::vector<std::pair<size_t, int64_t>> loops;  // (begin step, iterations left)
    std::vector<int64_t> loop_runs(program_.loop_trips.size(), 0);
    std::vector<int64_t> conditional_runs(program_.conditionals.size(), 0);
    const std::vector<timing::Step>& steps = program_.steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      const timing::Step& step = steps[i];
      if (step.role == timing::StepRole::kBranch) {
        const timing::Conditional& conditional = program_.conditionals[step.control];
        i = conditional
                .branch_begins[conditional.taken.device0.At(conditional_runs[step.control]++)] -
            1;
        continue;
      }
      if (step.role == timing::StepRole::kBranchEnd) {
        i = step.partner;
        continue;
      }
      if (step.role == timing::StepRole::kLoopBegin) {
        const int64_t trips =
            program_.loop_trips[step.control].device0.At(loop_runs[step.control]++);
        if (trips > 0) {
          loops.emplace_back(i, trips);
        } else {
          i = step.partner;
        }
        continue;
      }
      if (step.role == timing::StepRole::kLoopEnd) {
        if (--loops.back().second > 0) {
          i = loops.back().first;
        } else {
          loops.pop_back();
        }
        continue;
      }
      const timing::KernelCost& c = *step.cost;
      if (c.kind == timing::StepKind::kKernel) {
        // As the TLM engine: the per-block pipeline steps hold up every unit
        // but HBM; the start-up and the pipeline's edges come on top.
        const int64_t pipeline_steps = cost_.PipelineStepCycles(c.per_core);
        int64_t longest = 0;
        for (int u = 0; u < chip::kUnitCount; ++u) {
          const chip::Unit unit = static_cast<chip::Unit>(u);
          const int64_t busy = cost_.UnitBusy(unit, c.per_core);
          // The kernel's own transfer to or from host memory streams, as
          // HBM, behind the copies already on PCIe.
          if (u == dma) {
            if (cost_.dma().OverPcie(c.per_core.host_bytes)) {
              const int64_t end = pcie_.EndOf(now_, busy, c.pcie_to_host);
              pcie_.Take(end, c.pcie_to_host);
              longest = std::max(longest, end - now_);
            } else {
              longest = std::max(longest, busy);
            }
            continue;
          }
          units_[u]->remaining = unit == chip::Unit::kHbm ? busy : busy + pipeline_steps;
          longest = std::max(longest, units_[u]->remaining);
        }
        // Copies in flight share HBM with the kernel, as in the TLM engine.
        const chip::HbmSharing sharing(
            now_, longest + cost_.kernel_start() + cost_.PipelineEdgeCycles(c.per_core),
            cost_.UnitBusy(chip::Unit::kHbm, c.per_core), dma_free_at_);
        for (size_t id = 0; id < done_at_.size(); ++id) {
          if (!over_pcie_[id]) done_at_[id] = sharing.CopyEnd(done_at_[id]);
        }
        dma_free_at_ = sharing.CopyEnd(dma_free_at_);
        units_[dma]->remaining = std::max<int64_t>(0, DmaFreeAt() - now_);
        const int64_t end = now_ + sharing.KernelCycles();
        while (now_ < end) Tick();
      } else if (c.kind == timing::StepKind::kAsyncStart) {
        // The DMA queue (host memory copies: its PCIe side): this copy
        // starts when the previous one drains.
        const bool over_pcie = cost_.dma().OverPcie(c.per_core.host_bytes);
        const int64_t busy = cost_.UnitBusy(chip::Unit::kDma, c.per_core);
        int64_t done = 0;
        if (over_pcie) {
          done = pcie_.EndOf(now_, busy, c.pcie_to_host);
          pcie_.Take(done, c.pcie_to_host);
        } else {
          done = dma_free_at_ = std::max(now_, dma_free_at_) + busy;
        }
        units_[dma]->remaining = DmaFreeAt() - now_;
        done_at_[step.async_id] = done;
        over_pcie_[step.async_id] = over_pcie;
      } else if (c.kind == timing::StepKind::kAsyncDone && step.async_id >= 0) {
        while (now_ < done_at_[step.async_id]) Tick();
      }
    }
    for (int64_t d : done_at_) {
      while (now_ < d) Tick();
    }
    *end_ = now_;
    if (--*running_ == 0) sc_core::sc_stop();  // the clock would tick forever
  }

  /// When the DMA engine's last queued copy ends, over HBM or PCIe.
  int64_t DmaFreeAt() const {
    return std::max({dma_free_at_, pcie_.to_host_idle_at(), pcie_.from_host_idle_at()});
  }

  const timing::Program& program_;
  const chip::CoreCost& cost_;
  int64_t* end_;
  int64_t* running_;  ///< cores still issuing
  std::array<std::unique_ptr<ClockedUnit>, chip::kUnitCount> units_;
  std::vector<int64_t> done_at_;
  int64_t now_ = 0;
  int64_t dma_free_at_ = 0;
  chip::PcieQueues pcie_;
  std::vector<bool> over_pcie_;  ///< by async id: its last copy went over PCIe
};

}  // namespace

std::vector<int64_t> RunClocked(const std::vector<timing::Program>& programs,
                                const arch::ChipConfig& chip) {
  chip::CoreCost cost(chip);
  sc_core::sc_clock clock("clock", 1, sc_core::SC_NS);
  std::vector<int64_t> ends(programs.size(), 0);
  int64_t running = static_cast<int64_t>(programs.size());
  std::vector<std::unique_ptr<ClockedCore>> cores;
  for (size_t i = 0; i < programs.size(); ++i) {
    cores.push_back(std::make_unique<ClockedCore>(("core" + std::to_string(i)).c_str(), programs[i],
                                                  cost, &ends[i], &running));
    cores.back()->clk(clock);
  }
  sc_core::sc_start();
  return ends;
}

}  // namespace tpusim::bench
