#include "harness/run/run_spec.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <limits>
#include <system_error>

#include "sim/base/units.h"

namespace tpusim::harness {
namespace {

/// Half of the machine's physical memory: the default memory limit.
int64_t DefaultMaxMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return int64_t{4} << 30;  // unknown: a modest 4 GiB
  return static_cast<int64_t>(pages) / 2 * page_size;
}

}  // namespace

StatusOr<InputSource> ParseInputSource(const std::string& text, const std::string& command) {
  if (text.rfind("seed:", 0) == 0) {
    const std::string digits = text.substr(5);
    uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
      return InvalidArgument(command + ": error: --inputs " + Quote(text) +
                             ": expected seed:N with N a non-negative integer below 2^64");
    }
    return SeededInputs{seed};
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(text, ec)) {
    return InvalidArgument(text + ": error: --inputs expects seed:N or a directory of "
                                  "param_<N>.npy files; this is not a directory");
  }
  return InputDirectory{text};
}

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

StatusOr<EvaluationSpec> ParseEvaluationSpec(const std::string& command, const std::string& inputs,
                                             std::string_view numerics,
                                             const std::string& max_memory) {
  EvaluationSpec spec;
  spec.command = command;
  TPUSIM_ASSIGN_OR_RETURN(spec.inputs, ParseInputSource(inputs, command));
  StatusOr<eval::Numerics> parsed = ParseNumerics(numerics);
  if (!parsed.ok()) {
    return InvalidArgument(command + ": error: --numerics: " + parsed.status().message());
  }
  spec.numerics = *parsed;
  TPUSIM_ASSIGN_OR_RETURN(spec.max_memory, ParseMaxMemory(max_memory, command));
  return spec;
}

namespace {

/// `text` as NAME=N (N a non-negative integer) into `counts`; an error
/// naming `flag` and `text` when it is not of that `form` or names a NAME
/// given before (which would silently win otherwise). The error kept with
/// the count is for a name the module does not have.
Status ReadNamedCount(const std::string& text, const std::string& flag, std::string_view form,
                      std::map<std::string, NamedCount>& counts) {
  const std::string where = "tpusim exec: error: " + flag + " " + Quote(text);
  const size_t eq = text.find('=');
  const int64_t n = eq == std::string::npos || eq == 0
                        ? -1
                        : NonNegativeInteger(std::string_view(text).substr(eq + 1));
  if (n < 0) {
    return InvalidArgument(where + ": expected " + std::string(form) +
                           " with N a non-negative integer");
  }
  const std::string name = text.substr(0, eq);
  if (!counts.emplace(name, NamedCount{n, where}).second) {
    return InvalidArgument(where + ": " + Quote(name) + " is given a count twice");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::map<std::string, NamedCount>> ParseTripCounts(const std::vector<std::string>& texts) {
  std::map<std::string, NamedCount> counts;
  for (const std::string& text : texts) {
    TPUSIM_RETURN_IF_ERROR(ReadNamedCount(text, "--trip-count", "WHILE_NAME=N", counts));
  }
  return counts;
}

Status ParseBranches(const std::vector<std::string>& texts, RunSpec& spec) {
  for (const std::string& text : texts) {
    if (const int64_t every = NonNegativeInteger(text); every >= 0) {
      spec.branch = every;
    } else if (!text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
                 return std::isdigit(static_cast<unsigned char>(c)) != 0;
               })) {
      return InvalidArgument("tpusim exec: error: --branch: " + Quote(text) +
                             " is out of range: at most " +
                             std::to_string(std::numeric_limits<int64_t>::max()));
    } else {
      TPUSIM_RETURN_IF_ERROR(
          ReadNamedCount(text, "--branch", "N or CONDITIONAL_NAME=N", spec.branches));
    }
  }
  return Status::Ok();
}

void ApplyLoopLimits(const LoopLimits& limits, eval::EvaluatorOptions& options) {
  options.max_while_iterations = limits.max_while_iterations;
  options.raise_while_iterations =
      "raise the limit with --max-while-iterations (a scenario's max_while_iterations)";
  options.max_loop_work = limits.max_loop_work;
  options.raise_loop_work = "raise it with --max-loop-work (a scenario's max_loop_work)";
}

void ApplyLoopLimits(const LoopLimits& limits, timing::TimingOptions& options) {
  options.max_executed_instructions = limits.max_executed_instructions;
  options.raise_executed_instructions =
      "raise the limit with --max-executed-instructions (a scenario's max_executed_instructions)";
}

void TimeAsRun(const eval::RunRecord& record, timing::TimingOptions& options) {
  // What the program really did wins over the timing model's static guess,
  // and for trip counts the user's word over both: insert keeps the entries
  // already present, and a loop the user counted runs that count on every
  // device. A branch the values run saw wins over the user's (--branch).
  for (const auto& [device, trip_counts] : record.device_trip_counts) {
    for (const auto& [loop, trips] : trip_counts) {
      if (!options.trip_counts.contains(loop))
        options.device_trip_counts[device].emplace(loop, trips);
    }
  }
  options.trip_counts.insert(record.trip_counts.begin(), record.trip_counts.end());
  for (const auto& [conditional, taken] : record.branches) options.branches[conditional] = taken;
  options.device_branches = record.device_branches;
  options.ragged_group_shares = record.ragged_group_shares;
  options.device_ragged_group_shares = record.device_ragged_group_shares;
  options.ragged_send_sizes = record.ragged_send_sizes;
  options.device_ragged_send_sizes = record.device_ragged_send_sizes;
}

}  // namespace tpusim::harness
