// Running a module the way the CLI does, without printing: inputs from a seed
// or a directory, a memory limit checked before allocating, elided constants,
// every SPMD device, and the timing on a chip. `tpusim exec` prints and writes
// what this returns, `tpusim run` checks it against a scenario's goldens, and
// `tpusim diff` feeds two modules the same inputs.
#ifndef TPUSIM_HARNESS_RUN_MODULE_RUN_H_
#define TPUSIM_HARNESS_RUN_MODULE_RUN_H_

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/run/run_spec.h"
#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/base/status.h"
#include "sim/eval/evaluator.h"
#include "sim/hlo/module.h"
#include "sim/timing/timing.h"
#include "sim/value/literal.h"

namespace tpusim::harness {

/// ParseHloModule, VerifyModule, then VerifyConstantsFit (float constants
/// within their types' range, as XLA's parser requires); `filename` appears
/// in error messages.
StatusOr<std::unique_ptr<hlo::HloModule>> ParseAndVerifyModule(std::string_view text,
                                                               std::string_view filename);

/// Why a run computes the values of only some of its devices, kept in two
/// parts because a verdict's headline names the devices without the reason.
struct DeviceSubset {
  std::string which;   ///< "values on 4 of 256 devices (0-3)"
  std::string reason;  ///< "all of them need about ..., more than --max-memory ...; ..."
  /// "WHICH: REASON", the first line of every report.
  std::string Note() const;
};

/// The devices `module` runs on: its header's replicas and partitions, grown
/// to cover the device ids its collectives name; or `replicas` and
/// `partitions` where given (exec's --replicas and --partitions), whose
/// program must then hold every id its collectives name. `file` names the
/// module in errors; at most hlo::kMaxSpmdDevices devices.
StatusOr<eval::SpmdConfig> ProgramDevices(const hlo::HloModule& module, std::string_view file,
                                          std::optional<int64_t> replicas,
                                          std::optional<int64_t> partitions);

/// The devices whose values a run computes.
struct EvaluatedDevices {
  int64_t device_count = 1;            ///< the program's devices
  std::vector<int64_t> devices;        ///< those evaluated, ascending
  std::optional<DeviceSubset> subset;  ///< unset when they are all of the program's
  /// Device 0 alone stands for every device, which all compute the same
  /// values (eval::Evaluator::EvaluateAlike).
  bool alike = false;
};

/// Every device of `spmd` when the values of `modules` (one, or a diff's
/// two, run on the same devices and the inputs drawn for the first) fit in
/// `spec.max_memory`. When they do not: the devices device 0 exchanges data
/// with (hlo::CommunicatingDevices over every module), whose values decide
/// its result, if they are fewer and fit (the others run the same program on
/// their own inputs); else device 0 alone, if it fits and every device
/// computes the same values (seeded inputs that every device shares:
/// eval::WhySeededInputsDiffer, and eval::WhyDevicesDiffer for every
/// module). Else kResourceExhausted naming the memory needed, and why device
/// 0 could not stand for the others, before anything is allocated.
StatusOr<EvaluatedDevices> DevicesToEvaluate(std::span<const hlo::HloModule* const> modules,
                                             const eval::SpmdConfig& spmd,
                                             const EvaluationSpec& spec);

/// What evaluating a module gave.
struct Evaluation {
  std::vector<value::Literal> results;  ///< one result per evaluated device
  /// What device 0's run did that timing needs (eval::RunRecord).
  eval::RunRecord record;
};

/// The entry parameters of `devices` of `spmd` (outer index: their order),
/// drawn from the seed or read from the directory of `spec.inputs`.
StatusOr<std::vector<std::vector<value::Literal>>> LoadInputs(const hlo::HloModule& module,
                                                              const eval::SpmdConfig& spmd,
                                                              std::span<const int64_t> devices,
                                                              const EvaluationSpec& spec);

/// Evaluates `module` on the `evaluated` devices of `spmd` with `inputs`
/// (from LoadInputs, possibly of another module with the same parameters).
/// Warns on `err` about elided constants filled with seeded values. Every
/// failure is an input error.
StatusOr<Evaluation> EvaluateModule(const hlo::HloModule& module, const eval::SpmdConfig& spmd,
                                    const EvaluatedDevices& evaluated, const EvaluationSpec& spec,
                                    const LoopLimits& limits,
                                    std::vector<std::vector<value::Literal>> inputs,
                                    std::ostream& err);

/// True for a failure of the values run that leaves the rest of a run
/// meaningful: over the memory limit or a cap (kResourceExhausted), or an
/// operation the evaluator lacks (kUnimplemented). Bad inputs are not.
bool ValuesCannotBeComputed(const Status& status);

/// How one of RunSpec::other_jobs ran beside the module.
struct OtherJobRun {
  std::string file;                ///< its module's file
  std::vector<int64_t> placement;  ///< the network devices it ran on, by its device
  timing::TimingResult timing;
};

/// What one run of a module produced.
struct ModuleRun {
  /// One result per device of `evaluated`; empty in timing mode or when
  /// values_skipped.
  std::vector<value::Literal> results;
  EvaluatedDevices evaluated;
  /// In full mode, why the values could not be computed (ValuesCannotBeComputed):
  /// the module was timed without them. Empty otherwise.
  std::string values_skipped;
  /// What the values run did on device 0 that timing needs (eval::RunRecord).
  eval::RunRecord record;
  std::optional<timing::TimingResult> timing;  ///< set unless the mode is values
  /// The network devices the module ran on, when it shared the network
  /// with other jobs (RunSpec::placement resolved); else empty.
  std::vector<int64_t> placement;
  std::vector<OtherJobRun> other_jobs;  ///< RunSpec::other_jobs, timed with it
};

/// Runs `module` as `spec` says (mode, inputs, numerics, memory limit,
/// elided constants, trip counts, branch, collective algorithm) on the
/// devices of `spmd`, timing it on `chip` unless the mode is values, with its
/// collectives on `topology`'s network when one is given (else device 0 alone,
/// collectives costing their local bytes); its `wraparound: tpu` resolved for
/// `chip` already (LoadTopologyOption, ResolveScenario).
/// Warnings go to `err`. Errors are input errors (bad inputs, an impossible
/// topology; in values mode also unsupported operations and the memory
/// limit, which full mode records in values_skipped and times on). With
/// `spec.other_jobs`, they run on the network at the same time as the module
/// (each on its placement), timed in the same run. Times at most once per
/// process (SystemC).
StatusOr<ModuleRun> RunModule(const RunSpec& spec, const hlo::HloModule& module,
                              const eval::SpmdConfig& spmd,
                              const std::optional<arch::ChipConfig>& chip,
                              std::optional<arch::TopologyConfig> topology, std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_MODULE_RUN_H_
