// `tpusim diff BEFORE AFTER --chip NAME`: runs two compilations of the same
// program on the same inputs and chip, and reports what changed — structure
// (module_diff), outputs (output_diff), time and bytes (perf_diff) — with the
// cause in the first lines. docs/cli.md and docs/diff.md describe the report.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/diff/module_diff.h"
#include "harness/run/module_run.h"
#include "harness/diff/output_diff.h"
#include "harness/diff/perf_diff.h"
#include "harness/run/program_io.h"
#include "harness/run/topology_option.h"
#include "sim/arch/preset_loader.h"
#include "sim/base/file.h"
#include "sim/ici/interconnect.h"
#include "sim/timing/timing.h"

namespace tpusim::harness {
namespace {

using value::Literal;
using Json = nlohmann::ordered_json;

constexpr char kCommand[] = "tpusim diff";

/// A --time-tolerance or --bytes-tolerance value, in percent.
StatusOr<double> ParseTolerance(const std::string& text, const std::string& flag) {
  const StatusOr<double> percent = ParsePercentage(text);
  if (!percent.ok()) {
    return InvalidArgument(std::string(kCommand) + ": error: " + flag + " '" + text +
                           "': expected a non-negative percentage such as 2% or 0.5%");
  }
  return percent;
}

/// Both modules must take the same inputs: as many entry parameters, each of
/// the same type and dimensions (layouts may differ).
Status CheckSameParameters(const hlo::HloModule& before, const hlo::HloModule& after) {
  const hlo::HloComputation& a = *before.entry();
  const hlo::HloComputation& b = *after.entry();
  if (a.parameter_count() != b.parameter_count()) {
    return InvalidArgument(after.ErrorAt(
        b.location(), "the entry computation takes " + std::to_string(b.parameter_count()) +
                          " parameter(s) but " + before.filename() + "'s takes " +
                          std::to_string(a.parameter_count()) +
                          "; diff runs both modules on the same inputs"));
  }
  for (int64_t i = 0; i < a.parameter_count(); ++i) {
    const hlo::HloInstruction* pa = a.parameters()[i];
    const hlo::HloInstruction* pb = b.parameters()[i];
    if (pa == nullptr || pb == nullptr || pa->shape().Compatible(pb->shape())) continue;
    return InvalidArgument(after.ErrorAt(
        pb->location(), "parameter " + std::to_string(i) + " is " +
                            pb->shape().ToString(false) + " but " + before.filename() +
                            " takes " + pa->shape().ToString(false) +
                            "; diff runs both modules on the same inputs"));
  }
  return Status();
}

/// How much a structural change explains a regression: lower ranks first.
int Rank(const StructuralChange& c) {
  const hlo::HloInstruction* inst = c.after ? c.after : c.before;
  // Data movement a release inserts or drops: relayouts and padding.
  const bool relayout = inst != nullptr && (inst->opcode() == hlo::HloOpcode::kCopy ||
                                            inst->opcode() == hlo::HloOpcode::kTranspose ||
                                            inst->opcode() == hlo::HloOpcode::kPad);
  switch (c.kind) {
    case ChangeKind::kAdded:
    case ChangeKind::kRemoved:
      return relayout ? 0 : 6;
    case ChangeKind::kPrecision: return 1;
    case ChangeKind::kCollective: return 2;
    case ChangeKind::kShape: return 3;
    case ChangeKind::kLayout: return 4;
    case ChangeKind::kMovedIntoFusion:
    case ChangeKind::kMovedOutOfFusion:
    case ChangeKind::kFusion: return 5;
    case ChangeKind::kOpcode:
    case ChangeKind::kAttribute: return 7;
  }
  return 8;
}

/// A change as the headline names it: "+1 copy f32[...] (relayout ...)" for
/// an added instruction, else its description without the location.
std::string Cause(const StructuralChange& c) {
  std::string text = c.description;
  const size_t at = text.find(" at ");
  if (at != std::string::npos) text.resize(at);
  if (c.kind == ChangeKind::kAdded) return "+1 " + text.substr(sizeof("added: ") - 1);
  if (c.kind == ChangeKind::kRemoved) return "-1 " + text.substr(sizeof("removed: ") - 1);
  return text;
}

/// "+18.0%".
std::string Percent(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%+.1f%%", value);
  return buffer;
}

/// Three significant digits, for errors.
std::string Number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", value);
  return buffer;
}

/// Everything `tpusim diff` found, before it is printed.
struct DiffReport {
  bool values_run = false;  ///< outputs computed and compared (--mode full or values)
  bool timing_run = false;  ///< both timed (--mode full or timing)
  ModuleDiff structure;
  std::vector<OutputComparison> outputs;
  std::vector<std::string> output_count_notes;  ///< leaves present on one side only
  PerformanceDiff performance;
  double time_change = 0;   ///< percent
  double bytes_change = 0;  ///< percent
  /// The networks each ran on (Describe()), when they were given and differ
  /// (--topology-after): the change under study.
  std::string network_before;
  std::string network_after;
};

/// The verdict and the headline's parts.
struct Verdict {
  bool failed = false;
  bool worse = false;  ///< something got slower, bigger or less accurate
  std::vector<std::string> effects;
  std::string headline;
};

/// Fails on a structural change (unless --structure report), an output beyond
/// tolerance or reshaped, or time or HBM bytes beyond their tolerance; the
/// headline names the top-ranked structural change (or, with none, a change of
/// network), then the effects.
Verdict Judge(const DiffReport& report, const DiffOptions& options, double time_tolerance,
              double bytes_tolerance) {
  Verdict v;
  const bool structural = !report.structure.changes.empty();
  if (structural && options.structure == "fail") v.failed = v.worse = true;
  for (const OutputComparison& o : report.outputs) {
    if (!o.compared) {
      v.failed = v.worse = true;
      v.effects.push_back(o.name + " shape " + o.before_shape + " -> " + o.after_shape +
                          " (not compared)");
    } else if (!o.within_tolerance()) {
      v.failed = v.worse = true;
      v.effects.push_back(o.name + ": " + std::to_string(o.beyond_tolerance) + " of " +
                          std::to_string(o.elements) + " elements beyond tolerance (max abs " +
                          Number(o.max_abs_error) + ", max rel " + Number(o.max_rel_error) + ")");
    }
  }
  for (const std::string& note : report.output_count_notes) {
    v.failed = v.worse = true;
    v.effects.push_back(note);
  }
  if (report.timing_run) {
    const bool time_out =
        report.time_change > time_tolerance || report.time_change < -time_tolerance;
    const bool bytes_out =
        report.bytes_change > bytes_tolerance || report.bytes_change < -bytes_tolerance;
    if (time_out || bytes_out) v.failed = true;
    if (report.time_change > time_tolerance || report.bytes_change > bytes_tolerance) {
      v.worse = true;
    }
    v.effects.push_back("time " + Percent(report.time_change) + (time_out ? "" : " (within)"));
    v.effects.push_back("HBM bytes " + Percent(report.bytes_change) +
                        (bytes_out ? "" : " (within)"));
  }
  if (!report.values_run) v.effects.push_back("outputs not compared (--mode timing)");

  std::string effects;
  for (const std::string& e : v.effects) effects += (effects.empty() ? "" : ", ") + e;
  if (effects.empty()) effects = "outputs within tolerance";
  if (!v.failed) {
    v.headline = "OK: no change beyond the thresholds -- " + effects;
    if (structural) {
      v.headline += ", " + std::to_string(report.structure.changes.size()) +
                    " structural change(s) reported";
    } else {
      v.headline += ", no structural change";
    }
    return v;
  }
  std::string cause;
  if (structural) {
    const auto top = std::min_element(
        report.structure.changes.begin(), report.structure.changes.end(),
        [](const StructuralChange& a, const StructuralChange& b) { return Rank(a) < Rank(b); });
    cause = Cause(*top);
  } else if (!report.network_after.empty()) {
    cause = "network " + report.network_before + " -> " + report.network_after;
  } else {
    cause = "no structural change";
  }
  v.headline = std::string(v.worse ? "REGRESSION: " : "CHANGED: ") + cause + " -- " + effects;
  return v;
}

/// Evaluates both modules on the same inputs and compares every output
/// leaf; records each run's loop trip counts and branches for timing.
Status CompareValues(const DiffOptions& options, const EvaluationSpec& evaluation,
                     const hlo::HloModule& before,
                     const hlo::HloModule& after, DiffReport& report,
                     eval::ControlFlowRecord (&control_flow)[2], std::ostream& err) {
  // Same devices and the same inputs (drawn for `before`) for both.
  eval::SpmdConfig spmd = eval::SpmdConfig::CoveringModule(before);
  const eval::SpmdConfig spmd_after = eval::SpmdConfig::CoveringModule(after);
  spmd.replica_count = std::max(spmd.replica_count, spmd_after.replica_count);
  spmd.partition_count = std::max(spmd.partition_count, spmd_after.partition_count);
  TPUSIM_ASSIGN_OR_RETURN(std::vector<std::vector<Literal>> inputs,
                          LoadInputs(before, spmd, evaluation));
  TPUSIM_ASSIGN_OR_RETURN(const Evaluation run_before,
                          EvaluateModule(before, spmd, evaluation, inputs, err));
  TPUSIM_ASSIGN_OR_RETURN(const Evaluation run_after,
                          EvaluateModule(after, spmd, evaluation, std::move(inputs), err));

  value::ErrorSpec tolerance;
  tolerance.rtol = options.rtol;
  tolerance.atol = options.atol;
  if (options.max_ulp.has_value()) tolerance.ulp = static_cast<uint64_t>(*options.max_ulp);
  const int64_t devices = spmd.device_count();
  for (int64_t d = 0; d < devices; ++d) {
    const std::string prefix = devices > 1 ? "device_" + std::to_string(d) + "/" : "";
    const std::vector<OutputLeaf> a = OutputLeaves(run_before.results[d]);
    const std::vector<OutputLeaf> b = OutputLeaves(run_after.results[d]);
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      report.outputs.push_back(
          DiffOutput(prefix + b[i].name, *a[i].value, *b[i].value, tolerance));
    }
    if (a.size() != b.size()) {
      report.output_count_notes.push_back(prefix + "outputs: " + std::to_string(a.size()) +
                                          " before, " + std::to_string(b.size()) + " after");
    }
  }

