// One scenario, run in a child process of `tpusim run` (hidden subcommand
// `tpusim scenario-exec`): loads it, runs the module, applies its checks
// (or updates its golden) and writes the outcome as JSON for the parent.
#ifndef TPUSIM_HARNESS_SUITE_SCENARIO_EXEC_H_
#define TPUSIM_HARNESS_SUITE_SCENARIO_EXEC_H_

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"

namespace tpusim::harness {

/// One link of a multi-chip run, for the report's heatmap.
struct LinkLoad {
  int64_t from = 0;  ///< node ids, indexes of ScenarioResult::network_nodes
  int64_t to = 0;
  double utilisation = 0;  ///< bytes / (bandwidth x run time)
};

/// What became of one scenario.
enum class ScenarioStatus : uint8_t {
  kPass,
  kFail,   ///< a check failed, or a negative scenario ran clean
  kStale,  ///< its golden was made by another version, chip or topology
  kError,  ///< the scenario or its module is malformed: an input error
};

/// "pass", "fail", "stale", "error": the status as results, reports and CSS
/// classes spell it.
std::string_view ScenarioStatusName(ScenarioStatus status);
/// The status ScenarioStatusName spells `name`; nullopt for any other text.
std::optional<ScenarioStatus> ScenarioStatusFromName(std::string_view name);

struct ScenarioResult {
  std::string name;  ///< the scenario's name (file stem when it could not load)
  std::string file;
  ScenarioStatus status = ScenarioStatus::kError;
  std::vector<std::string> messages;      ///< what differed, one line each
  std::map<std::string, double> metrics;  ///< measured, when timed
  std::map<std::string, double> golden_metrics;  ///< the golden's, when checked against one
  std::map<std::string, double> op_time_us;      ///< simulated time by opcode (device 0)
  std::vector<std::string> network_nodes;        ///< when timed on a network: its nodes
  std::vector<LinkLoad> links;                   ///< the links that carried bytes
  double seconds = 0;                     ///< wall time of the child
};

/// The result as JSON, and back (errors: kInvalidArgument naming `source`).
std::string ResultToJson(const ScenarioResult& result);
StatusOr<ScenarioResult> ResultFromJson(const std::string& text, const std::string& source);

struct ScenarioExecOptions {
  std::string scenario;    ///< scenario file
  std::string result;      ///< where to write the result JSON
  std::string golden_dir;  ///< golden store root
  std::string models_dir;  ///< where preset names resolve
  std::string trace;       ///< write the Perfetto trace of a timed run here; empty: do not
  bool update_golden = false;
};

/// Runs the scenario and writes its result; returns 0 when the result was
/// written (whatever it says), 2 when it could not be.
int RunScenarioExec(const ScenarioExecOptions& options, std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_SCENARIO_EXEC_H_
