#include "harness/diff/program_diff.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "harness/run/module_run.h"
#include "harness/run/program_io.h"
#include "harness/run/topology_option.h"
#include "sim/base/file.h"
#include "sim/hlo/collective_groups.h"
#include "sim/ici/interconnect.h"
#include "sim/timing/timing.h"

namespace tpusim::harness {
namespace {

using value::Literal;

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
        pb->location(), "parameter " + std::to_string(i) + " is " + pb->shape().ToString(false) +
                            " but " + before.filename() + " takes " + pa->shape().ToString(false) +
                            "; diff runs both modules on the same inputs"));
  }
  return Status();
}

/// Resolves every collective of `module` on its own devices (`spmd`): an
/// error there is the module's own, and names its file.
Status CheckCollectivesOnOwnDevices(const hlo::HloModule& module, const eval::SpmdConfig& spmd) {
  return hlo::ForEachCollectiveGroup(
      module, spmd,
      [](const hlo::CollectiveSite&, const std::vector<int64_t>&) { return Status(); });
}

/// Evaluates both modules on the same inputs and compares every output
/// leaf; records what each run did that timing needs.
Status CompareValues(const DiffSpec& spec, const hlo::HloModule& before,
                     const hlo::HloModule& after, DiffReport& report, eval::RunRecord (&records)[2],
                     std::ostream& err) {
  // Same devices and the same inputs (drawn for `before`) for both.
  eval::SpmdConfig spmd = eval::SpmdConfig::CoveringModule(before);
  const eval::SpmdConfig spmd_after = eval::SpmdConfig::CoveringModule(after);
  if (spmd.replica_count != spmd_after.replica_count ||
      spmd.partition_count != spmd_after.partition_count) {
    // Both run on the larger count below, where a module's own mistake (a
    // replica in no group) would surface in whichever ran first.
    TPUSIM_RETURN_IF_ERROR(CheckCollectivesOnOwnDevices(before, spmd));
    TPUSIM_RETURN_IF_ERROR(CheckCollectivesOnOwnDevices(after, spmd_after));
  }
  spmd.replica_count = std::max(spmd.replica_count, spmd_after.replica_count);
  spmd.partition_count = std::max(spmd.partition_count, spmd_after.partition_count);
  const hlo::HloModule* modules[] = {&before, &after};
  TPUSIM_ASSIGN_OR_RETURN(const EvaluatedDevices evaluated,
                          DevicesToEvaluate(modules, spmd, spec.evaluation));
  const std::vector<int64_t>& devices = evaluated.devices;
  TPUSIM_ASSIGN_OR_RETURN(std::vector<std::vector<Literal>> inputs,
                          LoadInputs(before, spmd, devices, spec.evaluation));
  TPUSIM_ASSIGN_OR_RETURN(
      const Evaluation run_before,
      EvaluateModule(before, spmd, evaluated, spec.evaluation, spec.limits, inputs, err));
  TPUSIM_ASSIGN_OR_RETURN(
      const Evaluation run_after,
      EvaluateModule(after, spmd, evaluated, spec.evaluation, spec.limits, std::move(inputs), err));
  report.values_subset = evaluated.subset;

  value::TypedErrorSpec tolerance;
  tolerance.all.rtol = spec.thresholds.rtol;
  tolerance.all.atol = spec.thresholds.atol;
  if (spec.thresholds.max_ulp.has_value()) {
    tolerance.all.ulp = static_cast<uint64_t>(*spec.thresholds.max_ulp);
  }
  tolerance.by_type = spec.thresholds.per_type;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string prefix = DeviceOutputPrefix(spmd.device_count(), devices[i]);
    const std::vector<OutputLeaf> a = OutputLeaves(run_before.results[i]);
    const std::vector<OutputLeaf> b = OutputLeaves(run_after.results[i]);
    for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
      report.outputs.push_back(DiffOutput(prefix + b[k].name, *a[k].value, *b[k].value,
                                          tolerance.For(a[k].value->element_type())));
    }
    if (a.size() != b.size()) {
      report.output_count_notes.push_back(prefix + "outputs: " + std::to_string(a.size()) +
                                          " before, " + std::to_string(b.size()) + " after");
    }
  }

  records[0] = run_before.record;
  records[1] = run_after.record;
  return Status();
}

