#include "sim/hlo/collective_groups.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "sim/base/units.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/module.h"

namespace tpusim::hlo {

namespace {

constexpr std::string_view kSendRecvPairsAttribute = "_xla_send_recv_source_target_pairs";

bool HasChannel(const HloInstruction& inst) {
  const std::optional<int64_t> channel = inst.int_attr(AttrId::kChannelId);
  return channel.has_value() && *channel != 0;
}

/// The ops whose instruction has a use_global_device_ids field in XLA.
bool HasGlobalDeviceIdsField(HloOpcode opcode) {
  switch (CollectiveKindOf(opcode)) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
      return true;
    case CollectiveKind::kNone:
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kCollectiveBroadcast:
    case CollectiveKind::kCollectivePermute:
    case CollectiveKind::kRaggedAllToAll:
    case CollectiveKind::kSendRecv:
      return false;
  }
  return false;  // unreachable: every CollectiveKind returns above
}

Status GroupError(const HloModule& module, const HloInstruction& inst, std::string what) {
  return InvalidArgument(
      module.ErrorAt(inst.location(), inst.OpcodeSpelling() + " " + inst.name() + ": " + what));
}

/// What the ids of `mode` name ("replica", "partition", "device") and how
/// many of them `config` has.
std::pair<std::string, int64_t> IdDomain(GroupMode mode, const SpmdConfig& config) {
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition:
      return {"replica", config.replica_count};
    case GroupMode::kCrossPartition:
      return {"partition", config.partition_count};
    case GroupMode::kFlattenedId:
      return {"device", config.device_count()};
  }
  return {"device", config.device_count()};  // unreachable: every GroupMode returns above
}

/// The error for an id that `config` does not have, at the attribute that
/// names it: the id, and how many there are.
Status IdOutOfRange(const HloModule& module, const HloInstruction& inst, AttrId attribute,
                    GroupMode mode, const SpmdConfig& config, int64_t id) {
  const auto [id_name, id_count] = IdDomain(mode, config);
  std::string counts = CountOf(id_count, id_name);
  if (mode == GroupMode::kFlattenedId) {
    counts += " (" + CountOf(config.replica_count, "replica") + " x " +
              CountOf(config.partition_count, "partition") + ")";
  }
  const std::string_view spelling =
      attribute == AttrId::kFrontendAttributes ? kSendRecvPairsAttribute : AttrName(attribute);
  return InvalidArgument(module.ErrorAt(
      inst.AttributeLocation(attribute),
      inst.OpcodeSpelling() + " " + inst.name() + ": " + std::string(spelling) + " name " +
          id_name + " " + std::to_string(id) + ", but the program has " + counts));
}

/// The group size an all-gather or reduce-scatter's shapes imply (the ratio
/// of result to operand along its dimension), or 0 when they imply none.
int64_t GroupSizeFromShapes(const HloInstruction& inst, HloOpcode opcode) {
  const bool gather = opcode == HloOpcode::kAllGather || opcode == HloOpcode::kAllGatherStart;
  if ((!gather && opcode != HloOpcode::kReduceScatter) || inst.operand_count() < 1 ||
      inst.dimensions().size() != 1) {
    return 0;
  }
  const Shape& operand = inst.operand(0)->shape();
  // The -start forms hold the result at tuple element 1; a variadic form's
  // result is a tuple whose element 0 is operand 0's.
  const bool start =
      inst.opcode() == HloOpcode::kAllGatherStart || inst.opcode() == HloOpcode::kAsyncStart;
  const Shape* result = &inst.shape();
  if (start && result->IsTuple() && result->tuple_size() >= 2) result = &result->tuple_shapes(1);
  if (result->IsTuple() && result->tuple_size() >= 1) result = &result->tuple_shapes(0);
  const int64_t dim = inst.dimensions()[0];
  if (!operand.IsArray() || !result->IsArray() || dim < 0 || dim >= operand.rank() ||
      dim >= result->rank()) {
    return 0;
  }
  const int64_t big = gather ? result->dimensions(dim) : operand.dimensions(dim);
  const int64_t small = gather ? operand.dimensions(dim) : result->dimensions(dim);
  return small > 0 && big % small == 0 ? big / small : 0;
}

}  // namespace

