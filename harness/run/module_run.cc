#include "harness/run/module_run.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "harness/report/progress.h"
#include "harness/run/program_io.h"
#include "sim/arch/topology_config.h"
#include "sim/base/arith.h"
#include "sim/base/units.h"
#include "sim/eval/program_inputs.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/parser.h"
#include "sim/hlo/platform.h"
#include "sim/hlo/verifier.h"
#include "sim/ici/interconnect.h"
#include "sim/value/constant_range.h"
#if TPUSIM_HAVE_RTL
#include "sim/rtl/rtl_mxu_tile.h"
#endif

namespace tpusim::harness {
namespace {

using value::Literal;

/// Constants whose values the dump elided, in text order.
std::vector<const hlo::HloInstruction*> ElidedConstants(const hlo::HloModule& module) {
  std::vector<const hlo::HloInstruction*> elided;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == hlo::HloOpcode::kConstant && inst->has_literal() &&
          inst->literal().elided) {
        elided.push_back(inst.get());
      }
    }
  }
  return elided;
}

/// "0-3" or "0, 4, 8, 12" (at most 8 numbers, then "...").
std::string DeviceList(const std::vector<int64_t>& devices) {
  bool contiguous = true;
  for (size_t i = 1; i < devices.size(); ++i) contiguous &= devices[i] == devices[i - 1] + 1;
  if (contiguous && devices.size() > 2) {
    return std::to_string(devices.front()) + "-" + std::to_string(devices.back());
  }
  std::string text;
  for (size_t i = 0; i < devices.size() && i < 8; ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(devices[i]);
  }
  return devices.size() > 8 ? text + ", ..." : text;
}

}  // namespace

std::string DeviceSubset::Note() const { return which + ": " + reason; }

StatusOr<eval::SpmdConfig> ProgramDevices(const hlo::HloModule& module, std::string_view file,
                                          std::optional<int64_t> replicas,
                                          std::optional<int64_t> partitions) {
  eval::SpmdConfig spmd = eval::SpmdConfig::CoveringModule(module);
  if (replicas.has_value()) spmd.replica_count = *replicas;
  if (partitions.has_value()) spmd.partition_count = *partitions;
  const bool from_flags = replicas.has_value() || partitions.has_value();
  if (!from_flags && spmd.device_count() > hlo::kMaxSpmdDevices) {
    // The module alone asks for it: its header or the device ids its
    // collectives name; point at the collective when it is the cause.
    const std::string needs = "the module needs " + std::to_string(spmd.replica_count) +
                              " replicas x " + std::to_string(spmd.partition_count) +
                              " partitions, more than the " + std::to_string(hlo::kMaxSpmdDevices) +
                              " devices tpusim runs";
    int64_t id = -1;
    const hlo::HloInstruction* naming = hlo::CollectiveNamingLargestId(module, id);
    if (naming != nullptr && id >= eval::SpmdConfig::FromModule(module).device_count()) {
      return InvalidArgument(module.ErrorAt(
          naming->location(), naming->OpcodeSpelling() + " " + naming->name() +
                                  ": names device id " + std::to_string(id) + ": " + needs));
    }
    return InvalidArgument(std::string(file) + ": error: " + needs +
                           " (its replica_count and num_partitions)");
  }
  if (spmd.replica_count < 1 || spmd.partition_count < 1 ||
      spmd.device_count() > hlo::kMaxSpmdDevices) {
    return InvalidArgument(
        "tpusim exec: error: --replicas and --partitions must be at least 1, "
        "with at most " +
        std::to_string(hlo::kMaxSpmdDevices) + " devices in all");
  }
  // --replicas and --partitions replace the header's counts: the ids the
  // collectives name must exist in the program they make.
  if (from_flags) TPUSIM_RETURN_IF_ERROR(hlo::CheckCollectiveIds(module, spmd));
  return spmd;
}

