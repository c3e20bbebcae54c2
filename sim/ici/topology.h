// The physical interconnect as a graph: chips and switches joined by
// directed links, each with its own bandwidth, latency and health, built from
// an arch::TopologyConfig (torus, mesh, twisted torus, fat tree, switch,
// multi-slice, edge list). docs/interconnect.md describes every kind.
//
// CONTRACT shared by sim/ici/routing, sim/ici/flow_network and the collective
// algorithms (sim/ici/collectives, sim/ici/algorithms): change it only together
// with all of them.
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
  std::vector<int64_t> dims;     ///< chips along each axis, axis 0 fastest-varying
  std::vector<bool> wraparound;  ///< per axis: links from the last chip back to the first
  bool twisted = false;          ///< wraparound links are twisted (v4/v5p)
};

/// The structure of a k-ary n-tree (fat tree), for up/down routing. Chips
/// are the leaves; level-l switch s (0 <= s < arity^(levels-1)) is node
/// chip_count + l * arity^(levels-1) + s. Leaf switch s holds chips
/// s*arity .. s*arity+arity-1; up port j of level-l switch s leads to the
/// level-(l+1) switch whose base-arity digit l is j (docs/interconnect.md).
struct FatTreeShape {
  int64_t arity = 0;   ///< down ports (= up ports) per switch: radix / 2
  int64_t levels = 0;  ///< switch levels; chips = arity^levels
  int64_t switches_per_level = 0;
  std::vector<LinkId> chip_up;    ///< chip -> its leaf switch, by chip
  std::vector<LinkId> chip_down;  ///< leaf switch -> chip, by chip
  /// up[l][s * arity + j]: level-l switch s, up port j (l < levels-1).
  std::vector<std::vector<LinkId>> up;
  /// down[l][s * arity + i]: level-(l+1) switch s, down port i (l < levels-1).
  std::vector<std::vector<LinkId>> down;
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
  /// A node's name in reports: a grid chip's coordinates "(1,2)", else
  /// "chip 5" or "switch 3" (switches numbered from 0 after the chips).
  std::string NodeName(NodeId node) const;
  /// Slice of chip `chip` (0 unless multi-slice).
  int64_t SliceOf(NodeId chip) const;
  /// Physical chip that runs logical device `device` (the device assignment;
  /// device / devices_per_chip by default). Errors on an out-of-range device.
  StatusOr<NodeId> ChipOfDevice(int64_t device) const;
  /// Devices per chip (TopologyConfig::devices_per_chip, 1 when unresolved):
  /// chip_count() x this many devices exist, and a chip's devices share its
  /// links.
  int64_t devices_per_chip() const { return config_.devices_per_chip.value_or(1); }
  /// One line: "torus 4x4x4 (wraparound x,y,z), 64 chips, 384 links, 45 GB/s/link one-way, 1
  /// us/hop".
  std::string Describe() const;

  /// Marks the link(s) between nodes a and b (both directions) failed, or
  /// scales their bandwidth; used for faults that start during a run.
  Status FailLink(NodeId a, NodeId b);
  Status DegradeLink(NodeId a, NodeId b, double bandwidth_fraction);
  /// Marks chip `chip` down: every link into or out of it fails.
  Status FailChip(NodeId chip);

  /// A copy with every fault of the config whose `at` is <= `t` applied (the
  /// ones at 0 are applied by Build already). Faults take effect for work
  /// that starts at or after their time.
  Topology AtTime(Picoseconds t) const;

  arch::TopologyKind kind() const { return kind_; }
  /// The configuration it was built from (faults of every time included).
  const arch::TopologyConfig& config() const { return config_; }
  /// False for a chip that failed (its links are down too).
  bool chip_up(NodeId chip) const { return !chip_down_[static_cast<size_t>(chip)]; }
  /// Grid kinds: the link leaving `chip` along `axis` in the positive or
  /// negative direction (wraparound included where it exists), or -1.
  LinkId GridLink(NodeId chip, int64_t axis, bool positive) const;
  /// Fat tree only (otherwise empty).
  const FatTreeShape& fat_tree() const { return fat_tree_; }
  int64_t slice_count() const { return slice_count_; }
  int64_t chips_per_slice() const { return chip_count_ / slice_count_; }
  /// Multi-slice: the DCN switch node (-1 otherwise), and each chip's links to
  /// and from it.
  NodeId dcn_switch() const { return dcn_switch_; }
  LinkId DcnUpLink(NodeId chip) const { return dcn_up_[static_cast<size_t>(chip)]; }
  LinkId DcnDownLink(NodeId chip) const { return dcn_down_[static_cast<size_t>(chip)]; }

 private:
  friend class TopologyBuilder;
  Topology() = default;
  /// Applies config_'s link and chip faults with from < at <= to.
  Status ApplyFaults(Picoseconds from, Picoseconds to);

  arch::TopologyConfig config_;  ///< as built, for AtTime
  arch::TopologyKind kind_ = arch::TopologyKind::kTorus;
  int64_t chip_count_ = 0;
  int64_t node_count_ = 0;
  std::vector<Link> links_;
  std::vector<std::vector<LinkId>> out_links_;  ///< by node
  GridShape grid_;                              ///< multi-slice: the grid of one slice
  /// Grid kinds: (chip * rank + axis) * 2 + (positive ? 0 : 1) -> link or -1.
  std::vector<LinkId> grid_links_;
  FatTreeShape fat_tree_;
  int64_t slice_count_ = 1;
  NodeId dcn_switch_ = -1;
  std::vector<LinkId> dcn_up_;       ///< multi-slice: chip -> DCN switch
  std::vector<LinkId> dcn_down_;     ///< multi-slice: DCN switch -> chip
  std::vector<NodeId> device_chip_;  ///< logical device -> physical chip (its node)
  std::vector<bool> chip_down_;
  std::string describe_;
};

}  // namespace tpusim::ici

#endif  // TPUSIM_SIM_ICI_TOPOLOGY_H_
