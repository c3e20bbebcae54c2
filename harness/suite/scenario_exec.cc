#include "harness/suite/scenario_exec.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>

#include "harness/run/metrics.h"
#include "harness/run/module_run.h"
#include "harness/run/program_io.h"
#include "harness/run/run_spec.h"
#include "harness/suite/checks.h"
#include "harness/suite/golden.h"
#include "harness/suite/scenario.h"
#include "sim/base/file.h"
#include "sim/base/json_text.h"
#include "sim/hlo/parser.h"
#include "sim/hlo/printer.h"
#include "sim/ici/interconnect.h"
#include "sim/timing/report.h"

namespace tpusim::harness {
namespace {

using nlohmann::ordered_json;

/// The tolerance for output `name` ("device_1/output_0") of element type
/// `type`: its own entry (by full name, then leaf name), else its type's,
/// else the scenario-wide one.
const value::ErrorSpec& ToleranceFor(const OutputsCheck& check, const std::string& name,
                                     hlo::PrimitiveType type) {
  if (auto it = check.per_output.find(name); it != check.per_output.end()) return it->second;
  const size_t slash = name.rfind('/');
  if (slash != std::string::npos) {
    if (auto it = check.per_output.find(name.substr(slash + 1)); it != check.per_output.end()) {
      return it->second;
    }
  }
  return check.tolerance.For(type);
}

/// The run's outputs against the golden's, one line per difference. When
/// the run evaluated only some devices (`some_devices`), the golden may hold
/// all of them, so each output is paired with the golden's of the same name;
/// otherwise the two lists must agree in length and order.
std::vector<std::string> CheckOutputsAgainst(const std::vector<GoldenOutput>& outputs,
                                             const std::vector<GoldenOutput>& expected,
                                             bool some_devices, const OutputsCheck& check) {
  if (!some_devices && expected.size() != outputs.size()) {
    return {"the run has " + std::to_string(outputs.size()) + " outputs, the golden " +
            std::to_string(expected.size())};
  }
  std::vector<std::string> failures;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const GoldenOutput& output = outputs[i];
    const GoldenOutput* paired = nullptr;
    if (some_devices) {
      const auto named = std::find_if(expected.begin(), expected.end(),
                                      [&](const GoldenOutput& g) { return g.name == output.name; });
      if (named == expected.end()) {
        failures.push_back("output " + output.name + " is not in the golden");
        continue;
      }
      paired = &*named;
    } else {
      paired = &expected[i];
      if (paired->name != output.name) {
        failures.push_back("output " + output.name + " is " + paired->name + " in the golden");
        continue;
      }
    }
    std::string diff =
        CheckOutput(output.name, output.value, paired->value,
                    ToleranceFor(check, output.name, paired->value.element_type()));
    if (!diff.empty()) failures.push_back(std::move(diff));
  }
  return failures;
}

/// The scenario's checks against a finished run; fills result.status/messages.
void ApplyChecks(const Scenario& scenario, const ScenarioExecOptions& options,
                 const hlo::HloModule& module, const ModuleRun& run, ScenarioResult& result) {
  std::vector<std::string>& failures = result.messages;
  // Values that could not be computed leave the outputs unchecked, unless
  // the scenario requires them.
  const bool values_skipped = !run.values_skipped.empty();
  const bool outputs_golden = scenario.outputs.golden && !values_skipped;
  if (values_skipped && scenario.require_values) {
    failures.push_back("require: [values]: the values could not be computed: " +
                       run.values_skipped);
  }
  for (std::string& f : CheckOps(scenario, module)) failures.push_back(std::move(f));
  if (run.timing.has_value()) {
    const timing::TimingResult& timing = *run.timing;
    result.metrics = NamedMetrics(MetricsOf(timing));
    for (const timing::OpRecord& op : timing.ops) {
      result.op_time_us[op.instruction->OpcodeSpelling()] +=
          static_cast<double>(op.TotalCycles()) * 1e6 / static_cast<double>(timing.clock_hz);
    }
    result.network_nodes = timing.nodes;
    for (const timing::LinkUse& link : timing.links) {
      if (link.from >= 0 && link.to >= 0) {
        result.links.push_back({link.from, link.to, link.utilisation});
      }
    }
  }

  std::vector<GoldenOutput> outputs;
  for (size_t i = 0; i < run.results.size(); ++i) {
    const std::string prefix =
        DeviceOutputPrefix(run.evaluated.device_count, run.evaluated.devices[i]);
    for (const OutputLeaf& leaf : OutputLeaves(run.results[i])) {
      outputs.push_back({prefix + leaf.name, *leaf.value});
    }
  }
  // A tolerance for an output the program does not have is a typo that
  // would leave the real output on the default tolerance.
  for (const auto& entry : scenario.outputs.per_output_where) {
    if (values_skipped) break;
    // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& name = entry.first;
    const std::string& where = entry.second;
    const bool known = std::any_of(outputs.begin(), outputs.end(), [&](const GoldenOutput& o) {
      return o.name == name || o.name.ends_with("/" + name);
    });
    if (known) continue;
    std::string names;
    for (size_t i = 0; i < outputs.size() && i < 8; ++i) {
      names += (i == 0 ? "" : ", ") + outputs[i].name;
    }
    if (outputs.size() > 8) names += ", ...";
    result.status = ScenarioStatus::kError;
    failures.push_back(where + ": error: key path `checks.outputs.per_output." + name +
                       "`: the program has no output named " + Quote(name) +
                       " (its outputs: " + (names.empty() ? "none" : names) + ")");
    return;
  }
  bool uses_golden = scenario.outputs.golden || !scenario.forbid_new_ops.empty();
  for (const auto& [name, check] : scenario.metrics) uses_golden = uses_golden || check.golden;
  const std::string dir = GoldenDir(options.golden_dir, scenario.golden);
  // A scenario that reads another's golden (`golden: NAME`) never writes it.
  const bool writes_golden = options.update_golden && scenario.golden == scenario.name;

  if (!uses_golden) {
    for (std::string& f : CheckMetrics(scenario, result.metrics, nullptr)) {
      failures.push_back(std::move(f));
    }
  } else if (writes_golden && values_skipped && scenario.outputs.golden) {
    failures.push_back(
        "golden not updated: its outputs need the values, which could not be "
        "computed: " +
        run.values_skipped);
  } else if (writes_golden) {
    Golden golden{StampOf(scenario), result.metrics, std::move(outputs), hlo::PrintModule(module)};
    const Status written = WriteGolden(dir, golden);
    if (!written.ok()) {
      result.status = ScenarioStatus::kError;
      failures.push_back(written.message());
      return;
    }
    for (std::string& f : CheckMetrics(scenario, result.metrics, nullptr)) {
      failures.push_back(std::move(f));
    }
  } else {
    StatusOr<std::optional<Golden>> golden = ReadGolden(dir);
    if (!golden.ok()) {
      result.status = ScenarioStatus::kFail;
      failures.push_back(golden.status().message());
      return;
    }
    if (!golden->has_value()) {
      // A negative scenario must not pass for want of its golden (a typo in
      // `golden:` would pass forever): that is an error, not its failure.
      result.status = scenario.expect_fail ? ScenarioStatus::kError : ScenarioStatus::kFail;
      failures.push_back("no golden in " + dir + "; " +
                         (scenario.golden != scenario.name
                              ? "it is the golden of scenario " + Quote(scenario.golden) +
                                    " (golden:), which --update-golden of that scenario writes"
                              : std::string("run tpusim run --update-golden")));
      return;
    }
    // A scenario's own golden must have been made under the same stamp. One
    // that reads another scenario's golden compares across what its own
    // chip or topology changes (a what-if, a release against the last); only
    // another tpusim version makes that golden stale, and the update that
    // fixes it is the owner's.
    const GoldenStamp stamp = StampOf(scenario);
    const GoldenStamp& made = (*golden)->stamp;
    const bool own = scenario.golden == scenario.name;
    if (own ? !(made == stamp) : made.version != stamp.version) {
      result.status = ScenarioStatus::kStale;
      std::string message = "stale golden in " + dir + ": made by tpusim " + made.version;
      if (own) {
        // Only what differs, whole: two long topology texts differ in their tails.
        std::string was, now;
        for (const auto& [field, a, b] :
             {std::tuple{"tpusim ", &made.version, &stamp.version},
              std::tuple{"chip hash ", &made.chip_hash, &stamp.chip_hash},
              std::tuple{"topology ", &made.topology, &stamp.topology}}) {
          if (*a == *b) continue;
          was += std::string(was.empty() ? "" : ", ") + field + "'" + *a + "'";
          now += std::string(now.empty() ? "" : ", ") + field + "'" + *b + "'";
        }
        message = "stale golden in " + dir + ": made with " + was + "; this run has " + now +
                  "; check and run --update-golden";
      } else {
        message += "; this run is tpusim " + stamp.version + "; it is the golden of scenario " +
                   Quote(scenario.golden) + ": check and run --update-golden, which rewrites it";
      }
      failures.push_back(std::move(message));
      return;
    }
    result.golden_metrics = (*golden)->metrics;
    // Failures from here on compare with the golden, but for the absolute
    // bounds of the metric checks (which CheckMetrics without a golden gives).
    const size_t checked = failures.size();
    const size_t bounds = CheckMetrics(scenario, result.metrics, nullptr).size();
    // The golden module, for forbid_new_ops and the causes of a failure.
    std::optional<ModuleDiff> since_golden;
    if (!(*golden)->module_text.empty()) {
      StatusOr<std::unique_ptr<hlo::HloModule>> golden_module = hlo::ParseHloModule(
          (*golden)->module_text, (std::filesystem::path(dir) / kGoldenModuleFile).string());
      if (!golden_module.ok()) {
        result.status = ScenarioStatus::kFail;
        failures.push_back(golden_module.status().message());
        return;
      }
      since_golden = DiffModules(**golden_module, module);
      for (std::string& f : CheckNewOps(scenario, module, *since_golden)) {
        failures.push_back(std::move(f));
      }
    } else if (!scenario.forbid_new_ops.empty()) {
      failures.push_back("forbid_new_ops: the golden in " + dir +
                         " keeps no module (made before tpusim kept it); run --update-golden");
    }
    for (std::string& f : CheckMetrics(scenario, result.metrics, &(*golden)->metrics)) {
      failures.push_back(std::move(f));
    }
    if (outputs_golden) {
      for (std::string& f : CheckOutputsAgainst(
               outputs, (*golden)->outputs, run.evaluated.subset.has_value(), scenario.outputs)) {
        failures.push_back(std::move(f));
      }
    }
    // A failure is read compiler change first, its effects after; with the
    // golden's own module, the note that rules the compiler out comes last,
    // for failures against the golden (a bound or a forbidden op is no change).
    const bool against_golden = failures.size() - checked > bounds;
    if (!failures.empty() && since_golden.has_value()) {
      std::vector<std::string> causes = CauseLines(*since_golden);
      failures.insert(failures.begin(), std::make_move_iterator(causes.begin()),
                      std::make_move_iterator(causes.end()));
      if (since_golden->changes.empty() && against_golden) {
        failures.push_back(
            "the module is the golden's: the change is in the chip, the topology (or the jobs "
            "sharing it), "
            "the inputs or tpusim");
      }
    }
  }
  // A network metric that failed comes with what bounded the collectives.
  const bool network_failed = std::any_of(failures.begin(), failures.end(), [](const auto& f) {
    return f.starts_with("collective_time_us:") || f.starts_with("ici_bytes:") ||
           f.starts_with("link_utilisation:");
  });
  if (network_failed && run.timing.has_value()) {
    std::string why = NetworkExplanation(*run.timing);
    if (!why.empty()) failures.push_back(std::move(why));
  }
  result.status = failures.empty() ? ScenarioStatus::kPass : ScenarioStatus::kFail;
  if (values_skipped && !scenario.require_values) {
    failures.insert(failures.begin(),
                    "outputs not checked: the values could not be computed: " + run.values_skipped);
  }
  if (run.evaluated.subset.has_value()) {
    failures.insert(failures.begin(), run.evaluated.subset->Note());
  }
}

/// The run a loaded scenario asks for (the loader checked its values and
/// reported them with their positions).
StatusOr<RunSpec> ScenarioRunSpec(const Scenario& scenario) {
  RunSpec spec;
  spec.mode = scenario.mode;
  if (scenario.seed.has_value()) {
    spec.evaluation.inputs = SeededInputs{*scenario.seed};
  } else {
    spec.evaluation.inputs = InputDirectory{scenario.inputs_dir};
  }
  spec.evaluation.numerics = scenario.numerics;
  TPUSIM_ASSIGN_OR_RETURN(spec.evaluation.max_memory, ParseMaxMemory("", spec.evaluation.command));
  spec.evaluation.max_memory = scenario.max_memory.value_or(spec.evaluation.max_memory);
  spec.algorithm = scenario.algorithm;
  spec.placement = scenario.placement;
  spec.placement_given_at = scenario.placement_where;
  for (const ScenarioOtherJob& job : scenario.other_jobs) {
    TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(job.module));
    TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module,
                            ParseAndVerifyModule(text, job.module));
    spec.other_jobs.push_back({std::move(module), job.placement, job.where});
  }
  spec.trip_counts = scenario.trip_counts;
  spec.default_trip_count = scenario.default_trip_count;
  spec.branch = scenario.branch;
  spec.branches = scenario.branches;
  LoopLimits& limits = spec.limits;
  limits.max_while_iterations = scenario.max_while_iterations.value_or(limits.max_while_iterations);
  limits.max_loop_work = scenario.max_loop_work.value_or(limits.max_loop_work);
  limits.max_executed_instructions =
      scenario.max_executed_instructions.value_or(limits.max_executed_instructions);
  return spec;
}

