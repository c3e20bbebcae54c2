// The direct algorithm: every pair of participants talks over its own route.
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/ici/algorithms/collective_algorithm.h"

namespace tpusim::ici::algorithms {

/// Every pair talks directly over its route (FlowBuilder::Spread): all-to-all (each participant
/// sends V/N to every other; a ragged one with its traffic known, what member i sends member
/// j), all-gather and reduce-scatter (each sends its
/// V/N shard or partial sum to every other), all-reduce (reduce-scatter then
/// all-gather), broadcast (the first chip sends V to each), permute and
/// send/recv (each pair, V).
Status DirectAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  if (c.kind == CollectiveKind::kCollectivePermute || c.kind == CollectiveKind::kSendRecv) {
    // src == dst: two devices of one chip (Interconnect drops a device's
    // pair with itself), an on-chip copy.
    for (const auto& [src, dst] : c.pairs) {
      TPUSIM_RETURN_IF_ERROR(builder.Spread(src, dst, c.bytes, {}).status());
    }
    return Status();
  }
  for (size_t g = 0; g < c.groups.size(); ++g) {
    const std::vector<NodeId>& group = c.groups[g];
    const int64_t n = static_cast<int64_t>(group.size());
    if (n < 2) continue;
    if (c.kind == CollectiveKind::kCollectiveBroadcast) {
      for (int64_t i = 1; i < n; ++i) {
        TPUSIM_RETURN_IF_ERROR(builder.Spread(group[0], group[i], c.bytes, {}).status());
      }
      continue;
    }
    const int rounds = c.kind == CollectiveKind::kAllReduce ? 2 : 1;
    std::vector<int32_t> deps;
    for (int round = 0; round < rounds; ++round) {
      std::vector<int32_t> phase;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (i == j) continue;
          const int64_t bytes =
              c.sent_bytes.empty() ? Scale(c.bytes, 1, n) : c.sent_bytes[g][i * n + j];
          if (bytes == 0 && !c.sent_bytes.empty()) continue;  // a pair that sends nothing
          TPUSIM_ASSIGN_OR_RETURN(const std::vector<int32_t> flows,
                                  builder.Spread(group[i], group[j], bytes, deps));
          phase.insert(phase.end(), flows.begin(), flows.end());
        }
      }
      deps = {builder.Marker(group[0], std::move(phase), Picoseconds())};
    }
  }
  return Status();
}

}  // namespace tpusim::ici::algorithms

namespace tpusim::ici {

// Counts the Spread calls of DirectAlgorithm's all-pairs branch.
int64_t DirectTransfers(const Collective& collective) {
  const Algorithm algorithm = collective.algorithm == Algorithm::kAuto
                                  ? AutoAlgorithmOfKind(collective.kind)
                                  : collective.algorithm;
  if (algorithm != Algorithm::kDirect) return 0;
  switch (collective.kind) {
    case CollectiveKind::kCollectiveBroadcast:
    case CollectiveKind::kCollectivePermute:
    case CollectiveKind::kSendRecv:
      return 0;
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kRaggedAllToAll:
      break;
  }
  const int64_t rounds = collective.kind == CollectiveKind::kAllReduce ? 2 : 1;
  int64_t transfers = 0;
  for (const std::vector<int64_t>& group : collective.groups) {
    const int64_t n = static_cast<int64_t>(group.size());
    transfers += rounds * n * (n - 1);
  }
  return transfers;
}

}  // namespace tpusim::ici
