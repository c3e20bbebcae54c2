#include "sim/timing/report.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <vector>

#include "sim/base/json_text.h"
#include "sim/hlo/annotations.h"
#include "sim/hlo/computation.h"
#include "sim/timing/fused_attention.h"
#include "sim/timing/hlo_helpers.h"
#include "sim/timing/host_memory.h"

namespace tpusim::timing {

namespace {

using nlohmann::ordered_json;

/// Trace process ids: TensorCores of device 0 are 0, 1, ...; other devices
/// and the network follow.
constexpr int64_t kDevicePidBase = 1000;
constexpr int64_t kNetworkPid = 999;
/// Link tracks in the trace: the busiest links by bytes.
constexpr size_t kTracedLinks = 8;

double Micros(const TimingResult& r, int64_t cycles) {
  return static_cast<double>(cycles) * 1e6 / static_cast<double>(r.clock_hz);
}

/// Achieved / peak over `cycles`; 0 when no time passed.
double Fraction(const TimingResult& r, int64_t amount, double peak_per_second, int64_t cycles) {
  if (cycles <= 0 || peak_per_second <= 0) return 0;
  return static_cast<double>(amount) /
         (static_cast<double>(cycles) / static_cast<double>(r.clock_hz)) / peak_per_second;
}

std::string Printf(const char* format, auto... args) {
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, format, args...);
  return buffer;
}

/// One group as "{0,1,2,3}", or "{0,1,2,3,...,127}" past 8 members.
std::string GroupText(const std::vector<int64_t>& group) {
  std::string text = "{";
  for (size_t i = 0; i < group.size(); ++i) {
    if (i == 4 && group.size() > 8) {
      text += ",...," + std::to_string(group.back());
      break;
    }
    text += (i ? "," : "") + std::to_string(group[i]);
  }
  return text + "}";
}

/// "{0,1},{2,3}" for short group lists; "64 groups of 4: {0,1,2,3},..." for long ones.
std::string GroupsText(const std::vector<std::vector<int64_t>>& groups) {
  std::string text;
  for (const auto& group : groups) {
    const std::string one = GroupText(group);
    if (!text.empty() && text.size() + one.size() > 40) {
      return std::to_string(groups.size()) + " groups of " + std::to_string(groups[0].size()) +
             ": " + text + ",...";
    }
    text += (text.empty() ? "" : ",") + one;
  }
  return text;
}

/// How a table names each of `instructions`: its name, or, when another of
/// them shares it (a loop's condition and body both holding a `compare`),
/// its computation's name and its own ("body/compare").
std::map<const hlo::HloInstruction*, std::string> RowLabels(
    const std::vector<const hlo::HloInstruction*>& instructions) {
  std::map<std::string, int> name_uses;
  for (const hlo::HloInstruction* inst : instructions) ++name_uses[inst->name()];
  std::map<const hlo::HloInstruction*, std::string> labels;
  for (const hlo::HloInstruction* inst : instructions) {
    labels[inst] = name_uses[inst->name()] > 1 && inst->parent() != nullptr
                       ? inst->parent()->name() + "/" + inst->name()
                       : inst->name();
  }
  return labels;
}

/// The collective table: one row per collective instruction (its executions
/// summed), in order of first start.
std::string FormatCollectiveTable(const TimingResult& r) {
  struct Row {
    const CollectiveRecord* first = nullptr;
    int64_t count = 0;
    int64_t cycles = 0;
  };
  std::vector<Row> rows;
  std::vector<const hlo::HloInstruction*> instructions;
  // instruction -> row; `rows` keeps the order of first start.
  std::map<const hlo::HloInstruction*, size_t> index;
  for (const CollectiveRecord& c : r.collectives) {
    auto [it, added] = index.emplace(c.instruction, rows.size());
    if (added) {
      rows.push_back({&c, 0, 0});
      instructions.push_back(c.instruction);
    }
    ++rows[it->second].count;
    rows[it->second].cycles += c.cycles;
  }
  const std::map<const hlo::HloInstruction*, std::string> labels = RowLabels(instructions);
  std::string out = Printf("\n%lld devices (symmetry: %s), %s\n", static_cast<long long>(r.device_count),
                           r.symmetry.c_str(), r.interconnect.c_str());
  out += Printf("%-32s %-20s %6s %-44s %14s %12s %-18s\n", "collective", "kind", "runs",
                "participants", "bytes", "us", "algorithm");
  for (const Row& row : rows) {
    const CollectiveRecord& c = *row.first;
    out += Printf("%-32.32s %-20.20s %6lld %-44.44s %14lld %12.3f %-18s\n",
                  labels.at(c.instruction).c_str(), std::string(CollectiveKindSpelling(c.kind)).c_str(),
                  static_cast<long long>(row.count), GroupsText(c.groups).c_str(),
                  static_cast<long long>(c.bytes), Micros(r, row.cycles),
                  std::string(ici::AlgorithmName(c.algorithm)).c_str());
  }
  return out;
}

/// The instructions the run executed that `pick` selects, each once, in
/// order of first execution.
template <typename Pick>
std::vector<const hlo::HloInstruction*> ExecutedWhere(const TimingResult& r, Pick pick) {
  std::vector<const hlo::HloInstruction*> picked;
  std::set<const hlo::HloInstruction*> seen;
  for (const OpRecord& op : r.ops) {
    if (pick(*op.instruction) && seen.insert(op.instruction).second)
      picked.push_back(op.instruction);
  }
  return picked;
}

/// The custom calls the run executed that carry no cost estimate: opaque to
/// tpusim, they are timed by the bytes they read and write only. (A host
/// offload annotation is a transfer, timed as one; the dynamic padder's
/// edges are data movement, which those bytes time.)
std::vector<const hlo::HloInstruction*> UnestimatedCustomCalls(const TimingResult& r) {
  return ExecutedWhere(r, [](const hlo::HloInstruction& inst) {
    return inst.opcode() == hlo::HloOpcode::kCustomCall && HostMoveOf(inst) == HostMove::kNone &&
           !hlo::IsDynamicPadderEdge(inst.string_attr(hlo::AttrId::kCustomCallTarget)) &&
           !CustomCallCostEstimate(inst).has_value();
  });
}

/// The asynchronous computations the host ran: tpusim times what they move
/// over PCIe, not their compute.
std::vector<const hlo::HloInstruction*> HostComputations(const TimingResult& r) {
  return ExecutedWhere(r, [](const hlo::HloInstruction& inst) { return RunsOnHost(inst); });
}

/// The custom calls the run executed that a library of another backend runs
/// as a fused attention: timed as TPU's flash attention of the same shape.
std::vector<const hlo::HloInstruction*> FusedAttentionCalls(const TimingResult& r) {
  return ExecutedWhere(
      r, [](const hlo::HloInstruction& inst) { return FusedAttentionEstimate(inst).has_value(); });
}

/// `note: N <noun>s <what>: a, b (target), ...`, the first five named; empty
/// when there are none.
std::string NamesNote(const std::vector<const hlo::HloInstruction*>& insts, std::string_view noun,
                      std::string_view what) {
  if (insts.empty()) return "";
  std::string out = Printf("note: %zu %s%s %s:", insts.size(), std::string(noun).c_str(),
                           insts.size() == 1 ? "" : "s", std::string(what).c_str());
  constexpr size_t kNamed = 5;
  for (size_t i = 0; i < std::min(kNamed, insts.size()); ++i) {
    const std::string_view target = insts[i]->string_attr(hlo::AttrId::kCustomCallTarget);
    out += Printf("%s %s", i == 0 ? "" : ",", insts[i]->name().c_str());
    if (!target.empty()) out += Printf(" (%s)", std::string(target).c_str());
  }
  if (insts.size() > kNamed) out += Printf(" and %zu more", insts.size() - kNamed);
  return out + "\n";
}

}  // namespace

