// `tpusim exec FILE`: run a compiled HLO module on seeded or .npy inputs on
// every device, report (and optionally write) what it computes, and time it
// on a chip preset.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "harness/cli/cli.h"
#include "harness/run/module_run.h"
#include "harness/run/run_report.h"
#include "harness/run/topology_option.h"
#include "sim/arch/preset_loader.h"
#include "sim/base/file.h"
#include "sim/eval/evaluator.h"

namespace tpusim::harness {
namespace {

/// `--other-job FILE[@DEVICES]`, its module parsed and verified: DEVICES is
/// what follows the last '@' when that reads as a placement (digits, ',' and
/// '-'), else part of the file name.
StatusOr<OtherJob> LoadOtherJob(const std::string& text) {
  OtherJob job;
  job.given_at = "tpusim exec: error: --other-job " + Quote(text);
  std::string file = text;
  const size_t at = text.rfind('@');
  if (at != std::string::npos && at + 1 < text.size() &&
      text.find_first_not_of("0123456789,-", at + 1) == std::string::npos) {
    file = text.substr(0, at);
    TPUSIM_ASSIGN_OR_RETURN(job.placement, ParsePlacement(text.substr(at + 1), job.given_at));
  }
  TPUSIM_ASSIGN_OR_RETURN(const std::string module_text, ReadFile(file));
  TPUSIM_ASSIGN_OR_RETURN(job.module, ParseAndVerifyModule(module_text, file));
  return job;
}

/// The run the command line asks for; --mode defaults to full with --chip, else values.
StatusOr<RunSpec> ExecRunSpec(const ExecOptions& options) {
  RunSpec spec;
  TPUSIM_ASSIGN_OR_RETURN(spec.mode, ParseRunMode(!options.mode.empty()  ? options.mode
                                                  : options.chip.empty() ? "values"
                                                                         : "full"));
  if (spec.mode != RunMode::kValues && options.chip.empty()) {
    return InvalidArgument("tpusim exec: error: --mode " + std::string(RunModeName(spec.mode)) +
                           " times the module on a chip: give --chip NAME (see tpusim presets)");
  }
  // An option the run would not use is an error, not silently dropped.
  const auto unused = [](const std::string& flag, const std::string& what) {
    return InvalidArgument("tpusim exec: error: " + flag + " " + what);
  };
  if (spec.mode == RunMode::kValues) {
    // Without --mode, values mode means no --chip was given.
    const std::string fix = options.mode.empty() ? "give --chip NAME" : "give --mode full";
    if (!options.chip.empty()) {
      return unused("--chip", "times the module, which --mode values does not: " + fix);
    }
    if (!options.overrides.empty()) return unused("-p", "changes the timing chip: " + fix);
    if (!options.trace.empty()) return unused("--trace", "needs timing: " + fix);
    if (!options.mode.empty() && !options.topology.empty()) {
      return unused("--topology", "times collectives, which --mode values does not: " + fix);
    }
    if (!options.placement.empty()) return unused("--placement", "needs timing: " + fix);
    if (!options.other_jobs.empty()) return unused("--other-job", "needs timing: " + fix);
  }
  if (spec.mode == RunMode::kTiming) {
    const std::string why =
        "is about values, which --mode timing does not compute: give --mode full";
    if (!options.out.empty()) return unused("--out", why);
    if (options.numerics != "tpu") return unused("--numerics", why);
    if (options.mxu != "analytic") return unused("--mxu", why);
  }
  TPUSIM_ASSIGN_OR_RETURN(
      spec.evaluation,
      ParseEvaluationSpec("tpusim exec", options.inputs, options.numerics, options.max_memory));
  EvaluationSpec& evaluation = spec.evaluation;
  evaluation.mxu = options.mxu == "rtl" ? MxuEngine::kRtl : MxuEngine::kAnalytic;
  evaluation.elided_constants = options.elided_constants == "error" ? ElidedConstantPolicy::kError
                                                                    : ElidedConstantPolicy::kSeeded;
  TPUSIM_ASSIGN_OR_RETURN(spec.trip_counts, ParseTripCounts(options.trip_counts));
  spec.default_trip_count = options.default_trip_count;
  TPUSIM_RETURN_IF_ERROR(ParseBranches(options.branches, spec));
  spec.limits = options.limits;
  StatusOr<ici::Algorithm> algorithm = ici::ParseAlgorithm(options.algorithm);
  if (!algorithm.ok()) return algorithm.status().WithContext("tpusim exec: error: --algorithm");
  spec.algorithm = *algorithm;
  if (!options.placement.empty()) {
    spec.placement_given_at = "tpusim exec: error: --placement " + Quote(options.placement);
    TPUSIM_ASSIGN_OR_RETURN(spec.placement,
                            ParsePlacement(options.placement, "tpusim exec: error: --placement"));
  }
  for (const std::string& text : options.other_jobs) {
    TPUSIM_ASSIGN_OR_RETURN(spec.other_jobs.emplace_back(), LoadOtherJob(text));
  }
  return spec;
}

/// The whole run after the command line is parsed; errors are input errors.
Status Execute(const ExecOptions& options, std::ostream& out, std::ostream& err) {
  TPUSIM_ASSIGN_OR_RETURN(const RunSpec spec, ExecRunSpec(options));
  // Everything the command line says is checked before the long part.
  std::optional<arch::ChipConfig> chip;
  if (!options.chip.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(
        chip, arch::LoadChipPreset(options.chip, options.models_dir, options.overrides));
  }
  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(options.file));
  TPUSIM_ASSIGN_OR_RETURN(const std::unique_ptr<hlo::HloModule> module,
                          ParseAndVerifyModule(text, options.file));
  TPUSIM_ASSIGN_OR_RETURN(
      const eval::SpmdConfig spmd,
      ProgramDevices(*module, options.file, options.replicas, options.partitions));
  std::optional<arch::TopologyConfig> topology;
  if (!options.topology.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(
        topology,
        LoadTopologyOption(options.topology, "tpusim exec: error: ", chip ? &*chip : nullptr));
  }
  TPUSIM_ASSIGN_OR_RETURN(const ModuleRun run,
                          RunModule(spec, *module, spmd, chip, std::move(topology), err));

