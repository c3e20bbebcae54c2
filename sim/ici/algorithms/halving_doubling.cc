// The halving-doubling algorithm: recursive halving and doubling over
// power-of-two groups.
#include <string>
#include <utility>
#include <vector>

#include "sim/ici/algorithms/collective_algorithm.h"

namespace tpusim::ici::algorithms {

/// Recursive halving (reduce-scatter) and doubling (all-gather), Rabenseifner
/// style: step s pairs chips whose group index differs in one bit and sends
/// half of what remains (halving) or everything gathered so far (doubling).
/// Each step is its own flows and pays its routes' latency; a step starts
/// when the whole previous step has ended (a per-step barrier: it keeps the
/// flow network's events to a few per step on thousands of chips, and costs
/// at most the skew between pairs).
Status HalvingDoublingAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  TPUSIM_ASSIGN_OR_RETURN(const Stage stage, StageOf(c.kind, Algorithm::kHalvingDoubling));
  for (const std::vector<NodeId>& group : c.groups) {
    const int64_t n = static_cast<int64_t>(group.size());
    if (n < 2) continue;
    if (!IsPowerOfTwo(n)) {
      return InvalidArgument(
          "algorithm halving-doubling needs groups of a power-of-two size, got " +
          std::to_string(n));
    }
    // (distance, bytes each chip sends) in step order
    std::vector<std::pair<int64_t, int64_t>> steps;
    if (stage != Stage::kAllGather) {
      for (int64_t d = n / 2, share = 2; d >= 1; d /= 2, share *= 2) {
        steps.emplace_back(d, Scale(c.bytes, 1, share));
      }
    }
    if (stage != Stage::kReduceScatter) {
      for (int64_t d = 1; d < n; d *= 2) steps.emplace_back(d, Scale(c.bytes, d, n));
    }
    std::vector<int32_t> deps;
    for (const auto& [distance, bytes] : steps) {
      std::vector<int32_t> step;
      for (int64_t i = 0; i < n; ++i) {
        TPUSIM_ASSIGN_OR_RETURN(const int32_t f,
                                builder.Data(group[i], group[i ^ distance], bytes, deps));
        step.push_back(f);
      }
      deps = {builder.Marker(group[0], std::move(step), Picoseconds())};
    }
  }
  return Status();
}

}  // namespace tpusim::ici::algorithms
