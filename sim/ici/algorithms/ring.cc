// The ring and bidirectional-ring algorithms: one pipelined ring over each
// group in group order, sending one way or half the data each way.
#include <vector>

#include "sim/ici/algorithms/collective_algorithm.h"

namespace tpusim::ici::algorithms {
namespace {

/// Ring (unidirectional or bidirectional) over each group in group order.
/// collective-broadcast: a pipelined chain from the group's first chip.
Status Rings(FlowBuilder& builder, const ChipCollective& c, bool bidirectional) {
  // Checked before the groups: a permute states pairs, not groups, and would
  // otherwise pass as a collective that moves nothing.
  Stage stage = Stage::kAllReduce;
  if (c.kind != CollectiveKind::kCollectiveBroadcast) {
    TPUSIM_ASSIGN_OR_RETURN(
        stage, StageOf(c.kind, bidirectional ? Algorithm::kBidirectionalRing : Algorithm::kRing));
  }
  for (const std::vector<NodeId>& group : c.groups) {
    if (group.size() < 2) continue;
    const std::vector<std::vector<NodeId>> rings = {group};
    const int64_t n = static_cast<int64_t>(group.size());
    if (c.kind == CollectiveKind::kCollectiveBroadcast) {
      // A chain is a ring without its closing edge: every edge carries V.
      EdgeLatency edge_latency;
      for (int64_t i = 0; i + 1 < n; ++i) {
        TPUSIM_RETURN_IF_ERROR(
            builder.Data(group[i], group[i + 1], c.bytes, {}, &edge_latency).status());
      }
      builder.Marker(group[0], {}, edge_latency.Times(n - 1));
      continue;
    }
    int32_t last = -1;
    if (stage != Stage::kAllGather) {
      TPUSIM_ASSIGN_OR_RETURN(last, ShardRingPhase(builder, rings, c.bytes, bidirectional, last));
    }
    if (stage != Stage::kReduceScatter) {
      TPUSIM_ASSIGN_OR_RETURN(last, ShardRingPhase(builder, rings, c.bytes, bidirectional, last));
    }
  }
  return Status();
}

}  // namespace

Status RingAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  return Rings(builder, c, /*bidirectional=*/false);
}

Status BidirectionalRingAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  return Rings(builder, c, /*bidirectional=*/true);
}

}  // namespace tpusim::ici::algorithms