/// Loads, runs and checks; an input error leaves status "error" (or, for a
/// negative scenario, is the failure it expects).
void Execute(const ScenarioExecOptions& options, ScenarioResult& result, std::ostream& err) {
  StatusOr<Scenario> loaded = LoadScenario(options.scenario, options.models_dir);
  if (!loaded.ok()) {
    result.status = ScenarioStatus::kError;
    result.messages.push_back(loaded.status().message());
    return;
  }
  const Scenario& scenario = *loaded;
  result.name = scenario.name;
  // A failure of the run itself: an input error, unless the scenario expects it.
  const auto run_failed = [&](const Status& status) {
    if (!scenario.expect_fail) {
      result.status = ScenarioStatus::kError;
      result.messages.push_back(status.message());
    } else if (status.message().find(scenario.expect_reason) == std::string::npos) {
      result.status = ScenarioStatus::kFail;
      result.messages.push_back("expected a failure mentioning " + Quote(scenario.expect_reason) +
                                ", got: " + status.message());
    } else {
      result.status = ScenarioStatus::kPass;
    }
  };
  StatusOr<std::string> text = ReadFile(scenario.module);
  if (!text.ok()) return run_failed(text.status());
  StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseAndVerifyModule(*text, scenario.module);
  if (!module.ok()) return run_failed(module.status());

  StatusOr<RunSpec> spec = ScenarioRunSpec(scenario);
  if (!spec.ok()) return run_failed(spec.status());
  const eval::SpmdConfig spmd = eval::SpmdConfig::CoveringModule(**module);
  StatusOr<ModuleRun> run =
      RunModule(*spec, **module, spmd, scenario.resolved_chip,
                scenario.resolved_chip.has_value() ? scenario.topology_config : std::nullopt, err);
  if (!run.ok()) return run_failed(run.status());
  if (!options.trace.empty() && run->timing.has_value()) {
    const Status written =
        WriteFileAtomically(options.trace, timing::TimingTraceJson(*run->timing));
    if (!written.ok()) {
      result.status = ScenarioStatus::kError;
      result.messages.push_back(written.message());
      return;
    }
  }
  ApplyChecks(scenario, options, **module, *run, result);
  // A stale golden is stale for a negative scenario too: no check ran.
  if (!scenario.expect_fail || result.status == ScenarioStatus::kError ||
      result.status == ScenarioStatus::kStale) {
    return;
  }
  // A negative scenario: a regression its checks must catch, for its reason.
  const auto caught =
      result.status != ScenarioStatus::kFail
          ? result.messages.end()
          : std::find_if(result.messages.begin(), result.messages.end(), [&](const auto& m) {
              return m.find(scenario.expect_reason) != std::string::npos;
            });
  if (caught != result.messages.end()) {
    // The caught failure first, then the rest (e.g. why a network metric failed).
    std::vector<std::string> messages = {"failed as expected: " + *caught};
    for (auto it = result.messages.begin(); it != result.messages.end(); ++it) {
      if (it != caught) messages.push_back(std::move(*it));
    }
    result.status = ScenarioStatus::kPass;
    result.messages = std::move(messages);
    return;
  }
  std::vector<std::string> seen = std::move(result.messages);
  result.status = ScenarioStatus::kFail;
  result.messages = {
      "expected the run or its checks to fail" +
      (scenario.expect_reason.empty() ? std::string() : " with " + Quote(scenario.expect_reason)) +
      (seen.empty() ? ", but everything passed" : ", but:")};
  for (std::string& message : seen) result.messages.push_back(std::move(message));
}

}  // namespace

