#include "harness/collective/collective_bench.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "harness/report/progress.h"
#include "harness/run/topology_option.h"
#include "sim/arch/preset_loader.h"
#include "sim/arch/topology_config.h"
#include "sim/base/file.h"
#include "sim/base/json_text.h"
#include "sim/base/units.h"
#include "sim/ici/collectives.h"
#include "sim/ici/topology.h"

namespace tpusim::harness {
namespace {

constexpr std::string_view kCommand = "tpusim collective: error: ";

constexpr NcclType kNcclTypes[] = {
    {"int8", 1},  {"uint8", 1},  {"int32", 4}, {"uint32", 4},    {"int64", 8},
    {"uint64", 8}, {"half", 2},  {"float", 4}, {"double", 8},    {"bfloat16", 2},
};

/// The largest collective size: 2^50 bytes (1 PiB), far beyond any real
/// buffer, low enough that bytes times the group size and the picoseconds it
/// takes cannot overflow the network model's 64-bit arithmetic.
constexpr int64_t kMaxCollectiveBytes = int64_t{1} << 50;

/// A byte count: "64MiB", "1GB", or bare bytes.
StatusOr<int64_t> ParseSize(const std::string& what, const std::string& text) {
  const bool bare = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  StatusOr<Bytes> bytes = ParseBytes(bare ? text + "B" : text);
  if (!bytes.ok()) return InvalidArgument(std::string(kCommand) + what + ": " + bytes.status().message());
  if (bytes->value() <= 0) return InvalidArgument(std::string(kCommand) + what + ": must be positive");
  if (bytes->value() > kMaxCollectiveBytes) {
    return InvalidArgument(std::string(kCommand) + what + " " + Quote(text) +
                           ": at most 1024TiB (" + std::to_string(kMaxCollectiveBytes) + " bytes)");
  }
  return bytes->value();
}

/// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): what each rank's
/// links must carry relative to the algorithm bandwidth, so that busbw is
/// comparable with the link speed whatever the group size n.
double BusFactor(ici::CollectiveKind kind, int64_t n) {
  const double ratio = n > 0 ? static_cast<double>(n - 1) / static_cast<double>(n) : 0.0;
  switch (kind) {
    case ici::CollectiveKind::kAllReduce: return 2 * ratio;
    case ici::CollectiveKind::kAllGather:
    case ici::CollectiveKind::kReduceScatter:
    case ici::CollectiveKind::kAllToAll:
    case ici::CollectiveKind::kRaggedAllToAll: return ratio;
    case ici::CollectiveKind::kCollectivePermute:
    case ici::CollectiveKind::kCollectiveBroadcast:
    case ici::CollectiveKind::kSendRecv: return 1.0;
  }
  return 1.0;  // unreachable: every CollectiveKind returns above
}

/// "0,1,2,3;4,5,6,7": groups of logical devices; empty: every device.
StatusOr<std::vector<std::vector<int64_t>>> ParseGroups(const std::string& text, int64_t devices) {
  std::vector<std::vector<int64_t>> groups;
  if (text.empty()) {
    groups.emplace_back();
    for (int64_t d = 0; d < devices; ++d) groups.back().push_back(d);
    return groups;
  }
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(';', begin), text.size());
    std::vector<int64_t>& group = groups.emplace_back();
    size_t item = begin;
    while (item < end) {
      const size_t comma = std::min(text.find(',', item), end);
      const std::string number = text.substr(item, comma - item);
      if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos ||
          number.size() > 9) {
        return InvalidArgument(std::string(kCommand) + "--groups " + Quote(text) +
                               ": expected device ids like 0,1,2,3;4,5,6,7");
      }
      group.push_back(std::stoll(number));
      item = comma + 1;
    }
    if (group.empty()) {
      return InvalidArgument(std::string(kCommand) + "--groups " + Quote(text) +
                             ": an empty group");
    }
    begin = end + 1;
  }
  // A device takes part once: twice in a group, or in two groups, is a typo
  // the network model would otherwise time as extra traffic.
  std::map<int64_t, size_t> group_of;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const int64_t device : groups[g]) {
      const auto [at, inserted] = group_of.emplace(device, g);
      if (inserted) continue;
      return InvalidArgument(
          std::string(kCommand) + "--groups " + Quote(text) + ": device " + std::to_string(device) +
          (at->second == g
               ? " appears twice in group " + std::to_string(g)
               : " is in groups " + std::to_string(at->second) + " and " + std::to_string(g)));
    }
  }
  // The table reports one group size (its busbw factor, its "N groups of M");
  // groups of other sizes would be timed and described as if they were alike.
  for (size_t g = 1; g < groups.size(); ++g) {
    if (groups[g].size() == groups.front().size()) continue;
    return InvalidArgument(std::string(kCommand) + "--groups " + Quote(text) + ": group 0 has " +
                           std::to_string(groups.front().size()) + " devices but group " +
                           std::to_string(g) + " has " + std::to_string(groups[g].size()) +
                           "; every group needs the same number");
  }
  return groups;
}