/// A pair compared in everything but time, with what its timing needs. Its
/// report owns both modules, which the networks and timing jobs point into.
struct UntimedDiff {
  DiffReport report;
  eval::RunRecord records[2];                           ///< what each module's values run did
  std::unique_ptr<ici::Interconnect> interconnects[2];  ///< null: device 0 alone
};

/// Both modules on the same network, when there is one (or AFTER on its own,
/// with --topology-after): every device timed and the collectives routed over
/// its links. Names the networks in the report when they differ.
Status BuildNetworks(const DiffSpec& spec, UntimedDiff& diff) {
  const arch::ChipConfig& chip = *spec.chip;
  const auto network = [&](const std::string& option,
                           std::string_view flag) -> StatusOr<std::unique_ptr<ici::Interconnect>> {
    if (option.empty()) return std::unique_ptr<ici::Interconnect>();
    TPUSIM_ASSIGN_OR_RETURN(const arch::TopologyConfig topology,
                            LoadTopologyOption(option, "tpusim diff: error: ", &chip, flag));
    return ici::Interconnect::Create(topology, chip);
  };
  TPUSIM_ASSIGN_OR_RETURN(diff.interconnects[0], network(spec.topology, "--topology"));
  TPUSIM_ASSIGN_OR_RETURN(diff.interconnects[1],
                          spec.topology_after.empty()
                              ? network(spec.topology, "--topology")
                              : network(spec.topology_after, "--topology-after"));
  if (!spec.topology_after.empty() &&
      diff.interconnects[0]->Describe() != diff.interconnects[1]->Describe()) {
    diff.report.network_before = diff.interconnects[0]->Describe();
    diff.report.network_after = diff.interconnects[1]->Describe();
  }
  return Status();
}

/// Compares the structure and, per the mode, the outputs of both modules,
/// and prepares their timing.
Status CompareUntimed(const DiffSpec& spec, UntimedDiff& diff, std::ostream& err) {
  DiffReport& report = diff.report;
  const hlo::HloModule& before = *report.before_module;
  const hlo::HloModule& after = *report.after_module;
  report.structure = DiffModules(before, after);
  report.values_run = spec.mode != RunMode::kTiming;
  report.timing_run = spec.mode != RunMode::kValues;
  if (report.values_run) {
    const Status values = CompareValues(spec, before, after, report, diff.records, err);
    if (!values.ok()) {
      // Structure and time still say something: compare what can be compared.
      if (!ValuesCannotBeComputed(values)) return values;
      report.values_run = false;
      report.values_skipped = values.message();
      report.outputs.clear();
      report.output_count_notes.clear();
    }
  }
  if (!report.timing_run) return Status();
  return BuildNetworks(spec, diff);
}

/// Reads, parses and verifies both modules, checks that they take the same
/// inputs, and compares them in everything but time.
StatusOr<UntimedDiff> PrepareDiff(const DiffSpec& spec, std::ostream& err) {
  UntimedDiff diff;
  TPUSIM_ASSIGN_OR_RETURN(const std::string text_before, ReadFile(spec.before));
  TPUSIM_ASSIGN_OR_RETURN(diff.report.before_module,
                          ParseAndVerifyModule(text_before, spec.before));
  TPUSIM_ASSIGN_OR_RETURN(const std::string text_after, ReadFile(spec.after));
  TPUSIM_ASSIGN_OR_RETURN(diff.report.after_module, ParseAndVerifyModule(text_after, spec.after));
  TPUSIM_RETURN_IF_ERROR(
      CheckSameParameters(*diff.report.before_module, *diff.report.after_module));
  TPUSIM_RETURN_IF_ERROR(CompareUntimed(spec, diff, err));
  return diff;
}

