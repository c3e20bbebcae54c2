#include "harness/diff/diff_report.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/run/metrics.h"
#include "sim/base/json_text.h"
#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

using Json = nlohmann::ordered_json;

/// "+18.0%".
std::string Percent(double value) { return FormatPercent(value, PercentSign::kSigned); }

/// Three significant digits, for errors.
std::string Number(double value) { return FormatSignificant(value, 3); }

/// "collectives 40.1 us, 12.0 exposed -> 95.2 us, 30.5 exposed": how much of
/// the collectives' time compute does not hide, before and after, which is
/// the margin a changed network leaves.
std::string Exposure(const Metrics& before, const Metrics& after) {
  const auto side = [](const Metrics& m) {
    return FormatFixed(m.collective_time_us, 1) + " us, " +
           FormatFixed(m.exposed_collective_time_us, 1) + " exposed";
  };
  return "collectives " + side(before) + " -> " + side(after);
}

/// Beyond this many ulps apart, a distance in ulps says nothing a reader can
/// use: 2^16 ulps are already about 1% of an f32 value, and every octave
/// between two wrong values adds 2^23 more (2,080,527,360 for values of
/// opposite sign). The absolute and relative errors say it instead.
constexpr uint64_t kMeaningfulUlp = uint64_t{1} << 16;

/// "within 3 ulp", or nothing when the distance is unknown or not meaningful.
std::optional<std::string> UlpWords(const std::optional<uint64_t>& max_ulp) {
  if (!max_ulp.has_value() || *max_ulp > kMeaningfulUlp) return std::nullopt;
  return "within " + FormatGrouped(static_cast<int64_t>(*max_ulp)) + " ulp";
}

/// "output_0" of "device_3/output_0": the leaf whatever the device.
std::string LeafName(const std::string& name) {
  const size_t slash = name.find('/');
  if (name.rfind("device_", 0) != 0 || slash == std::string::npos) return name;
  return name.substr(slash + 1);
}

/// The headline's output clauses: one per output leaf that failed, the same
/// leaf of every device together ("output_0 on 8/8 devices: ..."), so that an
/// 8-device program's headline stays one short line. The numerics section
/// keeps each device's row.
std::vector<std::string> OutputEffects(const std::vector<OutputComparison>& outputs) {
  struct Leaf {
    std::string name;
    bool per_device = false;  ///< named "device_K/NAME", by a multi-device program
    int64_t devices = 0;
    const OutputComparison* reshaped = nullptr;  ///< a device's leaf of another shape
    int64_t reshaped_devices = 0;
    int64_t failing_devices = 0;  ///< compared, some element beyond tolerance
    OutputComparison worst;       ///< summed counts, largest errors, of the failing devices
  };
  std::vector<Leaf> leaves;
  std::map<std::string, size_t> index;  // leaf name -> leaves[], first seen first
  for (const OutputComparison& o : outputs) {
    const std::string name = LeafName(o.name);
    const auto [it, added] = index.emplace(name, leaves.size());
    if (added) leaves.emplace_back().name = name;
    Leaf& leaf = leaves[it->second];
    leaf.per_device = name != o.name;
    ++leaf.devices;
    if (!o.compared) {
      if (leaf.reshaped == nullptr) leaf.reshaped = &o;
      ++leaf.reshaped_devices;
    } else if (!o.within_tolerance()) {
      ++leaf.failing_devices;
      OutputComparison& w = leaf.worst;
      w.elements += o.elements;
      w.beyond_tolerance += o.beyond_tolerance;
      w.nan_mismatches += o.nan_mismatches;
      w.max_abs_error = std::max(w.max_abs_error, o.max_abs_error);
      w.max_rel_error = std::max(w.max_rel_error, o.max_rel_error);
      if (o.max_ulp.has_value()) w.max_ulp = std::max(w.max_ulp.value_or(0), *o.max_ulp);
    }
  }
  std::vector<std::string> effects;
  for (const Leaf& leaf : leaves) {
    const auto on = [&](int64_t devices) {
      if (!leaf.per_device) return leaf.name;
      return leaf.name + " on " + std::to_string(devices) + "/" + std::to_string(leaf.devices) +
             " devices";
    };
    if (leaf.reshaped != nullptr) {
      effects.push_back(on(leaf.reshaped_devices) + " shape " + leaf.reshaped->before_shape +
                        " -> " + leaf.reshaped->after_shape + " (not compared)");
    }
    if (leaf.failing_devices == 0) continue;
    const OutputComparison& w = leaf.worst;
    // NaN against a number has no error size: the errors describe the others.
    std::string why;
    if (w.nan_mismatches > 0) why = FormatGrouped(w.nan_mismatches) + " NaN against a number";
    if (w.nan_mismatches < w.beyond_tolerance) {
      const std::optional<std::string> ulp = UlpWords(w.max_ulp);
      why += (why.empty() ? "max abs " : "; the others max abs ") + Number(w.max_abs_error) +
             ", max rel " + Number(w.max_rel_error) + (ulp ? ", " + *ulp : "");
    }
    effects.push_back(on(leaf.failing_devices) + ": " + FormatGrouped(w.beyond_tolerance) + " of " +
                      FormatGrouped(w.elements) + " elements beyond tolerance (" + why + ")");
  }
  return effects;
}