/// The groups `bench` names on a network of `devices` (chips x devices per
/// chip): -g's first devices, --groups, or one group of every device.
StatusOr<std::vector<std::vector<int64_t>>> GroupsOf(const CollectiveBench& bench,
                                                     int64_t devices) {
  if (bench.first_devices == 0) return ParseGroups(bench.groups, devices);
  if (!bench.groups.empty()) {
    return InvalidArgument(std::string(kCommand) + "give -g or --groups, not both");
  }
  if (bench.first_devices > devices) {
    return InvalidArgument(std::string(kCommand) + "-g " + std::to_string(bench.first_devices) +
                           ": the topology has " + std::to_string(devices) + " devices");
  }
  std::vector<std::vector<int64_t>> groups = {{}};
  for (int64_t d = 0; d < bench.first_devices; ++d) groups.front().push_back(d);
  return groups;
}

/// Up-front estimate of the work of timing a collective, for every algorithm
/// and topology: each device takes part in about log2(group size) steps (the
/// rounds of halving-doubling and tree; ring and torus phases are pipelined
/// into as few flows), and the flow network's time grows with these
/// device-steps. Known before any flow is built, so a huge network is refused
/// in milliseconds instead of running for minutes without a word.
int64_t DeviceSteps(const std::vector<std::vector<int64_t>>& groups) {
  int64_t steps = 0;
  for (const std::vector<int64_t>& group : groups) {
    const int64_t n = static_cast<int64_t>(group.size());
    steps += n * std::max<int64_t>(1, std::bit_width(static_cast<uint64_t>(n - 1)));
  }
  return steps;
}

/// One timed size, for the reports.
struct TimedSize {
  int64_t bytes = 0;
  double time_us = 0;
  double algbw = 0;  ///< GB/s
  double busbw = 0;  ///< GB/s
};

