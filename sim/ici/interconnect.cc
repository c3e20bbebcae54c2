// Interconnect: collectives in, durations and link bytes out. Devices map to
// chips, the algorithm (collectives.h) turns the collective into flows, and
// FlowNetwork shares the links max-min fairly.
#include "sim/ici/interconnect.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "sim/ici/collectives.h"
#include "sim/ici/flow_network.h"
#include "sim/ici/routing.h"
#include "sim/ici/topology.h"

namespace tpusim::ici {

namespace {

/// Sizes in explanations. They stop at TiB (tpusim collective's largest
/// size, 1 PiB, reads "1024.00 TiB"), where messages go on to EiB; kept so
/// that explanations stay as they were.
std::string FormatLinkBytes(int64_t bytes) { return FormatBytes(bytes, BinaryByteUnit::kTiB); }

std::string FormatMicroseconds(Picoseconds t) {
  return FormatFixed(static_cast<double>(t.value()) * 1e-6, 2) + " us";
}

/// A Collective with its devices replaced by chips.
StatusOr<ChipCollective> ResolveDevices(const Topology& topology, const Collective& collective) {
  ChipCollective chips;
  chips.kind = collective.kind;
  chips.bytes = collective.bytes;
  chips.start = collective.start;
  if (collective.bytes < 0) return InvalidArgument("collective bytes must not be negative");
  if (!collective.sent_bytes.empty()) {
    if (collective.kind != CollectiveKind::kRaggedAllToAll ||
        collective.sent_bytes.size() != collective.groups.size()) {
      return InvalidArgument("per-pair bytes are for a ragged-all-to-all, one matrix per group");
    }
    for (size_t g = 0; g < collective.groups.size(); ++g) {
      const size_t n = collective.groups[g].size();
      const std::vector<int64_t>& matrix = collective.sent_bytes[g];
      if (matrix.size() != n * n ||
          std::any_of(matrix.begin(), matrix.end(), [](int64_t b) { return b < 0; })) {
        return InvalidArgument("group " + std::to_string(g) + " needs " + std::to_string(n * n) +
                               " per-pair byte counts, none negative");
      }
    }
    chips.sent_bytes = collective.sent_bytes;
  }
  for (const std::vector<int64_t>& group : collective.groups) {
    std::vector<NodeId>& out = chips.groups.emplace_back();
    for (const int64_t device : group) {
      TPUSIM_ASSIGN_OR_RETURN(const NodeId chip, topology.ChipOfDevice(device));
      out.push_back(chip);
    }
  }
  for (const auto& [src, dst] : collective.pairs) {
    if (src == dst) continue;  // a device sending to itself moves nothing
    TPUSIM_ASSIGN_OR_RETURN(const NodeId a, topology.ChipOfDevice(src));
    TPUSIM_ASSIGN_OR_RETURN(const NodeId b, topology.ChipOfDevice(dst));
    chips.pairs.emplace_back(a, b);
  }
  return chips;
}

/// The zero-load critical path of `flows` (first `count` from `offset`):
/// latencies only, as if every byte moved instantly.
Picoseconds LatencyPath(const Topology& topology, std::span<const Flow> flows, size_t offset) {
  std::vector<Picoseconds> finish(flows.size());
  Picoseconds longest;
  for (size_t i = 0; i < flows.size(); ++i) {
    const Flow& flow = flows[i];
    Picoseconds ready = flow.earliest;
    for (const int32_t a : flow.after) ready = std::max(ready, finish[a - offset]);
    Picoseconds route;
    if (!flow.route_latency_in_floor) {
      for (const LinkId link : flow.route) route = route + topology.links()[link].latency;
    }
    // A data flow between two devices of one chip: its extra latency is the
    // on-chip copy's time (Interconnect::AppendFlows), which moves bytes.
    const bool on_chip_copy = flow.src == flow.dst && flow.bytes > 0;
    finish[i] = ready + (on_chip_copy ? Picoseconds() : flow.extra_latency) + route;
    longest = std::max(longest, finish[i] - flow.earliest);
  }
  return longest;
}

/// Flows crossing each link over a whole batch (contention shows).
std::vector<int32_t> FlowsOnLink(const Topology& topology, std::span<const Flow> batch) {
  std::vector<int32_t> flows_on_link(topology.links().size(), 0);
  for (const Flow& flow : batch) {
    for (const LinkId link : flow.route) ++flows_on_link[link];
  }
  return flows_on_link;
}

/// The timing of the collective whose flows are batch[first, last), started
/// at `start`, from the batch's run (algorithm left to the caller). Its flows
/// waited `fixed` (the collective latency) before their first bytes.
CollectiveTiming Summarize(const Topology& topology, std::span<const Flow> batch,
                           const FlowNetworkResult& result, size_t first, size_t last,
                           Picoseconds start, Picoseconds fixed,
                           const std::vector<int32_t>& flows_on_link) {
  CollectiveTiming timing;
  std::vector<int64_t> link_bytes(topology.links().size(), 0);
  int64_t on_chip_bytes = 0;
  Picoseconds end = start;
  for (size_t f = first; f < last; ++f) {
    const Flow& flow = batch[f];
    end = std::max(end, result.flows[f].finish);
    if (flow.src == flow.dst) on_chip_bytes += flow.bytes;
    timing.max_hops = std::max(timing.max_hops, static_cast<int64_t>(flow.route.size()));
    for (const LinkId link : flow.route) link_bytes[link] += flow.bytes;
  }
  timing.duration = end - start;
  int32_t busiest = -1;
  for (size_t link = 0; link < link_bytes.size(); ++link) {
    if (link_bytes[link] == 0) continue;
    timing.links.push_back({static_cast<int32_t>(link), link_bytes[link]});
    timing.ici_bytes += link_bytes[link];
    // the most bytes; among equals, the most shared (where contention shows)
    if (busiest < 0 || link_bytes[link] > link_bytes[busiest] ||
        (link_bytes[link] == link_bytes[busiest] && flows_on_link[link] > flows_on_link[busiest])) {
      busiest = static_cast<int32_t>(link);
    }
  }
  const Picoseconds latency =
      fixed + LatencyPath(topology, batch.subspan(first, last - first), first);
  const std::string hops = "longest route " + std::to_string(timing.max_hops) + " hop" +
                           (timing.max_hops == 1 ? "" : "s");
  if (busiest < 0 && on_chip_bytes > 0) {
    timing.explanation = "on-chip copies only: " + FormatLinkBytes(on_chip_bytes) +
                         " between devices of one chip at HBM bandwidth, no ICI";
  } else if (busiest < 0) {
    timing.explanation = "no data moves (groups of one chip or empty)";
  } else if (latency.value() * 2 >= timing.duration.value()) {
    timing.explanation = "latency-bound: " + FormatMicroseconds(latency) + " of " +
                         FormatMicroseconds(timing.duration) +
                         " is fixed, per-hop and per-step latency; " + hops;
  } else {
    timing.explanation = "bandwidth-bound: busiest link " + topology.links()[busiest].label +
                         " carries " + FormatLinkBytes(link_bytes[busiest]) + " in " +
                         std::to_string(flows_on_link[busiest]) + " flow" +
                         (flows_on_link[busiest] == 1 ? "" : "s") + "; " + hops;
  }
  return timing;
}

}  // namespace

StatusOr<CollectiveKind> ParseCollectiveKind(std::string_view name) {
  std::string names;
  for (const CollectiveKind kind : kCollectiveKinds) {
    if (CollectiveKindName(kind) == name) return kind;
    names += (names.empty() ? "" : ", ") + std::string(CollectiveKindName(kind));
  }
  return InvalidArgument("unknown collective " + Quote(name) + " (expected " + names + ")");
}

StatusOr<Algorithm> ParseAlgorithm(std::string_view name) {
  std::string names;
  for (const auto& [value, spelling] : kAlgorithmNames) {
    if (spelling == name) return value;
    names += (names.empty() ? "" : ", ") + std::string(spelling);
  }
  return InvalidArgument("unknown collective algorithm " + Quote(name) + " (expected " + names +
                         ")");
}

struct Interconnect::Network {
  explicit Network(Topology built) : topology(std::move(built)), router(topology),
                                     flows(topology, router) {}
  Topology topology;
  Router router;
  FlowNetwork flows;
};

Interconnect::Interconnect(arch::TopologyConfig config, BytesPerSecond device_hbm_bandwidth,
                           Picoseconds collective_latency)
    : config_(std::move(config)),
      device_hbm_bandwidth_(device_hbm_bandwidth),
      collective_latency_(collective_latency) {}

Interconnect::~Interconnect() = default;

StatusOr<std::unique_ptr<Interconnect>> Interconnect::Create(const arch::TopologyConfig& topology,
                                                             const arch::ChipConfig& chip) {
  // Each device is one TensorCore with its share of the chip's HBM, as in
  // chip::Hbm (sim/chip/memory.cc).
  const BytesPerSecond device_hbm(
      std::max<int64_t>(1, chip.hbm.bandwidth.value() / std::max<int64_t>(1, chip.tensorcores_per_chip)));
  std::unique_ptr<Interconnect> interconnect(new Interconnect(topology, device_hbm, chip.ici.collective_latency));
  // The time-0 network now: an impossible topology is an error of Create.
  TPUSIM_ASSIGN_OR_RETURN(Topology built, Topology::Build(topology, chip.ici));
  interconnect->networks_.emplace(0, std::make_unique<Network>(std::move(built)));
  return interconnect;
}

StatusOr<const Interconnect::Network*> Interconnect::NetworkAt(Picoseconds at) const {
  // Faults at time 0 are part of the built network; later ones apply to
  // collectives that start at or after their time. The set active at `at` is
  // determined by how many there are, as each fault's time is fixed.
  size_t active = 0;
  for (const arch::LinkFault& f : config_.faults) active += f.at.value() > 0 && f.at <= at;
  for (const arch::ChipFault& f : config_.chip_faults) active += f.at.value() > 0 && f.at <= at;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = networks_.find(active);
  if (found != networks_.end()) return found->second.get();
  auto network = std::make_unique<Network>(networks_.at(0)->topology.AtTime(at));
  const Network* result = network.get();
  networks_.emplace(active, std::move(network));
  return result;
}

const Topology& Interconnect::topology() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return networks_.at(0)->topology;  // Create built it
}