StatusOr<EvaluatedDevices> DevicesToEvaluate(std::span<const hlo::HloModule* const> modules,
                                             const eval::SpmdConfig& spmd,
                                             const EvaluationSpec& spec) {
  const int64_t max_memory = spec.max_memory;
  const int64_t count = spmd.device_count();
  EvaluatedDevices all;
  all.device_count = count;
  for (int64_t d = 0; d < count; ++d) all.devices.push_back(d);
  // Each device holds its own values: the first module whose peak times
  // `devices` is over the limit, or -1.
  std::vector<int64_t> peaks;
  for (const hlo::HloModule* module : modules) {
    TPUSIM_ASSIGN_OR_RETURN(peaks.emplace_back(), eval::Evaluator::EstimatePeakBytes(*module));
  }
  const auto over_limit = [&](int64_t devices) {
    for (size_t m = 0; m < peaks.size(); ++m) {
      if (SatMul(peaks[m], devices) > max_memory) return static_cast<int64_t>(m);
    }
    return int64_t{-1};
  };
  const int64_t too_big = over_limit(count);
  if (too_big < 0) return all;
  // Device 0's component, closed under every module's collectives.
  std::vector<int64_t> closure = {0};
  for (size_t changed = 1; changed != 0;) {
    changed = 0;
    for (const hlo::HloModule* module : modules) {
      StatusOr<std::vector<int64_t>> grown = hlo::CommunicatingDevices(*module, spmd, closure);
      if (!grown.ok()) return grown.status();
      changed += grown->size() != closure.size() ? 1 : 0;
      closure = std::move(*grown);
    }
  }
  const int64_t subset = static_cast<int64_t>(closure.size());
  const int64_t peak = peaks[too_big];
  if (subset < count && over_limit(subset) < 0) {
    EvaluatedDevices some;
    some.device_count = count;
    some.devices = std::move(closure);
    some.subset = DeviceSubset{
        "values on " + std::to_string(subset) + " of " + std::to_string(count) + " devices (" +
            DeviceList(some.devices) + ")",
        "all of them need about " + FormatBytes(SatMul(peak, count)) + ", more than --max-memory " +
            FormatBytes(max_memory) +
            "; device 0 exchanges data only with these, and the others run the same program on "
            "their own inputs"};
    return some;
  }
  // Device 0 alone stands for all when they all compute the same values.
  std::optional<std::string> differ =
      std::holds_alternative<SeededInputs>(spec.inputs)
          ? eval::WhySeededInputsDiffer(*modules.front())
          : std::optional<std::string>("the inputs are read from files, one per device");
  for (const hlo::HloModule* module : modules) {
    if (differ.has_value()) break;
    TPUSIM_ASSIGN_OR_RETURN(differ, eval::WhyDevicesDiffer(*module, spmd));
  }
  if (!differ.has_value() && over_limit(1) < 0) {
    EvaluatedDevices alike;
    alike.device_count = count;
    alike.devices = {0};
    alike.alike = true;
    alike.subset = DeviceSubset{
        "values on device 0 of " + std::to_string(count) + ", standing for all",
        "all of them need about " + FormatBytes(SatMul(peak, count)) + ", more than --max-memory " +
            FormatBytes(max_memory) +
            "; every device computes the same values (the same inputs, no device ids, "
            "collectives that keep devices alike)"};
    return alike;
  }
  return ResourceExhausted(
      modules[too_big]->filename() + ": error: running it needs about " + FormatBytes(peak) +
      " per device x " + std::to_string(count) + " device(s), more than --max-memory " +
      FormatBytes(max_memory) +
      (subset < count ? ", as would the " + std::to_string(subset) +
                            " devices device 0 exchanges data with"
                      : std::string()) +
      (count > 1 && differ.has_value() ? "; device 0 cannot stand for the others: " + *differ
                                       : std::string()) +
      "; raise --max-memory, run fewer devices, or time it without values (--mode timing)");
}

StatusOr<std::unique_ptr<hlo::HloModule>> ParseAndVerifyModule(std::string_view text,
                                                               std::string_view filename) {
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> module,
                          hlo::ParseHloModule(text, filename));
  TPUSIM_RETURN_IF_ERROR(hlo::VerifyModule(*module));
  TPUSIM_RETURN_IF_ERROR(value::VerifyConstantsFit(*module));
  return module;
}

StatusOr<std::vector<std::vector<Literal>>> LoadInputs(const hlo::HloModule& module,
                                                       const eval::SpmdConfig& spmd,
                                                       std::span<const int64_t> devices,
                                                       const EvaluationSpec& spec) {
  const int64_t max_memory = spec.max_memory;
  const auto* seeded = std::get_if<SeededInputs>(&spec.inputs);
  const bool spmd_program = spmd.device_count() > 1;
  std::vector<std::vector<Literal>> args;
  args.reserve(devices.size());
  for (const int64_t d : devices) {
    if (seeded != nullptr) {
      TPUSIM_ASSIGN_OR_RETURN(args.emplace_back(),
                              eval::SeededInputs(module, spmd, seeded->seed, d, max_memory));
    } else {
      TPUSIM_ASSIGN_OR_RETURN(
          args.emplace_back(),
          ReadInputs(module, std::get<InputDirectory>(spec.inputs).path,
                     spmd_program ? std::optional<int64_t>(d) : std::nullopt, max_memory));
    }
  }
  return args;
}