bool IsCollectiveOpcode(HloOpcode opcode) {
  return CollectiveKindOf(opcode) != CollectiveKind::kNone &&
         OpRoleOf(opcode) != OpRole::kAsyncDone;
}

std::optional<CollectiveSite> FindCollective(const HloInstruction& inst) {
  if (IsCollectiveOpcode(inst.opcode())) return CollectiveSite{&inst, inst.opcode()};
  if (inst.opcode() != HloOpcode::kAsyncStart) return std::nullopt;
  if (const auto* calls = inst.GetAttr<ComputationList>(AttrId::kCalls)) {
    for (const HloComputation* computation : calls->computations) {
      for (const auto& inner : computation->instructions()) {
        if (IsCollectiveOpcode(inner->opcode()))
          return CollectiveSite{inner.get(), inner->opcode()};
      }
    }
    return std::nullopt;
  }
  if (inst.async_wrapped_opcode() && IsCollectiveOpcode(*inst.async_wrapped_opcode())) {
    return CollectiveSite{&inst, *inst.async_wrapped_opcode()};
  }
  return std::nullopt;
}

StatusOr<GroupMode> GroupModeOf(const HloInstruction& inst, HloOpcode opcode) {
  const bool global_ids = inst.bool_attr(AttrId::kUseGlobalDeviceIds, false);
  if (!HasChannel(inst)) {
    if (global_ids) {
      return InvalidArgument(inst.name() + ": use_global_device_ids=true needs a channel_id");
    }
    return GroupMode::kCrossReplica;
  }
  if (!HasGlobalDeviceIdsField(opcode)) return GroupMode::kCrossPartition;
  return global_ids ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

StatusOr<std::vector<int64_t>> GroupParticipants(const HloModule& module,
                                                 const HloInstruction& inst, HloOpcode opcode,
                                                 const SpmdConfig& config, int64_t device) {
  StatusOr<GroupMode> mode_or = GroupModeOf(inst, opcode);
  if (!mode_or.ok())
    return GroupError(module, inst, "use_global_device_ids=true needs a channel_id");
  const GroupMode mode = *mode_or;
  const DeviceId me = config.Device(device);
  // What the ids of a group name, how many there are, and which one is ours.
  const auto [id_name, id_count] = IdDomain(mode, config);
  const int64_t my_id = mode == GroupMode::kFlattenedId      ? device
                        : mode == GroupMode::kCrossPartition ? me.partition_id
                                                             : me.replica_id;

  std::vector<int64_t> ids;
  const ReplicaGroups* groups = inst.replica_groups();
  if (groups == nullptr || groups->groups.empty()) {
    if (mode == GroupMode::kFlattenedId) {
      return GroupError(module, inst, "use_global_device_ids=true needs explicit replica_groups");
    }
    for (int64_t id = 0; id < id_count; ++id) ids.push_back(id);
  } else {
    for (const std::vector<int64_t>& group : groups->groups) {
      for (int64_t id : group) {
        if (id < 0 || id >= id_count) {
          return IdOutOfRange(module, inst, AttrId::kReplicaGroups, mode, config, id);
        }
      }
      if (std::find(group.begin(), group.end(), my_id) != group.end()) ids = group;
    }
    if (ids.empty()) {
      return GroupError(module, inst,
                        id_name + " " + std::to_string(my_id) + " is in no replica group");
    }
    std::vector<int64_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return GroupError(module, inst, "a replica group names the same id twice");
    }
  }

  std::vector<int64_t> participants;
  for (int64_t id : ids) {
    switch (mode) {
      case GroupMode::kCrossReplica:
        participants.push_back(config.DeviceIndex({id, me.partition_id}));
        break;
      case GroupMode::kCrossPartition:
        participants.push_back(config.DeviceIndex({me.replica_id, id}));
        break;
      case GroupMode::kCrossReplicaAndPartition:
        for (int64_t p = 0; p < config.partition_count; ++p) {
          participants.push_back(config.DeviceIndex({id, p}));
        }
        break;
      case GroupMode::kFlattenedId:
        participants.push_back(id);
        break;
    }
  }
  return participants;
}