/// The first `top` instructions whose cycles or HBM bytes changed, largest
/// change first: the text and the JSON list the same ones.
std::vector<const InstructionDelta*> TopInstructions(const PerformanceDiff& performance,
                                                     int64_t top) {
  std::vector<const InstructionDelta*> shown;
  for (const InstructionDelta& d : performance.instructions) {
    // Sorted by change: the first unchanged one ends the changed ones.
    if (static_cast<int64_t>(shown.size()) >= top ||
        (d.delta_cycles() == 0 && d.delta_hbm_bytes() == 0)) {
      break;
    }
    shown.push_back(&d);
  }
  return shown;
}

}  // namespace

Verdict Judge(const DiffReport& report, const DiffSpec& spec) {
  Verdict v;
  const bool structural = !report.structure.changes.empty();
  // A structural change fails the gate for review; whether it made things
  // worse is for the outputs and the costs to say (a removed copy is CHANGED).
  if (structural && spec.thresholds.structure_fails) v.failed = true;
  v.effects = OutputEffects(report.outputs);
  if (!v.effects.empty()) v.failed = v.worse = true;
  // Every device of an SPMD program returns as many leaves: one note for all
  // (the numerics section lists each device's).
  std::vector<std::string> notes;
  std::map<std::string, int64_t> devices_by_note;
  for (const std::string& note : report.output_count_notes) {
    if (devices_by_note[LeafName(note)]++ == 0) notes.push_back(LeafName(note));
  }
  for (const std::string& note : notes) {
    v.failed = v.worse = true;
    const int64_t devices = devices_by_note[note];
    v.effects.push_back(devices > 1 ? note + " on " + std::to_string(devices) + " devices" : note);
  }
  if (report.timing_run) {
    // A total against its tolerance; without one, reported and not gated.
    const auto gate = [&v](const std::string& what, double change,
                           const std::optional<ChangeTolerance>& tolerance) {
      const std::string effect = what + " " + Percent(change);
      if (!tolerance.has_value()) {
        v.effects.push_back(effect + " (not gated)");
        return;
      }
      const bool out = change > tolerance->percent || change < -tolerance->percent;
      if (out) v.failed = true;
      if (change > tolerance->percent) v.worse = true;
      v.effects.push_back(out ? effect : effect + " (within)");
    };
    const Metrics& before = report.performance.before;
    const Metrics& after = report.performance.after;
    gate("time", report.time_change, spec.thresholds.time);
    gate("HBM bytes", report.bytes_change, spec.thresholds.bytes);
    if (before.collective_time_us > 0 || after.collective_time_us > 0) {
      gate("collective time", report.collective_change, spec.thresholds.collective);
    }
    // The network's load shows whenever there is one, gated or not: a
    // schedule moved to a network where it barely fits passes on time alone.
    const bool routed = before.ici_bytes.has_value() && after.ici_bytes.has_value();
    if (routed && (*before.ici_bytes > 0 || *after.ici_bytes > 0)) {
      gate("ICI bytes", report.ici_bytes_change, spec.thresholds.ici_bytes);
      if (spec.thresholds.link_bytes.has_value() || !report.network_after.empty()) {
        gate("busiest link bytes", report.link_bytes_change, spec.thresholds.link_bytes);
      }
    }
    if (!report.network_after.empty() &&
        (before.collective_time_us > 0 || after.collective_time_us > 0)) {
      v.effects.push_back(Exposure(before, after));
    }
  }
  if (report.values_subset.has_value()) v.effects.push_back(report.values_subset->which);
  if (!report.values_run) {
    v.effects.push_back(report.values_skipped.empty()
                            ? "outputs not compared (--mode timing)"
                            : "outputs not compared (their values could not be computed)");
  }

  std::string effects;
  for (const std::string& e : v.effects) effects += (effects.empty() ? "" : ", ") + e;
  if (effects.empty()) effects = "outputs within tolerance";
  if (!v.failed) {
    v.headline = "OK: no change beyond the thresholds -- " + effects;
    if (structural) {
      v.headline +=
          ", " + std::to_string(report.structure.changes.size()) + " structural change(s) reported";
    } else {
      v.headline += ", no structural change";
    }
    return v;
  }
  std::string cause;
  if (structural) {
    cause = ChangeCause(*ChangesByRelevance(report.structure).front());
  } else if (!report.network_after.empty()) {
    cause = "network " + report.network_before + " -> " + report.network_after;
  } else {
    cause = "no structural change";
  }
  v.headline = std::string(v.worse ? "REGRESSION: " : "CHANGED: ") + cause + " -- " + effects;
  return v;
}

