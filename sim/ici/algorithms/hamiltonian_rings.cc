// The hamiltonian-rings algorithm: on an n x n torus plane, two edge-disjoint
// Hamiltonian cycles, each a bidirectional ring on half the data.
#include <optional>
#include <utility>
#include <vector>

#include "sim/ici/algorithms/collective_algorithm.h"
#include "sim/ici/algorithms/sub_grid.h"

namespace tpusim::ici {

std::array<std::vector<std::pair<int64_t, int64_t>>, 2> TorusHamiltonianCycles(int64_t n) {
  std::array<std::vector<std::pair<int64_t, int64_t>>, 2> cycles;
  if (n < 3) return cycles;
  for (size_t c = 0; c < cycles.size(); ++c) {
    int64_t x = 0, y = 0;
    for (int64_t i = 0; i < n * n; ++i) {
      cycles[c].emplace_back(x, y);
      const bool in_s = (x + y) % n == 0;
      if (in_s == (c == 0)) {
        y = (y + 1) % n;
      } else {
        x = (x + 1) % n;
      }
    }
  }
  return cycles;
}

namespace algorithms {

/// Two edge-disjoint Hamiltonian cycles of each n x n torus plane
/// (TorusHamiltonianCycles), each a bidirectional ring on half the data: the
/// four ports of every chip carry data all the time, so an all-gather or
/// reduce-scatter stage costs max(n²/2 hops, V/(4 W_uni)) = SB's V/(W·k) for
/// k = 2, against the torus decomposition's extra first phase.
Status HamiltonianRingsAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  TPUSIM_ASSIGN_OR_RETURN(const Stage stage, StageOf(c.kind, Algorithm::kHamiltonianRings));
  for (const std::vector<NodeId>& group : c.groups) {
    if (group.size() < 2) continue;
    const std::optional<TorusPlane> plane = SquareTorusPlane(builder.topology(), group);
    if (!plane.has_value()) {
      return InvalidArgument(
          "algorithm hamiltonian-rings needs every group to be an n x n plane (n >= 3) of a "
          "torus with wraparound on both axes, one device per chip");
    }
    const int64_t x_axis = plane->sub.axes[0];
    const int64_t y_axis = plane->sub.axes[1];
    const auto cycles = TorusHamiltonianCycles(plane->n);
    for (size_t part = 0; part < cycles.size(); ++part) {
      std::vector<NodeId> ring;
      std::vector<int64_t> at = plane->sub.by_coords.begin()->first;
      for (const auto& [x, y] : cycles[part]) {
        at[x_axis] = x;
        at[y_axis] = y;
        ring.push_back(plane->sub.by_coords.at(at));
      }
      // part 0 also takes the odd byte
      const int64_t part_bytes = c.bytes / 2 + (part == 0 ? c.bytes % 2 : 0);
      const std::vector<std::vector<NodeId>> rings = {std::move(ring)};
      int32_t prev = -1;
      if (stage != Stage::kAllGather) {
        TPUSIM_ASSIGN_OR_RETURN(prev, ShardRingPhase(builder, rings, part_bytes,
                                                     /*bidirectional=*/true, prev));
      }
      if (stage != Stage::kReduceScatter) {
        TPUSIM_ASSIGN_OR_RETURN(prev, ShardRingPhase(builder, rings, part_bytes,
                                                     /*bidirectional=*/true, prev));
      }
    }
  }
  return Status();
}

}  // namespace algorithms
}  // namespace tpusim::ici