StatusOr<Evaluation> EvaluateModule(const hlo::HloModule& module, const eval::SpmdConfig& spmd,
                                    const EvaluatedDevices& evaluated, const EvaluationSpec& spec,
                                    const LoopLimits& limits,
                                    std::vector<std::vector<Literal>> inputs, std::ostream& err) {
  eval::EvaluatorOptions eval_options;
  eval_options.numerics = spec.numerics;
#if TPUSIM_HAVE_RTL
  // The largest Verilated array (128x128, the real MXU's, in a default
  // build); any size gives the analytic kernel's values.
  std::unique_ptr<rtl::RtlMxuTile> rtl_mxu;
  if (spec.mxu == MxuEngine::kRtl) {
    rtl_mxu = std::make_unique<rtl::RtlMxuTile>(rtl::MxuArraySizes().back());
    eval_options.mxu_engine = rtl_mxu.get();
  }
#else
  if (spec.mxu == MxuEngine::kRtl) {
    return InvalidArgument(spec.command +
                           ": error: --mxu rtl: this tpusim was built without "
                           "TPUSIM_RTL");
  }
#endif
  eval_options.max_bytes = spec.max_memory;
  ApplyLoopLimits(limits, eval_options);

  const std::vector<const hlo::HloInstruction*> elided = ElidedConstants(module);
  if (!elided.empty()) {
    if (spec.elided_constants == ElidedConstantPolicy::kError) {
      return InvalidArgument(module.ErrorAt(
          elided.front()->location(),
          "constant " + elided.front()->name() +
              ": the dump elided its values (`{...}`); --elided-constants seeded fills them"));
    }
    const auto* seeded = std::get_if<SeededInputs>(&spec.inputs);
    eval_options.elided_constant_seed = seeded != nullptr ? seeded->seed : 0;
    const hlo::SourceLocation at = elided.front()->location();
    err << module.filename() << ':' << at.line << ':' << at.column
        << ": warning: the dump elided the values of " << elided.size() << " constant(s), first "
        << elided.front()->name()
        << "; they hold seeded values, so outputs differ from the real program's\n";
  }

  Evaluation evaluation;
  eval_options.record = &evaluation.record;
  std::atomic<int64_t> executed{0};
  eval_options.progress = &executed;
  const eval::Evaluator evaluator(eval_options);
  std::optional<ProgressLine> progress;
  progress.emplace("evaluating " + module.name() + " on " +
                       std::to_string(evaluated.devices.size()) + " device(s)",
                   &executed, "instructions");
  Status status;
  if (evaluated.alike) {
    StatusOr<Literal> result = evaluator.EvaluateAlike(module, spmd, inputs.front());
    status = result.status();
    if (result.ok()) evaluation.results.push_back(std::move(result).value());
  } else {
    StatusOr<std::vector<Literal>> results =
        evaluator.EvaluateSpmd(module, spmd, evaluated.devices, inputs);
    status = results.status();
    if (results.ok()) evaluation.results = std::move(results).value();
  }
  progress.reset();  // erases the line before anything else is printed
  TPUSIM_RETURN_IF_ERROR(status);
  return evaluation;
}

namespace {

/// The instructions of `opcode` (a while loop, a conditional: `noun`, listed
/// as `short_plural`) that `counts` names (--trip-count NAME=N, --branch NAME=N, a scenario's
/// trip_counts or branches), each with its count for every execution; or an error for a name that
/// is no such instruction of `module`: a typo would otherwise time the loop once or the default
/// branch, silently.
StatusOr<timing::PerExecution<int64_t>> ResolveNamed(
    const hlo::HloModule& module, hlo::HloOpcode opcode, const std::string& noun,
    const std::string& short_plural, const std::map<std::string, NamedCount>& counts) {
  timing::PerExecution<int64_t> resolved;
  if (counts.empty()) return resolved;
  std::map<std::string, std::vector<const hlo::HloInstruction*>> named;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == opcode) named[inst->name()].push_back(inst.get());
    }
  }
  for (const auto& [name, count] : counts) {
    const auto found = named.find(name);
    if (found != named.end()) {
      for (const hlo::HloInstruction* inst : found->second)
        resolved.emplace(inst, ExecutionSeries<int64_t>(count.count));  // every execution
      continue;
    }
    std::string known;
    for (const auto& [other, instructions] : named) {
      if (known.size() > 200) {
        known += ", ...";
        break;
      }
      known += (known.empty() ? "" : ", ") + other;
    }
    return InvalidArgument(
        count.given_at + ": " + module.filename() + " has no " + noun + " named " + Quote(name) +
        " (" + (named.empty() ? "it has no " + noun + "s" : "its " + short_plural + ": " + known) +
        ")");
  }
  return resolved;
}

}  // namespace

