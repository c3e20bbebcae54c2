// Running a module's values the way the CLI does: inputs from a seed or a
// directory, a memory limit checked before allocating, elided constants,
// every SPMD device. Shared by `tpusim exec` and `tpusim diff`.
#ifndef TPUSIM_HARNESS_MODULE_RUN_H_
#define TPUSIM_HARNESS_MODULE_RUN_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/eval/evaluator.h"
#include "sim/hlo/module.h"
#include "sim/value/literal.h"

namespace tpusim::harness {

/// How to evaluate a module; the strings are the CLI's option values.
struct EvaluationOptions {
  std::string command = "tpusim exec";  ///< prefix of error messages
  std::string inputs = "seed:0";        ///< "seed:N" or a directory of param_<N>.npy
  std::string numerics = "tpu";         ///< "tpu" or "ieee"
  std::string max_memory;               ///< a byte count ("8GiB"); empty: half the physical RAM
  std::string elided_constants = "seeded";  ///< "seeded" or "error"
};

/// What evaluating a module gave.
struct Evaluation {
  std::vector<value::Literal> results;  ///< one result per device
  /// Loop trip counts and conditional branches device 0 saw, for timing.
  eval::ControlFlowRecord control_flow;
};

/// Checks the option strings (inputs, max_memory) without running anything.
Status CheckEvaluationOptions(const EvaluationOptions& options);

/// The entry parameters of every device of `spmd` (outer index: device),
/// drawn from the seed or read from the directory of `options.inputs`.
/// Refuses first, before allocating, a module whose run would exceed the
/// memory limit (kResourceExhausted).
StatusOr<std::vector<std::vector<value::Literal>>> LoadInputs(const hlo::HloModule& module,
                                                              const eval::SpmdConfig& spmd,
                                                              const EvaluationOptions& options);

/// Evaluates `module` on every device of `spmd` with `inputs` (from
/// LoadInputs, possibly of another module with the same parameters). Checks
/// the memory limit, and warns on `err` about elided constants filled with
/// seeded values. Every failure is an input error.
StatusOr<Evaluation> EvaluateModule(const hlo::HloModule& module, const eval::SpmdConfig& spmd,
                                    const EvaluationOptions& options,
                                    std::vector<std::vector<value::Literal>> inputs,
                                    std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_MODULE_RUN_H_
