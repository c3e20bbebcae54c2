// Collective algorithms: each turns one collective, resolved to physical
// chips, into a batch of ici::Flow with `after` dependencies (every group at
// once, concurrently), which FlowNetwork then runs. docs/interconnect.md
// ("Collective algorithms") derives every byte count and latency used here.
//
// Pipelined phases. A ring phase over N chips is not expanded into N-1 steps
// of chunk flows (N·2(N-1) flows for a 4096-chip ring); it is one flow per
// ring edge carrying everything that edge carries in the phase, all edges at
// once (a pipelined ring keeps every link busy), plus one zero-byte "floor"
// flow of steps x per-step latency. A phase ends when its data flows and its
// floor have finished, so a phase costs max(steps x hop latency, bytes / rate +
// route latency): the scaling book's `T = max(T_min·N/2, V/W)` with the
// pipeline's fill hop added.
#ifndef TPUSIM_SIM_ICI_COLLECTIVES_H_
#define TPUSIM_SIM_ICI_COLLECTIVES_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/ici/flow_network.h"
#include "sim/ici/interconnect.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {

/// A Collective with logical devices replaced by the chips that run them.
struct ChipCollective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<std::vector<NodeId>> groups;         ///< each in group order
  std::vector<std::pair<NodeId, NodeId>> pairs;    ///< permute and send/recv
  int64_t bytes = 0;                               ///< V, as in Collective::bytes
  Picoseconds start;                               ///< every flow starts no earlier
};

/// The flows of one collective and what they mean.
struct CollectivePlan {
  Algorithm algorithm = Algorithm::kAuto;  ///< the algorithm used (never kAuto)
  /// Every flow has its route filled in (Flow::route non-empty unless the flow
  /// moves no data: phase floors and joins are zero-byte flows on one chip).
  std::vector<Flow> flows;
};

/// The algorithm `auto` stands for (docs/interconnect.md, "The auto rule"):
/// direct for all-to-all, permute and send/recv; ring for broadcast; for
/// all-reduce, all-gather and reduce-scatter, per-dimension torus rings when
/// every group is a whole sub-grid of a torus or mesh; otherwise, on
/// power-of-two groups, ring or recursive halving-doubling by a latency +
/// bandwidth estimate of each, and a ring for the rest.
Algorithm ChooseAlgorithm(const Topology& topology, const Router& router,
                          const ChipCollective& collective);

/// Builds the flows of `collective` under `algorithm` (kAuto: ChooseAlgorithm).
/// Errors (kInvalidArgument): an algorithm that cannot run this kind of
/// collective (e.g. a ring permute), halving-doubling on a group whose size is
/// not a power of two, the torus algorithm on a group that is not a whole
/// sub-grid; kFailedPrecondition when failures disconnect two chips that must
/// talk (the Router's error).
StatusOr<CollectivePlan> PlanCollective(const Topology& topology, const Router& router,
                                        const ChipCollective& collective, Algorithm algorithm);

}  // namespace tpusim::ici

#endif  // TPUSIM_SIM_ICI_COLLECTIVES_H_