std::string FormatOpTable(const TimingResult& r, int64_t limit) {
  struct Row {
    const hlo::HloInstruction* instruction = nullptr;
    int64_t count = 0;
    int64_t cycles = 0;
    int64_t flops = 0;
    int64_t hbm_bytes = 0;
    int64_t overhead_cycles = 0;
    std::map<BoundBy, int64_t> bound;  ///< executions bound by each unit
  };
  std::vector<Row> rows;
  std::vector<const hlo::HloInstruction*> instructions;
  // instruction -> row; `rows` keeps the order of first execution.
  std::map<const hlo::HloInstruction*, size_t> index;
  for (const OpRecord& op : r.ops) {
    auto [it, added] = index.emplace(op.instruction, rows.size());
    if (added) {
      rows.emplace_back();
      rows.back().instruction = op.instruction;
      instructions.push_back(op.instruction);
    }
    Row& row = rows[it->second];
    row.count = SatAdd(row.count, op.runs);
    row.cycles = SatAdd(row.cycles, op.TotalCycles());
    row.flops = SatAdd(row.flops, op.TotalFlops());
    row.hbm_bytes = SatAdd(row.hbm_bytes, op.TotalHbmBytes());
    row.overhead_cycles = SatAdd(row.overhead_cycles, op.TotalOverheadCycles());
    row.bound[op.bound_by] = SatAdd(row.bound[op.bound_by], op.runs);
  }
  const std::map<const hlo::HloInstruction*, std::string> labels = RowLabels(instructions);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.cycles > b.cycles; });
  std::string out =
      Printf("%s on %s: %lld cycles, %.3f us, %lld FLOPs, %lld HBM bytes", r.module.c_str(),
             r.chip.c_str(), static_cast<long long>(r.cycles), r.time_us,
             static_cast<long long>(r.flops), static_cast<long long>(r.hbm_bytes));
  if (r.pcie_bytes > 0) out += Printf(", %lld PCIe bytes", static_cast<long long>(r.pcie_bytes));
  out += "\n";
  out += Printf("%-40s %-22s %6s %14s %12s %16s %16s %7s %7s %7s %-9s\n", "instruction", "opcode",
                "runs", "cycles", "us", "FLOPs", "HBM bytes", "%FLOP", "%HBM", "%fixed", "bound by");
  for (int64_t i = 0; i < std::min<int64_t>(limit, static_cast<int64_t>(rows.size())); ++i) {
    const Row& row = rows[i];
    BoundBy bound = BoundBy::kLatency;
    int64_t most = -1;
    for (auto [b, n] : row.bound) {
      if (n > most) most = n, bound = b;
    }
    out += Printf("%-40.40s %-22.22s %6lld %14lld %12.3f %16lld %16lld %6.1f%% %6.1f%% %6.1f%% %-9s\n",
                  labels.at(row.instruction).c_str(), row.instruction->OpcodeSpelling().c_str(),
                  static_cast<long long>(row.count),
                  static_cast<long long>(row.cycles), Micros(r, row.cycles),
                  static_cast<long long>(row.flops), static_cast<long long>(row.hbm_bytes),
                  100 * Fraction(r, row.flops, r.peak_flops, row.cycles),
                  100 * Fraction(r, row.hbm_bytes, r.hbm_bandwidth, row.cycles),
                  row.cycles > 0 ? 100.0 * static_cast<double>(row.overhead_cycles) /
                                       static_cast<double>(row.cycles)
                                 : 0.0,
                  std::string(BoundByName(bound)).c_str());
  }
  out += NamesNote(UnestimatedCustomCalls(r), "custom call",
                   "without a cost estimate, timed by the bytes read and written only");
  out += NamesNote(FusedAttentionCalls(r), "fused attention call",
                   "of another backend's library, timed as TPU's flash-attention kernel of the "
                   "same shape");
  out += NamesNote(HostComputations(r), "computation",
                   "run on the host, whose compute is not timed (only what crosses PCIe)");
  if (!r.interconnect.empty()) out += FormatCollectiveTable(r);
  return out;
}

