// A module lowered for one chip: the sequence of instructions each
// TensorCore issues (calls inlined), each with its cost. A while loop's
// condition and body are lowered once, between a loop-begin and a loop-end
// step that name its trip counts; a conditional's branches that some
// execution takes are lowered one after the other, behind a branch step that
// names which one each execution takes. The engine runs the iterations and
// follows the branches (docs/models.md, "Loops").
#ifndef TPUSIM_SIM_TIMING_PROGRAM_H_
#define TPUSIM_SIM_TIMING_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/base/execution_series.h"
#include "sim/base/status.h"
#include "sim/hlo/module.h"
#include "sim/timing/kernel_cost.h"
#include "sim/timing/timing.h"

namespace tpusim::timing {

/// What a step of the sequence is.
enum class StepRole : uint8_t {
  kInstruction,  ///< an issued instruction
  kLoopBegin,    ///< a while loop's first iteration starts at the next step
  kLoopEnd,      ///< an iteration of the loop ends here
  kBranch,       ///< a conditional: the chosen branch's steps run next
  kBranchEnd,    ///< a branch's steps end here; the conditional's last step follows
};

/// One issued instruction, where a loop's iterations begin or end, or where a
/// conditional's branches begin or end.
struct Step {
  StepRole role = StepRole::kInstruction;
  /// The instruction; for loop steps, the while; for branch steps, the
  /// conditional.
  const hlo::HloInstruction* inst = nullptr;
  /// Owned by the Program: the instruction's cost on device 0 at its first
  /// execution, and at every execution unless Program::varying_costs says
  /// otherwise; nullptr for loop and branch steps.
  const KernelCost* cost = nullptr;
  int64_t async_id = -1;  ///< start: its id; done: the id it waits for (-1: none)
  /// Loop steps: the loop's index into Program::loop_trips; branch steps:
  /// the conditional's index into Program::conditionals.
  size_t control = 0;
  /// Loop steps: the index of the other end of the loop (begin <-> end).
  /// Branch steps: the conditional's last step (its last branch's end).
  size_t partner = 0;
  /// Loop-begin steps: an instruction or inner loop in the body costs or
  /// iterates differently from one execution to the next, so an iteration
  /// does not stand for the ones after it.
  bool varies = false;
};

/// A loop's trip count or a conditional's branch at each execution: device
/// 0's, which every device runs unless it has its own.
struct DeviceSeries {
  ExecutionSeries<int64_t> device0;
  /// The devices whose values differ from device 0's, by device number.
  std::map<int64_t, ExecutionSeries<int64_t>> differing;

  const ExecutionSeries<int64_t>& On(int64_t device) const;
  /// True when on every device each execution takes the same value (which
  /// may differ from device to device).
  bool constant() const;
};

/// A conditional's lowered branches.
struct Conditional {
  /// The branch each execution takes, in range (an index past the last is
  /// the last, as XLA takes it).
  DeviceSeries taken;
  /// Index of the first step of each branch; SIZE_MAX for a branch that no
  /// execution takes, which is not lowered.
  std::vector<size_t> branch_begins;
};

struct Program {
  std::vector<Step> steps;
  /// Cost of each instruction by unique id, computed once.
  std::vector<std::optional<KernelCost>> costs;
  /// Each loop's trip count at each of its executions (an inner loop runs
  /// once per iteration of the loop around it), by Step::control.
  std::vector<DeviceSeries> loop_trips;
  /// Each conditional's branches, by Step::control.
  std::vector<Conditional> conditionals;
  /// Costs that change between executions or devices, by device number and
  /// then unique id: each execution's index into `costs_of_runs`. Device 0's
  /// entries are the kernels whose ragged-dot groups change from one
  /// execution to the next; another device's, the kernels whose groups that
  /// device filled otherwise than device 0
  /// (TimingOptions::device_ragged_group_shares). A device or kernel not
  /// listed runs device 0's costs.
  std::map<int64_t, std::map<int64_t, ExecutionSeries<size_t>>> varying_costs;
  /// The costs varying_costs points at.
  std::vector<KernelCost> costs_of_runs;
  int64_t async_count = 0;  ///< ids handed out to async starts
  int64_t cores = 1;        ///< TensorCores issuing the sequence

  /// What instruction step `step` costs on `device` at the instruction's
  /// `execution`-th run (counted from 0).
  const KernelCost& CostOn(const Step& step, int64_t device, int64_t execution) const;
};

/// Lowers the entry computation of `module` for `chip`. Errors name the
/// instruction with FILE:LINE:COL.
StatusOr<Program> LowerModule(const hlo::HloModule& module, const arch::ChipConfig& chip,
                              const TimingOptions& options);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_PROGRAM_H_
