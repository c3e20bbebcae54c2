// A module lowered for one chip: the sequence of instructions each
// TensorCore issues (the chosen branch of each conditional, calls inlined),
// each with its cost. A while loop's condition and body are lowered once,
// between a loop-begin and a loop-end step that carry its trip count; the
// engine runs the iterations (docs/models.md, "Loops").
#ifndef TPUSIM_SIM_TIMING_PROGRAM_H_
#define TPUSIM_SIM_TIMING_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sim/arch/chip_config.h"
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
};

/// One issued instruction, or where a loop's iterations begin or end.
struct Step {
  StepRole role = StepRole::kInstruction;
  /// The instruction; for loop steps, the while.
  const hlo::HloInstruction* inst = nullptr;
  /// Owned by the Program, shared by every iteration; nullptr for loop steps.
  const KernelCost* cost = nullptr;
  int64_t async_id = -1;  ///< start: its id; done: the id it waits for (-1: none)
  int64_t trips = 0;      ///< loop steps: the loop's trip count (at least 1)
  /// Loop steps: the index of the other end of the loop (begin <-> end).
  size_t partner = 0;
};

struct Program {
  std::vector<Step> steps;
  /// Cost of each instruction by unique id, computed once.
  std::vector<std::optional<KernelCost>> costs;
  /// Costs that differ on some devices, by device number and then unique id:
  /// the kernels holding a ragged-dot whose groups that device filled
  /// otherwise than device 0 (TimingOptions::device_ragged_group_shares).
  std::map<int64_t, std::map<int64_t, KernelCost>> device_costs;
  int64_t async_count = 0;  ///< ids handed out to async starts
  int64_t cores = 1;        ///< TensorCores issuing the sequence

  /// What instruction step `step` costs on `device`.
  const KernelCost& CostOn(const Step& step, int64_t device) const;
};

/// Lowers the entry computation of `module` for `chip`. Errors name the
/// instruction with FILE:LINE:COL.
StatusOr<Program> LowerModule(const hlo::HloModule& module, const arch::ChipConfig& chip,
                              const TimingOptions& options);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_PROGRAM_H_