int64_t Interconnect::link_count() const {
  return static_cast<int64_t>(topology().links().size());
}

std::string Interconnect::LinkName(int32_t link) const {
  const std::span<const Link> links = topology().links();
  if (link < 0 || static_cast<size_t>(link) >= links.size()) return "link " + std::to_string(link);
  return links[link].label;
}

std::pair<int64_t, int64_t> Interconnect::LinkEnds(int32_t link) const {
  const std::span<const Link> links = topology().links();
  if (link < 0 || static_cast<size_t>(link) >= links.size()) return {-1, -1};
  return {links[link].from, links[link].to};
}

std::vector<std::string> Interconnect::NodeNames() const {
  std::vector<std::string> names;
  for (NodeId node = 0; node < topology().node_count(); ++node) names.push_back(topology().NodeName(node));
  return names;
}

BytesPerSecond Interconnect::LinkBandwidth(int32_t link) const {
  const std::span<const Link> links = topology().links();
  if (link < 0 || static_cast<size_t>(link) >= links.size()) return BytesPerSecond(0);
  return links[link].bandwidth;
}

std::string Interconnect::Describe() const { return topology().Describe(); }

int64_t Interconnect::devices_per_chip() const { return topology().devices_per_chip(); }

int64_t Interconnect::device_count() const {
  return topology().chip_count() * topology().devices_per_chip();
}

