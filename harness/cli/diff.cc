// `tpusim diff BEFORE AFTER --chip NAME`: its options, parsed into a DiffSpec,
// and the call into harness/diff, which runs both compilations of the program
// and judges and reports what changed (harness/diff/dump_diff.h does that for
// every pair of modules of two XLA dump directories). docs/cli.md and
// docs/diff.md describe the reports.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/diff/diff_report.h"
#include "harness/diff/dump_diff.h"
#include "harness/diff/program_diff.h"
#include "harness/run/run_spec.h"
#include "sim/arch/preset_loader.h"
#include "sim/base/file.h"
#include "sim/base/units.h"
#include "sim/hlo/primitive_type.h"
#include "sim/value/compare.h"

namespace tpusim::harness {
namespace {

constexpr char kCommand[] = "tpusim diff";

/// A --*-tolerance value; an empty optional one is no gate.
StatusOr<ChangeTolerance> ParseTolerance(const std::string& text, const std::string& flag) {
  const StatusOr<double> percent = ParsePercentage(text);
  if (!percent.ok()) {
    return InvalidArgument(std::string(kCommand) + ": error: " + flag + " " + Quote(text) +
                           ": expected a non-negative percentage such as 2% or 0.5%");
  }
  return ChangeTolerance{*percent, text};
}
StatusOr<std::optional<ChangeTolerance>> ParseOptionalTolerance(const std::string& text,
                                                                const std::string& flag) {
  if (text.empty()) return std::optional<ChangeTolerance>();
  TPUSIM_ASSIGN_OR_RETURN(ChangeTolerance tolerance, ParseTolerance(text, flag));
  return std::optional<ChangeTolerance>(std::move(tolerance));
}

/// --type-tolerance TYPE:KEY=VALUE[,KEY=VALUE...] (KEY rtol, atol or ulp):
/// outputs of element type TYPE are held to `base` with those keys replaced.
StatusOr<std::pair<hlo::PrimitiveType, value::ErrorSpec>> ParseTypeTolerance(
    const std::string& text, value::ErrorSpec base) {
  const auto bad = [&](const std::string& why) {
    return InvalidArgument(std::string(kCommand) + ": error: --type-tolerance " + Quote(text) +
                           ": " + why);
  };
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return bad("expected TYPE:KEY=VALUE, e.g. bf16:rtol=0.02");
  const std::string name = text.substr(0, colon);
  const std::optional<hlo::PrimitiveType> type = hlo::PrimitiveTypeFromName(name);
  if (!type.has_value() || !hlo::IsArrayType(*type)) {
    return bad("expected an element type such as f32, bf16 or s32, got " + Quote(name));
  }
  size_t begin = colon + 1;
  do {
    const size_t end = std::min(text.find(',', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    const size_t equals = item.find('=');
    const std::string key = item.substr(0, equals);
    const std::string number = equals == std::string::npos ? "" : item.substr(equals + 1);
    char* parsed_end = nullptr;
    const double value = std::strtod(number.c_str(), &parsed_end);
    if (number.empty() || *parsed_end != '\0' || !(value >= 0) || value > 1e300) {
      return bad("expected KEY=VALUE with KEY rtol, atol or ulp and a non-negative number, got " +
                 Quote(item));
    }
    if (key == "rtol") {
      base.rtol = value;
    } else if (key == "atol") {
      base.atol = value;
    } else if (key == "ulp" && value == static_cast<double>(static_cast<int64_t>(value))) {
      base.ulp = static_cast<uint64_t>(value);
    } else {
      return bad("expected KEY=VALUE with KEY rtol, atol or ulp (a whole number), got " +
                 Quote(item));
    }
    begin = end + 1;
  } while (begin <= text.size());
  return std::make_pair(*type, base);
}

/// An option `mode` would not use is a usage error, not silently dropped: a
/// gate written with `--mode values --time-tolerance 5%` would seem to check
/// time. Options left at their defaults are not used.
Status RefuseUnusedOptions(const DiffOptions& options, RunMode mode) {
  const DiffOptions defaults;
  const auto unused = [](const std::string& flag, const std::string& why) {
    return InvalidArgument(std::string(kCommand) + ": error: " + flag + " " + why);
  };
  if (mode == RunMode::kValues) {
    const std::string why = "is about timing, which --mode values does not do: give --mode full";
    for (const auto& [flag, given] :
         {std::pair{"--chip", !options.chip.empty()},
          {"-p", !options.overrides.empty()},
          {"--topology", !options.topology.empty()},
          {"--topology-after", !options.topology_after.empty()},
          {"--algorithm", options.algorithm != defaults.algorithm},
          {"--time-tolerance", options.time_tolerance != defaults.time_tolerance},
          {"--bytes-tolerance", options.bytes_tolerance != defaults.bytes_tolerance},
          {"--collective-tolerance", options.collective_tolerance != defaults.collective_tolerance},
          {"--ici-tolerance", !options.ici_tolerance.empty()},
          {"--link-tolerance", !options.link_tolerance.empty()}}) {
      if (given) return unused(flag, why);
    }
  }
  if (mode == RunMode::kTiming) {
    const std::string why =
        "is about values, which --mode timing does not compute: give --mode full";
    for (const auto& [flag, given] : {std::pair{"--inputs", options.inputs != defaults.inputs},
                                      {"--numerics", options.numerics != defaults.numerics},
                                      {"--max-memory", !options.max_memory.empty()},
                                      {"--rtol", options.rtol != defaults.rtol},
                                      {"--atol", options.atol != defaults.atol},
                                      {"--max-ulp", options.max_ulp.has_value()},
                                      {"--type-tolerance", !options.type_tolerances.empty()}}) {
      if (given) return unused(flag, why);
    }
  }
  return Status::Ok();
}

/// The comparison the command line asks for, parsed once.
StatusOr<DiffSpec> ParseDiffSpec(const DiffOptions& options) {
  DiffSpec spec;
  spec.before = options.before;
  spec.after = options.after;
  TPUSIM_ASSIGN_OR_RETURN(spec.mode, ParseRunMode(options.mode));
  TPUSIM_RETURN_IF_ERROR(RefuseUnusedOptions(options, spec.mode));
  DiffThresholds& thresholds = spec.thresholds;
  thresholds.rtol = options.rtol;
  thresholds.atol = options.atol;
  thresholds.max_ulp = options.max_ulp;
  value::ErrorSpec all;
  all.rtol = options.rtol;
  all.atol = options.atol;
  if (options.max_ulp.has_value()) all.ulp = static_cast<uint64_t>(*options.max_ulp);
  for (const std::string& text : options.type_tolerances) {
    TPUSIM_ASSIGN_OR_RETURN(const auto typed, ParseTypeTolerance(text, all));
    if (!thresholds.per_type.emplace(typed).second) {
      return InvalidArgument(std::string(kCommand) + ": error: --type-tolerance " + Quote(text) +
                             ": " + std::string(hlo::PrimitiveTypeName(typed.first)) +
                             " is given a tolerance twice");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(thresholds.time,
                          ParseTolerance(options.time_tolerance, "--time-tolerance"));
  TPUSIM_ASSIGN_OR_RETURN(thresholds.bytes,
                          ParseTolerance(options.bytes_tolerance, "--bytes-tolerance"));
  TPUSIM_ASSIGN_OR_RETURN(thresholds.collective,
                          ParseTolerance(options.collective_tolerance, "--collective-tolerance"));
  TPUSIM_ASSIGN_OR_RETURN(thresholds.ici_bytes,
                          ParseOptionalTolerance(options.ici_tolerance, "--ici-tolerance"));
  TPUSIM_ASSIGN_OR_RETURN(thresholds.link_bytes,
                          ParseOptionalTolerance(options.link_tolerance, "--link-tolerance"));
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
  if (options.topology.empty() && (thresholds.ici_bytes || thresholds.link_bytes)) {
    return InvalidArgument(std::string(kCommand) + ": error: " +
                           (thresholds.ici_bytes ? "--ici-tolerance" : "--link-tolerance") +
                           " gates traffic on ICI links: give the network with --topology");
  }
  spec.topology = options.topology;
  spec.topology_after = options.topology_after;
  StatusOr<ici::Algorithm> algorithm = ici::ParseAlgorithm(options.algorithm);
  if (!algorithm.ok()) return algorithm.status().WithContext("tpusim diff: error: --algorithm");
  spec.algorithm = *algorithm;
  spec.top = options.top;
  return spec;
}

/// `tpusim diff BEFORE.hlo AFTER.hlo`: the whole report. Sets `exit_code` to
/// 0 or 1.
Status DiffFiles(const DiffSpec& spec, const std::string& json, std::ostream& out,
                 std::ostream& err, int& exit_code) {
  TPUSIM_ASSIGN_OR_RETURN(DiffReport report, DiffPrograms(spec, err));
  const PairDiff pair = JudgePair(std::move(report), spec);
  exit_code = pair.exit_code;
  PrintDiffReport(pair.report, pair.verdict, spec, out);
  if (!json.empty()) {
    TPUSIM_RETURN_IF_ERROR(
        WriteFileAtomically(json, DiffReportJson(pair.report, pair.verdict, spec, exit_code)));
  }
  return Status();
}

/// Whether `path` is a directory; an unreadable path is not (reading it then
/// reports why).
bool IsDirectory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

/// The whole comparison, of two modules or two dump directories; errors are
/// input errors. Sets `exit_code` to 0 or 1, or for dump directories 2 when a
/// module could not be compared.
Status Execute(const DiffOptions& options, std::ostream& out, std::ostream& err, int& exit_code) {
  const bool before_dir = IsDirectory(options.before);
  const bool after_dir = IsDirectory(options.after);
  if (before_dir != after_dir) {
    return InvalidArgument(std::string(kCommand) +
                           ": error: " + (before_dir ? options.before : options.after) +
                           " is a directory but " + (before_dir ? options.after : options.before) +
                           " is not: give two HLO modules or two XLA dump directories");
  }
  for (const std::string& input : {options.before, options.after}) {
    // --json naming a module would replace the program under comparison.
    std::error_code ec;
    if (!options.json.empty() && std::filesystem::equivalent(options.json, input, ec)) {
      return InvalidArgument(std::string(kCommand) + ": error: --json " + Quote(options.json) +
                             " is " + Quote(input) + ", which it compares; name another file");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(const DiffSpec spec, ParseDiffSpec(options));
  if (before_dir) {
    TPUSIM_ASSIGN_OR_RETURN(exit_code, DiffDumpDirectories(spec, options.json, out, err));
    return Status();
  }
  return DiffFiles(spec, options.json, out, err, exit_code);
}

}  // namespace

CLI::App* AddDiffCommand(CLI::App& app, DiffOptions& options) {
  CLI::App* diff = app.add_subcommand(
      "diff",
      "Run two compilations of one program on the same inputs and chip; report what changed");
  diff->add_option("BEFORE", options.before,
                   "The reference HLO module, or an XLA dump directory (--xla_dump_to)")
      ->required()
      ->type_name("");
  diff->add_option("AFTER", options.after,
                   "The HLO module compared with it, or a dump directory when BEFORE is one")
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
                   "directory of param_<N>.npy files, as for exec (seed:N only for dump "
                   "directories)")
      ->option_text("seed:N|DIR")
      ->capture_default_str();
  diff->add_option("--topology", options.topology,
                   "The network both modules run on (a short form such as torus:4x4, or a YAML "
                   "file; docs/interconnect.md): every device is timed and collectives are "
                   "routed over its links, so ICI bytes are compared. Default: device 0 alone")
      ->option_text("SHORTFORM|FILE")
      ->check(NonEmpty());
  diff->add_option("--topology-after", options.topology_after,
                   "The network AFTER runs on, when it is not BEFORE's (--topology): the same "
                   "program (BEFORE and AFTER may be one file) on a re-cabled or resized pod. The "
                   "headline then names the network change")
      ->option_text("SHORTFORM|FILE")
      ->check(NonEmpty());
  diff->add_option("--algorithm", options.algorithm,
                   "Collective algorithm with --topology: " + CollectiveAlgorithmChoices())
      ->option_text("NAME")
      ->capture_default_str();
  diff->add_option("--numerics", options.numerics,
                   "tpu: dot and convolution as the MXU computes them; ieee: full precision")
      ->option_text("tpu|ieee")
      ->check(CLI::IsMember({"tpu", "ieee"}))
      ->capture_default_str();
  AddMaxMemoryOption(*diff, options.max_memory);
  AddLoopLimitOptions(*diff, options.limits);
  diff->add_option("--rtol", options.rtol,
                   "An output element passes when |after - before| <= atol + rtol * |before|")
      ->option_text("X")
      ->check(NonNegativeNumber())
      ->capture_default_str();
  diff->add_option("--atol", options.atol, "Absolute tolerance of an output element")
      ->option_text("X")
      ->check(NonNegativeNumber())
      ->capture_default_str();
  diff->add_option("--max-ulp", options.max_ulp,
                   "An element within N units in the last place also passes (bf16, f16, f32, "
                   "f64); default: not used")
      ->option_text("N")
      ->check(NonNegativeNumber());
  diff->add_option("--type-tolerance", options.type_tolerances,
                   "Hold outputs of element type TYPE to their own tolerance: KEY is rtol, atol "
                   "or ulp, and the keys not given keep --rtol, --atol and --max-ulp (e.g. "
                   "bf16:rtol=0.02,atol=1e-3; repeatable, one per type)")
      ->option_text("TYPE:KEY=V,...");
  diff->add_option("--time-tolerance", options.time_tolerance,
                   "Largest change of total time, either way, that passes")
      ->option_text("PCT")
      ->capture_default_str();
  diff->add_option("--bytes-tolerance", options.bytes_tolerance,
                   "Largest change of HBM bytes, either way, that passes")
      ->option_text("PCT")
      ->capture_default_str();
  diff->add_option("--collective-tolerance", options.collective_tolerance,
                   "Largest change of the collectives' time, either way, that passes (checked "
                   "when either module runs a collective)")
      ->option_text("PCT")
      ->capture_default_str();
  diff->add_option("--ici-tolerance", options.ici_tolerance,
                   "Largest change of the bytes on ICI links that passes; default: reported, "
                   "not gated (needs --topology)")
      ->option_text("PCT");
  diff->add_option("--link-tolerance", options.link_tolerance,
                   "Largest change of the busiest ICI link's bytes that passes; default: not "
                   "gated (needs --topology)")
      ->option_text("PCT");
  diff->add_option("--structure", options.structure,
                   "fail: any structural change exits 1; report: list structural changes but "
                   "judge only outputs, time and bytes")
      ->option_text("fail|report")
      ->check(CLI::IsMember({"fail", "report"}))
      ->capture_default_str();
  diff->add_option("--json", options.json,
                   "Write the whole comparison as JSON to FILE (atomically); for dump "
                   "directories, one entry per module")
      ->option_text("FILE")
      ->check(OutputFile());
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

Dump directories: given two XLA dump directories (--xla_dump_to), diff pairs
their module_NNNN.NAME.*after_optimizations.txt modules by NAME (the numbering
and platform suffix may differ), compares each pair with the options above and
prints one line per module, then a summary:
  module jit_f: OK: no change beyond the thresholds -- ...
  module jit_g: REGRESSION: +1 copy ...
  module jit_h: only before (DUMP_BEFORE/module_0003.jit_h.tpu_after_optimizations.txt)
  3 modules: 1 ok, 1 regressed, 0 changed, 1 only before, 0 only after, 0 not compared (error)
A module in one directory only is a change (exit 1). The exit code is the worst
module's.

Exit codes:
  0  nothing changed beyond the thresholds
  1  a structural change (with --structure fail), an output beyond tolerance or of
     another shape, or time or HBM bytes changed beyond their tolerance
     (with dump directories also a module in one directory only)
  2  usage error (e.g. a directory and a file); a file unreadable, malformed or
     not verifiable; modules whose entry parameters differ; bad inputs or
     preset; an unsupported operation; a dump directory without modules)");
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
