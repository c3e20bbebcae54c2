#include "harness/run/run_report.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "harness/run/metrics.h"
#include "harness/run/program_io.h"
#include "sim/base/arith.h"
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

/// The microseconds the collectives of `r` lost to others in flight with
/// them on shared links (their jobs' own, or other jobs').
double ContentionMicros(const timing::TimingResult& r) {
  int64_t cycles = 0;
  for (const timing::CollectiveRecord& c : r.collectives)
    cycles = SatAdd(cycles, c.contention_cycles);
  return static_cast<double>(cycles) * 1e6 / static_cast<double>(r.clock_hz);
}

/// The jobs that shared the network, the module first: a table for people
/// and a list for --json.
void ReportSharedNetwork(const ModuleRun& run, std::ostream& out, nlohmann::ordered_json& json) {
  struct Job {
    std::string name;
    const std::vector<int64_t>* placement;
    const timing::TimingResult* timing;
  };
  std::vector<Job> jobs = {{"this module", &run.placement, &*run.timing}};
  for (const OtherJobRun& other : run.other_jobs) {
    jobs.push_back({other.file, &other.placement, &other.timing});
  }
  char line[160];
  std::snprintf(line, sizeof line, "%-16s %12s %16s %14s  %s\n", "network devices", "time (us)",
                "collectives (us)", "lost (us)", "job");
  out << "\nJobs sharing the network (collective time lost to sharing links):\n" << line;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Job& job : jobs) {
    const Metrics metrics = MetricsOf(*job.timing);
    const std::string devices = PlacementText(*job.placement);
    const double lost = ContentionMicros(*job.timing);
    std::snprintf(line, sizeof line, "%-16s %12.3f %16.3f %14.3f  ", devices.c_str(),
                  metrics.time_us, metrics.collective_time_us, lost);
    out << line << job.name << '\n';
    if (&job == &jobs.front()) {
      json["placement"] = devices;
      json["collective_time_lost_us"] = lost;
      continue;
    }
    list.push_back({{"module", job.name},
                    {"placement", devices},
                    {"time_us", metrics.time_us},
                    {"collective_time_us", metrics.collective_time_us},
                    {"collective_time_lost_us", lost}});
  }
  json["other_jobs"] = std::move(list);
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
    if (!run.other_jobs.empty()) ReportSharedNetwork(run, out, json);
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