namespace {

/// The numerics section: one row per output leaf.
void PrintNumerics(const DiffReport& report, const DiffThresholds& thresholds, std::ostream& out) {
  out << "\nnumerics (rtol " << Number(thresholds.rtol) << ", atol " << Number(thresholds.atol);
  if (thresholds.max_ulp.has_value()) out << ", max-ulp " << *thresholds.max_ulp;
  for (const auto& [type, spec] : thresholds.per_type) {
    out << "; " << hlo::PrimitiveTypeName(type) << ": rtol " << Number(spec.rtol) << ", atol "
        << Number(spec.atol);
    if (spec.ulp.has_value()) out << ", max-ulp " << *spec.ulp;
  }
  out << "):\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-24s %-20s %10s %10s %11s %11s  %s\n", "output", "shape",
                "differing", "beyond", "max abs", "max rel", "ulp");
  out << line;
  for (const OutputComparison& o : report.outputs) {
    if (!o.compared) {
      out << "  " << o.name << ": shape " << o.before_shape << " -> " << o.after_shape
          << ": a structural change, values not compared\n";
      continue;
    }
    std::snprintf(line, sizeof line, "  %-24s %-20s %10lld %10lld %11.3g %11.3g  %s\n",
                  o.name.c_str(), o.after_shape.c_str(), static_cast<long long>(o.differing),
                  static_cast<long long>(o.beyond_tolerance), o.max_abs_error, o.max_rel_error,
                  UlpWords(o.max_ulp).value_or("-").c_str());
    out << line;
  }
  for (const std::string& note : report.output_count_notes) out << "  " << note << '\n';
}