bool ValuesCannotBeComputed(const Status& status) {
  return status.code() == StatusCode::kResourceExhausted ||
         status.code() == StatusCode::kUnimplemented;
}

namespace {

/// The network devices of the module (`devices` of them) and of each of
/// `spec.other_jobs`, in that order: as given, or for an other job without a
/// placement the lowest-numbered devices left free. Errors, at the job: a
/// placement that does not fit the network, or a device two jobs take.
StatusOr<std::vector<std::vector<int64_t>>> PlaceJobs(const RunSpec& spec, int64_t devices,
                                                      const ici::CollectiveTimer& network) {
  std::vector<std::vector<int64_t>> placements = {spec.placement};
  if (placements[0].empty()) {
    for (int64_t d = 0; d < devices; ++d) placements[0].push_back(d);
  }
  std::map<int64_t, std::string> taken;  // network device -> the job on it
  for (const int64_t d : placements[0]) taken[d] = "the module";
  for (size_t j = 0; j < spec.other_jobs.size(); ++j) {
    const OtherJob& other = spec.other_jobs[j];
    const int64_t count = hlo::SpmdConfig::CoveringModule(*other.module).device_count();
    std::vector<int64_t> placement = other.placement;
    if (placement.empty()) {
      for (int64_t d = 0; static_cast<int64_t>(placement.size()) < count; ++d) {
        if (network.device_count() > 0 && d >= network.device_count()) {
          return InvalidArgument(other.given_at + ": its " + std::to_string(count) +
                                 " devices do not fit in the " + std::to_string(placement.size()) +
                                 " devices that the jobs before it left free on the network");
        }
        if (taken.count(d) == 0) placement.push_back(d);
      }
    }
    if (Status fits = timing::CheckDevicesFitNetwork(count, network, placement); !fits.ok()) {
      return InvalidArgument(other.given_at + ": " + fits.message());
    }
    for (size_t d = 0; d < placement.size(); ++d) {
      const auto [it, added] =
          taken.try_emplace(placement[d], "other job " + std::to_string(j + 1));
      if (!added) {
        return InvalidArgument(other.given_at + ": its device " + std::to_string(d) +
                               " would run on network device " + std::to_string(placement[d]) +
                               ", which " + it->second + " runs on");
      }
    }
    placements.push_back(std::move(placement));
  }
  return placements;
}

/// The stragglers among a job's devices: the topology's slow devices
/// (network devices) that its `placement` runs it on.
std::map<int64_t, double> SlowdownsOf(const arch::TopologyConfig& topology,
                                      const std::vector<int64_t>& placement) {
  std::map<int64_t, double> slowdowns;
  for (const arch::SlowDevice& slow : topology.slow_devices) {
    const auto it = std::find(placement.begin(), placement.end(), slow.device);
    if (it != placement.end()) slowdowns[it - placement.begin()] = slow.factor;
  }
  return slowdowns;
}

}  // namespace