  control_flow[0] = run_before.control_flow;
  control_flow[1] = run_after.control_flow;
  return Status();
}

/// Runs both modules and gathers every comparison.
StatusOr<DiffReport> Compare(const DiffOptions& options, const EvaluationSpec& evaluation,
                             const hlo::HloModule& before,
                             const hlo::HloModule& after,
                             const std::optional<arch::ChipConfig>& chip, std::ostream& err) {
  DiffReport report;
  report.structure = DiffModules(before, after);
  report.values_run = options.mode != "timing";
  report.timing_run = options.mode != "values";
  eval::ControlFlowRecord control_flow[2];
  if (report.values_run) {
    TPUSIM_RETURN_IF_ERROR(CompareValues(options, evaluation, before, after, report, control_flow, err));
  }
  if (!report.timing_run) return report;

  // Both on the same network, when there is one (or AFTER on its own, with
  // --topology-after): every device timed and the collectives routed over its
  // links.
  TPUSIM_ASSIGN_OR_RETURN(const ici::Algorithm algorithm, ici::ParseAlgorithm(options.algorithm));
  const auto network = [&](const std::string& option) -> StatusOr<std::unique_ptr<ici::Interconnect>> {
    if (option.empty()) return std::unique_ptr<ici::Interconnect>();
    TPUSIM_ASSIGN_OR_RETURN(arch::TopologyConfig topology,
                            LoadTopologyOption(option, "tpusim diff: error: "));
    TPUSIM_RETURN_IF_ERROR(arch::ApplyTpuWraparound(topology, *chip));
    return ici::Interconnect::Create(topology, *chip);
  };
  std::unique_ptr<ici::Interconnect> interconnects[2];
  TPUSIM_ASSIGN_OR_RETURN(interconnects[0], network(options.topology));
  TPUSIM_ASSIGN_OR_RETURN(interconnects[1],
                          network(options.topology_after.empty() ? options.topology
                                                                 : options.topology_after));
  if (!options.topology_after.empty() &&
      interconnects[0]->Describe() != interconnects[1]->Describe()) {
    report.network_before = interconnects[0]->Describe();
    report.network_after = interconnects[1]->Describe();
  }
  // Both timed in one SystemC run: the kernel starts once per process.
  std::vector<timing::SimulationJob> jobs(2);
  jobs[0].module = &before;
  jobs[1].module = &after;
  for (size_t k = 0; k < 2; ++k) {
    jobs[k].chip = &*chip;
    jobs[k].options.trip_counts = control_flow[k].trip_counts;
    jobs[k].options.branches = control_flow[k].branches;
    jobs[k].options.interconnect = interconnects[k].get();
    jobs[k].options.algorithm = algorithm;
  }
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<timing::TimingResult> timed,
                          timing::SimulateBatch(jobs));
  report.performance =
      ComparePerformance(timed[0], before, timed[1], after, report.structure.matched);
  report.time_change = PercentChange(report.performance.before.time_us,
                                     report.performance.after.time_us);
  report.bytes_change = PercentChange(static_cast<double>(report.performance.before.hbm_bytes),
                                      static_cast<double>(report.performance.after.hbm_bytes));
  return report;
}