Picoseconds Interconnect::OnChipCopy(int64_t bytes) const {
  // ASSUMPTION (docs/interconnect.md): no die-to-die bandwidth is published;
  // the copy reads and writes every byte at the device's HBM bandwidth.
  const auto picoseconds = static_cast<int64_t>(std::ceil(
      2.0 * static_cast<double>(bytes) * 1e12 / static_cast<double>(device_hbm_bandwidth_.value())));
  return Picoseconds(picoseconds);
}

StatusOr<CollectiveTiming> Interconnect::Time(const Collective& collective) const {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<CollectiveTiming> timings,
                          TimeConcurrent(std::span<const Collective>(&collective, 1)));
  return std::move(timings.front());
}

StatusOr<Algorithm> Interconnect::AppendFlows(const Network& network, const Collective& collective,
                                              std::vector<Flow>& batch) const {
  TPUSIM_ASSIGN_OR_RETURN(const ChipCollective chips, ResolveDevices(network.topology, collective));
  TPUSIM_ASSIGN_OR_RETURN(CollectivePlan plan, PlanCollective(network.topology, network.router,
                                                              chips, collective.algorithm));
  const int32_t shift = static_cast<int32_t>(batch.size());
  for (Flow& flow : plan.flows) {
    for (int32_t& a : flow.after) a += shift;
    // No byte moves before the participants have synchronised and set up
    // their DMA descriptors.
    flow.earliest = flow.earliest + collective_latency_;
    // Two devices of one chip: no link to cross. FlowNetwork finishes a
    // flow without a route once ready and its extra latency has passed, so
    // the copy time goes there.
    if (flow.src == flow.dst && flow.bytes > 0) {
      flow.extra_latency = flow.extra_latency + OnChipCopy(flow.bytes);
    }
    batch.push_back(std::move(flow));
  }
  return plan.algorithm;
}

