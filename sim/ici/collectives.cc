// Collective algorithms as flow batches; see collectives.h for the pipelined
// phase model and docs/interconnect.md for the derivations.
#include "sim/ici/collectives.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tpusim::ici {
namespace {

/// round(bytes * num / den) without overflow for the sizes a pod sees
/// (bytes below 2^40, num and den below 2^20).
int64_t Scale(int64_t bytes, int64_t num, int64_t den) { return (bytes * num + den / 2) / den; }

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

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

  /// A data flow src -> dst; returns its index. When `latency` is given, the
  /// flow belongs to a pipelined phase with a floor: its route latency is
  /// added to `*latency` (for the floor) instead of to its own finish
  /// (Flow::route_latency_in_floor).
  StatusOr<int32_t> Data(NodeId src, NodeId dst, int64_t bytes, std::vector<int32_t> after,
                         EdgeLatency* latency = nullptr) {
    Flow flow;
    flow.src = src;
    flow.dst = dst;
    flow.bytes = bytes;
    flow.after = std::move(after);
    flow.earliest = start_;
    auto route = router_.Route(src, dst, static_cast<uint64_t>(flows_.size()));
    if (!route.ok()) return route.status();
    flow.route = std::move(*route);
    if (latency != nullptr) {
      latency->Add(RouteLatency(flow.route));
      flow.route_latency_in_floor = true;
    }
    return Push(std::move(flow));
  }

  /// A point-to-point transfer. On a grid, when src and dst differ on m >= 2
  /// axes, it is split into m equal flows that take the axes in rotated
  /// orders (through the corner chips), so it leaves on m ports at once, as in
  /// the scaling book's example of a transfer "via 2 ports" across a 4x4.
  /// Returns the indices of its flows.
  StatusOr<std::vector<int32_t>> Spread(NodeId src, NodeId dst, int64_t bytes,
                                        const std::vector<int32_t>& after) {
    std::vector<int64_t> axes;
    std::vector<int64_t> from = topology_.Coordinates(src);
    const std::vector<int64_t> to = topology_.Coordinates(dst);
    for (size_t a = 0; a < from.size() && a < to.size(); ++a) {
      if (from[a] != to[a]) axes.push_back(static_cast<int64_t>(a));
    }
    if (axes.size() < 2 || topology_.SliceOf(src) != topology_.SliceOf(dst)) {
      TPUSIM_ASSIGN_OR_RETURN(const int32_t f, Data(src, dst, bytes, after));
      return std::vector<int32_t>{f};
    }
    if (chip_at_.empty()) {
      for (NodeId chip = 0; chip < topology_.chip_count(); ++chip) {
        std::vector<int64_t> key = topology_.Coordinates(chip);
        key.push_back(topology_.SliceOf(chip));  // multi-slice: coordinates repeat per slice
        chip_at_.emplace(std::move(key), chip);
      }
    }
    const int64_t m = static_cast<int64_t>(axes.size());
    from.push_back(topology_.SliceOf(src));
    std::vector<int32_t> parts;
    for (int64_t part = 0; part < m; ++part) {
      Flow flow;
      flow.src = src;
      flow.dst = dst;
      flow.bytes = bytes / m + (part == 0 ? bytes % m : 0);
      flow.after = after;
      flow.earliest = start_;
      std::vector<int64_t> at = from;
      NodeId here = src;
      for (int64_t i = 0; i < m; ++i) {
        const int64_t axis = axes[(part + i) % m];
        at[axis] = to[axis];
        const NodeId next = chip_at_.at(at);
        auto leg = router_.Route(here, next, static_cast<uint64_t>(flows_.size()));
        if (!leg.ok()) return leg.status();
        flow.route.insert(flow.route.end(), leg->begin(), leg->end());
        here = next;
      }
      parts.push_back(Push(std::move(flow)));
    }
    return parts;
  }

  /// A zero-byte flow on `chip` that ends `delay` after everything in `after`.
  int32_t Marker(NodeId chip, std::vector<int32_t> after, Picoseconds delay) {
    Flow flow;
    flow.src = chip;
    flow.dst = chip;
    flow.after = std::move(after);
    flow.earliest = start_;
    flow.extra_latency = delay;
    return Push(std::move(flow));
  }