PeerDomain PeerDomainOf(GroupMode mode, const SpmdConfig& config, int64_t device) {
  const DeviceId me = config.Device(device);
  PeerDomain domain;
  if (mode == GroupMode::kCrossReplica) {
    domain.self = me.replica_id;
    for (int64_t r = 0; r < config.replica_count; ++r) {
      domain.devices.push_back(config.DeviceIndex({r, me.partition_id}));
    }
  } else {
    domain.self = me.partition_id;
    for (int64_t p = 0; p < config.partition_count; ++p) {
      domain.devices.push_back(config.DeviceIndex({me.replica_id, p}));
    }
  }
  return domain;
}

StatusOr<std::optional<std::vector<std::pair<int64_t, int64_t>>>> SendRecvPairs(
    const HloModule& module, const HloInstruction& inst) {
  const auto* attributes = inst.GetAttr<std::vector<KeyValue>>(AttrId::kFrontendAttributes);
  if (attributes == nullptr) return std::nullopt;
  const KeyValue* found = nullptr;
  for (const KeyValue& kv : *attributes) {
    if (kv.key == kSendRecvPairsAttribute) found = &kv;
  }
  if (found == nullptr) return std::nullopt;
  // `{{a,b},{c,d}}`: numbers two by two, with only braces, commas and spaces
  // around them.
  std::vector<int64_t> numbers;
  const std::string& text = found->value;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
        if (value > (int64_t{1} << 40)) break;
        value = value * 10 + (text[i] - '0');
      }
      numbers.push_back(value);
    } else if (c == '{' || c == '}' || c == ',' || std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else {
      numbers.clear();
      numbers.push_back(-1);  // odd count: reported below
      break;
    }
  }
  if (numbers.size() % 2 != 0) {
    return GroupError(
        module, inst,
        std::string(kSendRecvPairsAttribute) + " is not a list of {source,target} pairs");
  }
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < numbers.size(); i += 2) pairs.emplace_back(numbers[i], numbers[i + 1]);
  return std::optional(std::move(pairs));
}

StatusOr<CollectiveParticipants> ResolveCollective(const HloModule& module,
                                                   const HloInstruction& inst, HloOpcode opcode,
                                                   const SpmdConfig& config) {
  CollectiveParticipants result;
  const int64_t devices = config.device_count();
  const bool point_to_point = opcode == HloOpcode::kCollectivePermute ||
                              opcode == HloOpcode::kCollectivePermuteStart ||
                              opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv;
  if (!point_to_point) {
    std::vector<bool> placed(static_cast<size_t>(devices), false);
    for (int64_t d = 0; d < devices; ++d) {
      if (placed[d]) continue;
      TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> group,
                              GroupParticipants(module, inst, opcode, config, d));
      for (int64_t member : group) placed[member] = true;
      result.groups.push_back(std::move(group));
    }
    return result;
  }
  std::vector<std::pair<int64_t, int64_t>> ids;
  const bool send_recv = opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv;
  const AttrId pairs_attribute =
      send_recv ? AttrId::kFrontendAttributes : AttrId::kSourceTargetPairs;
  if (send_recv) {
    TPUSIM_ASSIGN_OR_RETURN(auto pairs, SendRecvPairs(module, inst));
    if (!pairs.has_value()) return result;
    ids = std::move(*pairs);
  } else if (const auto* pairs = inst.GetAttr<std::vector<std::pair<int64_t, int64_t>>>(
                 AttrId::kSourceTargetPairs)) {
    ids = *pairs;
  }
  StatusOr<GroupMode> mode = GroupModeOf(inst, opcode);
  if (!mode.ok()) return GroupError(module, inst, "use_global_device_ids=true needs a channel_id");
  // Each peer domain (the devices that differ only in the id the pairs name)
  // is met first at its lowest device.
  std::vector<bool> seen(static_cast<size_t>(devices), false);
  for (int64_t d = 0; d < devices; ++d) {
    if (seen[d]) continue;
    const PeerDomain domain = PeerDomainOf(*mode, config, d);
    for (int64_t member : domain.devices) seen[member] = true;
    const int64_t size = static_cast<int64_t>(domain.devices.size());
    std::vector<int64_t> group;
    for (const auto& [source, target] : ids) {
      for (const int64_t id : {source, target}) {
        if (id < 0 || id >= size)
          return IdOutOfRange(module, inst, pairs_attribute, *mode, config, id);
      }
      result.pairs.emplace_back(domain.devices[source], domain.devices[target]);
      group.push_back(domain.devices[source]);
      group.push_back(domain.devices[target]);
    }
    std::sort(group.begin(), group.end());
    group.erase(std::unique(group.begin(), group.end()), group.end());
    if (!group.empty()) result.groups.push_back(std::move(group));
  }
  return result;
}

