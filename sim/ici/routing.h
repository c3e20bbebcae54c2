// Routes through a Topology: dimension-order shortest-direction routing on
// tori and meshes, up/down with ECMP on fat trees, shortest paths (Boost.Graph)
// on arbitrary graphs; failed links are routed around.
//
// CONTRACT shared with sim/ici/flow_network and the collective algorithms
// (sim/ici/collectives, sim/ici/algorithms).
#ifndef TPUSIM_SIM_ICI_ROUTING_H_
#define TPUSIM_SIM_ICI_ROUTING_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/base/status.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {

/// Routing rules (docs/interconnect.md, "Routing"):
/// - torus and mesh: dimension order (axis 0 first); on each axis the shorter
///   direction, the positive one on a tie; wraparound only where it exists.
/// - fat tree: up to the lowest common ancestor, then down; the uplink at each
///   level is picked by a hash of (src, dst, flow_key) (ECMP).
/// - multi-slice: inside a slice as its grid; between slices chip -> DCN
///   switch -> chip.
/// - twisted torus, graph, and any route whose rule crosses a failed link:
///   fewest hops over healthy links (Boost.Graph breadth-first search from the
///   destination; among equal paths, the one breadth-first search meets
///   first, scanning links in id order).
///
/// The Topology must outlive the Router, and a Router sees the Topology's
/// failures as they were when it was constructed. Route is thread-safe.
class Router {
 public:
  explicit Router(const Topology& topology);
  ~Router();
  Router(Router&&) noexcept;
  Router& operator=(Router&&) = delete;

  /// The links from chip `src` to chip `dst` in order (empty when src == dst).
  /// `flow_key` picks among equal-cost paths (ECMP) deterministically.
  /// kFailedPrecondition when failures disconnect them or either chip is down;
  /// kInvalidArgument for a node that is not a chip.
  StatusOr<std::vector<LinkId>> Route(NodeId src, NodeId dst, uint64_t flow_key = 0) const;

 private:
  /// The route by the topology's own rule, which may cross failed links.
  std::vector<LinkId> RuleRoute(NodeId src, NodeId dst, uint64_t flow_key) const;
  std::vector<LinkId> GridRoute(NodeId src, NodeId dst) const;
  std::vector<LinkId> FatTreeRoute(NodeId src, NodeId dst, uint64_t flow_key) const;
  /// Fewest hops over healthy links, or empty when there is none.
  std::vector<LinkId> ShortestRoute(NodeId src, NodeId dst) const;

  const Topology& topology_;
  struct ShortestPaths;  ///< Boost graph and per-destination trees, filled lazily
  std::unique_ptr<ShortestPaths> shortest_;
};

}  // namespace tpusim::ici

#endif  // TPUSIM_SIM_ICI_ROUTING_H_
