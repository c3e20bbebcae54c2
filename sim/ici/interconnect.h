// The interconnect as the SPMD timing runtime sees it: an HLO collective,
// resolved to participating devices and a byte count, goes in; its duration,
// the algorithm that ran, and the bytes it put on each link come out.
//
// CONTRACT between sim/ici (implements Interconnect) and sim/timing (calls
// it through CollectiveTimer). Change it only together with both.
#ifndef TPUSIM_SIM_ICI_INTERCONNECT_H_
#define TPUSIM_SIM_ICI_INTERCONNECT_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/topology_config.h"
#include "sim/base/status.h"
#include "sim/base/units.h"

namespace tpusim::ici {

class Topology;
struct Flow;

enum class CollectiveKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kRaggedAllToAll,
  kCollectivePermute,
  kCollectiveBroadcast,
  kSendRecv,
};
/// "all-reduce", ...; inline so that sim/timing, which links only this header,
/// names kinds the same way.
inline std::string_view CollectiveKindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return "all-reduce";
    case CollectiveKind::kAllGather: return "all-gather";
    case CollectiveKind::kReduceScatter: return "reduce-scatter";
    case CollectiveKind::kAllToAll: return "all-to-all";
    case CollectiveKind::kRaggedAllToAll: return "ragged-all-to-all";
    case CollectiveKind::kCollectivePermute: return "collective-permute";
    case CollectiveKind::kCollectiveBroadcast: return "collective-broadcast";
    case CollectiveKind::kSendRecv: return "send-recv";
  }
  return "unknown";
}

/// Every collective kind, for parsing and listing their names.
inline constexpr std::array<CollectiveKind, 8> kCollectiveKinds = {
    CollectiveKind::kAllReduce,         CollectiveKind::kAllGather,
    CollectiveKind::kReduceScatter,     CollectiveKind::kAllToAll,
    CollectiveKind::kRaggedAllToAll,    CollectiveKind::kCollectivePermute,
    CollectiveKind::kCollectiveBroadcast, CollectiveKind::kSendRecv,
};
/// Parses CollectiveKindName's spellings; kInvalidArgument listing them otherwise.
StatusOr<CollectiveKind> ParseCollectiveKind(std::string_view name);

enum class Algorithm : uint8_t {
  kAuto,               ///< what a TPU runtime would pick (docs/interconnect.md)
  kRing,               ///< unidirectional ring over the group
  kBidirectionalRing,  ///< two rings, half the data each way
  kTorus,              ///< per-dimension decomposition: RS along each axis, then AG back
  /// n x n torus planes: two edge-disjoint Hamiltonian cycles, each a
  /// bidirectional ring on half the data (every port busy: V/(2W) per stage)
  kHamiltonianRings,
  kTree,               ///< binary tree reduce + broadcast
  kHalvingDoubling,    ///< recursive halving-doubling
  kDirect,             ///< every pair talks directly (all-to-all, permute)
};
/// Every algorithm and its name, as users spell it (`--algorithm`, scenarios).
inline constexpr std::array<std::pair<Algorithm, std::string_view>, 8> kAlgorithmNames = {{
    {Algorithm::kAuto, "auto"},
    {Algorithm::kRing, "ring"},
    {Algorithm::kBidirectionalRing, "bidirectional-ring"},
    {Algorithm::kTorus, "torus"},
    {Algorithm::kHamiltonianRings, "hamiltonian-rings"},
    {Algorithm::kTree, "tree"},
    {Algorithm::kHalvingDoubling, "halving-doubling"},
    {Algorithm::kDirect, "direct"},
}};
/// "ring", "bidirectional-ring", ...; inline so that sim/timing, which links
/// only this header, names algorithms the same way.
inline std::string_view AlgorithmName(Algorithm algorithm) {
  for (const auto& [value, name] : kAlgorithmNames) {
    if (value == algorithm) return name;
  }
  return "unknown";
}
/// Parses AlgorithmName's spellings; kInvalidArgument listing them otherwise.
StatusOr<Algorithm> ParseAlgorithm(std::string_view name);

