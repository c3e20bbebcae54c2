#include "harness/diff/dump_diff.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "harness/diff/diff_report.h"
#include "harness/report/exit.h"
#include "harness/run/dump_dir.h"
#include "sim/base/file.h"
#include "sim/base/json_text.h"

namespace tpusim::harness {
namespace {

using Json = nlohmann::ordered_json;

/// How one module of two dump directories came out.
enum class ModuleOutcome : uint8_t { kOk, kRegressed, kChanged, kOnlyBefore, kOnlyAfter, kError };

/// The outcome's word in the JSON report.
std::string_view ModuleOutcomeName(ModuleOutcome outcome) {
  switch (outcome) {
    case ModuleOutcome::kOk:
      return "ok";
    case ModuleOutcome::kRegressed:
      return "regression";
    case ModuleOutcome::kChanged:
      return "changed";
    case ModuleOutcome::kOnlyBefore:
      return "only before";
    case ModuleOutcome::kOnlyAfter:
      return "only after";
    case ModuleOutcome::kError:
      return "error";
  }
  return "error";
}

/// One module's verdict line (after "module NAME: "), exit code and JSON entry.
struct ModuleResult {
  ModuleOutcome outcome = ModuleOutcome::kOk;
  int exit_code = kExitOk;
  std::string line;
  Json json;
};

/// A module in one dump only: a change (a function the program no longer
/// compiles, or a new one), so exit 1.
ModuleResult OneSidedModule(const DumpModulePair& pair) {
  const bool before = pair.before.has_value();
  const std::string& path = before ? pair.before->path : pair.after->path;
  ModuleResult result;
  result.outcome = before ? ModuleOutcome::kOnlyBefore : ModuleOutcome::kOnlyAfter;
  result.exit_code = kExitCheckFailed;
  result.line = std::string(ModuleOutcomeName(result.outcome)) + " (" + path + ")";
  result.json["verdict"] = ModuleOutcomeName(result.outcome);
  result.json["exit_code"] = result.exit_code;
  result.json["before"] = before ? Json(path) : Json(nullptr);
  result.json["after"] = before ? Json(nullptr) : Json(path);
  return result;
}

/// The first line of `text`.
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

/// A pair's verdict line from its comparison under `spec`; an input error
/// (e.g. a malformed module) is this module's verdict alone.
ModuleResult PairedModule(const DiffSpec& spec, StatusOr<DiffReport> report, std::ostream& err) {
  ModuleResult result;
  if (!report.ok()) {
    PrintError(report.status(), err);
    result.outcome = ModuleOutcome::kError;
    result.exit_code = kExitInputError;
    result.line = "ERROR: " + FirstLine(report.status().message());
    result.json = {{"verdict", ModuleOutcomeName(result.outcome)},
                   {"exit_code", result.exit_code},
                   {"error", report.status().message()},
                   {"before", spec.before},
                   {"after", spec.after}};
    return result;
  }
  const PairDiff pair = JudgePair(std::move(report).value(), spec);
  const Verdict& verdict = pair.verdict;
  result.outcome = !verdict.failed ? ModuleOutcome::kOk
                   : verdict.worse ? ModuleOutcome::kRegressed
                                   : ModuleOutcome::kChanged;
  result.exit_code = pair.exit_code;
  result.line = verdict.headline;
  // The per-pair writer returns text, which keeps nlohmann out of the headers.
  result.json = Json::parse(DiffReportJson(pair.report, verdict, spec, result.exit_code));
  return result;
}

/// The common options for each pair of modules, in pairing order.
std::vector<DiffSpec> PairSpecs(const DiffSpec& spec, const DumpPairing& pairing) {
  std::vector<DiffSpec> specs;
  for (const DumpModulePair& pair : pairing.pairs) {
    if (!pair.before.has_value() || !pair.after.has_value()) continue;
    DiffSpec& pair_spec = specs.emplace_back(spec);
    pair_spec.before = pair.before->path;
    pair_spec.after = pair.after->path;
  }
  return specs;
}

/// The closing line: how many modules came out each way.
std::string Summary(const std::vector<ModuleOutcome>& outcomes) {
  const auto count = [&](ModuleOutcome outcome) {
    return std::to_string(std::count(outcomes.begin(), outcomes.end(), outcome));
  };
  return std::to_string(outcomes.size()) + " modules: " + count(ModuleOutcome::kOk) + " ok, " +
         count(ModuleOutcome::kRegressed) + " regressed, " + count(ModuleOutcome::kChanged) +
         " changed, " + count(ModuleOutcome::kOnlyBefore) + " only before, " +
         count(ModuleOutcome::kOnlyAfter) + " only after, " + count(ModuleOutcome::kError) +
         " not compared (error)";
}

}  // namespace

StatusOr<int> DiffDumpDirectories(const DiffSpec& spec, const std::string& json,
                                  std::ostream& out, std::ostream& err) {
  int exit_code = kExitOk;
  if (std::holds_alternative<InputDirectory>(spec.evaluation.inputs)) {
    return InvalidArgument(
        "tpusim diff: error: --inputs DIR holds one program's parameters, but the modules of a "
        "dump directory each take their own: use --inputs seed:N");
  }
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<DumpModule> before, ListDumpModules(spec.before));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<DumpModule> after, ListDumpModules(spec.after));
  const DumpPairing pairing = PairDumpModules(before, after);
  for (const std::string& note : pairing.notes) out << "note: " << note << '\n';
  const std::vector<DiffSpec> pair_specs = PairSpecs(spec, pairing);
  std::vector<StatusOr<DiffReport>> reports = DiffProgramPairs(pair_specs, err);
  size_t next_report = 0;
  std::vector<ModuleOutcome> outcomes;
  Json modules = Json::object();
  for (const DumpModulePair& pair : pairing.pairs) {
    const bool paired = pair.before.has_value() && pair.after.has_value();
    ModuleResult result =
        paired ? PairedModule(pair_specs[next_report], std::move(reports[next_report]), err)
               : OneSidedModule(pair);
    if (paired) ++next_report;
    out << "module " << pair.label << ": " << result.line << '\n';
    outcomes.push_back(result.outcome);
    exit_code = std::max(exit_code, result.exit_code);
    modules[pair.label] = std::move(result.json);
  }
  const std::string summary = Summary(outcomes);
  out << summary << '\n';
  if (json.empty()) return exit_code;
  const Json report = {{"exit_code", exit_code}, {"summary", summary},
                       {"before", spec.before},  {"after", spec.after},
                       {"notes", pairing.notes}, {"modules", std::move(modules)}};
  TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(json, JsonText(report, 2) + "\n"));
  return exit_code;
}


}  // namespace tpusim::harness
