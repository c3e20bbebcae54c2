// `tpusim exec FILE`: run a compiled HLO module on seeded or .npy inputs on
// every device, report (and optionally write) what it computes, and time it
// on a chip preset.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "harness/program_io.h"
#include "harness/progress.h"
#include "sim/arch/preset_loader.h"
#include "sim/base/file.h"
#include "sim/base/units.h"
#include "sim/eval/evaluator.h"
#include "sim/eval/program_inputs.h"
#include "sim/timing/report.h"
#include "sim/timing/timing.h"
#if TPUSIM_HAVE_RTL
#include "sim/rtl/rtl_mxu_tile.h"
#endif

namespace tpusim::harness {
namespace {

using value::Literal;

/// Half of the machine's physical memory: the default --max-memory.
int64_t DefaultMaxMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;  // unknown: a modest 4 GiB
  return static_cast<int64_t>(pages) / 2 * page_size;
}

/// `--inputs`: "seed:N" or a directory.
struct InputSource {
  std::optional<uint64_t> seed;
  std::string dir;
};

StatusOr<InputSource> ParseInputSource(const std::string& text) {
  InputSource source;
  if (text.rfind("seed:", 0) == 0) {
    const std::string digits = text.substr(5);
    uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      return InvalidArgument("tpusim exec: error: --inputs '" + text +
                             "': expected seed:N with N a non-negative integer below 2^64");
    }
    source.seed = seed;
    return source;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(text, ec)) {
    return InvalidArgument(text + ": error: --inputs expects seed:N or a directory of "
                                  "param_<N>.npy files; this is not a directory");
  }
  source.dir = text;
  return source;
}

/// `--max-memory`: a byte count with a unit ("8GiB", "512MB") or bare bytes.
StatusOr<int64_t> ParseMaxMemory(const std::string& text) {
  const bool bare = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
  StatusOr<Bytes> bytes = ParseBytes(bare ? text + "B" : text);
  if (!bytes.ok()) return InvalidArgument("tpusim exec: error: --max-memory: " +
                                          bytes.status().message());
  return bytes->value();
}

/// "123 B", "4.00 KiB", ... "281.93 GiB": sizes in messages.
std::string FormatBytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.2f %s", value, kUnits[unit]);
  return buffer;
}

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

/// What the values part of a run prints and reports.
struct ValuesResult {
  std::vector<OutputSummary> outputs;  ///< per device, per leaf
  /// Loop trip counts and conditional branches as the functional run saw
  /// them on device 0, for the timing model.
  eval::ControlFlowRecord control_flow;
};