/// One collective instance, as every participant reached it.
struct Collective {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  /// Groups of logical device ids, each in group order (XLA's
  /// replica_groups resolved). Unused for permute and send/recv.
  std::vector<std::vector<int64_t>> groups;
  /// collective-permute and send/recv: (source, target) logical devices.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  /// V in the scaling book's sense, per group: all-gather: the gathered
  /// result; reduce-scatter: the operand before scattering; all-reduce: the
  /// operand; all-to-all: the operand of one participant; permute, broadcast,
  /// send: what one source sends.
  int64_t bytes = 0;
  /// A ragged-all-to-all's traffic, when known: per group, the bytes member i
  /// sends member j at [i * n + j] (n the group's size; the diagonal stays on
  /// the device). Empty: every member sends bytes / n to every other.
  std::vector<std::vector<int64_t>> sent_bytes;
  Algorithm algorithm = Algorithm::kAuto;
  Picoseconds start;  ///< when the last participant arrived (for time-dependent faults)
};

/// Bytes a collective put on one directed link.
struct LinkBytes {
  int32_t link = 0;
  int64_t bytes = 0;
};

struct CollectiveTiming {
  Picoseconds duration;
  Algorithm algorithm = Algorithm::kAuto;  ///< the one that ran (never kAuto)
  int64_t ici_bytes = 0;                   ///< sum over links
  int64_t max_hops = 0;                    ///< longest route any flow took
  std::vector<LinkBytes> links;            ///< links with non-zero bytes, by link id
  /// One line on what bounded it, e.g. "bandwidth-bound: 2 flows share x+ (0,0)->(1,0)".
  std::string explanation;
};

/// One network state that collectives join one after another, each at its
/// `start` (never before an earlier join's): a joining collective shares
/// links max-min fairly with the collectives still in flight, and can slow
/// them (or, rarely, speed them up).
class NetworkSession {
 public:
  virtual ~NetworkSession() = default;
  struct Joined {
    /// The joining collective's timing with the others in flight (duration
    /// from its own start).
    CollectiveTiming timing;
    /// The end (absolute) of every collective still in flight after the
    /// join, by join number (0 for the first join), in join order: this
    /// one last. A collective missing from it had ended by the join.
    std::vector<std::pair<size_t, Picoseconds>> ends;
  };
  /// Errors: those of CollectiveTimer::Time; the session is unchanged then.
  virtual StatusOr<Joined> Join(const Collective& collective) = 0;
};

/// What the timing runtime needs from an interconnect model.
class CollectiveTimer {
 public:
  virtual ~CollectiveTimer() = default;
  /// Duration of `collective` alone on the network.
  virtual StatusOr<CollectiveTiming> Time(const Collective& collective) const = 0;
  /// A network that collectives join one after another and share (see
  /// NetworkSession); the SPMD runtime keeps one per run.
  virtual std::unique_ptr<NetworkSession> NewSession() const = 0;
  /// Devices per chip: a program's devices fill whole chips.
  virtual int64_t devices_per_chip() const { return 1; }
  /// Devices the network holds (chips x devices_per_chip); 0: no limit.
  virtual int64_t device_count() const { return 0; }
  virtual int64_t link_count() const = 0;
  /// Report name of a link, e.g. "x+ (1,2)->(2,2)".
  virtual std::string LinkName(int32_t link) const = 0;
  /// One line describing the network (for reports).
  virtual std::string Describe() const = 0;
  /// One-way bandwidth of a link, for link utilisation in reports; 0 when
  /// unknown (utilisation is then reported as 0).
  virtual BytesPerSecond LinkBandwidth(int32_t link) const {
    (void)link;
    return BytesPerSecond(0);
  }
  /// The nodes a link joins, for link heatmaps in reports; {-1, -1} when
  /// the model has no nodes.
  virtual std::pair<int64_t, int64_t> LinkEnds(int32_t link) const {
    (void)link;
    return {-1, -1};
  }
  /// Report names of the network's nodes, by node id; empty when the model
  /// has no nodes.
  virtual std::vector<std::string> NodeNames() const { return {}; }
};

