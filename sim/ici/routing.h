// Routes through a Topology: dimension-order shortest-direction routing on
// tori and meshes, up/down with ECMP on fat trees, shortest paths (Boost.Graph)
// on arbitrary graphs; failed links are routed around.
//
// CONTRACT shared with sim/ici/flow_network and sim/ici/collectives.
#ifndef TPUSIM_SIM_ICI_ROUTING_H_
#define TPUSIM_SIM_ICI_ROUTING_H_

#include <cstdint>
#include <vector>

#include "sim/base/status.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {

class Router {
 public:
  explicit Router(const Topology& topology);
  /// The links from chip `src` to chip `dst` in order (empty when src == dst).
  /// `flow_key` picks among equal-cost paths (ECMP) deterministically.
  /// kUnavailable when failures disconnect them.
  StatusOr<std::vector<LinkId>> Route(NodeId src, NodeId dst, uint64_t flow_key = 0) const;
};

}  // namespace tpusim::ici

#endif  // TPUSIM_SIM_ICI_ROUTING_H_