Status ForEachCollectiveGroup(
    const HloModule& module, const SpmdConfig& config,
    const std::function<Status(const CollectiveSite& site, const std::vector<int64_t>& group)>&
        visit) {
  std::vector<int64_t> all(static_cast<size_t>(config.device_count()));
  for (int64_t d = 0; d < config.device_count(); ++d) all[d] = d;
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      const std::optional<CollectiveSite> site = FindCollective(*inst);
      if (!site.has_value()) continue;
      TPUSIM_ASSIGN_OR_RETURN(const CollectiveParticipants participants,
                              ResolveCollective(module, *site->inst, site->opcode, config));
      const bool send_recv = site->opcode == HloOpcode::kSend || site->opcode == HloOpcode::kRecv;
      if (send_recv && participants.groups.empty()) {
        TPUSIM_RETURN_IF_ERROR(visit(*site, all));
        continue;
      }
      for (const std::vector<int64_t>& group : participants.groups) {
        TPUSIM_RETURN_IF_ERROR(visit(*site, group));
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<int64_t>> CommunicatingDevices(const HloModule& module,
                                                    const SpmdConfig& config,
                                                    const std::vector<int64_t>& devices) {
  const int64_t n = config.device_count();
  // Union-find over the devices, joined along every group and pair.
  std::vector<int64_t> parent(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) parent[d] = d;
  const auto root = [&parent](int64_t d) {
    while (parent[d] != d) d = parent[d] = parent[parent[d]];
    return d;
  };
  TPUSIM_RETURN_IF_ERROR(ForEachCollectiveGroup(
      module, config, [&](const CollectiveSite&, const std::vector<int64_t>& group) {
        for (const int64_t member : group) parent[root(member)] = root(group.front());
        return Status::Ok();
      }));
  std::vector<bool> wanted(static_cast<size_t>(n), false);
  for (const int64_t d : devices) wanted[root(d)] = true;
  std::vector<int64_t> closure;
  for (int64_t d = 0; d < n; ++d) {
    if (wanted[root(d)]) closure.push_back(d);
  }
  return closure;
}

SpmdConfig SpmdConfig::FromModule(const HloModule& module) {
  return {std::max<int64_t>(module.replica_count(), 1),
          std::max<int64_t>(module.num_partitions(), 1)};
}

namespace {

/// The ids one attribute of a collective names, or that its shapes imply.
struct NamedIds {
  /// kReplicaGroups, kSourceTargetPairs, or kFrontendAttributes (send/recv
  /// pairs); kUnknown when no attribute names them: empty groups, whose size
  /// the shapes imply (ids 0 to largest).
  AttrId attribute = AttrId::kUnknown;
  int64_t smallest = 0;
  int64_t largest = 0;
};

/// Calls `visit(instruction, mode, NamedIds)` for each attribute of each
/// collective of `module` that names device ids (or for the collective whose
/// empty groups imply a group size), in text order; an op whose attributes
/// are malformed is left for the evaluation to report.
template <typename Visit>
void ForEachNamedIds(const HloModule& module, Visit visit) {
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      const std::optional<CollectiveSite> site = FindCollective(*inst);
      if (!site.has_value()) continue;
      const HloInstruction& carrier = *site->inst;
      const StatusOr<GroupMode> mode = GroupModeOf(carrier, site->opcode);
      if (!mode.ok()) continue;
      bool named = false;
      const auto visit_ids = [&](AttrId attribute, const std::vector<int64_t>& ids) {
        if (ids.empty()) return;
        named = true;
        const auto [smallest, largest] = std::minmax_element(ids.begin(), ids.end());
        visit(carrier, *mode, NamedIds{attribute, *smallest, *largest});
      };
      if (const ReplicaGroups* groups = carrier.replica_groups()) {
        std::vector<int64_t> ids;
        for (const auto& group : groups->groups) ids.insert(ids.end(), group.begin(), group.end());
        visit_ids(AttrId::kReplicaGroups, ids);
      }
      const auto visit_pairs = [&](AttrId attribute,
                                   const std::vector<std::pair<int64_t, int64_t>>& pairs) {
        std::vector<int64_t> ids;
        for (const auto& [source, target] : pairs) {
          ids.push_back(source);
          ids.push_back(target);
        }
        visit_ids(attribute, ids);
      };
      if (const auto* pairs = carrier.GetAttr<std::vector<std::pair<int64_t, int64_t>>>(
              AttrId::kSourceTargetPairs)) {
        visit_pairs(AttrId::kSourceTargetPairs, *pairs);
      }
      if (auto pairs = SendRecvPairs(module, carrier); pairs.ok() && pairs->has_value()) {
        visit_pairs(AttrId::kFrontendAttributes, **pairs);
      }
      if (named) continue;
      // Empty groups hold every id: the shapes may say how many there are.
      const int64_t size = GroupSizeFromShapes(carrier, site->opcode);
      if (size > 0) visit(carrier, *mode, NamedIds{AttrId::kUnknown, 0, size - 1});
    }
  }
}

}  // namespace