/// The numerics section: one row per output leaf.
void PrintNumerics(const DiffReport& report, const DiffOptions& options, std::ostream& out) {
  out << "\nnumerics (rtol " << Number(options.rtol) << ", atol " << Number(options.atol);
  if (options.max_ulp.has_value()) out << ", max-ulp " << *options.max_ulp;
  out << "):\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-24s %-20s %10s %10s %11s %11s %10s\n", "output", "shape",
                "differing", "beyond", "max abs", "max rel", "max ulp");
  out << line;
  for (const OutputComparison& o : report.outputs) {
    if (!o.compared) {
      out << "  " << o.name << ": shape " << o.before_shape << " -> " << o.after_shape
          << ": a structural change, values not compared\n";
      continue;
    }
    std::snprintf(line, sizeof line, "  %-24s %-20s %10lld %10lld %11.3g %11.3g %10s\n",
                  o.name.c_str(), o.after_shape.c_str(), static_cast<long long>(o.differing),
                  static_cast<long long>(o.beyond_tolerance), o.max_abs_error, o.max_rel_error,
                  o.max_ulp.has_value() ? std::to_string(*o.max_ulp).c_str() : "-");
    out << line;
  }
  for (const std::string& note : report.output_count_notes) out << "  " << note << '\n';
}

