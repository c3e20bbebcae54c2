#include "harness/run/run_report.h"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/run/metrics.h"
#include "harness/run/program_io.h"
#include "sim/base/file.h"
#include "sim/base/fingerprint.h"
#include "sim/base/json_text.h"
#include "sim/timing/report.h"

namespace tpusim::harness {
namespace {

/// `OutputSummary` as JSON, for --json.
nlohmann::ordered_json OutputsJson(const std::vector<OutputSummary>& outputs) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const OutputSummary& o : outputs) {
    nlohmann::ordered_json entry;
    entry["name"] = o.name;
    entry["shape"] = o.shape;
    entry["min"] = o.min.has_value() ? nlohmann::ordered_json(*o.min) : nullptr;
    entry["max"] = o.max.has_value() ? nlohmann::ordered_json(*o.max) : nullptr;
    entry["mean"] = o.mean.has_value() ? nlohmann::ordered_json(*o.mean) : nullptr;
    entry["nan_count"] = o.nan_count;
    entry["checksum"] = Hex16(o.checksum);
    list.push_back(std::move(entry));
  }
  return list;
}

/// Writes and summarises the outputs of every evaluated device.
StatusOr<std::vector<OutputSummary>> ReportValues(const RunReportOptions& options,
                                                  const ModuleRun& run) {
  std::vector<OutputSummary> outputs;
  for (size_t i = 0; i < run.results.size(); ++i) {
    const std::string prefix =
        DeviceOutputPrefix(run.evaluated.device_count, run.evaluated.devices[i]);
    if (!options.out_dir.empty()) {
      // One device writes into the directory itself (no trailing '/').
      const std::string dir = prefix.empty()
                                  ? options.out_dir
                                  : (std::filesystem::path(options.out_dir) / prefix).string();
      TPUSIM_RETURN_IF_ERROR(WriteOutputs(run.results[i], dir));
    }
    for (const OutputLeaf& leaf : OutputLeaves(run.results[i])) {
      outputs.push_back(Summarize(prefix + leaf.name, *leaf.value));
    }
  }
  return outputs;
}

}  // namespace

Status WriteRunReport(const ModuleRun& run, RunMode mode, const RunReportOptions& options,
                      std::ostream& out) {
  nlohmann::ordered_json json;
  const bool values = mode != RunMode::kTiming && run.values_skipped.empty();
  if (!run.values_skipped.empty()) {
    out << "values: not computed, timed without them (loop trip counts from the program): "
        << run.values_skipped << "\n\n";
  }
  if (values) {
    if (run.evaluated.subset.has_value()) out << run.evaluated.subset->Note() << "\n\n";
    TPUSIM_ASSIGN_OR_RETURN(const std::vector<OutputSummary> outputs, ReportValues(options, run));
    PrintSummaryTable(outputs, out);
    json["outputs"] = OutputsJson(outputs);
  }
  if (run.timing.has_value()) {
    if (values) out << '\n';
    out << timing::FormatOpTable(*run.timing, options.top);
    nlohmann::ordered_json metrics = nlohmann::ordered_json::parse(timing::TimingJson(*run.timing));
    // The totals a golden, a scenario result and tpusim diff keep, by their
    // one writer, beside the timing's own record.
    metrics["metrics"] = MetricsJson(NamedMetrics(MetricsOf(*run.timing)));
    if (json.contains("outputs")) metrics["outputs"] = std::move(json["outputs"]);
    if (!run.values_skipped.empty()) metrics["values_skipped"] = run.values_skipped;
    json = std::move(metrics);
    if (!options.trace.empty()) {
      TPUSIM_RETURN_IF_ERROR(
          WriteFileAtomically(options.trace, timing::TimingTraceJson(*run.timing)));
    }
  }
  if (run.evaluated.subset.has_value()) json["values_subset"] = run.evaluated.subset->Note();
  if (!options.json.empty()) {
    TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(options.json, JsonText(json, 2) + "\n"));
  }
  return Status();
}

}  // namespace tpusim::harness
