// Flow-level link model: flows between nodes share every link's bandwidth
// max-min fairly; rates are recomputed event by event when a flow starts or
// ends; each flow also pays its route's per-hop latency (unless a pipelined
// phase's floor accounts for it: Flow::route_latency_in_floor). Scales to thousands
// of chips because it never simulates packets or cycles.
//
// CONTRACT shared with the collective algorithms (sim/ici/collectives,
// sim/ici/algorithms).
#ifndef TPUSIM_SIM_ICI_FLOW_NETWORK_H_
#define TPUSIM_SIM_ICI_FLOW_NETWORK_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {

/// One transfer. A flow becomes ready when every flow in `after` has finished
/// (and not before `earliest`); it then waits `extra_latency` (software or
/// algorithm step latency), sends `bytes` along its route at the max-min
/// rate, and finishes when the last byte has crossed the last hop (route
/// latency added once):
///   start  = max(earliest, finish of every flow in `after`)
///   finish = start + extra_latency + (time to send `bytes` at the max-min
///            rates, which change at events) + sum of the route's link latencies
/// The flow holds bandwidth on every link of its route from
/// start + extra_latency until its last byte is sent (the latency is not
/// spent holding links: a cut-through pipeline). A flow with
/// `route_latency_in_floor` set finishes when its last byte is sent: its
/// route latency is not added.
struct Flow {
  NodeId src = 0;
  NodeId dst = 0;
  int64_t bytes = 0;
  std::vector<int32_t> after;  ///< indices of earlier flows in the same batch
  Picoseconds earliest;
  Picoseconds extra_latency;
  /// Route: empty means the Router's route for (src, dst); a collective
  /// algorithm may fix it (e.g. a ring step to a neighbour over a chosen link).
  std::vector<LinkId> route;
  /// Picks among equal-cost routes (ECMP) when the Router chooses the route.
  uint64_t flow_key = 0;
  /// The route latency is accounted elsewhere: by a zero-byte "floor" flow of
  /// the same pipelined phase (steps x hop latency) that the phase also waits
  /// for. This is the scaling book's step model (sharding.md, tpu-facts.md
  /// section 5): each ring hop costs T_hop = max(T_min, bytes_per_hop / W),
  /// so a phase costs max(T_min x steps, V/W) — latency hides behind transfer
  /// instead of being added after the last byte. Set it only on the data
  /// flows of a phase that has such a floor (sim/ici/algorithms/flow_builder.h).
  bool route_latency_in_floor = false;
};

/// A link's bandwidth changing while a batch runs (a fault injected at a
/// time): from `at` on, the link carries `bandwidth`; 0 means it fails.
struct LinkChange {
  LinkId link = 0;
  Picoseconds at;            ///< in the batch's time (the same clock as Flow::earliest)
  BytesPerSecond bandwidth;  ///< new one-way bandwidth; 0: down
};

/// The configured faults that happen after time `t`, as link changes on the
/// clock of a batch starting at `t` (a fault at T becomes a change at T - t),
/// in time order. `topology` is the network as it stands at `t`
/// (Topology::AtTime(t)); degradations compound on its bandwidths, and a
/// failed chip becomes changes to 0 on each of its links.
std::vector<LinkChange> LinkChangesAfter(const Topology& topology, Picoseconds t);

struct FlowTimes {
  Picoseconds start;   ///< became ready
  Picoseconds finish;  ///< last byte arrived
};

struct FlowNetworkResult {
  std::vector<FlowTimes> flows;     ///< by flow index
  std::vector<int64_t> link_bytes;  ///< by LinkId
  Picoseconds end;                  ///< latest finish
  int64_t rate_recomputations = 0;  ///< events processed (for benches and reports)
};

/// Where a flow of a batch stands at a time t (FlowNetwork::RunUntil).
struct FlowSnapshot {
  enum class Stage : uint8_t {
    kWaiting,  ///< some flow of its `after` has not finished
    kReady,    ///< ready, but starts sending at t or later
    kSending,  ///< sending at t
    kSent,     ///< its last byte was sent before t
  };
  Stage stage = Stage::kWaiting;
  Picoseconds ready;      ///< kReady, kSending, kSent: when its `after` had finished
  Picoseconds finish;     ///< kSent: when its last byte arrives (may be after t)
  int64_t remaining = 0;  ///< kSending: bytes still to send at t, to the nearest byte
};

/// `flows` as they stand at `t` (`at`, from RunUntil) as a batch that runs
/// from t on, flow for flow (same indices): a sent flow becomes a zero-byte
/// marker finishing when it did, a sending one carries what it has left
/// from t, a ready one starts as it would have, a waiting one keeps its
/// dependencies. Running it gives the finishes the whole batch would have
/// given, to within the rounding of `remaining`, and other flows can join it.
std::vector<Flow> ResumeAt(std::span<const Flow> flows, std::span<const FlowSnapshot> at,
                           Picoseconds t);

/// Rates are max-min fair (progressive filling): recomputed only when a flow
/// starts or finishes sending, with every event at the same picosecond
/// handled together. Times are integer picoseconds; a flow's send time is
/// rounded up to a whole picosecond at each event. Cost per event is
/// O(active flow-link incidences x log), independent of idle links.
class FlowNetwork {
 public:
  /// Both must outlive the FlowNetwork; links' bandwidths are read at Run.
  /// Run keeps its state per call: concurrent Runs are safe.
  FlowNetwork(const Topology& topology, const Router& router);
  /// Runs a batch of flows to completion. Errors: a dependency cycle or a
  /// forward reference, no route between src and dst (kFailedPrecondition),
  /// a given route that is not a path from src to dst or crosses a failed link.
  StatusOr<FlowNetworkResult> Run(std::span<const Flow> flows) const;
  /// The same, with link bandwidths changing at given times: rates are
  /// recomputed at each change. Routes are fixed when the batch starts, so a
  /// link that fails (bandwidth 0) under a flow still sending, or before a
  /// flow routed over it starts, is an error (kFailedPrecondition) naming
  /// the flow, the link and the time.
  StatusOr<FlowNetworkResult> Run(std::span<const Flow> flows,
                                  std::span<const LinkChange> changes) const;
  /// Runs the events of `flows` before `t` and says where each flow stands
  /// at `t`. Errors: those of Run.
  StatusOr<std::vector<FlowSnapshot>> RunUntil(std::span<const Flow> flows, Picoseconds t) const;

 private:
  const Topology& topology_;
  const Router& router_;
};

}  // namespace tpusim::ici

#endif  // TPUSIM_SIM_ICI_FLOW_NETWORK_H_