/// The performance section: totals, then the instructions that changed most.
void PrintPerformance(const DiffReport& report, const DiffOptions& options,
                      const std::string& chip, std::ostream& out) {
  char line[256];

  const PerformanceDiff& p = report.performance;
  out << "\nperformance on " << chip << ":\n";
  if (!report.network_after.empty()) {
    out << "  network before: " << report.network_before << "\n  network after:  " << report.network_after
        << '\n';
  }
  std::snprintf(line, sizeof line, "  %-18s %16s %16s %10s\n", "", "before", "after", "change");
  out << line;
  const auto row = [&](const char* name, double a, double b, const char* format) {
    char va[32], vb[32];
    std::snprintf(va, sizeof va, format, a);
    std::snprintf(vb, sizeof vb, format, b);
    std::snprintf(line, sizeof line, "  %-18s %16s %16s %10s\n", name, va, vb,
                  Percent(PercentChange(a, b)).c_str());
    out << line;
  };
  row("time (us)", p.before.time_us, p.after.time_us, "%.3f");
  row("cycles", static_cast<double>(p.before.cycles), static_cast<double>(p.after.cycles), "%.0f");
  row("HBM bytes", static_cast<double>(p.before.hbm_bytes), static_cast<double>(p.after.hbm_bytes),
      "%.0f");
  row("FLOPs", static_cast<double>(p.before.flops), static_cast<double>(p.after.flops), "%.0f");
  row("collective bytes", static_cast<double>(p.before.collective_bytes),
      static_cast<double>(p.after.collective_bytes), "%.0f");
  if (p.before.ici_bytes.has_value() && p.after.ici_bytes.has_value()) {
    row("ICI bytes", static_cast<double>(*p.before.ici_bytes),
        static_cast<double>(*p.after.ici_bytes), "%.0f");
  } else {
    out << "  ICI bytes          not routed (no --topology: device 0 timed alone)\n";
  }
  out << "  top instructions by time change:\n";
  int64_t shown = 0;
  for (const InstructionDelta& d : p.instructions) {
    if (shown >= options.top || (d.delta_cycles() == 0 && d.delta_hbm_bytes() == 0)) break;
    ++shown;
    const std::string who = d.before.empty()   ? "(added) %" + d.after
                            : d.after.empty()  ? "%" + d.before + " (removed)"
                            : d.before == d.after ? "%" + d.after
                                                  : "%" + d.before + " -> %" + d.after;
    std::snprintf(line, sizeof line, "    %+12lld cycles %+14lld HBM bytes  %s (%s)\n",
                  static_cast<long long>(d.delta_cycles()),
                  static_cast<long long>(d.delta_hbm_bytes()), who.c_str(), d.opcode.c_str());
    out << line;
  }
  if (shown == 0) out << "    (none: every instruction costs the same)\n";
}