/// The pair's two timing jobs, BEFORE's then AFTER's, appended to `jobs`.
void AppendTimingJobs(const DiffSpec& spec, const UntimedDiff& diff,
                      std::vector<timing::SimulationJob>& jobs) {
  const hlo::HloModule* modules[2] = {diff.report.before_module.get(),
                                      diff.report.after_module.get()};
  for (size_t k = 0; k < 2; ++k) {
    timing::SimulationJob job;
    job.module = modules[k];
    job.chip = &*spec.chip;
    TimeAsRun(diff.records[k], job.options);
    job.options.interconnect = diff.interconnects[k].get();
    job.options.algorithm = spec.algorithm;
    ApplyLoopLimits(spec.limits, job.options);
    jobs.push_back(std::move(job));
  }
}

/// The performance comparison of the pair's two timings.
void AddPerformance(const timing::TimingResult& before, const timing::TimingResult& after,
                    DiffReport& report) {
  report.performance = ComparePerformance(before, after, report.structure.matched);
  report.time_change =
      PercentChange(report.performance.before.time_us, report.performance.after.time_us);
  const Metrics& b = report.performance.before;
  const Metrics& a = report.performance.after;
  report.bytes_change =
      PercentChange(static_cast<double>(b.hbm_bytes), static_cast<double>(a.hbm_bytes));
  report.collective_change = PercentChange(b.collective_time_us, a.collective_time_us);
  if (b.ici_bytes.has_value() && a.ici_bytes.has_value()) {
    report.ici_bytes_change =
        PercentChange(static_cast<double>(*b.ici_bytes), static_cast<double>(*a.ici_bytes));
  }
  report.link_bytes_change = PercentChange(static_cast<double>(b.busiest_link_bytes),
                                           static_cast<double>(a.busiest_link_bytes));
}

}  // namespace

std::vector<StatusOr<DiffReport>> DiffProgramPairs(std::span<const DiffSpec> specs,
                                                   std::ostream& err) {
  std::vector<StatusOr<UntimedDiff>> untimed;
  untimed.reserve(specs.size());
  std::vector<timing::SimulationJob> jobs;
  for (const DiffSpec& spec : specs) {
    untimed.push_back(PrepareDiff(spec, err));
    if (untimed.back().ok() && untimed.back()->report.timing_run) {
      AppendTimingJobs(spec, *untimed.back(), jobs);
    }
  }
  // Every pair in one SystemC run: the kernel starts once per process. A
  // module that cannot be timed is its own pair's error only.
  const std::vector<StatusOr<timing::TimingResult>> timed = timing::SimulateBatch(jobs);
  std::vector<StatusOr<DiffReport>> reports;
  size_t next_job = 0;
  for (StatusOr<UntimedDiff>& diff : untimed) {
    if (!diff.ok()) {
      reports.push_back(diff.status());
      continue;
    }
    if (!diff->report.timing_run) {
      reports.push_back(std::move(diff->report));
      continue;
    }
    const StatusOr<timing::TimingResult>& before = timed[next_job];
    const StatusOr<timing::TimingResult>& after = timed[next_job + 1];
    next_job += 2;
    if (!before.ok()) {
      reports.push_back(before.status());
    } else if (!after.ok()) {
      reports.push_back(after.status());
    } else {
      AddPerformance(*before, *after, diff->report);
      reports.push_back(std::move(diff->report));
    }
  }
  return reports;
}

StatusOr<DiffReport> DiffPrograms(const DiffSpec& spec, std::ostream& err) {
  return std::move(DiffProgramPairs(std::span<const DiffSpec>(&spec, 1), err)[0]);
}

}  // namespace tpusim::harness