/// The performance section: totals, then the instructions that changed most.
void PrintPerformance(const DiffReport& report, int64_t top, const std::string& chip,
                      std::ostream& out) {
  char line[256];

  const PerformanceDiff& p = report.performance;
  out << "\nperformance on " << chip << ":\n";
  if (!report.network_after.empty()) {
    out << "  network before: " << report.network_before
        << "\n  network after:  " << report.network_after << '\n';
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
  if (p.before.pcie_bytes > 0 || p.after.pcie_bytes > 0) {
    row("PCIe bytes", static_cast<double>(p.before.pcie_bytes),
        static_cast<double>(p.after.pcie_bytes), "%.0f");
  }
  row("FLOPs", static_cast<double>(p.before.flops), static_cast<double>(p.after.flops), "%.0f");
  row("collective bytes", static_cast<double>(p.before.collective_bytes),
      static_cast<double>(p.after.collective_bytes), "%.0f");
  row("collectives (us)", p.before.collective_time_us, p.after.collective_time_us, "%.3f");
  row("  exposed (us)", p.before.exposed_collective_time_us, p.after.exposed_collective_time_us,
      "%.3f");
  if (p.before.ici_bytes.has_value() && p.after.ici_bytes.has_value()) {
    row("ICI bytes", static_cast<double>(*p.before.ici_bytes),
        static_cast<double>(*p.after.ici_bytes), "%.0f");
    row("busiest link bytes", static_cast<double>(p.before.busiest_link_bytes),
        static_cast<double>(p.after.busiest_link_bytes), "%.0f");
  } else {
    out << "  ICI bytes          not routed (no --topology: device 0 timed alone)\n";
  }
  out << "  top instructions by time change:\n";
  const std::vector<const InstructionDelta*> shown = TopInstructions(p, top);
  for (const InstructionDelta* delta : shown) {
    const InstructionDelta& d = *delta;
    const std::string who = d.before == nullptr ? "(added) %" + d.after->name()
                            : d.after == nullptr ? "%" + d.before->name() + " (removed)"
                            : d.before->name() == d.after->name()
                                ? "%" + d.after->name()
                                : "%" + d.before->name() + " -> %" + d.after->name();
    std::snprintf(line, sizeof line, "    %+12lld cycles %+14lld HBM bytes  %s (%s)\n",
                  static_cast<long long>(d.delta_cycles()),
                  static_cast<long long>(d.delta_hbm_bytes()), who.c_str(),
                  d.instruction().OpcodeSpelling().c_str());
    out << line;
  }
  if (shown.empty()) out << "    (none: every instruction costs the same)\n";
}

}  // namespace

PairDiff JudgePair(DiffReport report, const DiffSpec& spec) {
  PairDiff pair;
  pair.verdict = Judge(report, spec);
  pair.report = std::move(report);
  pair.exit_code = pair.verdict.failed ? kExitCheckFailed : kExitOk;
  return pair;
}

void PrintDiffReport(const DiffReport& report, const Verdict& verdict, const DiffSpec& spec,
                     std::ostream& out) {
  out << verdict.headline << '\n';
  const std::vector<const StructuralChange*> ranked = ChangesByRelevance(report.structure);
  for (size_t i = 0; i < ranked.size() && i < kReportedCauses; ++i)
    out << "  cause: " << ranked[i]->description << '\n';

  out << "\nstructure: " << report.structure.changes.size() << " change(s)\n";
  for (const StructuralChange& c : report.structure.changes) out << "  " << c.description << '\n';

  if (!report.values_skipped.empty()) {
    out << "\nnumerics: not run: " << report.values_skipped << '\n';
  } else if (!report.values_run) {
    out << "\nnumerics: not run (--mode timing)\n";
  } else {
    if (report.values_subset.has_value()) {
      out << "\nnumerics: " << report.values_subset->Note() << '\n';
    }
    PrintNumerics(report, spec.thresholds, out);
  }
  if (!report.timing_run) {
    out << "\nperformance: not run (--mode values)\n";
    return;
  }
  PrintPerformance(report, spec.top, spec.chip_name, out);
}

