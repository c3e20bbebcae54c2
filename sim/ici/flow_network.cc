#include "sim/ici/flow_network.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace tpusim::ici {

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

/// Whole picoseconds needed to send `bytes` at `rate` bytes/ps: rounded up,
/// except that a quotient within rounding noise (1e-12 relative) of a whole
/// number is that number, so that hand-computed times come out exactly.
/// Division, comparison and conversion are exact IEEE operations: the same on
/// every machine.
int64_t CeilPicoseconds(double bytes, double rate) {
  const double t = bytes / rate;
  if (!(t < 9.0e18)) return kNever;
  const auto down = static_cast<int64_t>(t);
  const double noise = t * 1e-12 + 1e-9;
  return t - static_cast<double>(down) <= noise ? down : down + 1;
}

/// Everything Run tracks per flow.
struct FlowState {
  int64_t route_begin = 0;  ///< into the flat route array
  int64_t route_end = 0;
  Picoseconds route_latency;
  int32_t pending = 0;    ///< unfinished flows in `after`
  Picoseconds ready;      ///< latest finish among `after` so far, and `earliest`
  double remaining = 0;   ///< bytes still to send
  double rate = 0;        ///< bytes per picosecond, while sending
  int64_t send_done = 0;  ///< picosecond the last byte is sent at the current rates
  bool frozen = false;    ///< progressive filling: rate fixed in this recomputation
};

/// A link's fair share when it was queued in progressive filling. Shares only
/// grow as flows elsewhere get fixed (a link gives each fixed flow at most its
/// current share), so a queued share is a lower bound: popping one that is
/// out of date re-queues the link at its current share.
struct ShareEntry {
  double share;
  LinkId link;
  bool operator>(const ShareEntry& o) const {
    return std::tie(share, link) > std::tie(o.share, o.link);
  }
};

/// One Run's mutable state.
class Simulation {
 public:
  Simulation(const Topology& topology, std::span<const Flow> flows)
      : topology_(topology),
        flows_(flows),
        state_(flows.size()),
        stage_(flows.size(), FlowSnapshot::Stage::kWaiting) {
    const size_t links = topology.links().size();
    link_flows_.resize(links);
    busy_pos_.assign(links, -1);
    link_mark_.assign(links, 0);
    flow_mark_.assign(flows.size(), 0);
    capacity_.resize(links);
    left_.resize(links);
    unfrozen_.resize(links);
    for (size_t l = 0; l < links; ++l) {
      // Bytes per picosecond.
      capacity_[l] = static_cast<double>(topology.links()[l].bandwidth.value()) / 1e12;
    }
  }

