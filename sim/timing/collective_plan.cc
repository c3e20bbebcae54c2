#include "sim/timing/collective_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "sim/base/arith.h"
#include "sim/hlo/computation.h"
#include "sim/timing/hlo_helpers.h"
#include "sim/timing/timing.h"

namespace tpusim::timing {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

/// Bytes of every array leaf of `shape`, densely packed.
int64_t DenseBytes(const hlo::Shape& shape) {
  if (shape.IsTuple()) {
    int64_t sum = 0;
    for (const hlo::Shape& element : shape.tuple_shapes()) sum += DenseBytes(element);
    return sum;
  }
  if (!shape.IsArray()) return 0;
  return (shape.element_count() * hlo::PrimitiveTypeBitWidth(shape.element_type()) + 7) / 8;
}

/// The ICI collective of a FindCollective opcode.
ici::CollectiveKind KindOf(HloOpcode opcode) {
  switch (hlo::CollectiveKindOf(opcode)) {
    case hlo::CollectiveKind::kAllGather:
      return ici::CollectiveKind::kAllGather;
    case hlo::CollectiveKind::kReduceScatter:
      return ici::CollectiveKind::kReduceScatter;
    case hlo::CollectiveKind::kAllToAll:
      return ici::CollectiveKind::kAllToAll;
    case hlo::CollectiveKind::kRaggedAllToAll:
      return ici::CollectiveKind::kRaggedAllToAll;
    case hlo::CollectiveKind::kCollectivePermute:
      return ici::CollectiveKind::kCollectivePermute;
    case hlo::CollectiveKind::kCollectiveBroadcast:
      return ici::CollectiveKind::kCollectiveBroadcast;
    case hlo::CollectiveKind::kSendRecv:
      return ici::CollectiveKind::kSendRecv;
    case hlo::CollectiveKind::kAllReduce:
    case hlo::CollectiveKind::kNone:  // FindCollective returns collectives only
      return ici::CollectiveKind::kAllReduce;
  }
  return ici::CollectiveKind::kAllReduce;  // unreachable: every CollectiveKind returns above
}

/// Bytes of one row (the outermost dimension) of a ragged-all-to-all's input,
/// or nullopt when it has no rows.
std::optional<int64_t> RowBytes(const HloInstruction& ragged) {
  if (ragged.operand_count() == 0) return std::nullopt;
  const hlo::Shape& input = ragged.operand(0)->shape();
  if (!input.IsArray() || input.rank() == 0 || input.dimensions(0) == 0) return std::nullopt;
  return DenseBytes(input) / input.dimensions(0);
}

/// V of ici::Collective: the gathered result of an all-gather, the operands
/// of everything else (what one source sends, for permute, broadcast, send;
/// a ragged-all-to-all's whole input, unless SentBytes knows better).
int64_t CollectiveBytes(const HloInstruction& inst, HloOpcode opcode) {
  if (opcode == HloOpcode::kAllGather || opcode == HloOpcode::kAllGatherStart) {
    const hlo::Shape& s = inst.shape();
    // The -start forms hold (operands, results).
    const bool started = inst.opcode() != HloOpcode::kAllGather;
    return DenseBytes(started && s.IsTuple() && s.tuple_size() >= 2 ? s.tuple_shapes(1) : s);
  }
  if (opcode == HloOpcode::kRaggedAllToAll || opcode == HloOpcode::kSend) {
    return inst.operand_count() == 0 ? 0 : DenseBytes(inst.operand(0)->shape());
  }
  int64_t bytes = 0;
  for (const HloInstruction* operand : inst.operands()) bytes += DenseBytes(operand->shape());
  return bytes;
}

/// The most bytes one member of `groups` sends in `sent_bytes`
/// (ici::Collective::sent_bytes), what it sends itself included.
int64_t BusiestSender(const std::vector<std::vector<int64_t>>& sent_bytes,
                      const std::vector<std::vector<int64_t>>& groups) {
  int64_t busiest = 0;
  for (size_t g = 0; g < groups.size() && g < sent_bytes.size(); ++g) {
    const size_t n = groups[g].size();
    for (size_t i = 0; i < n; ++i) {
      int64_t sent = 0;
      for (size_t j = 0; j < n; ++j) sent = SatAdd(sent, sent_bytes[g][i * n + j]);
      busiest = std::max(busiest, sent);
    }
  }
  return busiest;
}

/// A ragged-all-to-all's traffic at each execution: what each member of
/// each group sent each other member, by its own send sizes where `options`
/// has them, else by device 0's, and what the busiest member sends (rows sent
/// to several peers count once for each; they may overlap). Empty (every
/// member sends V / n to each) when device 0's are not known or a member's
/// sizes are not one per participant.
ExecutionSeries<RaggedTraffic> RaggedTrafficOf(const HloInstruction& ragged,
                                               const hlo::CollectiveParticipants& participants,
                                               const TimingOptions& options) {
  using Sizes = ExecutionSeries<std::vector<int64_t>>;
  const auto first = options.ragged_send_sizes.find(&ragged);
  const std::optional<int64_t> row = RowBytes(ragged);
  if (first == options.ragged_send_sizes.end() || first->second.empty() || !row.has_value())
    return {};
  // Each member's sizes, group by group in member order.
  std::vector<const Sizes*> members;
  for (const std::vector<int64_t>& group : participants.groups) {
    for (const int64_t member : group) {
      const Sizes* sizes = &first->second;
      if (const auto device = options.device_ragged_send_sizes.find(member);
          device != options.device_ragged_send_sizes.end()) {
        if (const auto own = device->second.find(&ragged);
            own != device->second.end() && !own->second.empty())
          sizes = &own->second;
      }
      members.push_back(sizes);
    }
  }
  const std::vector<int64_t> starts = ChangePoints(members);
  ExecutionSeries<RaggedTraffic> traffic;
  for (size_t k = 0; k < starts.size(); ++k) {
    RaggedTraffic at;
    size_t member = 0;
    for (const std::vector<int64_t>& group : participants.groups) {
      const size_t n = group.size();
      std::vector<int64_t>& matrix = at.sent_bytes.emplace_back(n * n, 0);
      for (size_t i = 0; i < n; ++i) {
        const std::vector<int64_t>& sizes = members[member++]->At(starts[k]);
        if (sizes.size() != n) return {};
        for (size_t j = 0; j < n; ++j) {
          matrix[i * n + j] = SatMul(std::max<int64_t>(sizes[j], 0), *row);
        }
      }
    }
    at.bytes = BusiestSender(at.sent_bytes, participants.groups);
    traffic.Append(std::move(at), StretchLength(starts, k));
  }
  return traffic;
}

}  // namespace

