// Groups as sub-grids and torus planes of the topology's grid.
#include "sim/ici/algorithms/sub_grid.h"

#include <utility>

namespace tpusim::ici::algorithms {

std::optional<SubGrid> WholeSubGrid(const Topology& topology, const std::vector<NodeId>& group) {
  const GridShape& grid = topology.grid();
  if (grid.dims.empty() || group.empty()) return std::nullopt;
  std::map<NodeId, int64_t> devices;
  for (const NodeId chip : group) ++devices[chip];
  SubGrid sub;
  sub.devices_per_chip = devices.begin()->second;
  std::vector<int64_t> first = topology.Coordinates(group.front());
  std::vector<bool> varies(grid.dims.size(), false);
  for (const auto& [chip, count] : devices) {
    if (count != sub.devices_per_chip) return std::nullopt;
    std::vector<int64_t> coords = topology.Coordinates(chip);
    if (coords.size() != grid.dims.size()) return std::nullopt;
    for (size_t a = 0; a < coords.size(); ++a) varies[a] = varies[a] || coords[a] != first[a];
    if (!sub.by_coords.emplace(std::move(coords), chip).second) return std::nullopt;
  }
  int64_t size = 1;
  for (size_t a = 0; a < varies.size(); ++a) {
    if (!varies[a]) continue;
    sub.axes.push_back(static_cast<int64_t>(a));
    size *= grid.dims[a];
  }
  if (size != static_cast<int64_t>(devices.size())) return std::nullopt;
  return sub;
}

std::optional<TorusPlane> SquareTorusPlane(const Topology& topology,
                                           const std::vector<NodeId>& group) {
  std::optional<SubGrid> sub = WholeSubGrid(topology, group);
  if (!sub.has_value() || sub->axes.size() != 2 || sub->devices_per_chip != 1) return std::nullopt;
  const GridShape& grid = topology.grid();
  if (grid.twisted) return std::nullopt;
  const int64_t n = grid.dims[sub->axes[0]];
  if (n < 3 || grid.dims[sub->axes[1]] != n) return std::nullopt;
  for (const int64_t axis : sub->axes) {
    if (static_cast<size_t>(axis) >= grid.wraparound.size() || !grid.wraparound[axis]) {
      return std::nullopt;
    }
  }
  return TorusPlane{n, std::move(*sub)};
}

}  // namespace tpusim::ici::algorithms
