// Who takes part in a collective: the devices of an SPMD program
// (SpmdConfig), XLA's group modes, replica groups, and the source-target
// pairs of collective-permute and send/recv, resolved to device numbers.
// HLO semantics, not values: the evaluator exchanges data along these groups
// and the timing runtime synchronises devices along them. docs/evaluator.md
// ("SPMD") states the rules.
#ifndef TPUSIM_SIM_HLO_COLLECTIVE_GROUPS_H_
#define TPUSIM_SIM_HLO_COLLECTIVE_GROUPS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/instruction.h"
#include "sim/hlo/module.h"
#include "sim/hlo/opcode.h"

namespace tpusim::hlo {

/// Which device of an SPMD program is meant: replica-id and partition-id read
/// these.
struct DeviceId {
  int64_t replica_id = 0;
  int64_t partition_id = 0;
};

/// The most devices tpusim runs an SPMD program on: the evaluator runs one
/// thread per device and the timing runtime simulates each; one bound for
/// both, so a program that evaluates also times.
inline constexpr int64_t kMaxSpmdDevices = 4096;

/// The devices of an SPMD program: replica_count x partition_count of them.
/// Device d is replica d / partition_count, partition d % partition_count
/// (d = replica * partition_count + partition), XLA's default device
/// assignment; `use_global_device_ids` groups name devices by this number.
struct SpmdConfig {
  int64_t replica_count = 1;
  int64_t partition_count = 1;

  int64_t device_count() const { return replica_count * partition_count; }
  int64_t DeviceIndex(DeviceId id) const {
    return id.replica_id * partition_count + id.partition_id;
  }
  DeviceId Device(int64_t index) const {
    return {index / partition_count, index % partition_count};
  }