/// The values part of a run: evaluates every device, and writes outputs
/// when asked. Refuses, before allocating, a run over --max-memory.
StatusOr<ValuesResult> RunValues(const ExecOptions& options, const hlo::HloModule& module,
                                 eval::SpmdConfig spmd, std::ostream& err) {
  TPUSIM_ASSIGN_OR_RETURN(const InputSource inputs, ParseInputSource(options.inputs));
  int64_t max_memory = DefaultMaxMemory();
  if (!options.max_memory.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(max_memory, ParseMaxMemory(options.max_memory));
  }
  eval::EvaluatorOptions eval_options;
  if (options.numerics == "ieee") eval_options.numerics = eval::Numerics::kIeee;
#if TPUSIM_HAVE_RTL
  // The largest Verilated array (128x128, the real MXU's, in a default
  // build); any size gives the analytic kernel's values.
  std::unique_ptr<rtl::RtlMxuTile> rtl_mxu;
  if (options.mxu == "rtl") {
    rtl_mxu = std::make_unique<rtl::RtlMxuTile>(rtl::MxuArraySizes().back());
    eval_options.mxu_engine = rtl_mxu.get();
  }
#else
  if (options.mxu == "rtl") return InvalidArgument("--mxu rtl: this tpusim was built without TPUSIM_RTL");
#endif
  eval_options.max_bytes = max_memory;

  const std::vector<const hlo::HloInstruction*> elided = ElidedConstants(module);
  if (!elided.empty()) {
    if (options.elided_constants == "error") {
      return InvalidArgument(module.ErrorAt(
          elided.front()->location(),
          "constant " + elided.front()->name() +
              ": the dump elided its values (`{...}`); --elided-constants seeded fills them"));
    }
    eval_options.elided_constant_seed = inputs.seed.value_or(0);
    const hlo::SourceLocation at = elided.front()->location();
    err << options.file << ':' << at.line << ':' << at.column
        << ": warning: the dump elided the values of " << elided.size() << " constant(s), first "
        << elided.front()->name()
        << "; they hold seeded values, so outputs differ from the real program's\n";
  }

  // Refuse before allocating: every device holds its own values.
  const int64_t devices = spmd.device_count();
  TPUSIM_ASSIGN_OR_RETURN(const int64_t peak, eval::Evaluator::EstimatePeakBytes(module));
  if (peak > max_memory / devices) {
    return ResourceExhausted(options.file + ": error: running it needs about " +
                             FormatBytes(peak) + " per device x " + std::to_string(devices) +
                             " device(s), more than --max-memory " + FormatBytes(max_memory) +
                             "; raise --max-memory or run fewer devices");
  }

  std::vector<std::vector<Literal>> args(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) {
    if (inputs.seed.has_value()) {
      TPUSIM_ASSIGN_OR_RETURN(args[d], eval::SeededInputs(module, *inputs.seed, d, max_memory));
    } else {
      TPUSIM_ASSIGN_OR_RETURN(
          args[d], ReadInputs(module, inputs.dir,
                              devices > 1 ? std::optional<int64_t>(d) : std::nullopt, max_memory));
    }
  }
  ValuesResult values;
  eval_options.control_flow = &values.control_flow;
  std::atomic<int64_t> executed{0};
  eval_options.progress = &executed;
  const eval::Evaluator evaluator(eval_options);
  std::optional<ProgressLine> progress;
  progress.emplace("evaluating " + module.name() + " on " + std::to_string(devices) +
                       " device(s)",
                   &executed);
  StatusOr<std::vector<Literal>> evaluated = evaluator.EvaluateSpmd(module, spmd, args);
  progress.reset();  // erases the line before anything else is printed
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<Literal> results, std::move(evaluated));
  for (int64_t d = 0; d < devices; ++d) {
    const std::string prefix = devices > 1 ? "device_" + std::to_string(d) : "";
    if (!options.out.empty()) {
      TPUSIM_RETURN_IF_ERROR(WriteOutputs(
          results[d], prefix.empty() ? options.out
                                     : (std::filesystem::path(options.out) / prefix).string()));
    }
    for (const OutputLeaf& leaf : OutputLeaves(results[d])) {
      values.outputs.push_back(
          Summarize(prefix.empty() ? leaf.name : prefix + "/" + leaf.name, *leaf.value));
    }
  }
  return values;
}

/// `NAME=N` trip counts from the command line.
StatusOr<std::map<std::string, int64_t>> ParseTripCounts(const std::vector<std::string>& texts) {
  std::map<std::string, int64_t> counts;
  for (const std::string& text : texts) {
    const size_t eq = text.find('=');
    int64_t n = -1;
    if (eq != std::string::npos && eq > 0) {
      const char* begin = text.data() + eq + 1;
      const char* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(begin, end, n);
      if (ec != std::errc() || ptr != end || begin == end) n = -1;
    }
    if (n < 0) {
      return InvalidArgument("tpusim exec: error: --trip-count '" + text +
                             "': expected WHILE_NAME=N with N a non-negative integer");
    }
    counts[text.substr(0, eq)] = n;
  }
  return counts;
}

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
    char checksum[17];
    std::snprintf(checksum, sizeof checksum, "%016llx",
                  static_cast<unsigned long long>(o.checksum));
    entry["checksum"] = checksum;
    list.push_back(std::move(entry));
  }
  return list;
}

