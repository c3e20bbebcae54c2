// What one run of a module is asked to do, typed: the command line of `tpusim
// exec` and `tpusim diff`, and a scenario, each become one RunSpec, parsed
// once with its errors; module_run.h runs it without reading a string again.
#ifndef TPUSIM_HARNESS_RUN_RUN_SPEC_H_
#define TPUSIM_HARNESS_RUN_RUN_SPEC_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "harness/run/run_names.h"
#include "sim/base/status.h"
#include "sim/eval/evaluator.h"
#include "sim/hlo/module.h"
#include "sim/ici/interconnect.h"
#include "sim/timing/timing.h"

namespace tpusim::harness {

/// Seeded random entry parameters (`--inputs seed:N`, a scenario's `inputs.seed`).
struct SeededInputs {
  uint64_t seed = 0;
};
/// Entry parameters read from param_<N>.npy files in a directory.
struct InputDirectory {
  std::string path;
};
using InputSource = std::variant<SeededInputs, InputDirectory>;

/// How the dot and convolution products of a values run are computed.
enum class MxuEngine : uint8_t {
  kAnalytic,  ///< the fast C++ MXU kernel
  kRtl,       ///< through the Verilated array (builds with TPUSIM_RTL only)
};

/// What a values run does with constants whose values the dump elided (`{...}`).
enum class ElidedConstantPolicy : uint8_t {
  kSeeded,  ///< fill them with seeded values and warn
  kError,   ///< refuse to run
};

/// Caps that make a runaway loop an error instead of a hang or exhausted
/// memory: the flags --max-while-iterations, --max-loop-work and
/// --max-executed-instructions, a scenario's keys of the same names.
struct LoopLimits {
  /// Iterations of one while loop in a values run.
  int64_t max_while_iterations = eval::EvaluatorOptions{}.max_while_iterations;
  /// Work of one while loop in a values run (eval::EvaluatorOptions's units).
  int64_t max_loop_work = eval::EvaluatorOptions{}.max_loop_work;
  /// Instructions of the timed program (each loop body once), and of those
  /// the timing simulates one by one (fast-forwarded iterations do not count).
  int64_t max_executed_instructions = timing::TimingOptions{}.max_executed_instructions;
};

/// Sets `options`' loop limits from `limits`, and the remedy each limit's
/// error gives: the flag and the scenario key that raise it (sim/ states the
/// loop and the limit, and knows neither).
void ApplyLoopLimits(const LoopLimits& limits, eval::EvaluatorOptions& options);
void ApplyLoopLimits(const LoopLimits& limits, timing::TimingOptions& options);

/// Times what a values run did: its trip counts (after those already in
/// `options`, which the user gave and which win), its branches (over those
/// in `options`), its
/// ragged-dots' group shares and the rows its ragged-all-to-alls sent.
void TimeAsRun(const eval::RunRecord& record, timing::TimingOptions& options);

/// How to evaluate a module.
struct EvaluationSpec {
  std::string command = "tpusim exec";  ///< prefix of error messages
  InputSource inputs = SeededInputs{};
  eval::Numerics numerics = eval::Numerics::kTpu;
  MxuEngine mxu = MxuEngine::kAnalytic;
  int64_t max_memory = 0;  ///< bytes the values may take; ParseMaxMemory gives the default
  ElidedConstantPolicy elided_constants = ElidedConstantPolicy::kSeeded;
};

/// A number the user gave the instructions of one name (a while loop's
/// iterations, a conditional's branch), and where: the start of an error
/// about the name (a flag, or a scenario key's position).
struct NamedCount {
  int64_t count = 0;
  std::string given_at;
};

/// Another program on the run's network at the same time (a scenario's
/// `other_jobs`, exec's --other-job): timed beside the run's module, never
/// evaluated, its collectives sharing links with the module's
/// (timing::SimulationJob::shared_network). Its loops of unknown trip count
/// run once, its conditionals take branch 0.
struct OtherJob {
  std::shared_ptr<const hlo::HloModule> module;
  /// The network devices its devices run on; empty: the lowest-numbered
  /// ones that the module and the jobs before it left free.
  std::vector<int64_t> placement;
  std::string given_at;  ///< the start of an error about it: its flag, or its key's position
};

/// Everything a run of one module needs besides the module, its devices, the
/// chip and the network.
struct RunSpec {
  RunMode mode = RunMode::kValues;
  EvaluationSpec evaluation;
  /// Iterations timed for while loops, by name, over what the program shows
  /// (the values run's counts fill the loops not named here).
  std::map<std::string, NamedCount> trip_counts;
  int64_t default_trip_count = 1;  ///< for other loops of unknown trip count
  int64_t branch = 0;              ///< branch every conditional takes in timing
  /// Branches of the conditionals of these names, over `branch`; the
  /// branches a values run saw win over both.
  std::map<std::string, NamedCount> branches;
  LoopLimits limits;
  /// The collective algorithm on the network; anything but kAuto needs one.
  ici::Algorithm algorithm = ici::Algorithm::kAuto;
  /// The network devices the module's devices run on (timing::TimingOptions::
  /// placement); empty: device d is the network's device d. Needs a network.
  std::vector<int64_t> placement;
  std::string placement_given_at;  ///< the start of an error about it, as OtherJob::given_at
  /// Programs sharing the network with the module, in order. Need a network.
  std::vector<OtherJob> other_jobs;
};

/// `--inputs`: "seed:N" or an existing directory. `command` prefixes errors.
StatusOr<InputSource> ParseInputSource(const std::string& text, const std::string& command);
/// `--max-memory`: a byte count with a unit ("8GiB", "512MB") or bare bytes;
/// empty: half of the machine's physical memory.
StatusOr<int64_t> ParseMaxMemory(const std::string& text, const std::string& command);
/// The evaluation `--inputs`, `--numerics` and `--max-memory` describe (the
/// rest as EvaluationSpec's defaults); `command` prefixes errors.
StatusOr<EvaluationSpec> ParseEvaluationSpec(const std::string& command, const std::string& inputs,
                                             std::string_view numerics,
                                             const std::string& max_memory);
/// `--trip-count NAME=N`, each N a non-negative integer.
StatusOr<std::map<std::string, NamedCount>> ParseTripCounts(const std::vector<std::string>& texts);
/// `--branch N` (every conditional; the last given wins) and `--branch
/// NAME=N` (the conditionals named NAME), each N a non-negative integer, into
/// spec.branch and spec.branches.
Status ParseBranches(const std::vector<std::string>& texts, RunSpec& spec);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_RUN_SPEC_H_
