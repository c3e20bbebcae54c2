#include "harness/module_run.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>

#include "harness/program_io.h"
#include "harness/progress.h"
#include "sim/arch/topology_config.h"
#include "sim/base/units.h"
#include "sim/eval/program_inputs.h"
#include "sim/ici/interconnect.h"
#if TPUSIM_HAVE_RTL
#include "sim/rtl/rtl_mxu_tile.h"
#endif

namespace tpusim::harness {
namespace {

using value::Literal;

/// Half of the machine's physical memory: the default memory limit.
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

StatusOr<InputSource> ParseInputSource(const std::string& text, const std::string& command) {
  InputSource source;
  if (text.rfind("seed:", 0) == 0) {
    const std::string digits = text.substr(5);
    uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      return InvalidArgument(command + ": error: --inputs '" + text +
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

/// `--max-memory`: a byte count with a unit ("8GiB", "512MB") or bare bytes;
/// empty: the default.
StatusOr<int64_t> ParseMaxMemory(const std::string& text, const std::string& command) {
  if (text.empty()) return DefaultMaxMemory();
  const bool bare = std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
  StatusOr<Bytes> bytes = ParseBytes(bare ? text + "B" : text);
  if (!bytes.ok()) {
    return InvalidArgument(command + ": error: --max-memory: " + bytes.status().message());
  }
  return bytes->value();
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

}  // namespace

Status CheckEvaluationOptions(const EvaluationOptions& options) {
  TPUSIM_RETURN_IF_ERROR(ParseInputSource(options.inputs, options.command).status());
  return ParseMaxMemory(options.max_memory, options.command).status();
}

namespace {

/// Refuses, before allocating, a run whose values would exceed the limit:
/// every device holds its own values.
Status CheckMemory(const hlo::HloModule& module, const eval::SpmdConfig& spmd,
                   int64_t max_memory) {
  const int64_t devices = spmd.device_count();
  TPUSIM_ASSIGN_OR_RETURN(const int64_t peak, eval::Evaluator::EstimatePeakBytes(module));
  if (peak > max_memory / devices) {
    return ResourceExhausted(module.filename() + ": error: running it needs about " +
                             FormatBytes(peak) + " per device x " + std::to_string(devices) +
                             " device(s), more than --max-memory " + FormatBytes(max_memory) +
                             "; raise --max-memory or run fewer devices");
  }
  return Status();
}

}  // namespace

StatusOr<std::vector<std::vector<Literal>>> LoadInputs(const hlo::HloModule& module,
                                                       const eval::SpmdConfig& spmd,
                                                       const EvaluationOptions& options) {
  TPUSIM_ASSIGN_OR_RETURN(const InputSource inputs,
                          ParseInputSource(options.inputs, options.command));
  TPUSIM_ASSIGN_OR_RETURN(const int64_t max_memory,
                          ParseMaxMemory(options.max_memory, options.command));
  TPUSIM_RETURN_IF_ERROR(CheckMemory(module, spmd, max_memory));
  const int64_t devices = spmd.device_count();
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
  return args;
}

StatusOr<Evaluation> EvaluateModule(const hlo::HloModule& module, const eval::SpmdConfig& spmd,
                                    const EvaluationOptions& options,
                                    std::vector<std::vector<Literal>> inputs, std::ostream& err) {
  TPUSIM_ASSIGN_OR_RETURN(const InputSource source,
                          ParseInputSource(options.inputs, options.command));
  TPUSIM_ASSIGN_OR_RETURN(const int64_t max_memory,
                          ParseMaxMemory(options.max_memory, options.command));
  TPUSIM_RETURN_IF_ERROR(CheckMemory(module, spmd, max_memory));
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
  if (options.mxu == "rtl") {
    return InvalidArgument(options.command + ": error: --mxu rtl: this tpusim was built without "
                           "TPUSIM_RTL");
  }
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
    eval_options.elided_constant_seed = source.seed.value_or(0);
    const hlo::SourceLocation at = elided.front()->location();
    err << module.filename() << ':' << at.line << ':' << at.column
        << ": warning: the dump elided the values of " << elided.size() << " constant(s), first "
        << elided.front()->name()
        << "; they hold seeded values, so outputs differ from the real program's\n";
  }

  Evaluation evaluation;
  eval_options.control_flow = &evaluation.control_flow;
  std::atomic<int64_t> executed{0};
  eval_options.progress = &executed;
  const eval::Evaluator evaluator(eval_options);
  std::optional<ProgressLine> progress;
  progress.emplace("evaluating " + module.name() + " on " + std::to_string(spmd.device_count()) +
                       " device(s)",
                   &executed);
  StatusOr<std::vector<Literal>> evaluated = evaluator.EvaluateSpmd(module, spmd, inputs);
  progress.reset();  // erases the line before anything else is printed
  TPUSIM_ASSIGN_OR_RETURN(evaluation.results, std::move(evaluated));
  return evaluation;
}

namespace {

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

/// An error for each --trip-count naming no while loop of `module`: a typo
/// would otherwise time the loop once, silently.
Status CheckTripCountNames(const hlo::HloModule& module,
                           const std::map<std::string, int64_t>& counts) {
  if (counts.empty()) return Status();
  std::set<std::string> loops;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() == hlo::HloOpcode::kWhile) loops.insert(inst->name());
    }
  }
  for (const auto& [name, count] : counts) {
    if (loops.contains(name)) continue;
    std::string known;
    for (const std::string& loop : loops) {
      if (known.size() > 200) {
        known += ", ...";
        break;
      }
      known += (known.empty() ? "" : ", ") + loop;
    }
    return InvalidArgument("tpusim exec: error: --trip-count '" + name + "=" +
                           std::to_string(count) + "': " + module.filename() +
                           " has no while loop named '" + name + "' (" +
                           (loops.empty() ? std::string("it has no while loops")
                                          : "its loops: " + known) +
                           ")");
  }
  return Status();
}

}  // namespace

std::string ExecMode(const ExecOptions& options) {
  return !options.mode.empty() ? options.mode : options.chip.empty() ? "values" : "full";
}

StatusOr<ModuleRun> RunModule(const ExecOptions& options, const hlo::HloModule& module,
                              const eval::SpmdConfig& spmd,
                              const std::optional<arch::ChipConfig>& chip,
                              std::optional<arch::TopologyConfig> topology, std::ostream& err) {
  const std::string mode = ExecMode(options);
  using TripCounts = std::map<std::string, int64_t>;
  TPUSIM_ASSIGN_OR_RETURN(TripCounts trip_counts, ParseTripCounts(options.trip_counts));
  TPUSIM_RETURN_IF_ERROR(CheckTripCountNames(module, trip_counts));
  // The network that times collectives, with the topology's per-device slowdowns.
  std::unique_ptr<ici::Interconnect> interconnect;
  std::map<int64_t, double> slowdowns;
  TPUSIM_ASSIGN_OR_RETURN(const ici::Algorithm algorithm, ici::ParseAlgorithm(options.algorithm));
  if (topology.has_value() || options.algorithm != "auto") {
    if (!chip.has_value() || !topology.has_value()) {
      return InvalidArgument("tpusim exec: error: --topology and --algorithm time collectives on "
                             "a network: give --chip NAME and --topology SHORTFORM|FILE");
    }
    TPUSIM_RETURN_IF_ERROR(arch::ApplyTpuWraparound(*topology, *chip));
    for (const arch::SlowDevice& slow : topology->slow_devices) slowdowns[slow.device] = slow.factor;
    TPUSIM_ASSIGN_OR_RETURN(interconnect, ici::Interconnect::Create(*topology, *chip));
  }
  ModuleRun run;
  if (mode != "timing") {
    EvaluationOptions evaluation_options;
    evaluation_options.inputs = options.inputs;
    evaluation_options.numerics = options.numerics;
    evaluation_options.mxu = options.mxu;
    evaluation_options.max_memory = options.max_memory;
    evaluation_options.elided_constants = options.elided_constants;
    TPUSIM_ASSIGN_OR_RETURN(std::vector<std::vector<Literal>> inputs,
                            LoadInputs(module, spmd, evaluation_options));
    TPUSIM_ASSIGN_OR_RETURN(Evaluation evaluation, EvaluateModule(module, spmd, evaluation_options,
                                                                  std::move(inputs), err));
    run.results = std::move(evaluation.results);
    run.control_flow = std::move(evaluation.control_flow);
    // What the program really did wins over the timing model's static guess,
    // and the user's word over both: merge keeps the entries already present.
    trip_counts.merge(run.control_flow.trip_counts);
  }
  if (mode != "values" && chip.has_value()) {
    timing::TimingOptions timing_options;
    timing_options.trip_counts = std::move(trip_counts);
    timing_options.default_trip_count = options.default_trip_count;
    timing_options.conditional_branch = options.branch;
    timing_options.branches = run.control_flow.branches;
    timing_options.spmd = spmd;
    timing_options.interconnect = interconnect.get();
    timing_options.algorithm = algorithm;
    timing_options.device_slowdown = std::move(slowdowns);
    TPUSIM_ASSIGN_OR_RETURN(run.timing, timing::SimulateModule(module, *chip, timing_options));
  }
  return run;
}

}  // namespace tpusim::harness