  Picoseconds RouteLatency(const std::vector<LinkId>& route) const {
    Picoseconds total;
    for (const LinkId link : route) total = total + topology_.links()[link].latency;
    return total;
  }

  std::vector<Flow> Take() { return std::move(flows_); }

 private:
  int32_t Push(Flow flow) {
    flows_.push_back(std::move(flow));
    return static_cast<int32_t>(flows_.size() - 1);
  }

  const Topology& topology_;
  const Router& router_;
  Picoseconds start_;
  std::vector<Flow> flows_;
  /// (grid coordinates..., slice) to chip, for Spread
  std::map<std::vector<int64_t>, NodeId> chip_at_;
};

/// One phase of rings run together: each ring is a list of chips in ring
/// order; every chip sends `forward_bytes` to its successor and, when
/// `backward_bytes` > 0, that much to its predecessor; the phase lasts at
/// least `steps` x the mean edge latency. Returns the phase's join flow.
StatusOr<int32_t> RingPhase(FlowBuilder& builder, const std::vector<std::vector<NodeId>>& rings,
                            int64_t forward_bytes, int64_t backward_bytes, int64_t steps,
                            int32_t after) {
  std::vector<int32_t> deps;
  if (after >= 0) deps.push_back(after);
  std::vector<int32_t> phase;
  EdgeLatency edge_latency;
  for (const std::vector<NodeId>& ring : rings) {
    const size_t n = ring.size();
    if (n < 2) continue;
    for (size_t i = 0; i < n; ++i) {
      const NodeId next = ring[(i + 1) % n];
      const NodeId prev = ring[(i + n - 1) % n];
      if (forward_bytes > 0) {
        TPUSIM_ASSIGN_OR_RETURN(const int32_t f,
                                builder.Data(ring[i], next, forward_bytes, deps, &edge_latency));
        phase.push_back(f);
      }
      if (backward_bytes > 0 && n > 2) {
        TPUSIM_ASSIGN_OR_RETURN(const int32_t b,
                                builder.Data(ring[i], prev, backward_bytes, deps, &edge_latency));
        phase.push_back(b);
      }
    }
  }
  const NodeId anchor = rings.empty() || rings.front().empty() ? 0 : rings.front().front();
  phase.push_back(builder.Marker(anchor, deps, edge_latency.Times(steps)));
  return builder.Marker(anchor, std::move(phase), Picoseconds());
}

/// Shards each direction of a ring carries for an all-gather or
/// reduce-scatter over `n` chips. Unidirectional: n-1 shards forward.
/// Bidirectional: whole shards travel the shorter way, the antipodal shard of
/// an even ring one way only, so forward carries ceil((n-1)/2) and backward
/// floor((n-1)/2) — the scaling book's "N/2 hops of V/N" per direction.
struct RingShards {
  int64_t forward = 0;
  int64_t backward = 0;
  int64_t steps = 0;
};
RingShards ShardsPerDirection(int64_t n, bool bidirectional) {
  if (!bidirectional) return {n - 1, 0, n - 1};
  return {n / 2, (n - 1) / 2, n / 2};
}

/// An all-gather (gather = true) or reduce-scatter phase over `rings` on
/// data of `size` bytes (the gathered size / the operand size).
StatusOr<int32_t> ShardRingPhase(FlowBuilder& builder, const std::vector<std::vector<NodeId>>& rings,
                                 int64_t size, bool bidirectional, int32_t after) {
  const int64_t n = rings.empty() ? 1 : static_cast<int64_t>(rings.front().size());
  const RingShards shards = ShardsPerDirection(n, bidirectional && n > 2);
  return RingPhase(builder, rings, Scale(size, shards.forward, n), Scale(size, shards.backward, n),
                   shards.steps, after);
}

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
        TPUSIM_ASSIGN_OR_RETURN(const int32_t f, builder.Data(line[i], line[i + 1],
                                                              Scale(size, i + 1, n), deps,
                                                              &edge_latency));
        phase.push_back(f);
      }
      if (i > 0) {
        TPUSIM_ASSIGN_OR_RETURN(const int32_t b, builder.Data(line[i], line[i - 1],
                                                              Scale(size, n - i, n), deps,
                                                              &edge_latency));
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

enum class Stage : uint8_t { kReduceScatter, kAllGather, kAllReduce };

StatusOr<Stage> StageOf(CollectiveKind kind, Algorithm algorithm) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return Stage::kAllReduce;
    case CollectiveKind::kAllGather: return Stage::kAllGather;
    case CollectiveKind::kReduceScatter: return Stage::kReduceScatter;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kRaggedAllToAll:
    case CollectiveKind::kCollectivePermute:
    case CollectiveKind::kCollectiveBroadcast:
    case CollectiveKind::kSendRecv:
      break;
  }
  return InvalidArgument("algorithm " + std::string(AlgorithmName(algorithm)) + " cannot run " +
                         std::string(CollectiveKindName(kind)) +
                         " (it runs all-reduce, all-gather and reduce-scatter)");
}

