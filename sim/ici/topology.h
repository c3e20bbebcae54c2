// The physical interconnect as a graph: chips and switches joined by
// directed links, each with its own bandwidth, latency and health, built from
// an arch::TopologyConfig (torus, mesh, twisted torus, fat tree, switch,
// multi-slice, edge list). docs/interconnect.md describes every kind.
//
// CONTRACT shared by sim/ici/routing, sim/ici/flow_network and
// sim/ici/collectives: change it only together with all of them.
#ifndef TPUSIM_SIM_ICI_TOPOLOGY_H_
#define TPUSIM_SIM_ICI_TOPOLOGY_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/base/status.h"
#include "sim/base/units.h"

namespace tpusim::ici {

/// A node of the graph. Chips are nodes 0 .. chip_count()-1 (physical chip
/// ids); switches follow.
using NodeId = int32_t;
/// A directed link, an index into Topology::links().
using LinkId = int32_t;

/// One direction of a physical link (a bidirectional cable is two Links).
struct Link {
  NodeId from = 0;
  NodeId to = 0;
  BytesPerSecond bandwidth;  ///< one-way, after any degradation
  Picoseconds latency;       ///< traversal latency of this hop (incl. switch latency)
  bool up = true;            ///< false when failed; routing avoids it
  /// What the link is, for reports: "x+ (1,2)->(2,2)", "dcn slice0->slice1", ...
  std::string label;
};

/// The grid view of torus, mesh and twisted-torus topologies (empty dims for
/// the others): collective algorithms decompose along these axes.
struct GridShape {
  std::vector<int64_t> dims;    ///< chips along each axis, axis 0 fastest-varying
  std::vector<bool> wraparound; ///< per axis: links from the last chip back to the first
  bool twisted = false;         ///< wraparound links are twisted (v4/v5p)
};

class Topology {
 public:
  /// Builds the graph. `ici` gives the default link bandwidth (one-way) and
  /// hop latency; the config may override them, and its failures and
  /// degradations are applied. Errors (kInvalidArgument) say what is
  /// impossible: "twisted torus needs 2A=B=C or 2A=2B=C, got 4x4x4", a failed
  /// link that does not exist, a disconnected graph.
  static StatusOr<Topology> Build(const arch::TopologyConfig& config, const arch::IciConfig& ici);

  int64_t chip_count() const;
  int64_t node_count() const;  ///< chips + switches
  std::span<const Link> links() const;
  /// Links leaving `node` (failed ones included; check Link::up).
  std::span<const LinkId> out_links(NodeId node) const;
  const GridShape& grid() const;
  /// Coordinates of chip `chip` in grid(); empty when the topology has no grid.
  std::vector<int64_t> Coordinates(NodeId chip) const;
  /// Slice of chip `chip` (0 unless multi-slice).
  int64_t SliceOf(NodeId chip) const;
  /// Physical chip that runs logical device `device` (the device assignment;
  /// identity by default). Errors on an out-of-range device.
  StatusOr<NodeId> ChipOfDevice(int64_t device) const;
  /// One line: "torus 4x4x4 (wraparound x,y,z), 64 chips, 384 links, 45 GB/s/link one-way, 1 us/hop".
  std::string Describe() const;

  /// Marks the link(s) between nodes a and b (both directions) failed, or
  /// scales their bandwidth; used for faults that start during a run.
  Status FailLink(NodeId a, NodeId b);
  Status DegradeLink(NodeId a, NodeId b, double bandwidth_fraction);

 private:
  Topology() = default;
  // Implementation-defined members.
};

}  // namespace tpusim::ici

#endif  // TPUSIM_SIM_ICI_TOPOLOGY_H_