/// The whole run after the command line is parsed; errors are input errors.
Status Execute(const ExecOptions& options, std::ostream& out, std::ostream& err) {
  const std::string mode =
      !options.mode.empty() ? options.mode : options.chip.empty() ? "values" : "full";
  if (mode != "values" && options.chip.empty()) {
    return InvalidArgument("tpusim exec: error: --mode " + mode +
                           " times the module on a chip: give --chip NAME (see tpusim presets)");
  }
  if (!options.trace.empty() && mode == "values") {
    return InvalidArgument("tpusim exec: error: --trace needs timing: give --chip NAME");
  }
  // Everything the command line says is checked before the long part.
  std::optional<arch::ChipConfig> chip;
  if (!options.chip.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(chip,
                            arch::LoadChipPreset(options.chip, options.models_dir, options.overrides));
  }
  using TripCounts = std::map<std::string, int64_t>;
  TPUSIM_ASSIGN_OR_RETURN(TripCounts trip_counts, ParseTripCounts(options.trip_counts));
  std::map<std::string, int64_t> branches;
  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(options.file));
  TPUSIM_ASSIGN_OR_RETURN(const std::unique_ptr<hlo::HloModule> module,
                          ParseAndVerifyModule(text, options.file));
  eval::SpmdConfig spmd = eval::SpmdConfig::CoveringModule(*module);
  if (options.replicas.has_value()) spmd.replica_count = *options.replicas;
  if (options.partitions.has_value()) spmd.partition_count = *options.partitions;
  if (spmd.replica_count < 1 || spmd.partition_count < 1 ||
      spmd.device_count() > eval::Evaluator::kMaxSpmdDevices) {
    return InvalidArgument("tpusim exec: error: --replicas and --partitions must be at least 1, "
                           "with at most " + std::to_string(eval::Evaluator::kMaxSpmdDevices) +
                           " devices in all");
  }

  nlohmann::ordered_json json;
  if (mode != "timing") {
    TPUSIM_ASSIGN_OR_RETURN(ValuesResult values, RunValues(options, *module, spmd, err));
    PrintSummaryTable(values.outputs, out);
    json["outputs"] = OutputsJson(values.outputs);
    // What the program really did wins over the timing model's static guess,
    // and the user's word over both: merge keeps the entries already present.
    trip_counts.merge(values.control_flow.trip_counts);
    branches = std::move(values.control_flow.branches);
  }
  if (chip.has_value()) {
    timing::TimingOptions timing_options;
    timing_options.trip_counts = std::move(trip_counts);
    timing_options.default_trip_count = options.default_trip_count;
    timing_options.conditional_branch = options.branch;
    timing_options.branches = std::move(branches);
    TPUSIM_ASSIGN_OR_RETURN(const timing::TimingResult timed,
                            timing::SimulateModule(*module, *chip, timing_options));
    if (mode != "timing") out << '\n';
    out << timing::FormatOpTable(timed, options.top);
    nlohmann::ordered_json metrics = nlohmann::ordered_json::parse(timing::TimingJson(timed));
    if (json.contains("outputs")) metrics["outputs"] = std::move(json["outputs"]);
    json = std::move(metrics);
    if (!options.trace.empty()) {
      TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(options.trace, timing::TimingTraceJson(timed)));
    }
  }
  if (!options.json.empty()) {
    TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(options.json, json.dump(2) + "\n"));
  }
  return Status();
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
  options.models_dir = TPUSIM_MODELS_DIR;  // the source tree's models/, set by CMake
  exec->add_option("--models-dir", options.models_dir,
                   "Where preset names are looked up; default: " + options.models_dir)
      ->option_text("DIR");
  exec->add_option("--json", options.json,
                   "Write the metrics as JSON to OUT (atomically): chip, cycles, time_us, flops, "
                   "hbm_bytes, ops[] per executed instruction, and outputs[] as in the table")
      ->option_text("OUT");
  exec->add_option("--trace", options.trace,
                   "Write a Perfetto/Chrome trace to OUT (atomically): a track per unit per "
                   "TensorCore; open it in ui.perfetto.dev")
      ->option_text("OUT");
  exec->add_option("--top", options.top, "Rows of the op profile table")
      ->option_text("N")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  exec->add_option("--trip-count", options.trip_counts,
                   "Iterations of the while loop named NAME for timing, overriding what the "
                   "program shows and what the values run saw (repeatable)")
      ->option_text("NAME=N");
  exec->add_option("--default-trip-count", options.default_trip_count,
                   "Iterations timed for a loop whose count is unknown (no constant bound, not "
                   "run for values, no --trip-count)")
      ->option_text("N")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  exec->add_option("--branch", options.branch,
                   "Branch a conditional takes when timed (0: the true branch of a pred "
                   "conditional), unless the values run of full mode saw which it took")
      ->option_text("N")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
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
  exec->add_option("--max-memory", options.max_memory,
                   "Refuse, before allocating, a run whose values would need more than this "
                   "(e.g. 8GiB, 512MB; default: half the physical memory)")
      ->option_text("BYTES");
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
  exec->footer(R"(Inputs:
  seed:N   every parameter drawn deterministically from seed N: floats standard
           normal, signed integers in [-8, 8], unsigned in [0, 16], pred a coin,
           integers that feed gather/scatter/dynamic-slice indices within bounds;
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
HBM, VMEM, DMA, latency). docs/models.md explains every effect modelled.

Exit codes:
  0  the module ran
  2  usage error; FILE unreadable, malformed or not verifiable; bad or missing
     input files or preset; an unsupported operation; a run over --max-memory)");
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