/// Ring (unidirectional or bidirectional) over each group in group order.
/// collective-broadcast: a pipelined chain from the group's first chip.
Status RingAlgorithm(FlowBuilder& builder, const ChipCollective& c, bool bidirectional) {
  for (const std::vector<NodeId>& group : c.groups) {
    if (group.size() < 2) continue;
    const std::vector<std::vector<NodeId>> rings = {group};
    const int64_t n = static_cast<int64_t>(group.size());
    if (c.kind == CollectiveKind::kCollectiveBroadcast) {
      // A chain is a ring without its closing edge: every edge carries V.
      EdgeLatency edge_latency;
      for (int64_t i = 0; i + 1 < n; ++i) {
        TPUSIM_RETURN_IF_ERROR(
            builder.Data(group[i], group[i + 1], c.bytes, {}, &edge_latency).status());
      }
      builder.Marker(group[0], {}, edge_latency.Times(n - 1));
      continue;
    }
    TPUSIM_ASSIGN_OR_RETURN(const Stage stage,
                            StageOf(c.kind, bidirectional ? Algorithm::kBidirectionalRing
                                                          : Algorithm::kRing));
    int32_t last = -1;
    if (stage != Stage::kAllGather) {
      TPUSIM_ASSIGN_OR_RETURN(last, ShardRingPhase(builder, rings, c.bytes, bidirectional, last));
    }
    if (stage != Stage::kReduceScatter) {
      TPUSIM_ASSIGN_OR_RETURN(last, ShardRingPhase(builder, rings, c.bytes, bidirectional, last));
    }
  }
  return Status();
}

