// `tpusim diff BEFORE AFTER --chip NAME`: its options, parsed into a DiffSpec,
// and the call into harness/diff, which runs both compilations of the program
// and judges and reports what changed. docs/cli.md and docs/diff.md describe
// the report.
#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "harness/cli/cli.h"
#include "harness/diff/diff_report.h"
#include "harness/diff/program_diff.h"
#include "harness/run/run_spec.h"
#include "sim/arch/preset_loader.h"
#include "sim/base/file.h"
#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

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

/// The comparison the command line asks for, parsed once.
StatusOr<DiffSpec> ParseDiffSpec(const DiffOptions& options) {
  DiffSpec spec;
  spec.before = options.before;
  spec.after = options.after;
  TPUSIM_ASSIGN_OR_RETURN(spec.mode, ParseRunMode(options.mode));
  DiffThresholds& thresholds = spec.thresholds;
  thresholds.rtol = options.rtol;
  thresholds.atol = options.atol;
  thresholds.max_ulp = options.max_ulp;
  TPUSIM_ASSIGN_OR_RETURN(thresholds.time_tolerance,
                          ParseTolerance(options.time_tolerance, "--time-tolerance"));
  TPUSIM_ASSIGN_OR_RETURN(thresholds.bytes_tolerance,
                          ParseTolerance(options.bytes_tolerance, "--bytes-tolerance"));
  thresholds.time_tolerance_text = options.time_tolerance;
  thresholds.bytes_tolerance_text = options.bytes_tolerance;
  thresholds.structure_fails = options.structure == "fail";
  TPUSIM_ASSIGN_OR_RETURN(
      spec.evaluation,
      ParseEvaluationSpec(kCommand, options.inputs, options.numerics, options.max_memory));
  spec.limits = options.limits;
  spec.chip_name = options.chip;
  if (spec.mode != RunMode::kValues) {
    if (options.chip.empty()) {
      return InvalidArgument(std::string(kCommand) + ": error: --mode " + options.mode +
                             " times both modules: give --chip NAME (see tpusim presets)");
    }
    TPUSIM_ASSIGN_OR_RETURN(
        spec.chip, arch::LoadChipPreset(options.chip, options.models_dir, options.overrides));
  }
  if (!options.topology_after.empty() && options.topology.empty()) {
    return InvalidArgument(std::string(kCommand) +
                           ": error: --topology-after compares two networks: give BEFORE's with "
                           "--topology");
  }
  spec.topology = options.topology;
  spec.topology_after = options.topology_after;
  spec.algorithm = options.algorithm;
  spec.top = options.top;
  return spec;
}

/// The whole comparison; errors are input errors. Sets `exit_code` to 0 or 1.
Status Execute(const DiffOptions& options, std::ostream& out, std::ostream& err, int& exit_code) {
  TPUSIM_ASSIGN_OR_RETURN(const DiffSpec spec, ParseDiffSpec(options));
  TPUSIM_ASSIGN_OR_RETURN(const DiffReport report, DiffPrograms(spec, err));
  const Verdict verdict = Judge(report, spec);
  exit_code = verdict.failed ? kExitCheckFailed : kExitOk;
  PrintDiffReport(report, verdict, spec, out);
  if (!options.json.empty()) {
    TPUSIM_RETURN_IF_ERROR(
        WriteFileAtomically(options.json, DiffReportJson(report, verdict, spec, exit_code)));
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
  AddModelsDirOption(*diff, options.models_dir);
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
  AddLoopLimitOptions(*diff, options.limits);
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