  Status Prepare(const Router& router, FlowNetworkResult& result) {
    const std::span<const Link> links = topology_.links();
    result.flows.resize(flows_.size());
    result.link_bytes.assign(links.size(), 0);
    dependents_begin_.assign(flows_.size() + 1, 0);
    for (size_t i = 0; i < flows_.size(); ++i) {
      const Flow& f = flows_[i];
      const std::string name = "flow " + std::to_string(i);
      if (f.bytes < 0) return InvalidArgument(name + ": negative byte count");
      if (f.earliest.value() < 0 || f.extra_latency.value() < 0) {
        return InvalidArgument(name + ": negative time");
      }
      for (int32_t d : f.after) {
        if (d < 0 || static_cast<size_t>(d) >= i) {
          return InvalidArgument(name + ": 'after' names flow " + std::to_string(d) +
                                 ", which is not an earlier flow");
        }
        ++dependents_begin_[static_cast<size_t>(d) + 1];
      }
      FlowState& s = state_[i];
      s.route_begin = static_cast<int64_t>(routes_.size());
      if (f.route.empty() && f.src != f.dst) {
        StatusOr<std::vector<LinkId>> route = router.Route(f.src, f.dst, f.flow_key);
        if (!route.ok()) return route.status().WithContext(name);
        routes_.insert(routes_.end(), route->begin(), route->end());
      } else {
        NodeId at = f.src;
        for (LinkId l : f.route) {
          if (l < 0 || static_cast<size_t>(l) >= links.size() ||
              links[static_cast<size_t>(l)].from != at) {
            return InvalidArgument(name + ": the given route is not a path from node " +
                                   std::to_string(f.src) + " to node " + std::to_string(f.dst));
          }
          at = links[static_cast<size_t>(l)].to;
          routes_.push_back(l);
        }
        if (at != f.dst) {
          return InvalidArgument(name + ": the given route ends at node " + std::to_string(at) +
                                 ", not at its destination " + std::to_string(f.dst));
        }
      }
      s.route_end = static_cast<int64_t>(routes_.size());
      for (int64_t r = s.route_begin; r < s.route_end; ++r) {
        const Link& link = links[static_cast<size_t>(routes_[static_cast<size_t>(r)])];
        if (!link.up) {
          return FailedPrecondition(name + ": route crosses failed link " + link.label);
        }
        if (!f.route_latency_in_floor) s.route_latency = s.route_latency + link.latency;
        result.link_bytes[static_cast<size_t>(routes_[static_cast<size_t>(r)])] += f.bytes;
      }
      s.pending = static_cast<int32_t>(f.after.size());
      s.ready = f.earliest;
    }
    // Dependents as a compressed adjacency list.
    for (size_t i = 0; i < flows_.size(); ++i) dependents_begin_[i + 1] += dependents_begin_[i];
    dependents_.resize(static_cast<size_t>(dependents_begin_.back()));
    std::vector<int64_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
    for (size_t i = 0; i < flows_.size(); ++i) {
      for (int32_t d : flows_[i].after) {
        dependents_[static_cast<size_t>(fill[static_cast<size_t>(d)]++)] = static_cast<int32_t>(i);
      }
      if (state_[i].pending == 0) MakeReady(static_cast<int32_t>(i), result);
    }
    return Status::Ok();
  }

  /// Validates `changes` and orders them by time (then link, then input order).
  Status SetChanges(std::span<const LinkChange> changes) {
    for (const LinkChange& c : changes) {
      if (c.link < 0 || static_cast<size_t>(c.link) >= capacity_.size() || c.at.value() < 0 ||
          c.bandwidth.value() < 0) {
        return InvalidArgument("link change: link " + std::to_string(c.link) + " at " +
                               std::to_string(c.at.value()) + "ps: no such link, or a negative " +
                               "time or bandwidth");
      }
      changes_.push_back(c);
    }
    std::stable_sort(changes_.begin(), changes_.end(),
                     [](const LinkChange& a, const LinkChange& b) {
                       return std::tie(a.at, a.link) < std::tie(b.at, b.link);
                     });
    return Status::Ok();
  }

