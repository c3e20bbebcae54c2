// FlowBuilder and the ring phase shared by the collective algorithms.
#include "sim/ici/algorithms/flow_builder.h"

#include <string>
#include <utility>
#include <vector>

namespace tpusim::ici::algorithms {

StatusOr<int32_t> FlowBuilder::Data(NodeId src, NodeId dst, int64_t bytes,
                                    std::vector<int32_t> after, EdgeLatency* latency) {
  Flow flow;
  flow.src = src;
  flow.dst = dst;
  flow.bytes = bytes;
  flow.after = std::move(after);
  flow.earliest = start_;
  auto route = router_.Route(src, dst, static_cast<uint64_t>(flows_.size()));
  if (!route.ok()) return route.status();
  flow.route = std::move(*route);
  if (latency != nullptr) {
    latency->Add(RouteLatency(flow.route));
    flow.route_latency_in_floor = true;
  }
  return Push(std::move(flow));
}

StatusOr<std::vector<int32_t>> FlowBuilder::Spread(NodeId src, NodeId dst, int64_t bytes,
                                                   const std::vector<int32_t>& after) {
  std::vector<int64_t> axes;
  std::vector<int64_t> from = topology_.Coordinates(src);
  const std::vector<int64_t> to = topology_.Coordinates(dst);
  for (size_t a = 0; a < from.size() && a < to.size(); ++a) {
    if (from[a] != to[a]) axes.push_back(static_cast<int64_t>(a));
  }
  if (axes.size() < 2 || topology_.SliceOf(src) != topology_.SliceOf(dst)) {
    TPUSIM_ASSIGN_OR_RETURN(const int32_t f, Data(src, dst, bytes, after));
    return std::vector<int32_t>{f};
  }
  if (chip_at_.empty()) {
    for (NodeId chip = 0; chip < topology_.chip_count(); ++chip) {
      std::vector<int64_t> key = topology_.Coordinates(chip);
      key.push_back(topology_.SliceOf(chip));  // multi-slice: coordinates repeat per slice
      chip_at_.emplace(std::move(key), chip);
    }
  }
  const int64_t m = static_cast<int64_t>(axes.size());
  from.push_back(topology_.SliceOf(src));
  std::vector<int32_t> parts;
  for (int64_t part = 0; part < m; ++part) {
    Flow flow;
    flow.src = src;
    flow.dst = dst;
    flow.bytes = bytes / m + (part == 0 ? bytes % m : 0);
    flow.after = after;
    flow.earliest = start_;
    std::vector<int64_t> at = from;
    NodeId here = src;
    for (int64_t i = 0; i < m; ++i) {
      const int64_t axis = axes[(part + i) % m];
      at[axis] = to[axis];
      const NodeId next = chip_at_.at(at);
      auto leg = router_.Route(here, next, static_cast<uint64_t>(flows_.size()));
      if (!leg.ok()) return leg.status();
      flow.route.insert(flow.route.end(), leg->begin(), leg->end());
      here = next;
    }
    parts.push_back(Push(std::move(flow)));
  }
  return parts;
}

int32_t FlowBuilder::Marker(NodeId chip, std::vector<int32_t> after, Picoseconds delay) {
  Flow flow;
  flow.src = chip;
  flow.dst = chip;
  flow.after = std::move(after);
  flow.earliest = start_;
  flow.extra_latency = delay;
  return Push(std::move(flow));
}

Picoseconds FlowBuilder::RouteLatency(const std::vector<LinkId>& route) const {
  Picoseconds total;
  for (const LinkId link : route) total = total + topology_.links()[link].latency;
  return total;
}

int32_t FlowBuilder::Push(Flow flow) {
  flows_.push_back(std::move(flow));
  return static_cast<int32_t>(flows_.size() - 1);
}

namespace {

/// One phase of rings run together: each ring is a list of chips in ring
/// order; every chip sends `forward_bytes` to its successor and, when
/// `backward_bytes` > 0, that much to its predecessor; the phase lasts at
/// least `steps` x the mean edge latency. Returns the phase's join flow.
StatusOr<int32_t> RingPhase(FlowBuilder& builder, const std::vector<std::vector<NodeId>>& rings,
                            int64_t forward_bytes, int64_t backward_bytes, int64_t steps,
                            int32_t after) {
  std::vector<int32_t> deps;
  if (after >= 0) deps.push_back(after);
  std::vector<int32_t> phase;
  EdgeLatency edge_latency;
  for (const std::vector<NodeId>& ring : rings) {
    const size_t n = ring.size();
    if (n < 2) continue;
    for (size_t i = 0; i < n; ++i) {
      const NodeId next = ring[(i + 1) % n];
      const NodeId prev = ring[(i + n - 1) % n];
      if (forward_bytes > 0) {
        TPUSIM_ASSIGN_OR_RETURN(const int32_t f,
                                builder.Data(ring[i], next, forward_bytes, deps, &edge_latency));
        phase.push_back(f);
      }
      if (backward_bytes > 0 && n > 2) {
        TPUSIM_ASSIGN_OR_RETURN(const int32_t b,
                                builder.Data(ring[i], prev, backward_bytes, deps, &edge_latency));
        phase.push_back(b);
      }
    }
  }
  const NodeId anchor = rings.empty() || rings.front().empty() ? 0 : rings.front().front();
  phase.push_back(builder.Marker(anchor, deps, edge_latency.Times(steps)));
  return builder.Marker(anchor, std::move(phase), Picoseconds());
}

/// Shards each direction of a ring carries for an all-gather or
/// reduce-scatter over `n` chips. Unidirectional: n-1 shards forward.
/// Bidirectional: whole shards travel the shorter way, the antipodal shard of
/// an even ring one way only, so forward carries ceil((n-1)/2) and backward
/// floor((n-1)/2) — the scaling book's "N/2 hops of V/N" per direction.
struct RingShards {
  int64_t forward = 0;
  int64_t backward = 0;
  int64_t steps = 0;
};
RingShards ShardsPerDirection(int64_t n, bool bidirectional) {
  if (!bidirectional) return {n - 1, 0, n - 1};
  return {n / 2, (n - 1) / 2, n / 2};
}

}  // namespace

StatusOr<int32_t> ShardRingPhase(FlowBuilder& builder,
                                 const std::vector<std::vector<NodeId>>& rings, int64_t size,
                                 bool bidirectional, int32_t after) {
  const int64_t n = rings.empty() ? 1 : static_cast<int64_t>(rings.front().size());
  const RingShards shards = ShardsPerDirection(n, bidirectional && n > 2);
  return RingPhase(builder, rings, Scale(size, shards.forward, n), Scale(size, shards.backward, n),
                   shards.steps, after);
}

StatusOr<Stage> StageOf(CollectiveKind kind, Algorithm algorithm) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return Stage::kAllReduce;
    case CollectiveKind::kAllGather:
      return Stage::kAllGather;
    case CollectiveKind::kReduceScatter:
      return Stage::kReduceScatter;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kRaggedAllToAll:
    case CollectiveKind::kCollectivePermute:
    case CollectiveKind::kCollectiveBroadcast:
    case CollectiveKind::kSendRecv:
      break;
  }
  return InvalidArgument("algorithm " + std::string(AlgorithmName(algorithm)) + " cannot run " +
                         std::string(CollectiveKindName(kind)) +
                         " (it runs all-reduce, all-gather and reduce-scatter)");
}

}  // namespace tpusim::ici::algorithms
