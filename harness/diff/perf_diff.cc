#include "harness/diff/perf_diff.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>
#include <tuple>


namespace tpusim::harness {
namespace {

/// Cycles, HBM bytes and opcode of each executed instruction, by name.
struct Cost {
  std::string opcode;
  int64_t cycles = 0;
  int64_t hbm_bytes = 0;
};

std::map<std::string, Cost> CostsByName(const timing::TimingResult& timed) {
  std::map<std::string, Cost> costs;
  for (const timing::OpRecord& op : timed.ops) {
    Cost& cost = costs[op.instruction->name()];
    cost.opcode = op.instruction->OpcodeSpelling();
    cost.cycles += op.TotalCycles();
    cost.hbm_bytes += op.TotalHbmBytes();
  }
  return costs;
}

double Abs(double x) { return x < 0 ? -x : x; }

}  // namespace

PerformanceDiff ComparePerformance(const timing::TimingResult& before,
                                   const timing::TimingResult& after,
                                   const std::map<std::string, std::string>& matched) {
  PerformanceDiff diff;
  diff.before = MetricsOf(before);
  diff.after = MetricsOf(after);
  const std::map<std::string, Cost> costs_before = CostsByName(before);
  const std::map<std::string, Cost> costs_after = CostsByName(after);
  std::set<std::string> paired_after;
  for (const auto& [name, cost] : costs_before) {
    InstructionDelta delta;
    delta.before = name;
    delta.opcode = cost.opcode;
    delta.before_cycles = cost.cycles;
    delta.before_hbm_bytes = cost.hbm_bytes;
    const auto match = matched.find(name);
    if (match != matched.end()) {
      const auto other = costs_after.find(match->second);
      if (other != costs_after.end()) {
        delta.after = match->second;
        delta.opcode = other->second.opcode;
        delta.after_cycles = other->second.cycles;
        delta.after_hbm_bytes = other->second.hbm_bytes;
        paired_after.insert(match->second);
      }
    }
    diff.instructions.push_back(std::move(delta));
  }
  for (const auto& [name, cost] : costs_after) {
    if (paired_after.count(name)) continue;
    InstructionDelta delta;
    delta.after = name;
    delta.opcode = cost.opcode;
    delta.after_cycles = cost.cycles;
    delta.after_hbm_bytes = cost.hbm_bytes;
    diff.instructions.push_back(std::move(delta));
  }
  std::stable_sort(diff.instructions.begin(), diff.instructions.end(),
                   [](const InstructionDelta& a, const InstructionDelta& b) {
                     const int64_t ca = std::abs(a.delta_cycles()), cb = std::abs(b.delta_cycles());
                     if (ca != cb) return ca > cb;
                     const int64_t ha = std::abs(a.delta_hbm_bytes());
                     const int64_t hb = std::abs(b.delta_hbm_bytes());
                     if (ha != hb) return ha > hb;
                     return std::tie(a.after, a.before) < std::tie(b.after, b.before);
                   });
  return diff;
}

double PercentChange(double before, double after) {
  if (before == after) return 0;
  if (before == 0) return std::numeric_limits<double>::infinity();
  return (after - before) / Abs(before) * 100;
}

}  // namespace tpusim::harness