std::string TimingJson(const TimingResult& r) {
  ordered_json j;
  j["chip"] = r.chip;
  j["module"] = r.module;
  j["clock_hz"] = r.clock_hz;
  j["tensorcores"] = r.tensorcores;
  j["cycles"] = r.cycles;
  j["time_us"] = r.time_us;
  j["flops"] = r.flops;
  j["hbm_bytes"] = r.hbm_bytes;
  j["pcie_bytes"] = r.pcie_bytes;
  ordered_json ops = ordered_json::array();
  for (const OpRecord& op : r.ops) {
    ops.push_back({{"name", op.instruction->name()},
                   {"opcode", op.instruction->OpcodeSpelling()},
                   {"start_cycle", op.start_cycle},
                   {"cycles", op.cycles},
                   {"flops", op.flops},
                   {"hbm_bytes", op.hbm_bytes},
                   {"overhead_cycles", op.overhead_cycles},
                   {"bound_by", std::string(BoundByName(op.bound_by))}});
    if (op.pcie_bytes > 0) ops.back()["pcie_bytes"] = op.pcie_bytes;
    if (op.runs > 1) ops.back()["runs"] = op.runs;
  }
  j["ops"] = std::move(ops);
  // The calls each note names, when there are any.
  const auto names = [&](const char* key, const std::vector<const hlo::HloInstruction*>& insts) {
    if (insts.empty()) return;
    ordered_json list = ordered_json::array();
    for (const hlo::HloInstruction* inst : insts) list.push_back(inst->name());
    j[key] = std::move(list);
  };
  names("unestimated_custom_calls", UnestimatedCustomCalls(r));
  names("fused_attention_calls", FusedAttentionCalls(r));
  names("host_computations", HostComputations(r));
  j["device_count"] = r.device_count;
  j["symmetry"] = r.symmetry;
  j["interconnect"] = r.interconnect;
  ordered_json devices = ordered_json::array();
  for (const DeviceTiming& d : r.devices) {
    devices.push_back({{"device", d.device},
                       {"end_cycle", d.end_cycle},
                       {"collective_wait_cycles", d.collective_wait_cycles},
                       {"slowdown", d.slowdown}});
  }
  j["devices"] = std::move(devices);
  ordered_json collectives = ordered_json::array();
  for (const CollectiveRecord& c : r.collectives) {
    collectives.push_back({{"name", c.instruction->name()},
                           {"kind", std::string(CollectiveKindSpelling(c.kind))},
                           {"execution", c.execution},
                           {"start_cycle", c.start_cycle},
                           {"cycles", c.cycles},
                           {"time_us", Micros(r, c.cycles)},
                           {"bytes", c.bytes},
                           {"ici_bytes", c.ici_bytes},
                           {"algorithm", std::string(ici::AlgorithmName(c.algorithm))},
                           {"participants", c.groups},
                           {"contention_cycles", c.contention_cycles},
                           {"explanation", c.explanation}});
  }
  j["collectives"] = std::move(collectives);
  ordered_json links = ordered_json::array();
  for (const LinkUse& l : r.links) {
    links.push_back({{"link", l.link},
                     {"name", l.name},
                     {"bytes", l.bytes},
                     {"utilisation", l.utilisation}});
  }
  j["links"] = std::move(links);
  return JsonText(j, 1) + "\n";
}