/// The terminal report: headline and causes first, then one section each.
void PrintReport(const DiffReport& report, const Verdict& verdict, const DiffOptions& options,
                 const std::string& chip, std::ostream& out) {
  out << verdict.headline << '\n';
  std::vector<const StructuralChange*> ranked;
  for (const StructuralChange& c : report.structure.changes) ranked.push_back(&c);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const StructuralChange* a, const StructuralChange* b) {
                     return Rank(*a) < Rank(*b);
                   });
  for (size_t i = 0; i < ranked.size() && i < 3; ++i) out << "  cause: " << ranked[i]->description << '\n';

  out << "\nstructure: " << report.structure.changes.size() << " change(s)\n";
  for (const StructuralChange& c : report.structure.changes) out << "  " << c.description << '\n';

  if (!report.values_run) {
    out << "\nnumerics: not run (--mode timing)\n";
  } else {
    PrintNumerics(report, options, out);
  }
  if (!report.timing_run) {
    out << "\nperformance: not run (--mode values)\n";
    return;
  }
  PrintPerformance(report, options, chip, out);
}

Json TotalsJson(const RunTotals& t) {
  Json j;
  j["cycles"] = t.cycles;
  j["time_us"] = t.time_us;
  j["hbm_bytes"] = t.hbm_bytes;
  j["flops"] = t.flops;
  j["collective_bytes"] = t.collective_bytes;
  j["ici_bytes"] = t.ici_bytes.has_value() ? Json(*t.ici_bytes) : Json(nullptr);
  return j;
}

