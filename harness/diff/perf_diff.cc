#include "harness/diff/perf_diff.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <set>
#include <tuple>


namespace tpusim::harness {
namespace {

/// One executed instruction's cycles and HBM bytes, over all its executions.
struct Cost {
  const hlo::HloInstruction* instruction = nullptr;
  int64_t cycles = 0;
  int64_t hbm_bytes = 0;
};

/// The cost of each instruction a run executed, in the order they first ran
/// (deterministic, unlike their addresses).
std::vector<Cost> CostsByInstruction(const timing::TimingResult& timed) {
  std::vector<Cost> costs;
  std::map<const hlo::HloInstruction*, size_t> index;
  for (const timing::OpRecord& op : timed.ops) {
    const auto [at, added] = index.emplace(op.instruction, costs.size());
    if (added) costs.push_back(Cost{op.instruction});
    Cost& cost = costs[at->second];
    cost.cycles += op.TotalCycles();
    cost.hbm_bytes += op.TotalHbmBytes();
  }
  return costs;
}

/// An instruction's name for ordering; empty for none.
std::string_view NameOf(const hlo::HloInstruction* instruction) {
  return instruction != nullptr ? std::string_view(instruction->name()) : std::string_view();
}

double Abs(double x) { return x < 0 ? -x : x; }

}  // namespace

PerformanceDiff ComparePerformance(
    const timing::TimingResult& before, const timing::TimingResult& after,
    const std::map<const hlo::HloInstruction*, const hlo::HloInstruction*>& matched) {
  PerformanceDiff diff;
  diff.before = MetricsOf(before);
  diff.after = MetricsOf(after);
  const std::vector<Cost> costs_before = CostsByInstruction(before);
  const std::vector<Cost> costs_after = CostsByInstruction(after);
  std::map<const hlo::HloInstruction*, const Cost*> after_by_instruction;
  for (const Cost& cost : costs_after) after_by_instruction.emplace(cost.instruction, &cost);
  std::set<const hlo::HloInstruction*> paired_after;
  for (const Cost& cost : costs_before) {
    InstructionDelta delta;
    delta.before = cost.instruction;
    delta.before_cycles = cost.cycles;
    delta.before_hbm_bytes = cost.hbm_bytes;
    const auto match = matched.find(cost.instruction);
    if (match != matched.end()) {
      const auto other = after_by_instruction.find(match->second);
      if (other != after_by_instruction.end()) {
        delta.after = match->second;
        delta.after_cycles = other->second->cycles;
        delta.after_hbm_bytes = other->second->hbm_bytes;
        paired_after.insert(match->second);
      }
    }
    diff.instructions.push_back(delta);
  }
  for (const Cost& cost : costs_after) {
    if (paired_after.count(cost.instruction)) continue;
    InstructionDelta delta;
    delta.after = cost.instruction;
    delta.after_cycles = cost.cycles;
    delta.after_hbm_bytes = cost.hbm_bytes;
    diff.instructions.push_back(delta);
  }
  std::stable_sort(diff.instructions.begin(), diff.instructions.end(),
                   [](const InstructionDelta& a, const InstructionDelta& b) {
                     const int64_t ca = std::abs(a.delta_cycles()), cb = std::abs(b.delta_cycles());
                     if (ca != cb) return ca > cb;
                     const int64_t ha = std::abs(a.delta_hbm_bytes());
                     const int64_t hb = std::abs(b.delta_hbm_bytes());
                     if (ha != hb) return ha > hb;
                     return std::make_tuple(NameOf(a.after), NameOf(a.before)) <
                            std::make_tuple(NameOf(b.after), NameOf(b.before));
                   });
  return diff;
}

double PercentChange(double before, double after) {
  if (before == after) return 0;
  if (before == 0) return std::numeric_limits<double>::infinity();
  return (after - before) / Abs(before) * 100;
}

}  // namespace tpusim::harness