  /// The module header's `replica_count` and `num_partitions` (1 when absent).
  static SpmdConfig FromModule(const HloModule& module);
  /// FromModule, with each count the header leaves unstated raised to the
  /// least that every device id the module's collectives name (replica
  /// groups, source-target pairs, send/recv pairs) exists, and that every
  /// all-gather and reduce-scatter with empty groups has the group size its
  /// shapes imply. For modules written for N devices without saying so in the
  /// header, as XLA's own tests are (the count is passed beside them). A count
  /// the header states stays; CheckCollectiveIds reports ids beyond it.
  static SpmdConfig CoveringModule(const HloModule& module);
};

/// The collective that names the largest device id of `module` (what raises
/// CoveringModule's counts), with that id in `id`; nullptr (id -1) when no
/// collective names one. For errors that point at it.
const HloInstruction* CollectiveNamingLargestId(const HloModule& module, int64_t& id);

/// Every device id the collectives of `module` name (replica groups,
/// source-target pairs, send/recv pairs) exists in `config`; the first that
/// does not, in text order, is an error at the attribute naming it that
/// gives the id and the count (a negative id before the largest). Ids that
/// empty groups imply are GroupParticipants's to check.
Status CheckCollectiveIds(const HloModule& module, const SpmdConfig& config);

/// XLA's CollectiveOpGroupMode: what the ids of replica_groups name.
enum class GroupMode : uint8_t {
  /// No channel_id: replica ids; a group is those replicas of this partition.
  kCrossReplica,
  /// channel_id, on an op without use_global_device_ids (all-to-all,
  /// collective-permute, collective-broadcast, send/recv): partition ids; a
  /// group is those partitions of this replica.
  kCrossPartition,
  /// channel_id and use_global_device_ids=false: replica ids; a group is
  /// those replicas, each with all of its partitions (replica-major).
  kCrossReplicaAndPartition,
  /// channel_id and use_global_device_ids=true: device numbers.
  kFlattenedId,
};

/// The group mode of collective `opcode` (the instruction's own opcode, or
/// the one an async-start wraps) with `inst`'s attributes. A channel_id of 0
/// counts as none, as in XLA's protos.
StatusOr<GroupMode> GroupModeOf(const HloInstruction& inst, HloOpcode opcode);

/// The devices that take part with `device` in `inst`, in group order (the
/// order of contributions to a reduction and of blocks in a gather).
/// Errors name `inst`: an id out of range, a device in no group, an empty
/// group list with flattened ids.
StatusOr<std::vector<int64_t>> GroupParticipants(const HloModule& module,
                                                 const HloInstruction& inst, HloOpcode opcode,
                                                 const SpmdConfig& config, int64_t device);

/// Point-to-point ops (collective-permute, send, recv) name peers by replica
/// id without a channel and by partition id with one. The peers of `device`
/// are the devices that differ from it only in that id, ordered by it.
struct PeerDomain {
  /// Peer id i is device devices[i]; `self` is this device's id.
  std::vector<int64_t> devices;
  int64_t self = 0;
};
PeerDomain PeerDomainOf(GroupMode mode, const SpmdConfig& config, int64_t device);

/// send/recv: the pairs of the frontend attribute
/// `_xla_send_recv_source_target_pairs` (`{{0,1},{1,2}}`), or nullopt when it
/// is absent; an error when its text is malformed.
StatusOr<std::optional<std::vector<std::pair<int64_t, int64_t>>>> SendRecvPairs(
    const HloModule& module, const HloInstruction& inst);

/// Every participant of one execution of a collective, for all devices at
/// once. `groups` are disjoint lists of devices: for replica-group ops, each
/// device's GroupParticipants (in group order), in order of their first
/// device; for collective-permute and send/recv, per peer domain the devices
/// its pairs name, ascending. `pairs` are those ops' (source, target) device
/// pairs, domain by domain in the order written. Devices in no group do not
/// take part (a permute or send/recv that does not name them).
struct CollectiveParticipants {
  std::vector<std::vector<int64_t>> groups;
  std::vector<std::pair<int64_t, int64_t>> pairs;
};

/// Resolves `inst` as collective `opcode` (its own opcode, or the one an
/// async-start wraps) on every device of `config`. send/recv without
/// `_xla_send_recv_source_target_pairs` have no participants. Errors are
/// GroupParticipants's, and a pair naming an id out of range.
StatusOr<CollectiveParticipants> ResolveCollective(const HloModule& module,
                                                   const HloInstruction& inst, HloOpcode opcode,
                                                   const SpmdConfig& config);

/// A collective and the instruction that carries its attributes.
struct CollectiveSite {
  const HloInstruction* inst = nullptr;
  HloOpcode opcode = HloOpcode::kAllReduce;
};

/// Calls `visit(site, group)` for each group of devices that exchange data in
/// a collective of `module`: the collectives in text order (computations in
/// module order), each one's groups in order. A send or recv that names no
/// pairs gives one group of every device (its peers are known only when it
/// runs). Stops at visit's first error; other errors are ResolveCollective's.
Status ForEachCollectiveGroup(
    const HloModule& module, const SpmdConfig& config,
    const std::function<Status(const CollectiveSite& site, const std::vector<int64_t>& group)>&
        visit);

/// The devices whose values decide those of `devices`: `devices` and every
/// device that exchanges data with one of them through some collective of
/// `module`, directly or through others, ascending. Every device when a
/// send or recv names no pairs (its peers are known only when it runs).
/// Errors are ResolveCollective's.
StatusOr<std::vector<int64_t>> CommunicatingDevices(const HloModule& module,
                                                    const SpmdConfig& config,
                                                    const std::vector<int64_t>& devices);

/// The collective communication ops (IsCollective) and the point-to-point
/// send and recv, whose transfers the SPMD runtime routes like them.
bool IsCollectiveOpcode(HloOpcode opcode);

/// The collective `inst` runs, if any: `inst` itself when IsCollectiveOpcode
/// holds for its opcode; for an async-start, the collective its wrapped
/// computation runs, else the op its `X-start` spelling names (`inst` then
/// carries the attributes). nullopt otherwise.
std::optional<CollectiveSite> FindCollective(const HloInstruction& inst);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_COLLECTIVE_GROUPS_H_