std::string ResultToJson(const ScenarioResult& result) {
  ordered_json json;
  json["name"] = result.name;
  json["file"] = result.file;
  json["status"] = ScenarioStatusName(result.status);
  json["messages"] = result.messages;
  json["metrics"] = MetricsJson(result.metrics);
  json["golden_metrics"] = MetricsJson(result.golden_metrics);
  json["op_time_us"] = ordered_json::object();
  for (const auto& [opcode, us] : result.op_time_us) json["op_time_us"][opcode] = us;
  json["network"] = {{"nodes", result.network_nodes}, {"links", ordered_json::array()}};
  for (const LinkLoad& link : result.links) {
    json["network"]["links"].push_back({link.from, link.to, link.utilisation});
  }
  json["seconds"] = result.seconds;
  return JsonText(json, 2) + "\n";
}

std::string_view ScenarioStatusName(ScenarioStatus status) {
  switch (status) {
    case ScenarioStatus::kPass:
      return "pass";
    case ScenarioStatus::kFail:
      return "fail";
    case ScenarioStatus::kStale:
      return "stale";
    case ScenarioStatus::kError:
      return "error";
  }
  return "error";
}

std::optional<ScenarioStatus> ScenarioStatusFromName(std::string_view name) {
  for (const ScenarioStatus s : {ScenarioStatus::kPass, ScenarioStatus::kFail,
                                 ScenarioStatus::kStale, ScenarioStatus::kError}) {
    if (ScenarioStatusName(s) == name) return s;
  }
  return std::nullopt;
}