  /// Runs every event before `stop_at` (kNever: to the end); `snapshot`, when
  /// given, receives where each flow stands at `stop_at`.
  Status Run(FlowNetworkResult& result, int64_t stop_at = kNever,
             std::vector<FlowSnapshot>* snapshot = nullptr) {
    int64_t now = 0;
    size_t next_change = 0;
    while (!starts_.empty() || !active_.empty()) {
      int64_t next = starts_.empty() ? kNever : starts_.top().first;
      if (next_change < changes_.size()) next = std::min(next, changes_[next_change].at.value());
      for (int32_t f : active_) next = std::min(next, state_[static_cast<size_t>(f)].send_done);
      if (next >= stop_at) break;
      if (next == kNever) return Internal("flow network: active flows never finish");
      const auto elapsed = static_cast<double>(next - now);
      for (int32_t f : active_) {
        FlowState& s = state_[static_cast<size_t>(f)];
        s.remaining = std::max(0.0, s.remaining - s.rate * elapsed);
      }
      now = next;
      touched_.clear();  // links whose flows or capacity changed at this event
      for (size_t i = 0; i < active_.size();) {
        const int32_t f = active_[i];
        if (state_[static_cast<size_t>(f)].send_done <= now) {
          active_[i] = active_.back();
          active_.pop_back();
          Deactivate(f);
          Finish(f, now, result);
        } else {
          ++i;
        }
      }
      for (; next_change < changes_.size() && changes_[next_change].at.value() <= now;
           ++next_change) {
        const LinkChange& c = changes_[next_change];
        const auto l = static_cast<size_t>(c.link);
        capacity_[l] = static_cast<double>(c.bandwidth.value()) / 1e12;
        if (c.bandwidth.value() == 0 && !link_flows_[l].empty()) {
          return FailedFlow(link_flows_[l].front(), c);
        }
        touched_.push_back(c.link);
      }
      while (!starts_.empty() && starts_.top().first <= now) {
        const int32_t f = starts_.top().second;
        starts_.pop();
        FlowState& s = state_[static_cast<size_t>(f)];
        if (flows_[static_cast<size_t>(f)].bytes == 0 || s.route_begin == s.route_end) {
          Finish(f, now, result);  // nothing to send, or nowhere to send it
          continue;
        }
        s.remaining = static_cast<double>(flows_[static_cast<size_t>(f)].bytes);
        for (LinkId l : Route(f)) {
          if (capacity_[static_cast<size_t>(l)] == 0.0) return FailedFlow(f, FailureOf(l, now));
        }
        Activate(f);
      }
      if (!touched_.empty()) {
        CollectComponent();
        if (component_flows_.empty()) continue;
        TPUSIM_RETURN_IF_ERROR(Recompute());
        ++result.rate_recomputations;
        for (int32_t f : component_flows_) {
          FlowState& s = state_[static_cast<size_t>(f)];
          const int64_t t = CeilPicoseconds(s.remaining, s.rate);
          s.send_done = t >= kNever - now ? kNever : now + t;
        }
      }
    }
    if (snapshot != nullptr) {
      snapshot->assign(flows_.size(), FlowSnapshot{});
      for (size_t i = 0; i < flows_.size(); ++i) {
        FlowSnapshot& at = (*snapshot)[i];
        at.stage = stage_[i];
        at.ready = result.flows[i].start;
        at.finish = result.flows[i].finish;
      }
      // Bytes sent between the last event and stop_at, at the rates of then.
      const auto elapsed = static_cast<double>(stop_at - now);
      for (int32_t f : active_) {
        const FlowState& s = state_[static_cast<size_t>(f)];
        (*snapshot)[static_cast<size_t>(f)].remaining =
            std::llround(std::max(0.0, s.remaining - s.rate * elapsed));
      }
      return Status::Ok();
    }
    for (size_t i = 0; i < flows_.size(); ++i) {
      if (state_[i].pending > 0) return Internal("flow network: a flow never became ready");
      result.end = std::max(result.end, result.flows[i].finish);
    }
    return Status::Ok();
  }

 private:
  Status FailedFlow(int32_t f, const LinkChange& change) const {
    return FailedPrecondition("flow " + std::to_string(f) + ": link " +
                              topology_.links()[static_cast<size_t>(change.link)].label +
                              " failed at " + std::to_string(change.at.value()) +
                              "ps, under the flow's fixed route");
  }

  /// The latest change at or before `now` that took link `l` down.
  LinkChange FailureOf(LinkId l, int64_t now) const {
    LinkChange last{l, Picoseconds(0), BytesPerSecond(0)};
    for (const LinkChange& c : changes_) {
      if (c.link == l && c.at.value() <= now && c.bandwidth.value() == 0) last = c;
    }
    return last;
  }

  std::span<const LinkId> Route(int32_t f) const {
    const FlowState& s = state_[static_cast<size_t>(f)];
    return std::span<const LinkId>(routes_).subspan(
        static_cast<size_t>(s.route_begin), static_cast<size_t>(s.route_end - s.route_begin));
  }