namespace {

/// A trace event's args for `op`: its opcode and bound, with `counts` its
/// FLOPs and HBM bytes, and where the program came from when the module's
/// metadata says (op_name, source_file, source_line), so a slice in Perfetto
/// leads back to the framework's code.
ordered_json OpArgs(const OpRecord& op, bool counts) {
  ordered_json args = {{"opcode", op.instruction->OpcodeSpelling()},
                       {"bound_by", std::string(BoundByName(op.bound_by))}};
  if (counts) {
    args["flops"] = op.flops;
    args["hbm_bytes"] = op.hbm_bytes;
  }
  // A fast-forwarded loop's iterations: the slice is the first of the runs.
  if (op.runs > 1) args["runs"] = op.runs;
  for (const char* key : {"op_name", "source_file"}) {
    const std::string_view value = op.instruction->metadata_field(key);
    if (!value.empty()) args[key] = std::string(value);
  }
  const std::string_view line = op.instruction->metadata_field("source_line");
  int64_t number = 0;
  if (const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), number);
      !line.empty() && ec == std::errc() && end == line.data() + line.size()) {
    args["source_line"] = number;
  }
  return args;
}

}  // namespace

std::string TimingTraceJson(const TimingResult& r) {
  ordered_json events = ordered_json::array();
  const auto meta = [&](const char* what, int64_t pid, int64_t tid, const std::string& name) {
    events.push_back(
        {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
  };
  for (int64_t core = 0; core < r.tensorcores; ++core) {
    meta("process_name", core, 0, r.chip + " TensorCore " + std::to_string(core));
    meta("thread_name", core, 0, "instructions");
    for (int u = 0; u < chip::kUnitCount; ++u) {
      meta("thread_name", core, u + 1, std::string(chip::UnitName(static_cast<chip::Unit>(u))));
    }
  }
  for (const OpRecord& op : r.ops) {
    for (int64_t core = 0; core < r.tensorcores; ++core) {
      events.push_back({{"ph", "X"},
                        {"name", op.instruction->name()},
                        {"pid", core},
                        {"tid", 0},
                        {"ts", Micros(r, op.start_cycle)},
                        {"dur", Micros(r, op.cycles)},
                        {"args", OpArgs(op, true)}});
      for (int u = 0; u < chip::kUnitCount; ++u) {
        if (op.unit_cycles[u] <= 0) continue;
        events.push_back({{"ph", "X"},
                          {"name", op.instruction->name()},
                          {"pid", core},
                          {"tid", u + 1},
                          {"ts", Micros(r, op.start_cycle)},
                          {"dur", Micros(r, op.unit_cycles[u])}});
      }
    }
  }
  // The other traced devices: one process each, with its instructions.
  const auto device_track = [&](int64_t device, const std::vector<OpRecord>& ops,
                                const std::string& label) {
    const int64_t pid = kDevicePidBase + device;
    meta("process_name", pid, 0, label);
    meta("thread_name", pid, 0, "instructions");
    for (const OpRecord& op : ops) {
      events.push_back({{"ph", "X"},
                        {"name", op.instruction->name()},
                        {"pid", pid},
                        {"tid", 0},
                        {"ts", Micros(r, op.start_cycle)},
                        {"dur", Micros(r, op.cycles)},
                        {"args", OpArgs(op, false)}});
    }
  };
  for (const DeviceTiming& d : r.devices) {
    if (!d.ops.empty()) device_track(d.device, d.ops, "device " + std::to_string(d.device));
  }
  // Under symmetry only device 0 was simulated, and the others ran the same
  // program on symmetric data: their tracks mirror device 0's, and say so.
  if (r.symmetry == "used") {
    for (int64_t device = 1; device < std::min<int64_t>(r.device_count, kTracedDevices);
         ++device) {
      device_track(device, r.ops,
                   "device " + std::to_string(device) +
                       " (mirrors device 0: the devices are symmetric)");
    }
  }
  if (!r.collectives.empty()) {
    meta("process_name", kNetworkPid, 0, "ICI: " + r.interconnect);
    meta("thread_name", kNetworkPid, 0, "collectives");
    for (const CollectiveRecord& c : r.collectives) {
      events.push_back({{"ph", "X"},
                        {"name", c.instruction->name()},
                        {"pid", kNetworkPid},
                        {"tid", 0},
                        {"ts", Micros(r, c.start_cycle)},
                        {"dur", Micros(r, c.cycles)},
                        {"args", {{"kind", std::string(CollectiveKindSpelling(c.kind))},
                                  {"bytes", c.bytes},
                                  {"algorithm", std::string(ici::AlgorithmName(c.algorithm))},
                                  {"participants", GroupsText(c.groups)},
                                  {"contention_cycles", c.contention_cycles},
                                  {"explanation", c.explanation}}}});
    }
    // The busiest links by bytes (ties: lower id), one track each, showing
    // the collectives that used them.
    std::vector<const LinkUse*> busiest;
    for (const LinkUse& l : r.links) busiest.push_back(&l);
    std::stable_sort(busiest.begin(), busiest.end(),
                     [](const LinkUse* a, const LinkUse* b) { return a->bytes > b->bytes; });
    busiest.resize(std::min<size_t>(busiest.size(), kTracedLinks));
    for (size_t t = 0; t < busiest.size(); ++t) {
      const int64_t tid = static_cast<int64_t>(t) + 1;
      meta("thread_name", kNetworkPid, tid, "link " + busiest[t]->name);
      for (const CollectiveRecord& c : r.collectives) {
        for (const ici::LinkBytes& l : c.links) {
          if (l.link != busiest[t]->link) continue;
          events.push_back({{"ph", "X"},
                            {"name", c.instruction->name()},
                            {"pid", kNetworkPid},
                            {"tid", tid},
                            {"ts", Micros(r, c.start_cycle)},
                            {"dur", Micros(r, c.cycles)},
                            {"args", {{"bytes", l.bytes}}}});
        }
      }
    }
  }
  ordered_json j;
  j["traceEvents"] = std::move(events);
  j["displayTimeUnit"] = "ns";
  return JsonText(j) + "\n";
}

}  // namespace tpusim::timing