/// The axes a group spans when it is a whole sub-grid (every chip of the
/// grid whose coordinates on the other axes are fixed); nullopt otherwise.
struct SubGrid {
  std::vector<int64_t> axes;                        ///< in axis order
  std::map<std::vector<int64_t>, NodeId> by_coords;  ///< the group's chips
};
std::optional<SubGrid> WholeSubGrid(const Topology& topology, const std::vector<NodeId>& group) {
  const GridShape& grid = topology.grid();
  if (grid.dims.empty() || group.empty()) return std::nullopt;
  SubGrid sub;
  std::vector<int64_t> first = topology.Coordinates(group.front());
  std::vector<bool> varies(grid.dims.size(), false);
  for (const NodeId chip : group) {
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
  if (size != static_cast<int64_t>(group.size())) return std::nullopt;
  return sub;
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

/// Per-dimension torus decomposition. The data splits into k parts (k = the
/// group's axes); part j runs its reduce-scatter phases along the axes in
/// the order rotated by j, then its all-gather phases in reverse, so that at
/// any time the parts use different axes: an all-gather over k axes costs
/// V/(k·W) as in the scaling book (sharding.md, "multiple axes").
Status TorusAlgorithm(FlowBuilder& builder, const Topology& topology, const ChipCollective& c) {
  TPUSIM_ASSIGN_OR_RETURN(const Stage stage, StageOf(c.kind, Algorithm::kTorus));
  const GridShape& grid = topology.grid();
  for (const std::vector<NodeId>& group : c.groups) {
    if (group.size() < 2) continue;
    const std::optional<SubGrid> sub = WholeSubGrid(topology, group);
    if (!sub.has_value()) {
      return InvalidArgument("algorithm torus needs every group to be a whole sub-grid of the " +
                             std::string(grid.dims.empty() ? "grid (this topology has none)"
                                                           : "torus or mesh"));
    }
    const int64_t k = static_cast<int64_t>(sub->axes.size());
    std::vector<std::vector<std::vector<NodeId>>> lines(grid.dims.size());
    std::vector<bool> wraps(grid.dims.size(), false);
    for (const int64_t axis : sub->axes) {
      lines[axis] = LinesAlong(*sub, axis, grid.dims[axis]);
      wraps[axis] = static_cast<size_t>(axis) < grid.wraparound.size() && grid.wraparound[axis];
    }
    for (int64_t part = 0; part < k; ++part) {
      // part 0 also takes the remainder of an uneven split
      const int64_t part_bytes = c.bytes / k + (part == 0 ? c.bytes % k : 0);
      std::vector<int64_t> order;
      for (int64_t i = 0; i < k; ++i) order.push_back(sub->axes[(part + i) % k]);
      int32_t prev = -1;
      // Reduce-scatter: axis order[i] works on part_bytes / prod(|order[<i]|).
      int64_t size = part_bytes;
      std::vector<int64_t> sizes;
      for (const int64_t axis : order) {
        sizes.push_back(size);
        size = Scale(size, 1, grid.dims[axis]);
      }
      if (stage != Stage::kAllGather) {
        for (size_t i = 0; i < order.size(); ++i) {
          TPUSIM_ASSIGN_OR_RETURN(prev, AxisPhase(builder, lines[order[i]], sizes[i],
                                                  wraps[order[i]], prev));
        }
      }
      if (stage != Stage::kReduceScatter) {
        for (size_t i = order.size(); i-- > 0;) {
          TPUSIM_ASSIGN_OR_RETURN(prev, AxisPhase(builder, lines[order[i]], sizes[i],
                                                  wraps[order[i]], prev));
        }
      }
    }
  }
  return Status();
}

/// A group that is an n x n plane (n >= 3) of a grid with wraparound on both
/// of the plane's axes: what hamiltonian-rings runs on. Not on a twisted
/// torus, whose wraparound links leave the plane.
struct TorusPlane {
  int64_t n = 0;
  SubGrid sub;  ///< its two axes and chips
};
std::optional<TorusPlane> SquareTorusPlane(const Topology& topology,
                                           const std::vector<NodeId>& group) {
  std::optional<SubGrid> sub = WholeSubGrid(topology, group);
  if (!sub.has_value() || sub->axes.size() != 2) return std::nullopt;
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

/// Two edge-disjoint Hamiltonian cycles of each n x n torus plane
/// (TorusHamiltonianCycles), each a bidirectional ring on half the data: the
/// four ports of every chip carry data all the time, so an all-gather or
/// reduce-scatter stage costs max(n²/2 hops, V/(4 W_uni)) = SB's V/(W·k) for
/// k = 2, against the torus decomposition's extra first phase.
Status HamiltonianRingsAlgorithm(FlowBuilder& builder, const Topology& topology,
                                 const ChipCollective& c) {
  TPUSIM_ASSIGN_OR_RETURN(const Stage stage, StageOf(c.kind, Algorithm::kHamiltonianRings));
  for (const std::vector<NodeId>& group : c.groups) {
    if (group.size() < 2) continue;
    const std::optional<TorusPlane> plane = SquareTorusPlane(topology, group);
    if (!plane.has_value()) {
      return InvalidArgument(
          "algorithm hamiltonian-rings needs every group to be an n x n plane (n >= 3) of a "
          "torus with wraparound on both axes");
    }
    const int64_t x_axis = plane->sub.axes[0];
    const int64_t y_axis = plane->sub.axes[1];
    const auto cycles = TorusHamiltonianCycles(plane->n);
    for (size_t part = 0; part < cycles.size(); ++part) {
      std::vector<NodeId> ring;
      std::vector<int64_t> at = plane->sub.by_coords.begin()->first;
      for (const auto& [x, y] : cycles[part]) {
        at[x_axis] = x;
        at[y_axis] = y;
        ring.push_back(plane->sub.by_coords.at(at));
      }
      // part 0 also takes the odd byte
      const int64_t part_bytes = c.bytes / 2 + (part == 0 ? c.bytes % 2 : 0);
      const std::vector<std::vector<NodeId>> rings = {std::move(ring)};
      int32_t prev = -1;
      if (stage != Stage::kAllGather) {
        TPUSIM_ASSIGN_OR_RETURN(prev, ShardRingPhase(builder, rings, part_bytes,
                                                     /*bidirectional=*/true, prev));
      }
      if (stage != Stage::kReduceScatter) {
        TPUSIM_ASSIGN_OR_RETURN(prev, ShardRingPhase(builder, rings, part_bytes,
                                                     /*bidirectional=*/true, prev));
      }
    }
  }
  return Status();
}

/// The auto rule between torus and hamiltonian-rings, when every group is an
/// n x n torus plane: each stage (reduce-scatter or all-gather) estimated as
/// phases of max(steps x h, bytes per link direction / W_uni), with h and
/// W_uni those of the first chip's first link. Hamiltonian rings: one phase,
/// n²/2 steps, V/4 per link. Torus: a phase of n/2 steps on V/(4n) then one
/// on V/4 (the two parts on different axes at once). Picks the rings when
/// strictly cheaper: large collectives, where the torus's first phase costs
/// bandwidth; small ones keep the torus's n hops against the rings' n²/2.
bool HamiltonianRingsAreFaster(const Topology& topology, const ChipCollective& c) {
  int64_t n = 0;
  const std::vector<NodeId>* first = nullptr;
  for (const std::vector<NodeId>& group : c.groups) {
    if (group.size() < 2) continue;
    const std::optional<TorusPlane> plane = SquareTorusPlane(topology, group);
    if (!plane.has_value()) return false;
    n = std::max(n, plane->n);
    if (first == nullptr) first = &group;
  }
  if (first == nullptr) return false;
  const std::span<const LinkId> out = topology.out_links(first->front());
  if (out.empty()) return false;
  const Link& link = topology.links()[out[0]];
  const double h = static_cast<double>(link.latency.value()) * 1e-12;
  const double w = static_cast<double>(link.bandwidth.value());
  const double v = static_cast<double>(c.bytes);
  auto phase = [&](int64_t steps, double bytes_per_link) {
    return std::max(static_cast<double>(steps) * h, bytes_per_link / w);
  };
  const double rings = phase(n * n / 2, v / 4);
  const double torus = phase(n / 2, v / static_cast<double>(4 * n)) + phase(n / 2, v / 4);
  return rings < torus;
}

/// Recursive halving (reduce-scatter) and doubling (all-gather), Rabenseifner
/// style: step s pairs chips whose group index differs in one bit and sends
/// half of what remains (halving) or everything gathered so far (doubling).
/// Each step is its own flows and pays its routes' latency; a step starts
/// when the whole previous step has ended (a per-step barrier: it keeps the
/// flow network's events to a few per step on thousands of chips, and costs
/// at most the skew between pairs).
Status HalvingDoublingAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  TPUSIM_ASSIGN_OR_RETURN(const Stage stage, StageOf(c.kind, Algorithm::kHalvingDoubling));
  for (const std::vector<NodeId>& group : c.groups) {
    const int64_t n = static_cast<int64_t>(group.size());
    if (n < 2) continue;
    if (!IsPowerOfTwo(n)) {
      return InvalidArgument("algorithm halving-doubling needs groups of a power-of-two size, got " +
                             std::to_string(n));
    }
    // (distance, bytes each chip sends) in step order
    std::vector<std::pair<int64_t, int64_t>> steps;
    if (stage != Stage::kAllGather) {
      for (int64_t d = n / 2, share = 2; d >= 1; d /= 2, share *= 2) {
        steps.emplace_back(d, Scale(c.bytes, 1, share));
      }
    }
    if (stage != Stage::kReduceScatter) {
      for (int64_t d = 1; d < n; d *= 2) steps.emplace_back(d, Scale(c.bytes, d, n));
    }
    std::vector<int32_t> deps;
    for (const auto& [distance, bytes] : steps) {
      std::vector<int32_t> step;
      for (int64_t i = 0; i < n; ++i) {
        TPUSIM_ASSIGN_OR_RETURN(const int32_t f,
                                builder.Data(group[i], group[i ^ distance], bytes, deps));
        step.push_back(f);
      }
      deps = {builder.Marker(group[0], std::move(step), Picoseconds())};
    }
  }
  return Status();
}

/// Binary tree over the group order (parent of i is (i-1)/2): all-reduce
/// reduces up and broadcasts down, collective-broadcast only goes down. Each
/// direction is one pipelined phase (every tree edge carries V at once) with
/// a floor of depth x edge latency.
Status TreeAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  const bool all_reduce = c.kind == CollectiveKind::kAllReduce;
  if (!all_reduce && c.kind != CollectiveKind::kCollectiveBroadcast) {
    return InvalidArgument("algorithm tree cannot run " + std::string(CollectiveKindName(c.kind)) +
                           " (it runs all-reduce and collective-broadcast)");
  }
  for (const std::vector<NodeId>& group : c.groups) {
    const int64_t n = static_cast<int64_t>(group.size());
    if (n < 2) continue;
    int64_t depth = 0;
    while ((int64_t{2} << depth) - 1 < n) ++depth;
    std::vector<int32_t> deps;
    for (const bool up : {true, false}) {
      if (up && !all_reduce) continue;
      std::vector<int32_t> phase;
      EdgeLatency edge_latency;
      for (int64_t i = 1; i < n; ++i) {
        const NodeId child = group[i];
        const NodeId parent = group[(i - 1) / 2];
        TPUSIM_ASSIGN_OR_RETURN(const int32_t f,
                                builder.Data(up ? child : parent, up ? parent : child, c.bytes,
                                             deps, &edge_latency));
        phase.push_back(f);
      }
      phase.push_back(builder.Marker(group[0], deps, edge_latency.Times(depth)));
      deps = {builder.Marker(group[0], std::move(phase), Picoseconds())};
    }
  }
  return Status();
}

/// Every pair talks directly over its route (FlowBuilder::Spread): all-to-all (each participant
/// sends V/N to every other), all-gather and reduce-scatter (each sends its
/// V/N shard or partial sum to every other), all-reduce (reduce-scatter then
/// all-gather), broadcast (the first chip sends V to each), permute and
/// send/recv (each pair, V).
Status DirectAlgorithm(FlowBuilder& builder, const ChipCollective& c) {
  if (c.kind == CollectiveKind::kCollectivePermute || c.kind == CollectiveKind::kSendRecv) {
    // src == dst: two devices of one chip (Interconnect drops a device's
    // pair with itself), an on-chip copy.
    for (const auto& [src, dst] : c.pairs) {
      TPUSIM_RETURN_IF_ERROR(builder.Spread(src, dst, c.bytes, {}).status());
    }
    return Status();
  }
  for (const std::vector<NodeId>& group : c.groups) {
    const int64_t n = static_cast<int64_t>(group.size());
    if (n < 2) continue;
    if (c.kind == CollectiveKind::kCollectiveBroadcast) {
      for (int64_t i = 1; i < n; ++i) {
        TPUSIM_RETURN_IF_ERROR(builder.Spread(group[0], group[i], c.bytes, {}).status());
      }
      continue;
    }
    const int rounds = c.kind == CollectiveKind::kAllReduce ? 2 : 1;
    std::vector<int32_t> deps;
    for (int round = 0; round < rounds; ++round) {
      std::vector<int32_t> phase;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (i == j) continue;
          TPUSIM_ASSIGN_OR_RETURN(const std::vector<int32_t> flows,
                                  builder.Spread(group[i], group[j], Scale(c.bytes, 1, n), deps));
          phase.insert(phase.end(), flows.begin(), flows.end());
        }
      }
      deps = {builder.Marker(group[0], std::move(phase), Picoseconds())};
    }
  }
  return Status();
}