StatusOr<std::vector<CollectiveTiming>> Interconnect::TimeConcurrent(
    std::span<const Collective> collectives) const {
  std::vector<CollectiveTiming> timings(collectives.size());
  if (collectives.empty()) return timings;
  Picoseconds earliest = collectives.front().start;
  for (const Collective& c : collectives) earliest = std::min(earliest, c.start);
  TPUSIM_ASSIGN_OR_RETURN(const Network* network, NetworkAt(earliest));

  // One batch: each collective's flows follow the previous ones.
  std::vector<Flow> batch;
  std::vector<size_t> first(collectives.size() + 1, 0);
  std::vector<Algorithm> algorithms;
  for (size_t i = 0; i < collectives.size(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(const Algorithm algorithm,
                            AppendFlows(*network, collectives[i], batch));
    algorithms.push_back(algorithm);
    first[i + 1] = batch.size();
  }
  TPUSIM_ASSIGN_OR_RETURN(const FlowNetworkResult result, network->flows.Run(batch));
  const std::vector<int32_t> flows_on_link = FlowsOnLink(network->topology, batch);
  for (size_t i = 0; i < collectives.size(); ++i) {
    timings[i] = Summarize(network->topology, batch, result, first[i], first[i + 1],
                           collectives[i].start, collective_latency_, flows_on_link);
    timings[i].algorithm = algorithms[i];
  }
  return timings;
}

/// The flows of the collectives in flight, as they stand at the latest join:
/// flows of finished collectives are dropped, the others resumed
/// (FlowNetwork::RunUntil, ResumeAt), so a join costs what is in flight.
class Interconnect::Session final : public NetworkSession {
 public:
  explicit Session(const Interconnect& interconnect) : interconnect_(interconnect) {}

  StatusOr<Joined> Join(const Collective& collective) override {
    const Picoseconds t = collective.start;
    if (!members_.empty()) {
      if (t < at_) return InvalidArgument("a collective joined the network before an earlier one");
      TPUSIM_ASSIGN_OR_RETURN(const std::vector<FlowSnapshot> snapshot,
                              network_->flows.RunUntil(batch_, t));
      batch_ = ResumeAt(batch_, snapshot, t);
      DropFinished(snapshot, t);
    }
    at_ = t;
    // An idle network takes the faults active now.
    if (members_.empty()) {
      TPUSIM_ASSIGN_OR_RETURN(network_, interconnect_.NetworkAt(t));
    }
    std::vector<Flow> batch = batch_;
    TPUSIM_ASSIGN_OR_RETURN(const Algorithm algorithm,
                            interconnect_.AppendFlows(*network_, collective, batch));
    TPUSIM_ASSIGN_OR_RETURN(const FlowNetworkResult result, network_->flows.Run(batch));
    batch_ = std::move(batch);
    members_.push_back({joins_++, batch_.size(), t});
    const size_t first = members_.size() == 1 ? 0 : members_[members_.size() - 2].last;
    Joined joined;
    joined.timing = Summarize(network_->topology, batch_, result, first, batch_.size(), t,
                              interconnect_.collective_latency_,
                              FlowsOnLink(network_->topology, batch_));
    joined.timing.algorithm = algorithm;
    size_t begin = 0;
    for (const Member& member : members_) {
      Picoseconds end = member.start;
      for (size_t f = begin; f < member.last; ++f) end = std::max(end, result.flows[f].finish);
      joined.ends.emplace_back(member.id, end);
      begin = member.last;
    }
    return joined;
  }

 private:
  /// A collective in flight: its join number, the end of its flows in
  /// batch_ (they follow the previous member's), its start.
  struct Member {
    size_t id = 0;
    size_t last = 0;
    Picoseconds start;
  };

  /// Removes the members whose flows had all arrived by `t`; their flows
  /// depend on nothing outside their member, so the others' `after` shift.
  void DropFinished(const std::vector<FlowSnapshot>& at, Picoseconds t) {
    std::vector<Flow> kept;
    std::vector<Member> members;
    size_t begin = 0;
    for (const Member& member : members_) {
      bool finished = true;
      for (size_t f = begin; f < member.last && finished; ++f) {
        finished = at[f].stage == FlowSnapshot::Stage::kSent && at[f].finish <= t;
      }
      if (!finished) {
        const auto shift = static_cast<int32_t>(begin) - static_cast<int32_t>(kept.size());
        for (size_t f = begin; f < member.last; ++f) {
          Flow& flow = kept.emplace_back(std::move(batch_[f]));
          for (int32_t& a : flow.after) a -= shift;
        }
        members.push_back({member.id, kept.size(), member.start});
      }
      begin = member.last;
    }
    batch_ = std::move(kept);
    members_ = std::move(members);
  }

  const Interconnect& interconnect_;
  const Network* network_ = nullptr;  ///< with the faults active when it was last idle
  std::vector<Flow> batch_;           ///< the members' flows, as they stand at at_
  std::vector<Member> members_;       ///< in join order
  Picoseconds at_;                    ///< the latest join
  size_t joins_ = 0;
};

std::unique_ptr<NetworkSession> Interconnect::NewSession() const {
  return std::make_unique<Session>(*this);
}

}  // namespace tpusim::ici