  RunReportOptions report;
  report.out_dir = options.out;
  report.top = options.top;
  report.json = options.json;
  report.trace = options.trace;
  return WriteRunReport(run, spec.mode, report, out);
}

}  // namespace

CLI::App* AddExecCommand(CLI::App& app, ExecOptions& options) {
  CLI::App* exec = app.add_subcommand(
      "exec", "Run an HLO module: what it computes, and how long it takes on a chip");
  exec->add_option("FILE", options.file, "HLO text module to run")->required()->type_name("");
  exec->add_option("--mode", options.mode,
                   "values: compute the outputs; timing: time the module on --chip without "
                   "computing values; full: both, with loop trip counts from the values run "
                   "(default: full with --chip, else values)")
      ->option_text("values|timing|full")
      ->check(CLI::IsMember({"values", "timing", "full"}));
  exec->add_option("--chip", options.chip,
                   "Chip preset to time on: a name from 'tpusim presets' or a YAML file")
      ->option_text("NAME|FILE");
  exec->add_option("-p,--param", options.overrides,
                   "Override one preset field, e.g. -p hbm.bandwidth=1TB/s -p mxu.count_per_core=2 "
                   "(repeatable; docs/presets.md lists the fields)")
      ->option_text("KEY=VALUE");
  AddModelsDirOption(*exec, options.models_dir);
  exec->add_option("--json", options.json,
                   "Write the metrics as JSON to OUT (atomically): chip, cycles, time_us, flops, "
                   "hbm_bytes, pcie_bytes, ops[] per executed instruction, and outputs[] as in "
                   "the table")
      ->option_text("OUT")
      ->check(OutputFile());
  exec->add_option("--trace", options.trace,
                   "Write a Perfetto/Chrome trace to OUT (atomically): a track per unit per "
                   "TensorCore; open it in ui.perfetto.dev")
      ->option_text("OUT")
      ->check(OutputFile());
  exec->add_option("--top", options.top, "Rows of the op profile table")
      ->option_text("N")
      ->check(PositiveNumber())
      ->capture_default_str();
  exec->add_option("--trip-count", options.trip_counts,
                   "Iterations of the while loop named NAME for timing, at every execution, "
                   "overriding what the program shows and what the values run saw (repeatable)")
      ->option_text("NAME=N");
  exec->add_option("--default-trip-count", options.default_trip_count,
                   "Iterations timed for a loop whose count is unknown (no constant bound, not "
                   "run for values, no --trip-count)")
      ->option_text("N")
      ->check(NonNegativeNumber())
      ->capture_default_str();
  exec->add_option("--branch", options.branches,
                   "Branch conditionals take when timed: N for every conditional (default 0: "
                   "the true branch of a pred conditional; past the last, the last), NAME=N for "
                   "the conditionals named NAME (repeatable); the values run of full mode, "
                   "where it ran, says which each execution took")
      ->option_text("N|NAME=N");
  exec->add_option("--inputs", options.inputs,
                   "Where the entry parameters come from: seed:N for seeded random values, or "
                   "a directory of param_<N>.npy files")
      ->option_text("seed:N|DIR")
      ->capture_default_str();
  exec->add_option("--out", options.out,
                   "Write each result as .npy into DIR (created if missing): output.npy, or "
                   "output_<i>.npy per leaf of a tuple result; device_<d>/ per device")
      ->option_text("DIR");
  exec->add_option("--numerics", options.numerics,
                   "tpu: dot and convolution as the MXU computes them (bf16 passes, f32 "
                   "accumulation in tile order); ieee: a full-precision reference")
      ->option_text("tpu|ieee")
      ->check(CLI::IsMember({"tpu", "ieee"}))
      ->capture_default_str();
  exec->add_option("--mxu", options.mxu,
                   "analytic: the fast C++ MXU model; rtl: dot and convolution products tile by "
                   "tile through the Verilated 128x128 RTL array (same values, much slower)")
      ->option_text("analytic|rtl")
      ->check(CLI::IsMember({"analytic", "rtl"}))
      ->capture_default_str();
  AddMaxMemoryOption(*exec, options.max_memory);
  AddLoopLimitOptions(*exec, options.limits);
  exec->add_option("--elided-constants", options.elided_constants,
                   "Constants whose values the dump elided (`{...}`): seeded fills them with "
                   "seeded values (the --inputs seed, else 0) and warns; error refuses to run")
      ->option_text("seeded|error")
      ->check(CLI::IsMember({"seeded", "error"}))
      ->capture_default_str();
  exec->add_option("--replicas", options.replicas,
                   "Replicas to run (default: the module's replica_count, else 1)")
      ->option_text("N");
  exec->add_option("--partitions", options.partitions,
                   "SPMD partitions to run (default: the module's num_partitions, else 1)")
      ->option_text("N");
  exec->add_option("--topology", options.topology,
                   "Time every device with collectives on this network: a short form "
                   "(torus:4x4, twisted:4x4x8, ...) or a YAML file (docs/interconnect.md); "
                   "without it collectives cost only their local work")
      ->option_text("SHORTFORM|FILE.yaml")
      ->check(NonEmpty());
  exec->add_option("--algorithm", options.algorithm,
                   "Collective algorithm with --topology: " + CollectiveAlgorithmChoices())
      ->option_text("NAME")
      ->capture_default_str();
  exec->add_option("--placement", options.placement,
                   "With --topology: the network devices the module's devices run on, in "
                   "order (0-7, 8-15, 0,2,4,6); default 0, 1, 2, ...")
      ->option_text("DEVICES")
      ->check(NonEmpty());
  exec->add_option("--other-job", options.other_jobs,
                   "With --topology: another HLO module running on the same network at the same "
                   "time, timed (not evaluated) beside this one, its collectives sharing links "
                   "with this module's; on DEVICES, else on the lowest network devices left "
                   "free. Repeat for several")
      ->option_text("FILE[@DEVICES]")
      ->check(NonEmpty());
  exec->footer(R"(Inputs:
  seed:N   every parameter drawn deterministically from seed N: floats standard
           normal, signed integers in [-8, 8], unsigned in [0, 16], pred a coin,
           integers that feed gather/scatter/dynamic-slice indices within bounds,
           ragged-dot group sizes splitting all the rows of the ragged dimension;
           each device gets its own draw, except scalars and replicated
           parameters, which every device shares.
  DIR      param_<N>.npy for parameter N; param_<N>_<i>.npy for leaf i of a tuple
           parameter; with several devices, DIR/device_<d>/ files override the
           shared ones. Types and shapes must match the parameters exactly.

Values: one row per output: shape, min, max, mean (over non-NaN elements; complex:
real parts), NaN count and an FNV-1a checksum of the stored bytes (equal checksums:
bit-identical outputs). docs/values.md says how bf16 and f8 are stored in .npy.
Every device of an SPMD program runs (replicas x partitions, default from the module
header and its collectives), exchanging real data in its collectives.

Timing (--chip): the op profile, the top instructions by time: cycles, microseconds,
FLOPs, HBM bytes, fraction of peak, and the unit that bound each (MXU, VPU, transpose,
HBM, VMEM, DMA, latency, ICI). docs/models.md explains every effect modelled.
With --topology every device is timed, collectives meeting on the network (one device
stands for all when their timelines are provably identical: "symmetry: used"), and a
collective table follows: kind, executions, participants, bytes, time, algorithm.
With --other-job a table of the jobs that shared the network follows: each job's
network devices, time, collective time and the part of it lost to sharing links.
Full mode times what the values run did, execution by execution and device by
device: the trip count of each loop and the branch of each conditional (a
pipeline stage's own branch), the rows each ragged-dot group held (the busiest
device is the straggler) and the rows each ragged-all-to-all sent to each peer.
Values that cannot be computed (over --max-memory, an operation the evaluator
lacks) are skipped: the first line says why, and the module is timed without
them.

Exit codes:
  0  the module ran (in full mode, perhaps without its values)
  2  usage error; FILE unreadable, malformed or not verifiable; bad or missing
     input files or preset; in values mode, an unsupported operation or a run over
     --max-memory)");
  return exec;
}

int RunExec(const ExecOptions& options, std::ostream& out, std::ostream& err) {
  const Status status = Execute(options, out, err);
  if (!status.ok()) {
    PrintError(status, err);
    return kExitInputError;
  }
  out.flush();
  return kExitOk;
}

}  // namespace tpusim::harness