StatusOr<ModuleRun> RunModule(const RunSpec& spec, const hlo::HloModule& module,
                              const eval::SpmdConfig& spmd,
                              const std::optional<arch::ChipConfig>& chip,
                              std::optional<arch::TopologyConfig> topology, std::ostream& err) {
  TPUSIM_ASSIGN_OR_RETURN(auto trip_counts, ResolveNamed(module, hlo::HloOpcode::kWhile,
                                                         "while loop", "loops", spec.trip_counts));
  TPUSIM_ASSIGN_OR_RETURN(auto branches,
                          ResolveNamed(module, hlo::HloOpcode::kConditional, "conditional",
                                       "conditionals", spec.branches));
  if (const std::optional<hlo::ForeignPlatform> foreign = hlo::ForeignPlatformOf(module)) {
    const hlo::SourceLocation at = foreign->first->location();
    err << module.filename() << ':' << at.line << ':' << at.column
        << ": warning: " << foreign->evidence << " belongs to " << foreign->platform
        << "'s backend: this module was compiled for " << foreign->platform << ", not TPU ("
        << foreign->instructions
        << " instruction(s) of that backend), so its times say little about a TPU; compile "
           "it for a TPU topology (docs/ci.md)\n";
  }
  // The network that times collectives, and where each job runs on it.
  std::unique_ptr<ici::Interconnect> interconnect;
  std::vector<std::vector<int64_t>> placements;  // the module's, then each other job's
  const bool shared = !spec.other_jobs.empty();
  if (topology.has_value() || spec.algorithm != ici::Algorithm::kAuto || shared ||
      !spec.placement.empty()) {
    if (!chip.has_value() || !topology.has_value()) {
      return InvalidArgument(
          "tpusim exec: error: --topology, --algorithm, --placement and --other-job time "
          "collectives on a network: give --chip NAME and --topology SHORTFORM|FILE");
    }
    TPUSIM_ASSIGN_OR_RETURN(interconnect, ici::Interconnect::Create(*topology, *chip));
    // Before any values are computed, and at the topology the user wrote.
    if (Status fits =
            timing::CheckDevicesFitNetwork(spmd.device_count(), *interconnect, spec.placement);
        !fits.ok()) {
      return spec.placement.empty()
                 ? arch::TopologyError(*topology, "", fits.message())
                 : InvalidArgument(spec.placement_given_at + ": " + fits.message());
    }
    TPUSIM_ASSIGN_OR_RETURN(placements, PlaceJobs(spec, spmd.device_count(), *interconnect));
    int64_t devices = 0;
    for (const std::vector<int64_t>& placement : placements) devices += placement.size();
    const int64_t chips = interconnect->device_count() / interconnect->devices_per_chip();
    const int64_t used = CeilDiv(devices, interconnect->devices_per_chip());
    if (used < chips) {
      err << "warning: " << (shared ? "the jobs' " : "the module's ") << devices << " devices use "
          << used << " of " << arch::CanonicalTopologyText(*topology) << "'s " << chips
          << " chips; the other " << chips - used << " stay idle\n";
    }
  }
  ModuleRun run;
  if (spec.mode != RunMode::kTiming) {
    StatusOr<Evaluation> evaluation = [&]() -> StatusOr<Evaluation> {
      const hlo::HloModule* modules[] = {&module};
      TPUSIM_ASSIGN_OR_RETURN(run.evaluated,
                              DevicesToEvaluate(modules, spmd, spec.evaluation));
      TPUSIM_ASSIGN_OR_RETURN(std::vector<std::vector<Literal>> inputs,
                              LoadInputs(module, spmd, run.evaluated.devices, spec.evaluation));
      return EvaluateModule(module, spmd, run.evaluated, spec.evaluation, spec.limits,
                            std::move(inputs), err);
    }();
    if (evaluation.ok()) {
      run.results = std::move(evaluation->results);
      run.record = std::move(evaluation->record);
    } else if (spec.mode == RunMode::kFull && chip.has_value() &&
               ValuesCannotBeComputed(evaluation.status())) {
      // The time still says something: compare what can be compared.
      run.values_skipped = evaluation.status().message();
    } else {
      return evaluation.status();
    }
  }
  if (spec.mode != RunMode::kValues && chip.has_value()) {
    timing::TimingOptions timing_options;
    timing_options.trip_counts = std::move(trip_counts);
    timing_options.default_trip_count = spec.default_trip_count;
    ApplyLoopLimits(spec.limits, timing_options);
    timing_options.conditional_branch = spec.branch;
    timing_options.branches = std::move(branches);
    TimeAsRun(run.record, timing_options);
    timing_options.spmd = spmd;
    std::vector<timing::SimulationJob> jobs = {{&module, &*chip, std::move(timing_options)}};
    for (const OtherJob& other : spec.other_jobs) {
      timing::TimingOptions options;
      ApplyLoopLimits(spec.limits, options);
      jobs.push_back({other.module.get(), &*chip, std::move(options)});
    }
    for (size_t j = 0; j < jobs.size() && interconnect != nullptr; ++j) {
      timing::TimingOptions& options = jobs[j].options;
      options.interconnect = interconnect.get();
      options.algorithm = spec.algorithm;
      options.placement = j == 0 ? spec.placement : placements[j];
      options.device_slowdown = SlowdownsOf(*topology, placements[j]);
      if (shared) jobs[j].shared_network = 0;
    }
    std::vector<StatusOr<timing::TimingResult>> timed = timing::SimulateBatch(jobs);
    TPUSIM_ASSIGN_OR_RETURN(run.timing, std::move(timed[0]));
    for (size_t j = 1; j < jobs.size(); ++j) {
      const OtherJob& other = spec.other_jobs[j - 1];
      if (!timed[j].ok()) return timed[j].status().WithContext(other.given_at);
      run.other_jobs.push_back({other.module->filename(), placements[j], std::move(*timed[j])});
    }
    if (shared) run.placement = placements[0];
  }
  return run;
}

}  // namespace tpusim::harness