/// The flow-level interconnect model: topology, routing, max-min links and
/// collective algorithms.
class Interconnect : public CollectiveTimer {
 public:
  /// `chip` gives the ICI links and the collective latency (chip.ici) and the HBM bandwidth of one
  /// device (chip.hbm.bandwidth / chip.tensorcores_per_chip), at which a
  /// transfer between two devices of one chip is an on-chip copy: read and
  /// write, no ICI (docs/interconnect.md, "Several devices per chip").
  /// Errors: impossible topologies (see Topology::Build).
  static StatusOr<std::unique_ptr<Interconnect>> Create(const arch::TopologyConfig& topology,
                                                        const arch::ChipConfig& chip);
  ~Interconnect() override;

  /// Maps devices to chips, builds the algorithm's flows on the network with
  /// the faults active at `collective.start`, and runs them. A pair of
  /// devices on one chip moves its bytes by an on-chip copy. Errors
  /// (kInvalidArgument): a device out of range, an algorithm that cannot run
  /// this collective; kFailedPrecondition: failures disconnect two participants.
  StatusOr<CollectiveTiming> Time(const Collective& collective) const override;
  /// Several collectives on the network at once, sharing links max-min
  /// fairly; each flow starts at its collective's `start`, and faults are
  /// those active at the earliest start. Timings in the order given; each
  /// duration is from the collective's own start to its last flow's end.
  StatusOr<std::vector<CollectiveTiming>> TimeConcurrent(
      std::span<const Collective> collectives) const;
  /// Keeps only the flows of the collectives in flight, as they stand at the
  /// latest join (FlowNetwork::RunUntil, ResumeAt): a join costs what is in
  /// flight, not the history. Faults: those active when the network was
  /// last idle.
  std::unique_ptr<NetworkSession> NewSession() const override;
  int64_t devices_per_chip() const override;
  int64_t device_count() const override;
  int64_t link_count() const override;
  std::string LinkName(int32_t link) const override;
  /// The link's one-way bandwidth as built (degradations from time 0 applied).
  BytesPerSecond LinkBandwidth(int32_t link) const override;
  std::pair<int64_t, int64_t> LinkEnds(int32_t link) const override;
  std::vector<std::string> NodeNames() const override;
  std::string Describe() const override;
  /// The network as built, with only the faults active from time 0.
  const Topology& topology() const;

 private:
  struct Network;  // topology, router and flow network for one set of active faults
  class Session;
  Interconnect(arch::TopologyConfig config, BytesPerSecond device_hbm_bandwidth,
               Picoseconds collective_latency);
  /// Time to copy `bytes` from one device's HBM to another's on the same chip.
  Picoseconds OnChipCopy(int64_t bytes) const;
  /// Appends the flows of `collective` on `network` to `batch` (their `after`
  /// shifted to batch positions); returns the algorithm that runs.
  StatusOr<Algorithm> AppendFlows(const Network& network, const Collective& collective,
                                  std::vector<Flow>& batch) const;
  /// The network with every fault whose time is <= `at`; built once per set.
  StatusOr<const Network*> NetworkAt(Picoseconds at) const;

  arch::TopologyConfig config_;  ///< as given, for the times of its faults
  /// One device's share of its chip's HBM bandwidth (reads and writes
  /// combined), the rate of on-chip copies.
  BytesPerSecond device_hbm_bandwidth_;
  /// chip.ici.collective_latency: every flow of a collective starts this late.
  Picoseconds collective_latency_;
  mutable std::mutex mutex_;  ///< guards networks_ (Time is const and may run on threads)
  /// By the number of faults that start after time 0 and are active.
  mutable std::map<size_t, std::unique_ptr<Network>> networks_;
};

}  // namespace tpusim::ici

#endif  // TPUSIM_SIM_ICI_INTERCONNECT_H_