  void MakeReady(int32_t f, FlowNetworkResult& result) {
    stage_[static_cast<size_t>(f)] = FlowSnapshot::Stage::kReady;
    const FlowState& s = state_[static_cast<size_t>(f)];
    result.flows[static_cast<size_t>(f)].start = s.ready;
    starts_.emplace((s.ready + flows_[static_cast<size_t>(f)].extra_latency).value(), f);
  }

  /// The flow's last byte was sent at `sent`; it finishes when it arrives.
  void Finish(int32_t f, int64_t sent, FlowNetworkResult& result) {
    stage_[static_cast<size_t>(f)] = FlowSnapshot::Stage::kSent;
    const Picoseconds finish = Picoseconds(sent) + state_[static_cast<size_t>(f)].route_latency;
    result.flows[static_cast<size_t>(f)].finish = finish;
    for (int64_t i = dependents_begin_[static_cast<size_t>(f)];
         i < dependents_begin_[static_cast<size_t>(f) + 1]; ++i) {
      const int32_t d = dependents_[static_cast<size_t>(i)];
      FlowState& s = state_[static_cast<size_t>(d)];
      s.ready = std::max(s.ready, finish);
      if (--s.pending == 0) MakeReady(d, result);
    }
  }

  void Activate(int32_t f) {
    stage_[static_cast<size_t>(f)] = FlowSnapshot::Stage::kSending;
    active_.push_back(f);
    for (LinkId l : Route(f)) {
      std::vector<int32_t>& on = link_flows_[static_cast<size_t>(l)];
      if (on.empty()) {
        busy_pos_[static_cast<size_t>(l)] = static_cast<int32_t>(busy_.size());
        busy_.push_back(l);
      }
      on.push_back(f);
      touched_.push_back(l);
    }
  }

  void Deactivate(int32_t f) {
    for (LinkId l : Route(f)) {
      std::vector<int32_t>& on = link_flows_[static_cast<size_t>(l)];
      on.erase(std::find(on.begin(), on.end(), f));
      touched_.push_back(l);
      if (on.empty()) {
        const int32_t pos = busy_pos_[static_cast<size_t>(l)];
        busy_[static_cast<size_t>(pos)] = busy_.back();
        busy_pos_[static_cast<size_t>(busy_.back())] = pos;
        busy_.pop_back();
        busy_pos_[static_cast<size_t>(l)] = -1;
      }
    }
  }

  /// The active flows whose max-min rates may have changed: those connected
  /// to a touched link through shared links. Rates elsewhere are unchanged
  /// (max-min sharing splits into independent problems per connected part),
  /// and so are those flows' send ends. Once the part holds half the active
  /// flows the search stops and every active flow is recomputed: finishing
  /// the search would cost about as much as it saves.
  void CollectComponent() {
    ++epoch_;
    component_links_.clear();
    component_flows_.clear();
    for (LinkId l : touched_) {
      if (link_mark_[static_cast<size_t>(l)] == epoch_) continue;
      link_mark_[static_cast<size_t>(l)] = epoch_;
      component_links_.push_back(l);
    }
    // component_links_ grows while it is scanned: breadth-first over links.
    for (size_t i = 0; i < component_links_.size(); ++i) {
      for (int32_t f : link_flows_[static_cast<size_t>(component_links_[i])]) {
        if (flow_mark_[static_cast<size_t>(f)] == epoch_) continue;
        flow_mark_[static_cast<size_t>(f)] = epoch_;
        component_flows_.push_back(f);
        if (2 * component_flows_.size() > active_.size()) {
          component_links_ = busy_;
          component_flows_ = active_;
          return;
        }
        for (LinkId l : Route(f)) {
          if (link_mark_[static_cast<size_t>(l)] == epoch_) continue;
          link_mark_[static_cast<size_t>(l)] = epoch_;
          component_links_.push_back(l);
        }
      }
    }
  }