bool IsShardCollective(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kAllGather ||
         kind == CollectiveKind::kReduceScatter;
}

}  // namespace

std::array<std::vector<std::pair<int64_t, int64_t>>, 2> TorusHamiltonianCycles(int64_t n) {
  std::array<std::vector<std::pair<int64_t, int64_t>>, 2> cycles;
  if (n < 3) return cycles;
  for (size_t c = 0; c < cycles.size(); ++c) {
    int64_t x = 0, y = 0;
    for (int64_t i = 0; i < n * n; ++i) {
      cycles[c].emplace_back(x, y);
      const bool in_s = (x + y) % n == 0;
      if (in_s == (c == 0)) {
        y = (y + 1) % n;
      } else {
        x = (x + 1) % n;
      }
    }
  }
  return cycles;
}

Algorithm ChooseAlgorithm(const Topology& topology, const Router& router,
                          const ChipCollective& collective) {
  if (collective.kind == CollectiveKind::kCollectiveBroadcast) return Algorithm::kRing;
  if (!IsShardCollective(collective.kind)) return Algorithm::kDirect;
  bool all_sub_grids = !topology.grid().dims.empty();
  const std::vector<NodeId>* largest = nullptr;
  bool all_power_of_two = true;
  for (const std::vector<NodeId>& group : collective.groups) {
    if (group.size() < 2) continue;
    all_sub_grids = all_sub_grids && WholeSubGrid(topology, group).has_value();
    all_power_of_two = all_power_of_two && IsPowerOfTwo(static_cast<int64_t>(group.size()));
    if (largest == nullptr || group.size() > largest->size()) largest = &group;
  }
  if (largest == nullptr) return Algorithm::kRing;  // nothing moves
  if (all_sub_grids) {
    return HamiltonianRingsAreFaster(topology, collective) ? Algorithm::kHamiltonianRings
                                                           : Algorithm::kTorus;
  }
  if (!all_power_of_two) return Algorithm::kRing;
  // Ring or halving-doubling, whichever the cost model says is faster for
  // the largest group. Ring: 2(N-1) steps (all-reduce; N-1 otherwise) of
  // max(h_near, S/W) with S = V/N and h_near the latency to a neighbour in
  // group order. Halving-doubling: 2 log2 N steps (log2 N) of h_far (the
  // latency across the group) plus the same bytes per chip, 2(N-1)/N V
  // (all-reduce), at W. W is the bandwidth of the first chip's first link.
  // Only power-of-two groups get here.
  const std::vector<NodeId>& group = *largest;
  const int64_t n = static_cast<int64_t>(group.size());
  const std::span<const LinkId> out = topology.out_links(group[0]);
  if (out.empty()) return Algorithm::kRing;
  const double w = static_cast<double>(topology.links()[out[0]].bandwidth.value());
  auto latency_s = [&](NodeId to) {
    auto route = router.Route(group[0], to);
    double ps = 0;
    if (route.ok()) {
      for (const LinkId link : *route) ps += static_cast<double>(topology.links()[link].latency.value());
    }
    return ps * 1e-12;
  };
  const double rounds = collective.kind == CollectiveKind::kAllReduce ? 2.0 : 1.0;
  const double v = static_cast<double>(collective.bytes);
  const double shard = v / static_cast<double>(n);
  double log2n = 0;
  for (int64_t m = n; m > 1; m /= 2) ++log2n;
  const double ring = rounds * static_cast<double>(n - 1) * std::max(latency_s(group[1]), shard / w);
  const double halving_doubling =
      rounds * (log2n * latency_s(group[n / 2]) + static_cast<double>(n - 1) * shard / w);
  // Halving-doubling's long-distance exchanges collide on hashed (ECMP)
  // uplinks, which the estimate ignores: ask for a 2x predicted advantage.
  return 2 * halving_doubling < ring ? Algorithm::kHalvingDoubling : Algorithm::kRing;
}

