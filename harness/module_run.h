// Running one module as `tpusim exec` does, without printing: the values of
// every device and/or its timing on a chip. `tpusim exec` prints and writes
// what this returns; `tpusim run` checks it against a scenario's goldens.
#ifndef TPUSIM_HARNESS_MODULE_RUN_H_
#define TPUSIM_HARNESS_MODULE_RUN_H_

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "sim/arch/chip_config.h"
#include "sim/eval/evaluator.h"
#include "sim/timing/timing.h"
#include "sim/value/literal.h"

namespace tpusim::harness {

/// What one run of a module produced.
struct ModuleRun {
  std::vector<value::Literal> results;  ///< one result per device; empty in timing mode
  /// Loop trip counts and branches the values run saw on device 0.
  eval::ControlFlowRecord control_flow;
  std::optional<timing::TimingResult> timing;  ///< set unless the mode is values
};

/// `options.mode`, or its default: full with a chip, else values.
std::string ExecMode(const ExecOptions& options);

/// Runs `module` as `options` say (mode, inputs, numerics, memory limit,
/// elided constants, trip counts, branch) on the devices of `spmd`, timing it
/// on `chip` unless the mode is values. Warnings go to `err`. Errors are
/// input errors (bad inputs, unsupported operations, over the memory limit).
/// Times at most once per process (SystemC).
StatusOr<ModuleRun> RunModule(const ExecOptions& options, const hlo::HloModule& module,
                              const eval::SpmdConfig& spmd,
                              const std::optional<arch::ChipConfig>& chip, std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_MODULE_RUN_H_