SpmdConfig SpmdConfig::CoveringModule(const HloModule& module) {
  SpmdConfig config = FromModule(module);
  int64_t max_replica = -1, max_partition = -1, max_device = -1;
  ForEachNamedIds(module, [&](const HloInstruction&, GroupMode mode, NamedIds ids) {
    switch (mode) {
      case GroupMode::kCrossReplica:
      case GroupMode::kCrossReplicaAndPartition:
        max_replica = std::max(max_replica, ids.largest);
        break;
      case GroupMode::kCrossPartition:
        max_partition = std::max(max_partition, ids.largest);
        break;
      case GroupMode::kFlattenedId:
        max_device = std::max(max_device, ids.largest);
        break;
    }
  });
  // A count the header states is the program's; only an unstated one grows.
  const ModuleHeader& header = module.header();
  if (!header.replica_count.has_value()) {
    config.replica_count = std::max(config.replica_count, max_replica + 1);
  }
  if (!header.num_partitions.has_value()) {
    config.partition_count = std::max(config.partition_count, max_partition + 1);
  }
  if (max_device >= config.device_count()) {
    if (!header.replica_count.has_value()) {
      config.replica_count = (max_device + config.partition_count) / config.partition_count;
    } else if (!header.num_partitions.has_value()) {
      config.partition_count = (max_device + config.replica_count) / config.replica_count;
    }
  }
  return config;
}

const HloInstruction* CollectiveNamingLargestId(const HloModule& module, int64_t& id) {
  const HloInstruction* largest = nullptr;
  id = -1;
  ForEachNamedIds(module, [&](const HloInstruction& inst, GroupMode, NamedIds ids) {
    if (ids.largest > id) id = ids.largest, largest = &inst;
  });
  return largest;
}

Status CheckCollectiveIds(const HloModule& module, const SpmdConfig& config) {
  Status status;
  ForEachNamedIds(module, [&](const HloInstruction& inst, GroupMode mode, NamedIds ids) {
    if (!status.ok() || ids.attribute == AttrId::kUnknown) return;
    if (ids.smallest < 0) {
      status = IdOutOfRange(module, inst, ids.attribute, mode, config, ids.smallest);
    } else if (ids.largest >= IdDomain(mode, config).second) {
      status = IdOutOfRange(module, inst, ids.attribute, mode, config, ids.largest);
    }
  });
  return status;
}

}  // namespace tpusim::hlo