std::string_view CollectiveKindSpelling(ici::CollectiveKind kind) {
  return kind == ici::CollectiveKind::kSendRecv ? "send/recv" : ici::CollectiveKindName(kind);
}

std::vector<int32_t> RendezvousOf(const CollectivePlan& plan, bool recv, int64_t device) {
  if (!plan.point_to_point) return {plan.group_of_device[device]};
  std::vector<int32_t> indices;
  const auto& pairs = plan.participants.pairs;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if ((recv ? pairs[i].second : pairs[i].first) == device) indices.push_back(static_cast<int32_t>(i));
  }
  return indices;
}

std::map<int64_t, int64_t> ArrivalsOwed(const CollectivePlan& plan, int32_t index,
                                        const std::vector<bool>& simulated) {
  std::map<int64_t, int64_t> owed;
  if (!plan.point_to_point) {
    for (int64_t member : plan.participants.groups[index]) {
      if (simulated[member]) owed[member] = 1;
    }
    return owed;
  }
  const auto [source, target] = plan.participants.pairs[index];
  if (plan.has_send && simulated[source]) ++owed[source];
  if (plan.has_recv && simulated[target]) ++owed[target];
  return owed;
}

StatusOr<CollectivePlans> PlanCollectives(const hlo::HloModule& module, const Program& program,
                                          const hlo::SpmdConfig& config,
                                          const TimingOptions& options) {
  // Each channel's send and recv, so that both halves use the send's pairs.
  std::map<int64_t, const HloInstruction*> send_of_channel, recv_of_channel;
  // (A send or recv without channel_id is on channel 0.)
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      const int64_t channel = inst->int_attr(hlo::AttrId::kChannelId).value_or(0);
      if (inst->opcode() == HloOpcode::kSend) send_of_channel.emplace(channel, inst.get());
      if (inst->opcode() == HloOpcode::kRecv) recv_of_channel.emplace(channel, inst.get());
    }
  }
  CollectivePlans plans(program.costs.size());
  for (const Step& step : program.steps) {
    if (step.role != StepRole::kInstruction) continue;
    std::unique_ptr<CollectivePlan>& plan = plans[step.inst->unique_id()];
    if (plan != nullptr) continue;
    const std::optional<hlo::CollectiveSite> collective = hlo::FindCollective(*step.inst);
    if (!collective) continue;
    auto [carrier, opcode] = *collective;
    auto made = std::make_unique<CollectivePlan>();
    made->inst = step.inst;
    made->kind = KindOf(opcode);
    made->key = step.inst->unique_id();
    if (opcode == HloOpcode::kSend || opcode == HloOpcode::kRecv) {
      const int64_t channel = carrier->int_attr(hlo::AttrId::kChannelId).value_or(0);
      const auto send = send_of_channel.find(channel);
      if (send != send_of_channel.end()) carrier = send->second, opcode = HloOpcode::kSend;
      made->key = -1 - channel;
      made->point_to_point = true;
      made->has_send = send != send_of_channel.end();
      made->has_recv = recv_of_channel.contains(channel);
    }
    made->named = step.inst->opcode() == HloOpcode::kRecv && carrier->opcode() == HloOpcode::kSend
                      ? carrier
                      : step.inst;
    TPUSIM_ASSIGN_OR_RETURN(made->participants,
                            hlo::ResolveCollective(module, *carrier, opcode, config));
    if (made->participants.groups.empty()) continue;  // e.g. send/recv without pairs
    made->bytes = CollectiveBytes(*carrier, opcode);
    if (opcode == HloOpcode::kRaggedAllToAll) {
      made->ragged_traffic = RaggedTrafficOf(*carrier, made->participants, options);
    }
    made->group_of_device.assign(static_cast<size_t>(config.device_count()), -1);
    for (size_t g = 0; g < made->participants.groups.size(); ++g) {
      for (int64_t d : made->participants.groups[g]) made->group_of_device[d] = static_cast<int32_t>(g);
    }
    plan = std::move(made);
  }
  return plans;
}

}  // namespace tpusim::timing