std::string ReportJson(const DiffReport& report, const Verdict& verdict, const DiffOptions& options,
                       const std::string& chip, int exit_code) {
  Json j;
  j["verdict"] = !verdict.failed ? "ok" : verdict.worse ? "regression" : "changed";
  j["exit_code"] = exit_code;
  j["headline"] = verdict.headline;
  j["before"] = options.before;
  j["after"] = options.after;
  j["chip"] = chip;
  Json& thresholds = j["thresholds"];
  thresholds["rtol"] = options.rtol;
  thresholds["atol"] = options.atol;
  thresholds["max_ulp"] = options.max_ulp.has_value() ? Json(*options.max_ulp) : Json(nullptr);
  thresholds["time_tolerance"] = options.time_tolerance;
  thresholds["bytes_tolerance"] = options.bytes_tolerance;
  thresholds["structure"] = options.structure;
  Json changes = Json::array();
  for (const StructuralChange& c : report.structure.changes) {
    Json e;
    e["kind"] = ChangeKindName(c.kind);
    e["description"] = c.description;
    e["before"] = c.before ? Json(c.before->name()) : Json(nullptr);
    e["after"] = c.after ? Json(c.after->name()) : Json(nullptr);
    changes.push_back(std::move(e));
  }
  j["structure"] = std::move(changes);
  Json outputs = Json::array();
  for (const OutputComparison& o : report.outputs) {
    Json e;
    e["name"] = o.name;
    e["before_shape"] = o.before_shape;
    e["after_shape"] = o.after_shape;
    e["compared"] = o.compared;
    e["elements"] = o.elements;
    e["differing"] = o.differing;
    e["beyond_tolerance"] = o.beyond_tolerance;
    e["nan_mismatches"] = o.nan_mismatches;
    e["max_abs_error"] = o.max_abs_error;  // infinity is written as null
    e["max_rel_error"] = o.max_rel_error;
    e["max_ulp"] = o.max_ulp.has_value() ? Json(*o.max_ulp) : Json(nullptr);
    e["worst_index"] = o.worst_index;
    outputs.push_back(std::move(e));
  }
  j["numerics"] = report.values_run ? std::move(outputs) : Json(nullptr);
  if (!report.timing_run) {
    j["performance"] = nullptr;
    return j.dump(2) + "\n";
  }
  Json& perf = j["performance"];
  perf["before"] = TotalsJson(report.performance.before);
  perf["after"] = TotalsJson(report.performance.after);
  perf["network_before"] = report.network_before.empty() ? Json(nullptr) : Json(report.network_before);
  perf["network_after"] = report.network_after.empty() ? Json(nullptr) : Json(report.network_after);
  perf["time_change_percent"] = report.time_change;
  perf["hbm_bytes_change_percent"] = report.bytes_change;
  Json top = Json::array();
  int64_t shown = 0;
  for (const InstructionDelta& d : report.performance.instructions) {
    if (shown++ >= options.top) break;
    Json e;
    e["before"] = d.before.empty() ? Json(nullptr) : Json(d.before);
    e["after"] = d.after.empty() ? Json(nullptr) : Json(d.after);
    e["opcode"] = d.opcode;
    e["before_cycles"] = d.before_cycles;
    e["after_cycles"] = d.after_cycles;
    e["before_hbm_bytes"] = d.before_hbm_bytes;
    e["after_hbm_bytes"] = d.after_hbm_bytes;
    top.push_back(std::move(e));
  }
  perf["top_instructions"] = std::move(top);
  return j.dump(2) + "\n";
}

