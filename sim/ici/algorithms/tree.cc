// The tree algorithm: a binary tree over each group's order.
#include <string>
#include <utility>
#include <vector>

#include "sim/ici/algorithms/collective_algorithm.h"

namespace tpusim::ici::algorithms {

/// Binary tree over the group order (parent of i is (i-1)/2): all-reduce
/// reduces up and broadcasts down, collective-broadcast only goes down. Each
/// direction is one pipelined phase (every tree edge carries V at once) with
/// a floor of depth x edge latency.
Status TreeAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  const bool all_reduce = c.kind == CollectiveKind::kAllReduce;
  if (!all_reduce && c.kind != CollectiveKind::kCollectiveBroadcast) {
    return InvalidArgument("algorithm tree cannot run " + std::string(CollectiveKindName(c.kind)) +
                           " (it runs all-reduce and collective-broadcast)");
  }
  for (const std::vector<NodeId>& group : c.groups) {
    const int64_t n = static_cast<int64_t>(group.size());
    if (n < 2) continue;
    int64_t depth = 0;
    while ((int64_t{2} << depth) - 1 < n) ++depth;
    std::vector<int32_t> deps;
    for (const bool up : {true, false}) {
      if (up && !all_reduce) continue;
      std::vector<int32_t> phase;
      EdgeLatency edge_latency;
      for (int64_t i = 1; i < n; ++i) {
        const NodeId child = group[i];
        const NodeId parent = group[(i - 1) / 2];
        TPUSIM_ASSIGN_OR_RETURN(
            const int32_t f,
            builder.Data(up ? child : parent, up ? parent : child, c.bytes, deps, &edge_latency));
        phase.push_back(f);
      }
      phase.push_back(builder.Marker(group[0], deps, edge_latency.Times(depth)));
      deps = {builder.Marker(group[0], std::move(phase), Picoseconds())};
    }
  }
  return Status();
}

}  // namespace tpusim::ici::algorithms
