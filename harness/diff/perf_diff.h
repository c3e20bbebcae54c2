// Performance comparison of two timed runs for `tpusim diff`: totals (time,
// HBM bytes, FLOPs, collective bytes) and the instructions that account for
// the difference, paired through the structural matching.
#ifndef TPUSIM_HARNESS_DIFF_PERF_DIFF_H_
#define TPUSIM_HARNESS_DIFF_PERF_DIFF_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/run/metrics.h"
#include "sim/hlo/module.h"
#include "sim/timing/timing.h"

namespace tpusim::harness {

/// One instruction's cost in both runs (summed over its executions); an
/// instruction only in one run has zeros on the other side.
struct InstructionDelta {
  const hlo::HloInstruction* before = nullptr;  ///< in `before`'s module; null when added
  const hlo::HloInstruction* after = nullptr;   ///< in `after`'s module; null when removed
  int64_t before_cycles = 0;
  int64_t after_cycles = 0;
  int64_t before_hbm_bytes = 0;
  int64_t after_hbm_bytes = 0;
  int64_t delta_cycles() const { return after_cycles - before_cycles; }
  int64_t delta_hbm_bytes() const { return after_hbm_bytes - before_hbm_bytes; }
  /// `after`'s instruction when it has one, else `before`'s.
  const hlo::HloInstruction& instruction() const { return after != nullptr ? *after : *before; }
};

struct PerformanceDiff {
  Metrics before;
  Metrics after;
  /// Every instruction that executed in either run, largest |delta cycles|
  /// first (ties: larger |delta HBM bytes|, then names, then the order they
  /// first ran in).
  std::vector<InstructionDelta> instructions;
};

/// Compares two runs; `matched` pairs `before`'s instructions with
/// `after`'s (ModuleDiff::matched).
PerformanceDiff ComparePerformance(
    const timing::TimingResult& before, const timing::TimingResult& after,
    const std::map<const hlo::HloInstruction*, const hlo::HloInstruction*>& matched);

/// (after - before) / before in percent; 0 when both are 0; +infinity when
/// only `before` is 0.
double PercentChange(double before, double after);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_DIFF_PERF_DIFF_H_