  /// Progressive filling: repeatedly take the link with the smallest fair
  /// share (remaining capacity / flows not yet fixed), fix its flows at that
  /// share, and take their rate off every link they cross.
  Status Recompute() {
    std::vector<ShareEntry> entries;
    entries.reserve(component_links_.size());
    for (LinkId l : component_links_) {
      const auto i = static_cast<size_t>(l);
      if (link_flows_[i].empty()) continue;
      left_[i] = capacity_[i];
      unfrozen_[i] = static_cast<int32_t>(link_flows_[i].size());
      entries.push_back({left_[i] / unfrozen_[i], l});
    }
    std::priority_queue<ShareEntry, std::vector<ShareEntry>, std::greater<>> heap(
        std::greater<>(), std::move(entries));
    for (int32_t f : component_flows_) state_[static_cast<size_t>(f)].frozen = false;
    while (!heap.empty()) {
      const ShareEntry top = heap.top();
      heap.pop();
      const auto bottleneck = static_cast<size_t>(top.link);
      if (unfrozen_[bottleneck] == 0) continue;
      const double share = left_[bottleneck] / unfrozen_[bottleneck];
      if (share != top.share) {
        heap.push({share, top.link});  // out of date: queue at the current share
        continue;
      }
      if (!(share > 0.0)) return Internal("flow network: a link's fair share fell to zero");
      for (int32_t f : link_flows_[bottleneck]) {
        FlowState& s = state_[static_cast<size_t>(f)];
        if (s.frozen) continue;
        s.frozen = true;
        s.rate = share;
        for (LinkId l : Route(f)) {
          const auto i = static_cast<size_t>(l);
          left_[i] = std::max(0.0, left_[i] - share);
          --unfrozen_[i];
        }
      }
    }
    return Status::Ok();
  }

  const Topology& topology_;
  std::span<const Flow> flows_;
  std::vector<FlowState> state_;
  std::vector<FlowSnapshot::Stage> stage_;  ///< by flow: where it stands now
  std::vector<LinkId> routes_;  ///< every flow's route, concatenated
  std::vector<int64_t> dependents_begin_;
  std::vector<int32_t> dependents_;
  /// (picosecond it starts sending, flow), earliest first, then lowest index.
  std::priority_queue<std::pair<int64_t, int32_t>, std::vector<std::pair<int64_t, int32_t>>,
                      std::greater<>>
      starts_;
  std::vector<LinkChange> changes_;               ///< by time
  std::vector<int32_t> active_;                   ///< flows sending now
  std::vector<std::vector<int32_t>> link_flows_;  ///< by link: active flows crossing it
  std::vector<LinkId> busy_;                      ///< links with active flows
  std::vector<int32_t> busy_pos_;                 ///< by link: index in busy_, or -1
  std::vector<LinkId> touched_;                   ///< this event: links whose flows changed
  std::vector<LinkId> component_links_;           ///< links of the flows to recompute
  std::vector<int32_t> component_flows_;          ///< flows to recompute
  std::vector<uint64_t> link_mark_;               ///< by link: epoch it joined the component
  std::vector<uint64_t> flow_mark_;               ///< by flow: epoch it joined the component
  uint64_t epoch_ = 0;
  std::vector<double> capacity_;   ///< by link: bytes per picosecond
  std::vector<double> left_;       ///< progressive filling: capacity not yet given
  std::vector<int32_t> unfrozen_;  ///< progressive filling: flows without a rate
};

}  // namespace

