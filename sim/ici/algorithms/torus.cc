// The torus algorithm: a group that is a whole sub-grid runs its
// reduce-scatter and all-gather phases axis by axis.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/ici/algorithms/collective_algorithm.h"
#include "sim/ici/algorithms/sub_grid.h"

namespace tpusim::ici::algorithms {
namespace {

/// An all-gather or reduce-scatter phase along lines without wraparound:
/// shards flow both ways along the line, so the link from chip i to i+1
/// carries the i+1 shards to its left and the one from i to i-1 the N-i
/// shards to its right. The busiest edges carry (N-1)/N of the data — the
/// cost of a unidirectional ring, which is how the scaling book prices an
/// axis without wraparound — but every flow is one hop.
StatusOr<int32_t> LinePhase(FlowBuilder& builder, const std::vector<std::vector<NodeId>>& lines,
                            int64_t size, int32_t after) {
  std::vector<int32_t> deps;
  if (after >= 0) deps.push_back(after);
  std::vector<int32_t> phase;
  EdgeLatency edge_latency;
  int64_t n = 1;
  for (const std::vector<NodeId>& line : lines) {
    n = static_cast<int64_t>(line.size());
    for (int64_t i = 0; i < n; ++i) {
      if (i + 1 < n) {
        TPUSIM_ASSIGN_OR_RETURN(
            const int32_t f,
            builder.Data(line[i], line[i + 1], Scale(size, i + 1, n), deps, &edge_latency));
        phase.push_back(f);
      }
      if (i > 0) {
        TPUSIM_ASSIGN_OR_RETURN(
            const int32_t b,
            builder.Data(line[i], line[i - 1], Scale(size, n - i, n), deps, &edge_latency));
        phase.push_back(b);
      }
    }
  }
  const NodeId anchor = lines.empty() || lines.front().empty() ? 0 : lines.front().front();
  phase.push_back(builder.Marker(anchor, deps, edge_latency.Times(n - 1)));
  return builder.Marker(anchor, std::move(phase), Picoseconds());
}

/// One phase of the torus algorithm along an axis: a bidirectional ring
/// where the axis wraps, a line where it does not.
StatusOr<int32_t> AxisPhase(FlowBuilder& builder, const std::vector<std::vector<NodeId>>& lines,
                            int64_t size, bool wraps, int32_t after) {
  if (wraps) return ShardRingPhase(builder, lines, size, /*bidirectional=*/true, after);
  return LinePhase(builder, lines, size, after);
}

/// The lines of `sub` along `axis`, each in coordinate order.
std::vector<std::vector<NodeId>> LinesAlong(const SubGrid& sub, int64_t axis, int64_t length) {
  std::vector<std::vector<NodeId>> lines;
  for (const auto& [coords, chip] : sub.by_coords) {
    if (coords[axis] != 0) continue;
    std::vector<NodeId> line;
    std::vector<int64_t> at = coords;
    for (int64_t i = 0; i < length; ++i) {
      at[axis] = i;
      line.push_back(sub.by_coords.at(at));
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

/// The exchange between the devices of each chip of `sub` (TPU7x's two
/// TensorCores), after `after` (-1: none): every device receives (d-1)/d of
/// `size` from the others of its chip, an on-chip copy that crosses no link
/// (Interconnect::AppendFlows times it). Returns its join flow.
StatusOr<int32_t> OnChipPhase(FlowBuilder& builder, const SubGrid& sub, int64_t size,
                              int32_t after) {
  std::vector<int32_t> deps;
  if (after >= 0) deps.push_back(after);
  const int64_t d = sub.devices_per_chip;
  std::vector<int32_t> phase;
  for (const auto& [coords, chip] : sub.by_coords) {
    for (int64_t device = 0; device < d; ++device) {
      TPUSIM_ASSIGN_OR_RETURN(const int32_t f,
                              builder.Data(chip, chip, Scale(size, d - 1, d), deps));
      phase.push_back(f);
    }
  }
  return builder.Marker(sub.by_coords.begin()->second, std::move(phase), Picoseconds());
}

}  // namespace

/// Per-dimension torus decomposition. The data splits into k parts (k = the
/// group's axes); part j runs its reduce-scatter phases along the axes in
/// the order rotated by j, then its all-gather phases in reverse, so that at
/// any time the parts use different axes: an all-gather over k axes costs
/// V/(k·W) as in the scaling book (sharding.md, "multiple axes").
///
/// A group with d > 1 devices on each chip (TPU7x) is a mesh with one more
/// axis, the chip's devices, which crosses no link: its reduce-scatter runs
/// first (each device keeps 1/d of the data, reduced over its chip) and its
/// all-gather last, and in between the chips run the phases above on the
/// whole V, as the d device-parity groups running them at once over the same
/// links would (the shards of all d parities cross every link).
Status TorusAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  TPUSIM_ASSIGN_OR_RETURN(const Stage stage, StageOf(c.kind, Algorithm::kTorus));
  const GridShape& grid = builder.topology().grid();
  for (const std::vector<NodeId>& group : c.groups) {
    if (group.size() < 2) continue;
    const std::optional<SubGrid> sub = WholeSubGrid(builder.topology(), group);
    if (!sub.has_value()) {
      return InvalidArgument(
          "algorithm torus needs every group to be a whole sub-grid of the " +
          std::string(grid.dims.empty() ? "grid (this topology has none)" : "torus or mesh"));
    }
    const int64_t k = static_cast<int64_t>(sub->axes.size());
    std::vector<std::vector<std::vector<NodeId>>> lines(grid.dims.size());
    std::vector<bool> wraps(grid.dims.size(), false);
    for (const int64_t axis : sub->axes) {
      lines[axis] = LinesAlong(*sub, axis, grid.dims[axis]);
      wraps[axis] = static_cast<size_t>(axis) < grid.wraparound.size() && grid.wraparound[axis];
    }
    const bool on_chip = sub->devices_per_chip > 1;
    int32_t chips_start = -1;
    if (on_chip && stage != Stage::kAllGather) {
      TPUSIM_ASSIGN_OR_RETURN(chips_start, OnChipPhase(builder, *sub, c.bytes, -1));
    }
    std::vector<int32_t> part_ends;
    for (int64_t part = 0; part < k; ++part) {
      // part 0 also takes the remainder of an uneven split
      const int64_t part_bytes = c.bytes / k + (part == 0 ? c.bytes % k : 0);
      std::vector<int64_t> order;
      for (int64_t i = 0; i < k; ++i) order.push_back(sub->axes[(part + i) % k]);
      int32_t prev = chips_start;
      // Reduce-scatter: axis order[i] works on part_bytes / prod(|order[<i]|).
      int64_t size = part_bytes;
      std::vector<int64_t> sizes;
      for (const int64_t axis : order) {
        sizes.push_back(size);
        size = Scale(size, 1, grid.dims[axis]);
      }
      if (stage != Stage::kAllGather) {
        for (size_t i = 0; i < order.size(); ++i) {
          TPUSIM_ASSIGN_OR_RETURN(
              prev, AxisPhase(builder, lines[order[i]], sizes[i], wraps[order[i]], prev));
        }
      }
      if (stage != Stage::kReduceScatter) {
        for (size_t i = order.size(); i-- > 0;) {
          TPUSIM_ASSIGN_OR_RETURN(
              prev, AxisPhase(builder, lines[order[i]], sizes[i], wraps[order[i]], prev));
        }
      }
      part_ends.push_back(prev);
    }
    if (on_chip && stage != Stage::kReduceScatter) {
      if (part_ends.empty() && chips_start >= 0) part_ends.push_back(chips_start);  // one chip
      const int32_t chips_end =
          builder.Marker(sub->by_coords.begin()->second, std::move(part_ends), Picoseconds());
      TPUSIM_RETURN_IF_ERROR(OnChipPhase(builder, *sub, c.bytes, chips_end).status());
    }
  }
  return Status();
}

}  // namespace tpusim::ici::algorithms
