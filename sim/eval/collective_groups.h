// Who takes part in a collective: XLA's group modes, replica groups, and the
// source-target pairs of collective-permute and send/recv, resolved to device
// numbers (SpmdConfig). Internal to sim/eval; docs/evaluator.md ("SPMD")
// states the rules.
#ifndef TPUSIM_SIM_EVAL_COLLECTIVE_GROUPS_H_
#define TPUSIM_SIM_EVAL_COLLECTIVE_GROUPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/eval/evaluator.h"
#include "sim/hlo/instruction.h"
#include "sim/hlo/opcode.h"

namespace tpusim::eval {

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
StatusOr<GroupMode> GroupModeOf(const hlo::HloInstruction& inst, hlo::HloOpcode opcode);

/// The devices that take part with `device` in `inst`, in group order (the
/// order of contributions to a reduction and of blocks in a gather).
/// Errors name `inst`: an id out of range, a device in no group, an empty
/// group list with flattened ids.
StatusOr<std::vector<int64_t>> GroupParticipants(const hlo::HloModule& module,
                                                 const hlo::HloInstruction& inst,
                                                 hlo::HloOpcode opcode, const SpmdConfig& config,
                                                 int64_t device);

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
    const hlo::HloModule& module, const hlo::HloInstruction& inst);

/// True for the opcodes whose data the collective kernels exchange.
bool IsCollectiveOpcode(hlo::HloOpcode opcode);

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_COLLECTIVE_GROUPS_H_