/// The whole comparison; errors are input errors. Sets `exit_code` to 0 or 1.
Status Execute(const DiffOptions& options, std::ostream& out, std::ostream& err, int& exit_code) {
  TPUSIM_ASSIGN_OR_RETURN(const double time_tolerance,
                          ParseTolerance(options.time_tolerance, "--time-tolerance"));
  TPUSIM_ASSIGN_OR_RETURN(const double bytes_tolerance,
                          ParseTolerance(options.bytes_tolerance, "--bytes-tolerance"));
  TPUSIM_ASSIGN_OR_RETURN(
      const EvaluationSpec evaluation,
      ParseEvaluationSpec(kCommand, options.inputs, options.numerics, options.max_memory));
  std::optional<arch::ChipConfig> chip;
  if (options.mode != "values") {
    if (options.chip.empty()) {
      return InvalidArgument(std::string(kCommand) + ": error: --mode " + options.mode +
                             " times both modules: give --chip NAME (see tpusim presets)");
    }
    TPUSIM_ASSIGN_OR_RETURN(chip, arch::LoadChipPreset(options.chip, options.models_dir,
                                                       options.overrides));
  }
  if (!options.topology_after.empty() && options.topology.empty()) {
    return InvalidArgument(std::string(kCommand) +
                           ": error: --topology-after compares two networks: give BEFORE's with "
                           "--topology");
  }
  TPUSIM_ASSIGN_OR_RETURN(const std::string text_before, ReadFile(options.before));
  TPUSIM_ASSIGN_OR_RETURN(const std::unique_ptr<hlo::HloModule> before,
                          ParseAndVerifyModule(text_before, options.before));
  TPUSIM_ASSIGN_OR_RETURN(const std::string text_after, ReadFile(options.after));
  TPUSIM_ASSIGN_OR_RETURN(const std::unique_ptr<hlo::HloModule> after,
                          ParseAndVerifyModule(text_after, options.after));
  TPUSIM_RETURN_IF_ERROR(CheckSameParameters(*before, *after));

  TPUSIM_ASSIGN_OR_RETURN(const DiffReport report, Compare(options, evaluation, *before, *after, chip, err));
  const Verdict verdict = Judge(report, options, time_tolerance, bytes_tolerance);
  exit_code = verdict.failed ? kExitCheckFailed : kExitOk;
  PrintReport(report, verdict, options, options.chip, out);
  if (!options.json.empty()) {
    TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(
        options.json, ReportJson(report, verdict, options, options.chip, exit_code)));
  }
  return Status();
}

}  // namespace