std::string DiffReportJson(const DiffReport& report, const Verdict& verdict, const DiffSpec& spec,
                           int exit_code) {
  Json j;
  j["verdict"] = !verdict.failed ? "ok" : verdict.worse ? "regression" : "changed";
  j["exit_code"] = exit_code;
  j["headline"] = verdict.headline;
  j["before"] = spec.before;
  j["after"] = spec.after;
  j["chip"] = spec.chip_name;
  Json& thresholds = j["thresholds"];
  thresholds["rtol"] = spec.thresholds.rtol;
  thresholds["atol"] = spec.thresholds.atol;
  thresholds["max_ulp"] =
      spec.thresholds.max_ulp.has_value() ? Json(*spec.thresholds.max_ulp) : Json(nullptr);
  if (!spec.thresholds.per_type.empty()) {
    Json& per_type = thresholds["per_type"];
    for (const auto& [type, t] : spec.thresholds.per_type) {
      per_type[std::string(hlo::PrimitiveTypeName(type))] = {
          {"rtol", t.rtol}, {"atol", t.atol}, {"max_ulp", t.ulp ? Json(*t.ulp) : Json(nullptr)}};
    }
  }
  const auto tolerance = [](const std::optional<ChangeTolerance>& t) {
    return t.has_value() ? Json(t->text) : Json(nullptr);
  };
  thresholds["time_tolerance"] = tolerance(spec.thresholds.time);
  thresholds["bytes_tolerance"] = tolerance(spec.thresholds.bytes);
  thresholds["collective_tolerance"] = tolerance(spec.thresholds.collective);
  thresholds["ici_bytes_tolerance"] = tolerance(spec.thresholds.ici_bytes);
  thresholds["link_bytes_tolerance"] = tolerance(spec.thresholds.link_bytes);
  thresholds["structure"] = spec.thresholds.structure_fails ? "fail" : "report";
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
  if (!report.values_skipped.empty()) j["values_skipped"] = report.values_skipped;
  if (report.values_subset.has_value()) j["values_subset"] = report.values_subset->Note();
  if (!report.timing_run) {
    j["performance"] = nullptr;
    return JsonText(j, 2) + "\n";
  }
  Json& perf = j["performance"];
  // The metrics goldens, scenario results and sweeps store, by their one
  // writer; diff's own totals beside them.
  perf["before"] = MetricsJson(NamedMetrics(report.performance.before));
  perf["after"] = MetricsJson(NamedMetrics(report.performance.after));
  perf["collective_bytes_before"] = report.performance.before.collective_bytes;
  perf["collective_bytes_after"] = report.performance.after.collective_bytes;
  perf["ici_routed"] = report.performance.before.ici_bytes.has_value() &&
                       report.performance.after.ici_bytes.has_value();
  perf["network_before"] =
      report.network_before.empty() ? Json(nullptr) : Json(report.network_before);
  perf["network_after"] = report.network_after.empty() ? Json(nullptr) : Json(report.network_after);
  perf["busiest_link_bytes_before"] = report.performance.before.busiest_link_bytes;
  perf["busiest_link_bytes_after"] = report.performance.after.busiest_link_bytes;
  perf["time_change_percent"] = report.time_change;
  perf["hbm_bytes_change_percent"] = report.bytes_change;
  perf["collective_time_change_percent"] = report.collective_change;
  perf["ici_bytes_change_percent"] =
      perf["ici_routed"].get<bool>() ? Json(report.ici_bytes_change) : Json(nullptr);
  perf["busiest_link_bytes_change_percent"] = report.link_bytes_change;
  Json top = Json::array();
  for (const InstructionDelta* delta : TopInstructions(report.performance, spec.top)) {
    const InstructionDelta& d = *delta;
    Json e;
    e["before"] = d.before != nullptr ? Json(d.before->name()) : Json(nullptr);
    e["after"] = d.after != nullptr ? Json(d.after->name()) : Json(nullptr);
    e["opcode"] = d.instruction().OpcodeSpelling();
    e["before_cycles"] = d.before_cycles;
    e["after_cycles"] = d.after_cycles;
    e["before_hbm_bytes"] = d.before_hbm_bytes;
    e["after_hbm_bytes"] = d.after_hbm_bytes;
    top.push_back(std::move(e));
  }
  perf["top_instructions"] = std::move(top);
  return JsonText(j, 2) + "\n";
}

}  // namespace tpusim::harness