/// nccl-tests' time column: fewer decimals as the time grows (7 characters).
std::string NcclTime(double us) {
  char text[32];
  std::snprintf(text, sizeof text, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
  return text;
}

/// The report in nccl-tests' layout (its common.cu prints): the header with
/// the sweep, one "# Rank" line per device, the three column-title lines,
/// one row per size with the out-of-place and the in-place columns, and the
/// "Out of bounds values" and "Avg bus bandwidth" footer, so that scripts
/// and plots written for nccl-tests read it. The two placements move the same
/// bytes over the same links in the model, so their columns agree; no data
/// is checked (nccl-tests' -c 0), so #wrong is N/A and validation is 0.
void PrintNcclTests(const CollectiveBench& bench, const std::vector<int64_t>& group,
                    const std::string& chip, const std::vector<TimedSize>& rows,
                    std::ostream& out) {
  const ici::CollectiveKind kind = bench.kind;
  const int64_t n = static_cast<int64_t>(group.size());
  const bool reduces =
      kind == ici::CollectiveKind::kAllReduce || kind == ici::CollectiveKind::kReduceScatter;
  const bool rooted = kind == ici::CollectiveKind::kCollectiveBroadcast;
  // nccl-tests' count is per rank for the ops that split the buffer.
  const bool per_rank = kind == ici::CollectiveKind::kAllGather ||
                        kind == ici::CollectiveKind::kReduceScatter ||
                        kind == ici::CollectiveKind::kAllToAll ||
                        kind == ici::CollectiveKind::kRaggedAllToAll;
  const int64_t step = rows.size() > 1 ? rows[1].bytes / std::max<int64_t>(rows[0].bytes, 1) : 1;
  char line[512];
  std::snprintf(line, sizeof line,
                "# nThread 1 nGpus %lld minBytes %lld maxBytes %lld step: %lld(factor) warmup "
                "iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0\n",
                static_cast<long long>(n), static_cast<long long>(rows.front().bytes),
                static_cast<long long>(rows.back().bytes), static_cast<long long>(step));
  out << line << "#\n# Using devices\n";
  for (size_t r = 0; r < group.size(); ++r) {
    std::snprintf(line, sizeof line, "#  Rank %2zu Group  0 Pid      0 on     tpusim device %2lld [0x00] %s\n",
                  r, static_cast<long long>(group[r]), chip.c_str());
    out << line;
  }
  out << "#\n";
  std::snprintf(line, sizeof line, "#%12s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
                "", "", "", "", "", "", "", "out-of-place", "", "", "", "in-place", "");
  out << line;
  std::snprintf(line, sizeof line, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n",
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                "time", "algbw", "busbw", "#wrong");
  out << line;
  std::snprintf(line, sizeof line, "#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                "(GB/s)", "");
  out << line;
  const std::string type_name(bench.datatype.name);
  double busbw_sum = 0;
  for (const TimedSize& row : rows) {
    const int64_t count =
        row.bytes / bench.datatype.bytes / (per_rank ? std::max<int64_t>(n, 1) : 1);
    std::snprintf(line, sizeof line, "%12lld  %12lld  %8s  %6s  %6s",
                  static_cast<long long>(row.bytes), static_cast<long long>(count),
                  type_name.c_str(), reduces ? "sum" : "none", rooted ? "0" : "");
    out << line;
    for (int placement = 0; placement < 2; ++placement) {
      std::snprintf(line, sizeof line, "  %7s  %6.2f  %6.2f  %5s", NcclTime(row.time_us).c_str(),
                    row.algbw, row.busbw, "N/A");
      out << line;
      busbw_sum += row.busbw;
    }
    out << "\n";
  }
  out << "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : "
      << FormatSignificant(busbw_sum / static_cast<double>(2 * rows.size()), 6) << " \n#\n";
}

/// `text` right-aligned in `width` columns, or after one space when wider
/// (huge sizes and times must not run into the next column).
std::string PadLeft(const std::string& text, size_t width) {
  return text.size() >= width ? " " + text : std::string(width - text.size(), ' ') + text;
}

}  // namespace

StatusOr<NcclType> ParseNcclType(std::string_view name) {
  std::string names;
  for (const NcclType& type : kNcclTypes) {
    if (type.name == name) return type;
    names += (names.empty() ? "" : ", ") + std::string(type.name);
  }
  return InvalidArgument(std::string(kCommand) + "-d " + Quote(name) + ": expected one of " +
                         names);
}

StatusOr<std::vector<int64_t>> CollectiveSizes(const CollectiveSizeOptions& options) {
  if (!options.min_bytes.empty() || !options.max_bytes.empty()) {
    // -b or -e alone is one size (nccl-tests' defaults are one size too).
    const std::string& first = !options.min_bytes.empty() ? options.min_bytes : options.max_bytes;
    TPUSIM_ASSIGN_OR_RETURN(const int64_t lo, ParseSize("-b", first));
    TPUSIM_ASSIGN_OR_RETURN(
        const int64_t hi,
        ParseSize("-e", !options.max_bytes.empty() ? options.max_bytes : options.min_bytes));
    if (lo > hi) {
      return InvalidArgument(std::string(kCommand) + "-b " + first + " exceeds -e " +
                             options.max_bytes);
    }
    if (options.step_factor < 2) {
      return InvalidArgument(std::string(kCommand) + "-f " + std::to_string(options.step_factor) +
                             ": the step factor must be at least 2");
    }
    // Both ends are at most kMaxCollectiveBytes (2^50): no overflow while
    // s <= hi, and the loop stops before s * factor could exceed 2^63.
    std::vector<int64_t> sizes;
    for (int64_t s = lo; s <= hi; s = s > hi / options.step_factor ? hi + 1 : s * options.step_factor) {
      sizes.push_back(s);
    }
    return sizes;
  }
  if (options.sweep.empty()) {
    TPUSIM_ASSIGN_OR_RETURN(const int64_t bytes, ParseSize("--bytes", options.bytes));
    return std::vector<int64_t>{bytes};
  }
  const size_t colon = options.sweep.find(':');
  if (colon == std::string::npos) {
    return InvalidArgument(std::string(kCommand) + "--sweep " + Quote(options.sweep) +
                           ": expected LO:HI, e.g. 1KiB:1GiB");
  }
  TPUSIM_ASSIGN_OR_RETURN(const int64_t lo, ParseSize("--sweep", options.sweep.substr(0, colon)));
  TPUSIM_ASSIGN_OR_RETURN(const int64_t hi, ParseSize("--sweep", options.sweep.substr(colon + 1)));
  if (lo > hi) {
    return InvalidArgument(std::string(kCommand) + "--sweep " + Quote(options.sweep) +
                           ": LO exceeds HI");
  }
  // The powers of two in [LO, HI], as the help promises: 3:1000 is 4 to 512,
  // not 3, 6, 12... Both ends are at most kMaxCollectiveBytes, so doubling
  // cannot overflow.
  std::vector<int64_t> sizes;
  int64_t s = 1;
  while (s < lo) s *= 2;
  for (; s <= hi; s *= 2) sizes.push_back(s);
  if (sizes.empty()) {
    return InvalidArgument(std::string(kCommand) + "--sweep " + Quote(options.sweep) +
                           ": no power of two between LO and HI");
  }
  return sizes;
}

Status TimeCollectiveBench(const CollectiveBench& bench, std::ostream& out) {
  const std::string op(ici::CollectiveKindName(bench.kind));
  TPUSIM_ASSIGN_OR_RETURN(const arch::ChipConfig chip,
                          arch::LoadChipPreset(bench.chip, bench.models_dir, bench.overrides));
  // `wraparound=tpu` takes the chip's rule, as exec and run resolve it.
  TPUSIM_ASSIGN_OR_RETURN(const arch::TopologyConfig topology,
                          LoadTopologyOption(bench.topology, kCommand, &chip));
  TPUSIM_ASSIGN_OR_RETURN(const std::unique_ptr<ici::Interconnect> interconnect,
                          ici::Interconnect::Create(topology, chip));
  const int64_t chips = interconnect->topology().chip_count();
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<std::vector<int64_t>> groups,
                          GroupsOf(bench, interconnect->device_count()));

  ici::Collective collective;
  collective.kind = bench.kind;
  collective.algorithm = bench.algorithm;
  if (bench.kind == ici::CollectiveKind::kCollectivePermute ||
      bench.kind == ici::CollectiveKind::kSendRecv) {
    // Each device sends to the next one of its group (a cyclic shift).
    for (const std::vector<int64_t>& group : groups) {
      for (size_t i = 0; i < group.size(); ++i) {
        collective.pairs.emplace_back(group[i], group[(i + 1) % group.size()]);
      }
    }
  } else {
    collective.groups = groups;
  }
  const int64_t n = static_cast<int64_t>(groups.front().size());
  // Refused up front rather than run for minutes without a word.
  const int64_t transfers = ici::DirectTransfers(collective);
  const bool large = transfers > ici::kMaxDirectTransfers;
  if (large && !bench.allow_large) {
    return InvalidArgument(
        std::string(kCommand) + op + " on " + std::to_string(chips) + " chips in " +
        std::to_string(groups.size()) + " group" + (groups.size() == 1 ? "" : "s") +
        " sends between every pair directly: " + std::to_string(transfers) +
        " transfers, more than the " + std::to_string(ici::kMaxDirectTransfers) +
        " timed in seconds (torus:32x32's 1047552 take about half a minute, and time grows "
        "faster than the count); pass --allow-large to time it anyway, or use smaller --groups");
  }

  const int64_t device_steps = DeviceSteps(groups);
  if (device_steps > kMaxDeviceSteps && !bench.allow_large) {
    return InvalidArgument(std::string(kCommand) + bench.topology + ": " +
                           std::to_string(chips) + " chips, about " +
                           std::to_string(device_steps) + " device-steps (devices x log2 of " +
                           "their group), about " +
                           std::to_string(device_steps / kDeviceStepsPerSecond) +
                           " s; pass --allow-large to run, or use smaller --groups");
  }

  const bool table = bench.report == CollectiveReport::kTable;
  if (table) {
    out << "# tpusim collective: " << op << " on " << interconnect->Describe() << "\n";
    out << "# chip " << chip.name << ", " << groups.size() << " group"
        << (groups.size() == 1 ? "" : "s") << " of " << n << " device" << (n == 1 ? "" : "s")
        << ", algorithm " << ici::AlgorithmName(bench.algorithm) << "; busbw = algbw x "
        << FormatFixed(BusFactor(bench.kind, n), 4) << " (nccl-tests)\n";
    out << "#" << PadLeft("size (B)", 13) << PadLeft("time (us)", 14)
        << PadLeft("algbw (GB/s)", 14) << PadLeft("busbw (GB/s)", 14)
        << "  algorithm           explanation\n";
  }
  std::vector<TimedSize> timed_rows;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  // On a terminal, a long run says it is working (ProgressLine draws after a
  // second, nothing when stderr is not a terminal, and is erased before the
  // row is printed).
  std::atomic<int64_t> timed_sizes{0};
  std::optional<ProgressLine> progress;
  for (const int64_t size : bench.sizes) {
    collective.bytes = size;
    // Every size: a large network's flows can take long under any algorithm
    // (fattree:radix=32,levels=4's 65,536 chips, about half a minute).
    progress.emplace("timing " + op + " of " + std::to_string(size) + " B on " +
                         std::to_string(chips) + " chips" +
                         (large ? ", " + std::to_string(transfers) + " transfers" : ""),
                     &timed_sizes, "of " + std::to_string(bench.sizes.size()) + " sizes timed");
    StatusOr<ici::CollectiveTiming> timed = interconnect->Time(collective);
    progress.reset();
    ++timed_sizes;
    if (!timed.ok()) return timed.status().WithContext(std::string(kCommand) + op);
    const double seconds = static_cast<double>(timed->duration.value()) * 1e-12;
    const double algbw = seconds > 0 ? static_cast<double>(size) / seconds * 1e-9 : 0.0;
    const double busbw = algbw * BusFactor(bench.kind, n);
    const std::string algorithm_name(ici::AlgorithmName(timed->algorithm));
    timed_rows.push_back({size, seconds * 1e6, algbw, busbw});
    if (table) {
      out << PadLeft(std::to_string(size), 14) << PadLeft(FormatFixed(seconds * 1e6, 2), 14)
          << PadLeft(FormatFixed(algbw, 2), 14) << PadLeft(FormatFixed(busbw, 2), 14) << "  "
          << algorithm_name
          << std::string(algorithm_name.size() < 20 ? 20 - algorithm_name.size() : 1, ' ')
          << timed->explanation << "\n";
    }
    nlohmann::ordered_json row;
    row["bytes"] = size;
    row["time_us"] = seconds * 1e6;
    row["algbw_gbps"] = algbw;
    row["busbw_gbps"] = busbw;
    row["algorithm"] = algorithm_name;
    row["max_hops"] = timed->max_hops;
    row["ici_bytes"] = timed->ici_bytes;
    row["explanation"] = timed->explanation;
    rows.push_back(std::move(row));
  }
  if (!table) PrintNcclTests(bench, groups.front(), chip.name, timed_rows, out);
  if (!bench.json.empty()) {
    nlohmann::ordered_json json;
    json["op"] = op;
    json["chip"] = chip.name;
    json["topology"] = interconnect->Describe();
    json["group_size"] = n;
    json["groups"] = groups.size();
    json["bus_factor"] = BusFactor(bench.kind, n);
    json["rows"] = std::move(rows);
    TPUSIM_RETURN_IF_ERROR(WriteFileAtomically(bench.json, JsonText(json, 2) + "\n"));
  }
  return Status();
}

}  // namespace tpusim::harness
