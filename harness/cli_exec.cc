// `tpusim exec FILE`: run a compiled HLO module on seeded or .npy inputs and
// report (and optionally write) what it computes.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/cli.h"
#include "harness/program_io.h"
#include "sim/base/file.h"
#include "sim/base/units.h"
#include "sim/eval/evaluator.h"
#include "sim/eval/program_inputs.h"

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

/// The whole run after the command line is parsed; errors are input errors.
Status Execute(const ExecOptions& options, std::ostream& out, std::ostream& err) {
  TPUSIM_ASSIGN_OR_RETURN(const InputSource inputs, ParseInputSource(options.inputs));
  int64_t max_memory = DefaultMaxMemory();
  if (!options.max_memory.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(max_memory, ParseMaxMemory(options.max_memory));
  }
  eval::EvaluatorOptions eval_options;
  if (options.numerics == "ieee") eval_options.numerics = eval::Numerics::kIeee;
  eval_options.max_bytes = max_memory;

  TPUSIM_ASSIGN_OR_RETURN(const std::string text, ReadFile(options.file));
  TPUSIM_ASSIGN_OR_RETURN(const std::unique_ptr<hlo::HloModule> module,
                          ParseAndVerifyModule(text, options.file));
  const std::vector<const hlo::HloInstruction*> elided = ElidedConstants(*module);
  if (!elided.empty()) {
    if (options.elided_constants == "error") {
      return InvalidArgument(module->ErrorAt(
          elided.front()->location(),
          "constant " + elided.front()->name() +
              ": the dump elided its values (`{...}`); --elided-constants seeded fills them"));
    }
    eval_options.elided_constant_seed = inputs.seed.value_or(0);
    const hlo::SourceLocation at = elided.front()->location();
    err << options.file << ':' << at.line << ':' << at.column
        << ": warning: the dump elided the values of " << elided.size() << " constant(s), first "
        << elided.front()->name()
        << "; they hold seeded values, so outputs differ from the real program's"
        << '\n';
  }
  const int64_t replicas = options.replicas.value_or(module->replica_count());
  const int64_t partitions = options.partitions.value_or(module->num_partitions());
  if (replicas < 1 || partitions < 1) {
    return InvalidArgument("tpusim exec: error: --replicas and --partitions must be at least 1");
  }
  const int64_t devices = replicas * partitions;

  // Refuse before allocating: every device holds its own values.
  TPUSIM_ASSIGN_OR_RETURN(const int64_t peak, eval::Evaluator::EstimatePeakBytes(*module));
  if (peak > max_memory / devices) {
    return ResourceExhausted(options.file + ": error: running it needs about " +
                             FormatBytes(peak) + " per device x " + std::to_string(devices) +
                             " device(s), more than --max-memory " + FormatBytes(max_memory) +
                             "; raise --max-memory or run fewer devices");
  }

  const eval::Evaluator evaluator(eval_options);
  std::vector<OutputSummary> summaries;
  for (int64_t d = 0; d < devices; ++d) {
    std::vector<Literal> args;
    if (inputs.seed.has_value()) {
      TPUSIM_ASSIGN_OR_RETURN(args, eval::SeededInputs(*module, *inputs.seed, d, max_memory));
    } else {
      TPUSIM_ASSIGN_OR_RETURN(
          args, ReadInputs(*module, inputs.dir,
                           devices > 1 ? std::optional<int64_t>(d) : std::nullopt, max_memory));
    }
    const eval::DeviceId device{d / partitions, d % partitions};
    TPUSIM_ASSIGN_OR_RETURN(const Literal result, evaluator.Evaluate(*module, args, device));
    const std::string prefix = devices > 1 ? "device_" + std::to_string(d) : "";
    if (!options.out.empty()) {
      TPUSIM_RETURN_IF_ERROR(WriteOutputs(
          result, prefix.empty() ? options.out
                                 : (std::filesystem::path(options.out) / prefix).string()));
    }
    for (const OutputLeaf& leaf : OutputLeaves(result)) {
      summaries.push_back(Summarize(prefix.empty() ? leaf.name : prefix + "/" + leaf.name,
                                    *leaf.value));
    }
  }
  PrintSummaryTable(summaries, out);
  return Status();
}

}  // namespace

CLI::App* AddExecCommand(CLI::App& app, ExecOptions& options) {
  CLI::App* exec = app.add_subcommand("exec", "Run an HLO module and report what it computes");
  exec->add_option("FILE", options.file, "HLO text module to run")->required()->type_name("");
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
           each device gets its own draw.
  DIR      param_<N>.npy for parameter N; param_<N>_<i>.npy for leaf i of a tuple
           parameter; with several devices, DIR/device_<d>/ files override the
           shared ones. Types and shapes must match the parameters exactly.

Prints one row per output: shape, min, max, mean (over non-NaN elements; complex:
real parts), NaN count and an FNV-1a checksum of the stored bytes (equal checksums:
bit-identical outputs). docs/values.md says how bf16 and f8 are stored in .npy.

Exit codes:
  0  the module ran
  2  usage error; FILE unreadable, malformed or not verifiable; bad or missing
     input files; an unsupported operation; a run over --max-memory)");
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
