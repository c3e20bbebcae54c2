// A module lowered for one chip: the flat sequence of instructions each
// TensorCore issues (loops unrolled to their trip counts, the chosen branch
// of each conditional, calls inlined), each with its cost.
#ifndef TPUSIM_SIM_TIMING_PROGRAM_H_
#define TPUSIM_SIM_TIMING_PROGRAM_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/base/status.h"
#include "sim/hlo/module.h"
#include "sim/timing/kernel_cost.h"
#include "sim/timing/timing.h"

namespace tpusim::timing {

/// One issued instruction.
struct Step {
  const hlo::HloInstruction* inst = nullptr;
  const KernelCost* cost = nullptr;  ///< owned by the Program, shared by every iteration
  int64_t async_id = -1;             ///< start: its id; done: the id it waits for (-1: none)
};

struct Program {
  std::vector<Step> steps;
  /// Cost of each instruction by unique id, computed once.
  std::vector<std::optional<KernelCost>> costs;
  int64_t async_count = 0;  ///< ids handed out to async starts
  int64_t cores = 1;        ///< TensorCores issuing the sequence
};

/// Lowers the entry computation of `module` for `chip`. Errors name the
/// instruction with FILE:LINE:COL.
StatusOr<Program> LowerModule(const hlo::HloModule& module, const arch::ChipConfig& chip,
                              const TimingOptions& options);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_PROGRAM_H_