CLI::App* AddDiffCommand(CLI::App& app, DiffOptions& options) {
  CLI::App* diff = app.add_subcommand(
      "diff",
      "Run two compilations of one program on the same inputs and chip; report what changed");
  diff->add_option("BEFORE", options.before, "The reference HLO module")->required()->type_name("");
  diff->add_option("AFTER", options.after, "The HLO module compared with it")
      ->required()
      ->type_name("");
  diff->add_option("--chip", options.chip,
                   "Chip preset both are timed on: a name from 'tpusim presets' or a YAML file "
                   "(required unless --mode values)")
      ->option_text("NAME|FILE");
  diff->add_option("--mode", options.mode,
                   "full: compare outputs and performance; timing: performance only (for "
                   "modules the evaluator cannot run, or too large to); values: outputs only, "
                   "no --chip needed")
      ->option_text("full|timing|values")
      ->check(CLI::IsMember({"full", "timing", "values"}))
      ->capture_default_str();
  diff->add_option("-p,--param", options.overrides,
                   "Override one preset field (repeatable), as for exec")
      ->option_text("KEY=VALUE");
  options.models_dir = TPUSIM_MODELS_DIR;  // the source tree's models/, set by CMake
  diff->add_option("--models-dir", options.models_dir,
                   "Where preset names are looked up; default: " + options.models_dir)
      ->option_text("DIR");
  diff->add_option("--inputs", options.inputs,
                   "The entry parameters both modules run on: seed:N (drawn for BEFORE) or a "
                   "directory of param_<N>.npy files, as for exec")
      ->option_text("seed:N|DIR")
      ->capture_default_str();
  diff->add_option("--topology", options.topology,
                   "The network both modules run on (a short form such as torus:4x4, or a YAML "
                   "file; docs/interconnect.md): every device is timed and collectives are "
                   "routed over its links, so ICI bytes are compared. Default: device 0 alone")
      ->option_text("SHORTFORM|FILE");
  diff->add_option("--topology-after", options.topology_after,
                   "The network AFTER runs on, when it is not BEFORE's (--topology): the same "
                   "program (BEFORE and AFTER may be one file) on a re-cabled or resized pod. The "
                   "headline then names the network change")
      ->option_text("SHORTFORM|FILE");
  diff->add_option("--algorithm", options.algorithm,
                   "Collective algorithm with --topology (auto, ring, bidirectional-ring, torus, "
                   "hamiltonian-rings, tree, halving-doubling, direct)")
      ->option_text("NAME")
      ->capture_default_str();
  diff->add_option("--numerics", options.numerics,
                   "tpu: dot and convolution as the MXU computes them; ieee: full precision")
      ->option_text("tpu|ieee")
      ->check(CLI::IsMember({"tpu", "ieee"}))
      ->capture_default_str();
  diff->add_option("--max-memory", options.max_memory,
                   "Refuse, before allocating, a run needing more than this (default: half the "
                   "physical memory)")
      ->option_text("BYTES");
  diff->add_option("--rtol", options.rtol,
                   "An output element passes when |after - before| <= atol + rtol * |before|")
      ->option_text("X")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  diff->add_option("--atol", options.atol, "Absolute tolerance of an output element")
      ->option_text("X")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  diff->add_option("--max-ulp", options.max_ulp,
                   "An element within N units in the last place also passes (bf16, f16, f32, "
                   "f64); default: not used")
      ->option_text("N")
      ->check(CLI::NonNegativeNumber);
  diff->add_option("--time-tolerance", options.time_tolerance,
                   "Largest change of total time, either way, that passes")
      ->option_text("PCT")
      ->capture_default_str();
  diff->add_option("--bytes-tolerance", options.bytes_tolerance,
                   "Largest change of HBM bytes, either way, that passes")
      ->option_text("PCT")
      ->capture_default_str();
  diff->add_option("--structure", options.structure,
                   "fail: any structural change exits 1; report: list structural changes but "
                   "judge only outputs, time and bytes")
      ->option_text("fail|report")
      ->check(CLI::IsMember({"fail", "report"}))
      ->capture_default_str();
  diff->add_option("--json", options.json,
                   "Write the whole comparison as JSON to FILE (atomically)")
      ->option_text("FILE");
  diff->add_option("--top", options.top, "Instructions listed by time change")
      ->option_text("N")
      ->check(PositiveNumber())
      ->capture_default_str();
  diff->footer(R"(Report: the first line is the verdict and its main cause, e.g.
  REGRESSION: +1 copy f32[1024,512]{0,1} (relayout {1,0} -> {0,1} of %p.1) -- time +18.0%, HBM bytes +31.0%
followed by up to three 'cause:' lines, then the structure, numerics and
performance sections. Instructions are matched by structure and metadata, never
by name: renamed instructions, reordered independent instructions and changed
metadata are no change (docs/diff.md).

Exit codes:
  0  nothing changed beyond the thresholds
  1  a structural change (with --structure fail), an output beyond tolerance or of
     another shape, or time or HBM bytes changed beyond their tolerance
  2  usage error; a file unreadable, malformed or not verifiable; modules whose
     entry parameters differ; bad inputs or preset; an unsupported operation)");
  return diff;
}

int RunDiff(const DiffOptions& options, std::ostream& out, std::ostream& err) {
  int exit_code = kExitOk;
  const Status status = Execute(options, out, err, exit_code);
  if (!status.ok()) {
    PrintError(status, err);
    return kExitInputError;
  }
  out.flush();
  return exit_code;
}

}  // namespace tpusim::harness
