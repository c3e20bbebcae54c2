// Collective algorithms: each turns one collective, resolved to physical
// chips, into a batch of ici::Flow with `after` dependencies (every group at
// once, concurrently), which FlowNetwork then runs. Each algorithm is a file
// of sim/ici/algorithms/ (collective_algorithm.h), the auto rule is
// algorithms/auto_rule.cc. docs/interconnect.md ("Collective algorithms")
// derives every byte count and latency used there.
//
// Pipelined phases. A ring phase over N chips is not expanded into N-1 steps
// of chunk flows (N·2(N-1) flows for a 4096-chip ring); it is one flow per
// ring edge carrying everything that edge carries in the phase, all edges at
// once (a pipelined ring keeps every link busy), plus one zero-byte "floor"
// flow of steps x per-step latency. A phase ends when its data flows and its
// floor have finished; the data flows do not pay their route latency on top
// (Flow::route_latency_in_floor), so a phase costs max(steps x hop latency,
// bytes / rate): the scaling book's step model T_hop = max(T_min, bytes/W),
// `T = max(T_min·N/2, V/W)`. Unpipelined transfers (halving-doubling steps,
// direct and point-to-point flows) pay their route latency after the last byte.
#ifndef TPUSIM_SIM_ICI_COLLECTIVES_H_
#define TPUSIM_SIM_ICI_COLLECTIVES_H_

#include <array>
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
  std::vector<std::vector<int64_t>> sent_bytes;    ///< as in Collective::sent_bytes
  Picoseconds start;                               ///< every flow starts no earlier
};

/// The flows of one collective and what they mean.
struct CollectivePlan {
  Algorithm algorithm = Algorithm::kAuto;  ///< the algorithm used (never kAuto)
  /// Every flow has its route filled in (Flow::route non-empty unless the flow
  /// moves no data: phase floors and joins are zero-byte flows on one chip).
  std::vector<Flow> flows;
};

/// The two edge-disjoint Hamiltonian cycles of an n x n torus (n >= 3, both
/// axes wrapping), as (x, y) coordinates in cycle order from (0, 0). With
/// S = {(x, y) : x + y ≡ 0 (mod n)}, cycle 0 steps +y from the chips in S and
/// +x from the others; cycle 1 steps +x from S and +y from the others. Why one
/// cycle: from (x, -x) in S, cycle 0 goes +y to (x, 1-x), then +x for n-1
/// steps to (x-1, 1-x), back in S: n chips per visit of S, whose chips are
/// visited in the order x, x-1, x-2 ... (likewise cycle 1). Why disjoint:
/// cycle 0 uses the y-edge leaving p only for p in S, cycle 1 only for p not
/// in S (the x-edges the other way round), and for n >= 3 the edges {p, p+ŷ}
/// are distinct for distinct p. tests/ici/hamiltonian_cycles_test.cc checks
/// both. Empty cycles for n < 3.
std::array<std::vector<std::pair<int64_t, int64_t>>, 2> TorusHamiltonianCycles(int64_t n);

/// The algorithm `auto` stands for (docs/interconnect.md, "The auto rule"):
/// direct for all-to-all, permute and send/recv; ring for broadcast; for
/// all-reduce, all-gather and reduce-scatter, per-dimension torus rings when
/// every group is a whole sub-grid of a torus or mesh (Hamiltonian rings
/// instead when every group is an n x n torus plane and their estimated cost
/// is lower); otherwise, on power-of-two groups, ring or recursive
/// halving-doubling by a latency + bandwidth estimate of each, and a ring for
/// the rest.
Algorithm ChooseAlgorithm(const Topology& topology, const Router& router,
                          const ChipCollective& collective);

/// The part of the auto rule that depends on `kind` alone: kDirect for
/// all-to-all, ragged-all-to-all, permute and send/recv, kRing for
/// broadcast; kAuto for all-reduce, all-gather and reduce-scatter, whose
/// algorithm depends on the topology and the groups.
Algorithm AutoAlgorithmOfKind(CollectiveKind kind);

/// The point-to-point transfers `collective` makes between the ordered pairs
/// of its groups when `collective.algorithm` (kAuto resolved by kind alone,
/// as AutoAlgorithmOfKind) is kDirect: n(n-1) per group of n, twice for
/// all-reduce (a reduce-scatter, then an all-gather). 0 for other
/// algorithms, whose flows grow with n, and for broadcast, permute and
/// send/recv, which send from one root or along their pairs only. The
/// direct algorithm's flows, and the time to run them, grow with this count:
/// the up-front estimate of whether timing it takes seconds or minutes.
int64_t DirectTransfers(const Collective& collective);

/// The most DirectTransfers timed in seconds: on one core torus:16x32's
/// 261,632 transfers take about 5 s, torus:32x32's 1,047,552 about 34 s, and
/// switch:4096's 16,773,120 ran for minutes (and gigabytes of flows).
inline constexpr int64_t kMaxDirectTransfers = int64_t{1} << 19;

/// Builds the flows of `collective` under `algorithm` (kAuto: ChooseAlgorithm).
/// Errors (kInvalidArgument): an algorithm that cannot run this kind of
/// collective (e.g. a ring permute), halving-doubling on a group whose size is
/// not a power of two, the torus algorithm on a group that is not a whole
/// sub-grid, Hamiltonian rings on a group that is not an n x n torus plane
/// (n >= 3); kFailedPrecondition when failures disconnect two chips that must
/// talk (the Router's error).
StatusOr<CollectivePlan> PlanCollective(const Topology& topology, const Router& router,
                                        const ChipCollective& collective, Algorithm algorithm);

}  // namespace tpusim::ici

#endif  // TPUSIM_SIM_ICI_COLLECTIVES_H_