std::vector<Flow> ResumeAt(std::span<const Flow> flows, std::span<const FlowSnapshot> at,
                           Picoseconds t) {
  std::vector<Flow> resumed(flows.begin(), flows.end());
  for (size_t i = 0; i < resumed.size(); ++i) {
    Flow& flow = resumed[i];
    switch (at[i].stage) {
      case FlowSnapshot::Stage::kWaiting:
        break;  // its `after` still stand for it
      case FlowSnapshot::Stage::kReady:
        flow.after.clear();
        flow.earliest = at[i].ready;
        break;
      case FlowSnapshot::Stage::kSending:
        flow.after.clear();
        flow.earliest = t;
        flow.extra_latency = Picoseconds();
        flow.bytes = at[i].remaining;
        break;
      case FlowSnapshot::Stage::kSent:
        // A marker that finishes when the flow did (its last byte may still
        // be on its way at t): no bytes, no route, no latency.
        flow = Flow{};
        flow.src = flows[i].src;
        flow.dst = flows[i].src;
        flow.earliest = at[i].finish;
        break;
    }
  }
  return resumed;
}

std::vector<LinkChange> LinkChangesAfter(const Topology& topology, Picoseconds t) {
  struct Fault {
    Picoseconds at;
    size_t order;  ///< link faults first, each in config order: ties keep it
    NodeId a;
    NodeId b;  ///< -1 for a chip fault
    double fraction;
  };
  std::vector<Fault> faults;
  const arch::TopologyConfig& config = topology.config();
  for (const arch::LinkFault& f : config.faults) {
    faults.push_back({f.at, faults.size(), static_cast<NodeId>(f.link.a),
                      static_cast<NodeId>(f.link.b), f.bandwidth_fraction});
  }
  for (const arch::ChipFault& f : config.chip_faults) {
    faults.push_back({f.at, faults.size(), static_cast<NodeId>(f.chip), -1, 0.0});
  }
  std::stable_sort(faults.begin(), faults.end(),
                   [](const Fault& x, const Fault& y) { return x.at < y.at; });
  std::vector<int64_t> bandwidth;
  for (const Link& l : topology.links()) bandwidth.push_back(l.up ? l.bandwidth.value() : 0);
  std::vector<LinkChange> changes;
  for (const Fault& f : faults) {
    if (f.at <= t) continue;
    for (size_t i = 0; i < bandwidth.size(); ++i) {
      const Link& l = topology.links()[i];
      const bool hit = f.b < 0 ? (l.from == f.a || l.to == f.a)
                               : ((l.from == f.a && l.to == f.b) || (l.from == f.b && l.to == f.a));
      if (!hit || bandwidth[i] == 0) continue;
      bandwidth[i] =
          f.fraction == 0.0
              ? 0
              : std::max<int64_t>(
                    1, static_cast<int64_t>(static_cast<double>(bandwidth[i]) * f.fraction));
      changes.push_back({static_cast<LinkId>(i), f.at - t, BytesPerSecond(bandwidth[i])});
    }
  }
  return changes;
}

FlowNetwork::FlowNetwork(const Topology& topology, const Router& router)
    : topology_(topology), router_(router) {}

StatusOr<std::vector<FlowSnapshot>> FlowNetwork::RunUntil(std::span<const Flow> flows,
                                                           Picoseconds t) const {
  FlowNetworkResult result;
  Simulation simulation(topology_, flows);
  TPUSIM_RETURN_IF_ERROR(simulation.Prepare(router_, result));
  std::vector<FlowSnapshot> snapshot;
  TPUSIM_RETURN_IF_ERROR(simulation.Run(result, t.value(), &snapshot));
  return snapshot;
}

StatusOr<FlowNetworkResult> FlowNetwork::Run(std::span<const Flow> flows) const {
  return Run(flows, {});
}

StatusOr<FlowNetworkResult> FlowNetwork::Run(std::span<const Flow> flows,
                                             std::span<const LinkChange> changes) const {
  FlowNetworkResult result;
  Simulation simulation(topology_, flows);
  TPUSIM_RETURN_IF_ERROR(simulation.SetChanges(changes));
  TPUSIM_RETURN_IF_ERROR(simulation.Prepare(router_, result));
  TPUSIM_RETURN_IF_ERROR(simulation.Run(result));
  return result;
}

}  // namespace tpusim::ici
