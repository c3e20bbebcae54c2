#include "sim/ici/routing.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tpusim::ici {

/// The healthy links reversed (an edge to -> from per link, in link id order,
/// so breadth-first search scans them deterministically), and for each
/// destination already asked for, every node's next link toward it.
struct Router::ShortestPaths {
  using Graph =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                            boost::property<boost::edge_index_t, LinkId>>;
  explicit ShortestPaths(size_t nodes) : reversed(nodes), toward(nodes) {}
  std::mutex mutex;
  Graph reversed;
  std::vector<std::vector<LinkId>> toward;  ///< by destination; empty until computed
};

namespace {

/// Records, for each node breadth-first search discovers, the link it was
/// discovered through: in the reversed graph that is the node's next hop.
class NextHopRecorder : public boost::default_bfs_visitor {
 public:
  explicit NextHopRecorder(std::vector<LinkId>* next) : next_(next) {}
  template <typename Edge, typename Graph>
  void tree_edge(Edge e, const Graph& g) const {
    (*next_)[boost::target(e, g)] = boost::get(boost::edge_index, g, e);
  }

 private:
  std::vector<LinkId>* next_;
};

/// SplitMix64's finaliser: a fixed, portable mix for ECMP choices.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Router::Router(const Topology& topology)
    : topology_(topology),
      shortest_(std::make_unique<ShortestPaths>(static_cast<size_t>(topology.node_count()))) {
  const std::span<const Link> links = topology.links();
  for (size_t i = 0; i < links.size(); ++i) {
    const Link& l = links[i];
    // The DCN switch joins slices only: paths inside a slice never use it.
    const bool dcn = l.from == topology.dcn_switch() || l.to == topology.dcn_switch();
    if (l.up && !dcn) {
      boost::add_edge(static_cast<size_t>(l.to), static_cast<size_t>(l.from),
                      static_cast<LinkId>(i), shortest_->reversed);
    }
  }
}

Router::~Router() = default;
Router::Router(Router&&) noexcept = default;

StatusOr<std::vector<LinkId>> Router::Route(NodeId src, NodeId dst, uint64_t flow_key) const {
  const int64_t chips = topology_.chip_count();
  if (src < 0 || src >= chips || dst < 0 || dst >= chips) {
    return InvalidArgument("route " + std::to_string(src) + " -> " + std::to_string(dst) +
                           ": chips are 0.." + std::to_string(chips - 1));
  }
  if (src == dst) return std::vector<LinkId>{};
  for (NodeId chip : {src, dst}) {
    if (!topology_.chip_up(chip)) {
      return FailedPrecondition("no route from chip " + std::to_string(src) + " to chip " +
                                std::to_string(dst) + ": chip " + std::to_string(chip) +
                                " is down");
    }
  }
  std::vector<LinkId> route = RuleRoute(src, dst, flow_key);
  bool healthy = !route.empty();
  for (LinkId l : route) healthy = healthy && topology_.links()[static_cast<size_t>(l)].up;
  if (healthy) return route;
  route = ShortestRoute(src, dst);
  if (route.empty()) {
    return FailedPrecondition("no route from chip " + std::to_string(src) + " to chip " +
                              std::to_string(dst) + ": failed links disconnect them");
  }
  return route;
}

std::vector<LinkId> Router::RuleRoute(NodeId src, NodeId dst, uint64_t flow_key) const {
  switch (topology_.kind()) {
    case arch::TopologyKind::kTorus:
    case arch::TopologyKind::kMesh:
      return GridRoute(src, dst);
    case arch::TopologyKind::kMultiSlice:
      if (topology_.SliceOf(src) != topology_.SliceOf(dst)) {
        return {topology_.DcnUpLink(src), topology_.DcnDownLink(dst)};
      }
      return topology_.grid().twisted ? ShortestRoute(src, dst) : GridRoute(src, dst);
    case arch::TopologyKind::kFatTree:
      return FatTreeRoute(src, dst, flow_key);
    case arch::TopologyKind::kSwitch:
      // Chip c's links are 2c (to the switch) and 2c+1 (from it).
      return {static_cast<LinkId>(2 * src), static_cast<LinkId>(2 * dst + 1)};
    case arch::TopologyKind::kTwistedTorus:
    case arch::TopologyKind::kGraph:
      return ShortestRoute(src, dst);
  }
  return {};
}

std::vector<LinkId> Router::GridRoute(NodeId src, NodeId dst) const {
  const GridShape& grid = topology_.grid();
  const std::vector<int64_t> start = topology_.Coordinates(src);
  const std::vector<int64_t> to = topology_.Coordinates(dst);
  std::vector<LinkId> route;
  NodeId at = src;
  for (size_t axis = 0; axis < grid.dims.size(); ++axis) {
    const int64_t n = grid.dims[axis];
    const int64_t from = start[axis];  // earlier axes' hops leave this one unchanged
    if (from == to[axis]) continue;
    bool positive = to[axis] > from;
    int64_t hops = positive ? to[axis] - from : from - to[axis];
    if (grid.wraparound[axis]) {
      const int64_t forward = (to[axis] - from + n) % n;  // hops in the positive direction
      positive = forward <= n - forward;                  // a tie goes positive
      hops = positive ? forward : n - forward;
    }
    for (int64_t h = 0; h < hops; ++h) {
      const LinkId l = topology_.GridLink(at, static_cast<int64_t>(axis), positive);
      route.push_back(l);
      at = topology_.links()[static_cast<size_t>(l)].to;
    }
  }
  return route;
}

std::vector<LinkId> Router::FatTreeRoute(NodeId src, NodeId dst, uint64_t flow_key) const {
  const FatTreeShape& ft = topology_.fat_tree();
  const int64_t k = ft.arity;
  // The lowest level whose switches reach both chips: src and dst agree on
  // every base-k digit above it.
  int64_t top = 0;
  for (int64_t group = k; src / group != dst / group; group *= k) ++top;
  std::vector<LinkId> route{ft.chip_up[static_cast<size_t>(src)]};
  int64_t s = src / k;
  int64_t digit = 1;
  uint64_t h = Mix(static_cast<uint64_t>(src) * 0x100000001b3ULL ^
                   Mix(static_cast<uint64_t>(dst) ^ Mix(flow_key)));
  for (int64_t l = 0; l < top; ++l, digit *= k) {
    h = Mix(h);
    const auto j = static_cast<int64_t>(h % static_cast<uint64_t>(k));
    route.push_back(ft.up[static_cast<size_t>(l)][static_cast<size_t>(s * k + j)]);
    s += (j - (s / digit) % k) * digit;
  }
  for (int64_t l = top - 1; l >= 0; --l) {
    digit /= k;
    const int64_t i = (dst / (digit * k)) % k;  // dst's leaf switch digit l = chip digit l+1
    route.push_back(ft.down[static_cast<size_t>(l)][static_cast<size_t>(s * k + i)]);
    s += (i - (s / digit) % k) * digit;
  }
  route.push_back(ft.chip_down[static_cast<size_t>(dst)]);
  return route;
}

std::vector<LinkId> Router::ShortestRoute(NodeId src, NodeId dst) const {
  std::lock_guard<std::mutex> lock(shortest_->mutex);
  std::vector<LinkId>& next = shortest_->toward[static_cast<size_t>(dst)];
  if (next.empty()) {
    next.assign(static_cast<size_t>(topology_.node_count()), -1);
    boost::breadth_first_search(shortest_->reversed, static_cast<size_t>(dst),
                                boost::visitor(NextHopRecorder(&next)));
  }
  std::vector<LinkId> route;
  for (NodeId at = src; at != dst;) {
    const LinkId l = next[static_cast<size_t>(at)];
    if (l < 0) return {};
    route.push_back(l);
    at = topology_.links()[static_cast<size_t>(l)].to;
  }
  return route;
}

}  // namespace tpusim::ici
