#include "sim/ici/topology.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/arith.h"

namespace tpusim::ici {

namespace {

/// DCN figures when the scenario gives none. Bandwidth: TPU v5p's 50 Gb/s per
/// chip [GC-v5p; SB: 6.25e9 B/s] (tpu-facts section 2). Latency: no figure is
/// published (tpu-facts section 9); ASSUMPTION: 10 us, ten ICI hops, for the
/// TPU -> PCIe -> host NIC -> network -> host -> PCIe -> HBM path [Q SB].
constexpr int64_t kDefaultDcnBytesPerSecond = 6'250'000'000;
constexpr int64_t kDefaultDcnLatencyPs = 10'000'000;

std::string AxisName(int64_t axis) {
  static constexpr const char* kNames[] = {"x", "y", "z", "w"};
  return axis < 4 ? kNames[axis] : "a" + std::to_string(axis);
}

std::string FormatCoordinates(const std::vector<int64_t>& c) {
  std::string s = "(";
  for (size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + ")";
}

/// "45 GB/s", "6.25 GB/s": decimal gigabytes, at most three decimals.
std::string FormatBandwidth(BytesPerSecond b) {
  return FormatSignificant(static_cast<double>(b.value()) / 1e9, 3) + " GB/s";
}

std::string FormatLatency(Picoseconds t) {
  return FormatSignificant(static_cast<double>(t.value()) / 1e6, 4) + " us";
}

std::string JoinDims(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

}  // namespace

/// Builds each kind of graph into a Topology; a friend so that the Topology's
/// tables are filled in one place.
class TopologyBuilder {
 public:
  TopologyBuilder(const arch::TopologyConfig& config, const arch::IciConfig& ici)
      : config_(config),
        raw_bandwidth_(config.link_bandwidth.value_or(ici.bandwidth_per_link_per_direction)),
        efficiency_percent_(ici.efficiency_percent),
        // Exact floor of raw x percent / 100, without the product's overflow.
        bandwidth_(raw_bandwidth_.value() / 100 * efficiency_percent_ +
                   raw_bandwidth_.value() % 100 * efficiency_percent_ / 100),
        hop_latency_(config.hop_latency.value_or(ici.hop_latency)),
        switch_latency_(config.switch_latency.value_or(hop_latency_)),
        injection_(SatMul(bandwidth_.value(), std::max<int64_t>(ici.links, 1))) {}

  StatusOr<Topology> Build() {
    if (bandwidth_.value() <= 0) {
      // What the user gave, and what the efficiency made of it.
      return Error("link_bandwidth",
                   std::to_string(raw_bandwidth_.value()) + "B/s at the chip's " +
                       std::to_string(efficiency_percent_) + "% ICI efficiency leaves " +
                       std::to_string(bandwidth_.value()) + "B/s; it must leave at least 1B/s");
    }
    t_.config_ = config_;
    t_.kind_ = config_.kind;
    switch (config_.kind) {
      case arch::TopologyKind::kTorus:
      case arch::TopologyKind::kMesh:
      case arch::TopologyKind::kTwistedTorus:
        TPUSIM_RETURN_IF_ERROR(BuildGrid());
        break;
      case arch::TopologyKind::kFatTree:
        TPUSIM_RETURN_IF_ERROR(BuildFatTree());
        break;
      case arch::TopologyKind::kSwitch:
        TPUSIM_RETURN_IF_ERROR(BuildSwitch());
        break;
      case arch::TopologyKind::kMultiSlice:
        TPUSIM_RETURN_IF_ERROR(BuildMultiSlice());
        break;
      case arch::TopologyKind::kGraph:
        TPUSIM_RETURN_IF_ERROR(BuildGraph());
        break;
    }
    t_.chip_down_.assign(static_cast<size_t>(t_.chip_count_), false);
    if (t_.dcn_up_.empty()) {
      t_.dcn_up_.assign(static_cast<size_t>(t_.chip_count_), -1);
      t_.dcn_down_.assign(static_cast<size_t>(t_.chip_count_), -1);
    }
    TPUSIM_RETURN_IF_ERROR(BuildDeviceAssignment());
    TPUSIM_RETURN_IF_ERROR(CheckFaults());
    TPUSIM_RETURN_IF_ERROR(t_.ApplyFaults(Picoseconds(-1), Picoseconds(0)));
    const int64_t per_chip = t_.devices_per_chip();
    t_.describe_ +=
        ", " + std::to_string(t_.chip_count_) + " chips, " +
        (per_chip == 1 ? "" : std::to_string(per_chip) + " devices per chip, ") +
        std::to_string(t_.links_.size()) + " links, " + FormatBandwidth(bandwidth_) +
        "/link one-way" +
        (efficiency_percent_ == 100 ? ""
                                    : " (" + std::to_string(efficiency_percent_) + "% of " +
                                          FormatBandwidth(raw_bandwidth_) + ")") +
        ", " + FormatLatency(hop_latency_) + "/hop";
    return std::move(t_);
  }

 private:
  /// An error in `part` of the config, located where its YAML form wrote it.
  Status Error(const std::string& part, const std::string& message) const {
    return arch::TopologyError(config_, part, message);
  }

  /// Fat trees and switches join each chip by all its links at once: their
  /// bandwidth together must be a number.
  Status CheckInjection() const {
    if (injection_.value() < kInt64Max) return Status::Ok();
    return Error("link_bandwidth", "a chip's links together carry over 2^63 B/s into a switch (" +
                                       FormatBandwidth(bandwidth_) + " each)");
  }

  void SetNodes(int64_t chips, int64_t nodes) {
    t_.chip_count_ = chips;
    t_.node_count_ = nodes;
    t_.out_links_.assign(static_cast<size_t>(nodes), {});
  }

  LinkId AddLink(NodeId from, NodeId to, BytesPerSecond bandwidth, Picoseconds latency,
                 std::string label) {
    const auto id = static_cast<LinkId>(t_.links_.size());
    t_.links_.push_back(Link{from, to, bandwidth, latency, true, std::move(label)});
    t_.out_links_[static_cast<size_t>(from)].push_back(id);
    return id;
  }

  /// Torus, mesh and twisted torus. Axis 0 varies fastest in chip ids.
  Status BuildGrid() {
    const std::vector<int64_t>& dims = config_.dims;
    const std::string kind_name = config_.kind == arch::TopologyKind::kMesh ? "mesh"
                                  : config_.kind == arch::TopologyKind::kTwistedTorus
                                      ? "twisted torus"
                                      : "torus";
    if (dims.empty()) return Error("dims", kind_name + " needs at least one dimension");
    if (std::ssize(dims) > arch::kMaxGridDims) {
      return Error("dims", "a " + kind_name + " has at most " +
                               std::to_string(arch::kMaxGridDims) + " dimensions, got " +
                               std::to_string(dims.size()));
    }
    int64_t chips = 1;
    for (int64_t d : dims) {
      if (d <= 0) {
        return Error("dims", "every dimension must be positive, got " + JoinDims(dims));
      }
      if (chips > (int64_t{1} << 24) / d) {
        return Error("dims", kind_name + " " + JoinDims(dims) + " has more than 16777216 chips");
      }
      chips *= d;
    }
    if (config_.tpu_wraparound) {
      return Error("wraparound",
                   "'tpu' is unresolved: apply arch::ResolveChipDefaults with the chip preset "
                   "first");
    }
    const size_t rank = dims.size();
    std::vector<bool> wrap(rank, config_.kind != arch::TopologyKind::kMesh);
    if (config_.kind == arch::TopologyKind::kTorus && !config_.wraparound.empty()) {
      if (config_.wraparound.size() != rank) {
        return Error("wraparound", std::to_string(config_.wraparound.size()) + " entries for " +
                                       std::to_string(rank) + " dimensions");
      }
      wrap = config_.wraparound;
    }
    // Twisted torus (TPU v4 paper; Camara et al.): the shorter axes' wraparound
    // links move by half the longer axis length along every longer axis.
    int64_t shortest = *std::min_element(dims.begin(), dims.end());
    int64_t longest = *std::max_element(dims.begin(), dims.end());
    if (config_.kind == arch::TopologyKind::kTwistedTorus) {
      const bool ok = rank == 3 && longest == 2 * shortest &&
                      std::all_of(dims.begin(), dims.end(),
                                  [&](int64_t d) { return d == shortest || d == longest; });
      if (!ok) {
        return Error("dims",
                     "twisted torus needs 2A=B=C or 2A=2B=C (e.g. 4x4x8, 4x8x8), got " +
                         JoinDims(dims));
      }
    }
    const bool twisted = config_.kind == arch::TopologyKind::kTwistedTorus;
    SetNodes(chips, chips);
    t_.grid_.dims = dims;
    t_.grid_.twisted = twisted;
    t_.grid_.wraparound.assign(rank, false);
    for (size_t a = 0; a < rank; ++a) t_.grid_.wraparound[a] = wrap[a] && dims[a] >= 3;
    t_.grid_links_.assign(static_cast<size_t>(chips) * rank * 2, -1);

    std::vector<int64_t> stride(rank, 1);
    for (size_t a = 1; a < rank; ++a) stride[a] = stride[a - 1] * dims[a - 1];
    for (NodeId chip = 0; chip < chips; ++chip) {
      const std::vector<int64_t> c = t_.Coordinates(chip);
      for (size_t a = 0; a < rank; ++a) {
        for (int dir = 0; dir < 2; ++dir) {
          std::vector<int64_t> n = c;
          const int64_t step = dir == 0 ? 1 : -1;
          n[a] += step;
          if (n[a] < 0 || n[a] >= dims[a]) {
            if (!t_.grid_.wraparound[a]) continue;
            n[a] = (n[a] + dims[a]) % dims[a];
            if (twisted && dims[a] == shortest) {
              for (size_t b = 0; b < rank; ++b) {
                if (dims[b] == longest) n[b] = (n[b] + longest / 2) % longest;
              }
            }
          }
          NodeId to = 0;
          for (size_t b = 0; b < rank; ++b) to += static_cast<NodeId>(n[b] * stride[b]);
          const std::string label = AxisName(static_cast<int64_t>(a)) + (dir == 0 ? "+ " : "- ") +
                                    FormatCoordinates(c) + "->" + FormatCoordinates(n);
          t_.grid_links_[(static_cast<size_t>(chip) * rank + a) * 2 + static_cast<size_t>(dir)] =
              AddLink(chip, to, bandwidth_, hop_latency_, label);
        }
      }
    }
    t_.describe_ = kind_name + " " + JoinDims(dims);
    std::string wrapped;
    for (size_t a = 0; a < rank; ++a) {
      if (t_.grid_.wraparound[a]) wrapped += (wrapped.empty() ? "" : ",") + AxisName(int64_t(a));
    }
    t_.describe_ +=
        wrapped.empty()
            ? " (no wraparound)"
            : std::string(twisted ? " (twisted wraparound " : " (wraparound ") + wrapped + ")";
    return Status::Ok();
  }

  /// k-ary n-tree: arity = radix / 2 down and up ports per switch.
  Status BuildFatTree() {
    const int64_t radix = config_.fat_tree_radix;
    const int64_t levels = config_.fat_tree_levels;
    if (radix < 2 || radix % 2 != 0) {
      return Error("radix", "fat tree needs an even switch radix >= 2, got " +
                                std::to_string(radix));
    }
    if (levels < 1) {
      return Error("levels", "fat tree needs at least 1 level, got " + std::to_string(levels));
    }
    if (levels > arch::kMaxFatTreeLevels) {
      return Error("levels", "a fat tree has at most " + std::to_string(arch::kMaxFatTreeLevels) +
                                 " levels, got " + std::to_string(levels));
    }
    if (!(config_.oversubscription >= 1.0)) {
      return Error("oversubscription", "must be at least 1");
    }
    TPUSIM_RETURN_IF_ERROR(CheckInjection());
    const int64_t k = radix / 2;
    int64_t chips = 1;
    for (int64_t l = 0; l < levels; ++l) {
      if (chips > (int64_t{1} << 24) / k) {
        return Error("levels", "fat tree: (radix/2)^levels exceeds 16777216 chips");
      }
      chips *= k;
    }
    const int64_t per_level = chips / k;
    SetNodes(chips, chips + levels * per_level);
    FatTreeShape& ft = t_.fat_tree_;
    ft.arity = k;
    ft.levels = levels;
    ft.switches_per_level = per_level;
    auto switch_node = [&](int64_t level, int64_t s) {
      return static_cast<NodeId>(chips + level * per_level + s);
    };
    auto switch_name = [](int64_t level, int64_t s) {
      return "L" + std::to_string(level) + "s" + std::to_string(s);
    };
    const BytesPerSecond uplink(
        static_cast<int64_t>(static_cast<double>(injection_.value()) / config_.oversubscription));
    if (uplink.value() <= 0)
      return Error("oversubscription", "leaves the uplinks no bandwidth");
    for (NodeId c = 0; c < chips; ++c) {
      const NodeId leaf = switch_node(0, c / k);
      ft.chip_up.push_back(AddLink(c, leaf, injection_, switch_latency_,
                                   "chip" + std::to_string(c) + "->" + switch_name(0, c / k)));
      ft.chip_down.push_back(AddLink(leaf, c, injection_, Picoseconds(0),
                                     switch_name(0, c / k) + "->chip" + std::to_string(c)));
    }
    int64_t digit = 1;  // k^l: the weight of base-k digit l of a switch index
    for (int64_t l = 0; l + 1 < levels; ++l, digit *= k) {
      std::vector<LinkId> up(static_cast<size_t>(per_level * k), -1);
      std::vector<LinkId> down(static_cast<size_t>(per_level * k), -1);
      for (int64_t s = 0; s < per_level; ++s) {
        const int64_t own_digit = (s / digit) % k;
        for (int64_t j = 0; j < k; ++j) {
          const int64_t parent = s + (j - own_digit) * digit;
          up[static_cast<size_t>(s * k + j)] =
              AddLink(switch_node(l, s), switch_node(l + 1, parent), uplink, switch_latency_,
                      switch_name(l, s) + "->" + switch_name(l + 1, parent));
          down[static_cast<size_t>(parent * k + own_digit)] =
              AddLink(switch_node(l + 1, parent), switch_node(l, s), uplink, switch_latency_,
                      switch_name(l + 1, parent) + "->" + switch_name(l, s));
        }
      }
      ft.up.push_back(std::move(up));
      ft.down.push_back(std::move(down));
    }
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%g", config_.oversubscription);
    t_.describe_ = "fat tree radix " + std::to_string(radix) + ", " + std::to_string(levels) +
                   " levels, oversubscription " + ratio + ":1, " + FormatBandwidth(injection_) +
                   " injection, switch " + FormatLatency(switch_latency_);
    return Status::Ok();
  }

  Status BuildSwitch() {
    if (config_.dims.size() != 1 || config_.dims[0] <= 0 || config_.dims[0] > (int64_t{1} << 24)) {
      return Error("chips", "switch needs a chip count between 1 and 16777216");
    }
    TPUSIM_RETURN_IF_ERROR(CheckInjection());
    const int64_t chips = config_.dims[0];
    SetNodes(chips, chips + 1);
    const auto sw = static_cast<NodeId>(chips);
    for (NodeId c = 0; c < chips; ++c) {
      AddLink(c, sw, injection_, switch_latency_, "chip" + std::to_string(c) + "->switch");
      AddLink(sw, c, injection_, Picoseconds(0), "switch->chip" + std::to_string(c));
    }
    t_.describe_ =
        "switch, " + FormatBandwidth(injection_) + " injection, " + FormatLatency(switch_latency_);
    return Status::Ok();
  }

  /// `slices` copies of the slice topology (chip ids slice-major), every chip
  /// also linked to one DCN switch.
  Status BuildMultiSlice() {
    if (config_.slices < 1) {
      return Error("slices", "multi-slice needs at least 1 slice, got " +
                                 std::to_string(config_.slices));
    }
    StatusOr<arch::TopologyConfig> slice_config =
        arch::ParseTopologyShortForm(config_.slice_topology_text);
    if (!slice_config.ok()) return Error("slice", slice_config.status().message());
    if (slice_config->kind != arch::TopologyKind::kTorus &&
        slice_config->kind != arch::TopologyKind::kMesh &&
        slice_config->kind != arch::TopologyKind::kTwistedTorus) {
      return Error("slice", "must be a torus, mesh or twisted torus, got " +
                                Quote(config_.slice_topology_text));
    }
    slice_config->link_bandwidth = bandwidth_;
    slice_config->hop_latency = hop_latency_;
    TopologyBuilder inner(*slice_config, arch::IciConfig{1, bandwidth_, hop_latency_, 100, {}});
    if (const Status built = inner.BuildGrid(); !built.ok()) return Error("slice", built.message());
    const Topology& slice = inner.t_;
    const int64_t per = slice.chip_count_;
    if (per * config_.slices > (int64_t{1} << 24)) {
      return Error("slices", "multi-slice has more than 16777216 chips");
    }
    const int64_t chips = per * config_.slices;
    SetNodes(chips, chips + 1);
    t_.grid_ = slice.grid_;
    t_.slice_count_ = config_.slices;
    t_.grid_links_.assign(slice.grid_links_.size() * static_cast<size_t>(config_.slices), -1);
    for (int64_t s = 0; s < config_.slices; ++s) {
      const auto offset = static_cast<NodeId>(s * per);
      std::vector<LinkId> remap(slice.links_.size());
      for (size_t i = 0; i < slice.links_.size(); ++i) {
        const Link& l = slice.links_[i];
        remap[i] = AddLink(l.from + offset, l.to + offset, l.bandwidth, l.latency,
                           "slice" + std::to_string(s) + " " + l.label);
      }
      for (size_t i = 0; i < slice.grid_links_.size(); ++i) {
        const LinkId g = slice.grid_links_[i];
        t_.grid_links_[static_cast<size_t>(s) * slice.grid_links_.size() + i] =
            g < 0 ? -1 : remap[static_cast<size_t>(g)];
      }
    }
    const BytesPerSecond dcn =
        config_.dcn_bandwidth.value_or(BytesPerSecond(kDefaultDcnBytesPerSecond));
    const Picoseconds dcn_latency = config_.dcn_latency.value_or(Picoseconds(kDefaultDcnLatencyPs));
    if (dcn.value() <= 0) return Error("dcn_bandwidth", "must be positive");
    t_.dcn_switch_ = static_cast<NodeId>(chips);
    for (NodeId c = 0; c < chips; ++c) {
      const std::string slice_name = "slice" + std::to_string(c / per);
      t_.dcn_up_.push_back(AddLink(c, t_.dcn_switch_, dcn, dcn_latency,
                                   "dcn " + slice_name + " chip" + std::to_string(c) + "->dcn"));
      t_.dcn_down_.push_back(AddLink(t_.dcn_switch_, c, dcn, Picoseconds(0),
                                     "dcn dcn->" + slice_name + " chip" + std::to_string(c)));
    }
    t_.describe_ = std::to_string(config_.slices) + " slices of " + slice.describe_ +
                   " joined by DCN (" + FormatBandwidth(dcn) + "/chip, " +
                   FormatLatency(dcn_latency) + ")";
    return Status::Ok();
  }

  Status BuildGraph() {
    const int64_t chips = config_.graph_chips;
    if (chips < 1 || chips > (int64_t{1} << 24)) {
      return Error("chips", "graph needs between 1 and 16777216 chips, got " +
                                std::to_string(chips));
    }
    SetNodes(chips, chips);
    std::set<std::pair<int64_t, int64_t>> seen;
    for (size_t i = 0; i < config_.edges.size(); ++i) {
      const arch::LinkRef& e = config_.edges[i];
      const std::string part = "edges[" + std::to_string(i) + "]";
      const std::string name = "[" + std::to_string(e.a) + ", " + std::to_string(e.b) + "]";
      if (e.a < 0 || e.a >= chips || e.b < 0 || e.b >= chips) {
        return Error(part, name + " names a chip outside 0.." + std::to_string(chips - 1));
      }
      if (e.a == e.b) return Error(part, name + " joins a chip to itself");
      if (!seen.emplace(std::min(e.a, e.b), std::max(e.a, e.b)).second) {
        return Error(part, name + " is listed twice");
      }
      const auto a = static_cast<NodeId>(e.a);
      const auto b = static_cast<NodeId>(e.b);
      AddLink(a, b, bandwidth_, hop_latency_, std::to_string(a) + "->" + std::to_string(b));
      AddLink(b, a, bandwidth_, hop_latency_, std::to_string(b) + "->" + std::to_string(a));
    }
    // Connected? (breadth-first from chip 0)
    std::vector<bool> reached(static_cast<size_t>(chips), false);
    std::deque<NodeId> queue{0};
    reached[0] = true;
    int64_t count = 1;
    while (!queue.empty()) {
      const NodeId n = queue.front();
      queue.pop_front();
      for (LinkId l : t_.out_links_[static_cast<size_t>(n)]) {
        const NodeId to = t_.links_[static_cast<size_t>(l)].to;
        if (!reached[static_cast<size_t>(to)]) {
          reached[static_cast<size_t>(to)] = true;
          ++count;
          queue.push_back(to);
        }
      }
    }
    if (count != chips) {
      const auto it = std::find(reached.begin(), reached.end(), false);
      return Error("edges", "graph is disconnected: chip " +
                                std::to_string(it - reached.begin()) + " cannot reach chip 0");
    }
    t_.describe_ = "graph of " + std::to_string(config_.edges.size()) + " edges";
    return Status::Ok();
  }

  Status BuildDeviceAssignment() {
    const std::vector<int64_t>& assignment = config_.device_assignment;
    const int64_t per_chip = t_.devices_per_chip();
    if (per_chip < 1 || per_chip > arch::kMaxDevicesPerChip) {
      return Error("devices_per_chip", "must be between 1 and " +
                                           std::to_string(arch::kMaxDevicesPerChip) + ", got " +
                                           std::to_string(per_chip));
    }
    const int64_t devices = t_.chip_count_ * per_chip;
    if (assignment.empty()) {
      for (int64_t d = 0; d < devices; ++d) t_.device_chip_.push_back(static_cast<NodeId>(d / per_chip));
      return Status::Ok();
    }
    if (static_cast<int64_t>(assignment.size()) != devices) {
      return Error("device_assignment",
                   "has " + std::to_string(assignment.size()) + " entries for " +
                       std::to_string(t_.chip_count_) + " chips" +
                       (per_chip == 1 ? ""
                                      : " x " + std::to_string(per_chip) + " devices per chip"));
    }
    std::vector<int64_t> held(static_cast<size_t>(t_.chip_count_), 0);  ///< devices per chip so far
    for (size_t d = 0; d < assignment.size(); ++d) {
      const int64_t chip = assignment[d];
      if (chip < 0 || chip >= t_.chip_count_ || held[static_cast<size_t>(chip)] == per_chip) {
        return Error(
            "device_assignment[" + std::to_string(d) + "]",
            (per_chip == 1 ? "not a permutation of 0.." + std::to_string(t_.chip_count_ - 1)
                           : "must name each chip 0.." + std::to_string(t_.chip_count_ - 1) +
                                 " exactly " + std::to_string(per_chip) + " times") +
                ": entry " + std::to_string(d) + " is " + std::to_string(chip));
      }
      ++held[static_cast<size_t>(chip)];
      t_.device_chip_.push_back(static_cast<NodeId>(chip));
    }
    return Status::Ok();
  }

  /// Every fault names something that exists, whatever its time.
  Status CheckFaults() {
    for (size_t i = 0; i < config_.faults.size(); ++i) {
      const arch::LinkFault& f = config_.faults[i];
      const std::string part = "faults[" + std::to_string(i) + "]";
      if (!(f.bandwidth_fraction >= 0.0 && f.bandwidth_fraction < 1.0)) {
        return Error(part + ".bandwidth", "must be in [0, 1)");
      }
      if (f.at.value() < 0) return Error(part + ".at", "time must not be negative");
      bool found = false;
      if (f.link.a >= 0 && f.link.a < t_.node_count_) {
        for (LinkId l : t_.out_links_[static_cast<size_t>(f.link.a)]) {
          found = found || t_.links_[static_cast<size_t>(l)].to == f.link.b;
        }
      }
      if (!found) {
        return Error(part + ".link", "no link joins nodes " + std::to_string(f.link.a) + " and " +
                                         std::to_string(f.link.b));
      }
    }
    for (size_t i = 0; i < config_.chip_faults.size(); ++i) {
      const arch::ChipFault& f = config_.chip_faults[i];
      const std::string part = "chip_faults[" + std::to_string(i) + "]";
      if (f.chip < 0 || f.chip >= t_.chip_count_) {
        return Error(part + ".chip", "chip " + std::to_string(f.chip) + " does not exist (0.." +
                                         std::to_string(t_.chip_count_ - 1) + ")");
      }
      if (f.at.value() < 0) return Error(part + ".at", "time must not be negative");
    }
    // Slowdowns are per logical device: chips x devices_per_chip of them.
    const auto devices = static_cast<int64_t>(t_.device_chip_.size());
    for (size_t i = 0; i < config_.slow_devices.size(); ++i) {
      const arch::SlowDevice& d = config_.slow_devices[i];
      const std::string part = "slow_devices[" + std::to_string(i) + "]";
      if (d.device < 0 || d.device >= devices) {
        return Error(part + ".device", "device " + std::to_string(d.device) +
                                           " does not exist (0.." + std::to_string(devices - 1) +
                                           ")");
      }
      if (!(d.factor >= 1.0)) return Error(part + ".factor", "must be at least 1");
    }
    return Status::Ok();
  }

  const arch::TopologyConfig& config_;
  const BytesPerSecond raw_bandwidth_;  ///< as the preset or topology states it
  const int64_t efficiency_percent_;
  const BytesPerSecond bandwidth_;      ///< what payload reaches: the links' bandwidth
  const Picoseconds hop_latency_;
  const Picoseconds switch_latency_;
  const BytesPerSecond injection_;  ///< a chip's links x per-link bandwidth, into a switch
  Topology t_;
};

StatusOr<Topology> Topology::Build(const arch::TopologyConfig& config, const arch::IciConfig& ici) {
  return TopologyBuilder(config, ici).Build();
}

int64_t Topology::chip_count() const { return chip_count_; }
int64_t Topology::node_count() const { return node_count_; }
std::span<const Link> Topology::links() const { return links_; }
std::span<const LinkId> Topology::out_links(NodeId node) const {
  return out_links_[static_cast<size_t>(node)];
}
const GridShape& Topology::grid() const { return grid_; }

std::string Topology::NodeName(NodeId node) const {
  if (node >= chip_count()) return "switch " + std::to_string(node - chip_count());
  if (grid_.dims.empty()) return "chip " + std::to_string(node);
  const std::string coordinates = FormatCoordinates(Coordinates(node));
  return slice_count() > 1 ? "slice " + std::to_string(SliceOf(node)) + " " + coordinates : coordinates;
}

std::vector<int64_t> Topology::Coordinates(NodeId chip) const {
  std::vector<int64_t> c;
  int64_t rest = chip % chips_per_slice();
  for (int64_t d : grid_.dims) {
    c.push_back(rest % d);
    rest /= d;
  }
  return c;
}

int64_t Topology::SliceOf(NodeId chip) const { return chip / chips_per_slice(); }

StatusOr<NodeId> Topology::ChipOfDevice(int64_t device) const {
  if (device < 0 || device >= static_cast<int64_t>(device_chip_.size())) {
    return InvalidArgument("device " + std::to_string(device) + " does not exist (0.." +
                           std::to_string(device_chip_.size() - 1) + ")");
  }
  return device_chip_[static_cast<size_t>(device)];
}

std::string Topology::Describe() const { return describe_; }

LinkId Topology::GridLink(NodeId chip, int64_t axis, bool positive) const {
  const auto rank = static_cast<int64_t>(grid_.dims.size());
  if (axis < 0 || axis >= rank) return -1;
  return grid_links_[static_cast<size_t>((chip * rank + axis) * 2 + (positive ? 0 : 1))];
}

Status Topology::FailLink(NodeId a, NodeId b) { return DegradeLink(a, b, 0.0); }

Status Topology::DegradeLink(NodeId a, NodeId b, double bandwidth_fraction) {
  if (!(bandwidth_fraction >= 0.0 && bandwidth_fraction <= 1.0)) {
    return InvalidArgument("link bandwidth fraction must be in [0, 1]");
  }
  bool found = false;
  for (Link& l : links_) {
    if ((l.from == a && l.to == b) || (l.from == b && l.to == a)) {
      found = true;
      if (bandwidth_fraction == 0.0) {
        l.up = false;
      } else {
        l.bandwidth = BytesPerSecond(std::max<int64_t>(
            1,
            static_cast<int64_t>(static_cast<double>(l.bandwidth.value()) * bandwidth_fraction)));
      }
    }
  }
  if (!found) {
    return InvalidArgument("no link between nodes " + std::to_string(a) + " and " +
                           std::to_string(b));
  }
  return Status::Ok();
}

Status Topology::FailChip(NodeId chip) {
  if (chip < 0 || chip >= chip_count_) {
    return InvalidArgument("chip " + std::to_string(chip) + " does not exist");
  }
  chip_down_[static_cast<size_t>(chip)] = true;
  for (Link& l : links_) {
    if (l.from == chip || l.to == chip) l.up = false;
  }
  return Status::Ok();
}

Status Topology::ApplyFaults(Picoseconds from, Picoseconds to) {
  for (const arch::LinkFault& f : config_.faults) {
    if (f.at > from && f.at <= to) {
      TPUSIM_RETURN_IF_ERROR(DegradeLink(static_cast<NodeId>(f.link.a),
                                         static_cast<NodeId>(f.link.b), f.bandwidth_fraction));
    }
  }
  for (const arch::ChipFault& f : config_.chip_faults) {
    if (f.at > from && f.at <= to) TPUSIM_RETURN_IF_ERROR(FailChip(static_cast<NodeId>(f.chip)));
  }
  return Status::Ok();
}

Topology Topology::AtTime(Picoseconds t) const {
  Topology copy = *this;
  // Build checked every fault, so applying them cannot fail.
  (void)copy.ApplyFaults(Picoseconds(0), t);
  return copy;
}

}  // namespace tpusim::ici
