// What the collective algorithms of this folder share to build their flows:
// FlowBuilder, which appends routed data flows and the zero-byte floor and
// join flows that shape pipelined phases (collectives.h, "Pipelined phases");
// the ring phase that ring, torus and hamiltonian-rings all run; and the
// split of a shard collective into its reduce-scatter and all-gather stages.
#ifndef TPUSIM_SIM_ICI_ALGORITHMS_FLOW_BUILDER_H_
#define TPUSIM_SIM_ICI_ALGORITHMS_FLOW_BUILDER_H_

#include <cstdint>
#include <map>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/ici/flow_network.h"
#include "sim/ici/interconnect.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace tpusim::ici::algorithms {

/// round(bytes * num / den) without overflow for the sizes a pod sees
/// (bytes below 2^40, num and den below 2^20).
inline int64_t Scale(int64_t bytes, int64_t num, int64_t den) {
  return (bytes * num + den / 2) / den;
}

inline bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/// The mean route latency of a phase's edges. A pipelined chunk crosses the
/// edges one after another, so a phase of S steps needs S mean edge
/// latencies (S hops on a torus axis; on a fat tree most ring edges stay
/// under one leaf switch and a few cross the spine).
struct EdgeLatency {
  int64_t sum_ps = 0;
  int64_t count = 0;
  void Add(Picoseconds latency) {
    sum_ps += latency.value();
    ++count;
  }
  Picoseconds Times(int64_t steps) const {
    return count == 0 ? Picoseconds() : Picoseconds(sum_ps * steps / count);
  }
};

/// Appends flows to one batch: data flows routed by the Router, zero-byte
/// floor and join flows that shape phases.
class FlowBuilder {
 public:
  FlowBuilder(const Topology& topology, const Router& router, Picoseconds start)
      : topology_(topology), router_(router), start_(start) {}

  const Topology& topology() const { return topology_; }

  /// A data flow src -> dst; returns its index. When `latency` is given, the
  /// flow belongs to a pipelined phase with a floor: its route latency is
  /// added to `*latency` (for the floor) instead of to its own finish
  /// (Flow::route_latency_in_floor).
  StatusOr<int32_t> Data(NodeId src, NodeId dst, int64_t bytes, std::vector<int32_t> after,
                         EdgeLatency* latency = nullptr);

  /// A point-to-point transfer. On a grid, when src and dst differ on m >= 2
  /// axes, it is split into m equal flows that take the axes in rotated
  /// orders (through the corner chips), so it leaves on m ports at once, as in
  /// the scaling book's example of a transfer "via 2 ports" across a 4x4.
  /// Returns the indices of its flows.
  StatusOr<std::vector<int32_t>> Spread(NodeId src, NodeId dst, int64_t bytes,
                                        const std::vector<int32_t>& after);

  /// A zero-byte flow on `chip` that ends `delay` after everything in `after`.
  int32_t Marker(NodeId chip, std::vector<int32_t> after, Picoseconds delay);

  Picoseconds RouteLatency(const std::vector<LinkId>& route) const;

  std::vector<Flow> Take() { return std::move(flows_); }

 private:
  int32_t Push(Flow flow);

  const Topology& topology_;
  const Router& router_;
  Picoseconds start_;
  std::vector<Flow> flows_;
  /// (grid coordinates..., slice) to chip, for Spread
  std::map<std::vector<int64_t>, NodeId> chip_at_;
};

/// An all-gather or reduce-scatter phase over `rings` (each a list of chips
/// in ring order, all of one size) on data of `size` bytes (the gathered
/// size / the operand size), after flow `after` (-1: none), one direction or
/// both; returns the phase's join flow.
StatusOr<int32_t> ShardRingPhase(FlowBuilder& builder,
                                 const std::vector<std::vector<NodeId>>& rings, int64_t size,
                                 bool bidirectional, int32_t after);

/// What a shard collective does: all-reduce is a reduce-scatter stage then
/// an all-gather stage.
enum class Stage : uint8_t { kReduceScatter, kAllGather, kAllReduce };

/// The stages of `kind`; kInvalidArgument naming `algorithm` for a kind that
/// is not a shard collective (the algorithms that run on stages run only those).
StatusOr<Stage> StageOf(CollectiveKind kind, Algorithm algorithm);

}  // namespace tpusim::ici::algorithms

#endif  // TPUSIM_SIM_ICI_ALGORITHMS_FLOW_BUILDER_H_
