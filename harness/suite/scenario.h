// Scenario files (docs/scenarios.md): one YAML file names a module, a chip,
// inputs, a mode and the checks a run must pass. The loader rejects every
// unknown key, wrong type and missing file with "FILE:LINE:COL: error: key path
// `checks.outputs.rtol`: ...".
#ifndef TPUSIM_HARNESS_SUITE_SCENARIO_H_
#define TPUSIM_HARNESS_SUITE_SCENARIO_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/run/run_names.h"
#include "harness/run/run_spec.h"
#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/base/status.h"
#include "sim/eval/numerics.h"
#include "sim/ici/interconnect.h"
#include "sim/value/compare.h"

namespace tpusim::harness {

/// `checks.outputs`: compare every output with its golden.
struct OutputsCheck {
  bool golden = false;
  /// How close every output must be to its golden (value::ErrorSpec's rule),
  /// for its element type (`per_type`) or any; a tolerance that sets nothing
  /// is exact.
  value::TypedErrorSpec tolerance;
  std::map<std::string, value::ErrorSpec> per_output;  ///< by output name ("output_1")
  /// "FILE:LINE:COL" of each per_output key, for "no output named ...".
  std::map<std::string, std::string> per_output_where;
};

/// One metric's check: within `tolerance` (a fraction, `2%` = 0.02) of the
/// golden value, and/or within [min, max].
struct MetricCheck {
  bool golden = false;
  double tolerance = 0;
  std::optional<double> min;
  std::optional<double> max;
};

/// `forbid_ops`/`forbid_new_ops`/`require_ops` entry: an opcode, in the entry computation only
/// or anywhere (fusion bodies, loop bodies, ...).
struct OpMatcher {
  std::string opcode;
  bool entry_only = false;
  /// Transposes only: match just those that move the minor (last) dimension,
  /// the expensive kind on a TPU (lanes change), not batch-dimension swaps.
  bool minor_dims = false;
};

/// The metric names checks may bound, in report order.
const std::vector<std::string>& MetricNames();

/// One of a scenario's `other_jobs`: a module on the same network at the
/// same time (RunSpec::other_jobs).
struct ScenarioOtherJob {
  std::string module;              ///< its path, resolved as `module`'s (DUMP/NAME too)
  std::string module_where;        ///< "FILE:LINE:COL" of its `module` key
  std::vector<int64_t> placement;  ///< `placement`; empty: the lowest network devices left free
  std::string where;               ///< "FILE:LINE:COL" of the entry, for its errors
};

struct Scenario {
  std::string file;    ///< the scenario file as given
  std::string name;    ///< `name`, default the file stem
  /// `golden`: whose golden the checks compare with, default `name`. A
  /// scenario that names another's (e.g. a release's regression checked
  /// against the previous release's golden) reads it and never writes it.
  std::string golden;
  std::string module;  ///< module path, resolved against the scenario's directory
  std::string chip;    ///< preset name or path; empty: no timing
  /// `chip.overrides` as "key.path=value", with where each was written.
  std::vector<std::string> overrides;
  std::vector<std::string> override_where;
  /// `topology` with `device_assignment` in it: the network collectives run on.
  std::optional<arch::TopologyConfig> topology_config;
  /// Its canonical text (arch::CanonicalTopologyText, after the chip's
  /// wraparound rule), stamped into goldens; "" without a topology.
  std::string topology;
  ici::Algorithm algorithm = ici::Algorithm::kAuto;  ///< `algorithm`, for collectives
  /// `placement`: the network devices the module's devices run on; empty: 0, 1, ...
  std::vector<int64_t> placement;
  std::string placement_where;                       ///< "FILE:LINE:COL" of `placement`
  std::vector<ScenarioOtherJob> other_jobs;          ///< `other_jobs`, in order
  std::optional<uint64_t> seed;                      ///< seeded inputs; unset with `inputs_dir`
  std::string inputs_dir;                            ///< a directory of param_<N>.npy, resolved
  RunMode mode = RunMode::kFull;                     ///< `mode`
  eval::Numerics numerics = eval::Numerics::kTpu;    ///< `numerics`
  double timeout_seconds = 0;                        ///< 0: the suite's --timeout
  /// The loop limits of `tpusim exec --max-while-iterations`, --max-loop-work
  /// and --max-executed-instructions (harness::LoopLimits); unset: its defaults.
  std::optional<int64_t> max_while_iterations, max_loop_work, max_executed_instructions;
  /// `trip_counts` (by while loop name), `default_trip_count`, `branch`,
  /// `branches` (by conditional name): the iterations and branches timing
  /// takes where the program does not bound a loop and no values run shows
  /// them (`tpusim exec --trip-count`, --default-trip-count, --branch N and
  /// NAME=N); a loop named here runs its count even where a values run saw
  /// another.
  std::map<std::string, NamedCount> trip_counts;
  int64_t default_trip_count = 1;
  int64_t branch = 0;
  std::map<std::string, NamedCount> branches;
  /// `max_memory`: bytes the values may take (`tpusim exec --max-memory`);
  /// unset: half the machine's physical memory.
  std::optional<int64_t> max_memory;
  /// `require: [values]`: in full mode, values that cannot be computed fail
  /// the scenario instead of being skipped with a note.
  bool require_values = false;
  OutputsCheck outputs;
  std::map<std::string, MetricCheck> metrics;  ///< by MetricNames() entry
  std::vector<OpMatcher> forbid_ops;
  /// Opcodes the module must not have more of than its golden module:
  /// instructions new since the module the golden was made from.
  std::vector<OpMatcher> forbid_new_ops;
  std::vector<OpMatcher> require_ops;
  bool expect_fail = false;                       ///< a negative scenario: the run must fail ...
  std::string expect_reason;                      ///< ... with a message containing this
  std::optional<arch::ChipConfig> resolved_chip;  ///< set by ResolveScenario
  /// "FILE:LINE:COL" of the values ResolveScenario checks, for its messages.
  std::string module_where, inputs_where, chip_where;
};

/// Parses scenario text: structure, types and values only (no file access).
/// `file` names the scenario in messages and anchors relative paths.
StatusOr<Scenario> ParseScenario(std::string_view text, const std::string& file);

/// Checks what the scenario refers to: the module and inputs directory exist,
/// the chip preset loads with its overrides (errors point at the override).
Status ResolveScenario(Scenario& scenario, const std::string& models_dir);

/// Reads, parses and resolves the scenario at `file`.
StatusOr<Scenario> LoadScenario(const std::string& file, const std::string& models_dir);

/// Parses "5s", "250ms", "2min" or "5" into seconds.
StatusOr<double> ParseSeconds(std::string_view text);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_SCENARIO_H_