StatusOr<CollectivePlan> PlanCollective(const Topology& topology, const Router& router,
                                        const ChipCollective& collective, Algorithm algorithm) {
  CollectivePlan plan;
  plan.algorithm =
      algorithm == Algorithm::kAuto ? ChooseAlgorithm(topology, router, collective) : algorithm;
  FlowBuilder builder(topology, router, collective.start);
  switch (plan.algorithm) {
    case Algorithm::kRing:
    case Algorithm::kBidirectionalRing:
      TPUSIM_RETURN_IF_ERROR(
          RingAlgorithm(builder, collective, plan.algorithm == Algorithm::kBidirectionalRing));
      break;
    case Algorithm::kTorus:
      TPUSIM_RETURN_IF_ERROR(TorusAlgorithm(builder, topology, collective));
      break;
    case Algorithm::kHamiltonianRings:
      TPUSIM_RETURN_IF_ERROR(HamiltonianRingsAlgorithm(builder, topology, collective));
      break;
    case Algorithm::kTree:
      TPUSIM_RETURN_IF_ERROR(TreeAlgorithm(builder, collective));
      break;
    case Algorithm::kHalvingDoubling:
      TPUSIM_RETURN_IF_ERROR(HalvingDoublingAlgorithm(builder, collective));
      break;
    case Algorithm::kDirect:
      TPUSIM_RETURN_IF_ERROR(DirectAlgorithm(builder, collective));
      break;
    case Algorithm::kAuto:
      return Internal("ChooseAlgorithm returned auto");
  }
  plan.flows = builder.Take();
  return plan;
}

}  // namespace tpusim::ici
