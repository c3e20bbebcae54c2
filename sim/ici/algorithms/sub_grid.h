// The grid shapes a collective's group can have that the torus and
// hamiltonian-rings algorithms need, and the auto rule tests for.
#ifndef TPUSIM_SIM_ICI_ALGORITHMS_SUB_GRID_H_
#define TPUSIM_SIM_ICI_ALGORITHMS_SUB_GRID_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "sim/ici/topology.h"

namespace tpusim::ici::algorithms {

/// The axes a group spans when it is a whole sub-grid (every chip of the
/// grid whose coordinates on the other axes are fixed), with as many of the
/// group's devices on each of its chips.
struct SubGrid {
  std::vector<int64_t> axes;                         ///< in axis order
  std::map<std::vector<int64_t>, NodeId> by_coords;  ///< the group's chips
  int64_t devices_per_chip = 1;  ///< the group's devices on each chip (TPU7x: up to 2)
};
/// `group` (chips, one entry per device) as a whole sub-grid of the
/// topology's grid; nullopt otherwise.
std::optional<SubGrid> WholeSubGrid(const Topology& topology, const std::vector<NodeId>& group);

/// A group that is an n x n plane (n >= 3) of a grid with wraparound on both
/// of the plane's axes, one device per chip: what hamiltonian-rings runs on.
/// Not on a twisted torus, whose wraparound links leave the plane.
struct TorusPlane {
  int64_t n = 0;
  SubGrid sub;  ///< its two axes and chips
};
/// `group` as such a plane; nullopt otherwise.
std::optional<TorusPlane> SquareTorusPlane(const Topology& topology,
                                           const std::vector<NodeId>& group);

}  // namespace tpusim::ici::algorithms

#endif  // TPUSIM_SIM_ICI_ALGORITHMS_SUB_GRID_H_