StatusOr<ScenarioResult> ResultFromJson(const std::string& text, const std::string& source) {
  ScenarioResult result;
  try {
    const ordered_json json = ordered_json::parse(text);
    result.name = json.at("name").get<std::string>();
    result.file = json.at("file").get<std::string>();
    const std::string status = json.at("status").get<std::string>();
    const std::optional<ScenarioStatus> known = ScenarioStatusFromName(status);
    if (!known.has_value()) {
      return InvalidArgument(source + ": error: malformed scenario result: status " +
                             Quote(status));
    }
    result.status = *known;
    result.messages = json.at("messages").get<std::vector<std::string>>();
    result.metrics = MetricsFromJson(json.at("metrics"));
    result.golden_metrics = MetricsFromJson(json.at("golden_metrics"));
    for (const auto& [opcode, us] : json.at("op_time_us").items()) {
      result.op_time_us[opcode] = us.get<double>();
    }
    const ordered_json& network = json.at("network");
    result.network_nodes = network.at("nodes").get<std::vector<std::string>>();
    for (const ordered_json& link : network.at("links")) {
      result.links.push_back(
          {link.at(0).get<int64_t>(), link.at(1).get<int64_t>(), link.at(2).get<double>()});
    }
    result.seconds = json.at("seconds").get<double>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(source + ": error: malformed scenario result: " + e.what());
  }
  return result;
}

int RunScenarioExec(const ScenarioExecOptions& options, std::ostream& err) {
  const auto start = std::chrono::steady_clock::now();
  ScenarioResult result;
  result.file = options.scenario;
  result.name = std::filesystem::path(options.scenario).stem().string();
  Execute(options, result, err);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Status written = WriteFileAtomically(options.result, ResultToJson(result));
  if (!written.ok()) {
    err << written.message() << '\n';
    return 2;
  }
  return 0;
}

}  // namespace tpusim::harness
