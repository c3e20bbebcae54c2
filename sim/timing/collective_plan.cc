#include "sim/timing/collective_plan.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

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

/// V of ici::Collective: the gathered result of an all-gather, the operands
/// of everything else (what one source sends, for permute, broadcast, send);
/// for a ragged-all-to-all the rows it sends, when `rows_sent` knows them,
/// else its whole input.
int64_t CollectiveBytes(const HloInstruction& inst, HloOpcode opcode,
                        const std::map<const HloInstruction*, int64_t>& rows_sent) {
  if (opcode == HloOpcode::kAllGather || opcode == HloOpcode::kAllGatherStart) {
    const hlo::Shape& s = inst.shape();
    // The -start forms hold (operands, results).
    const bool started = inst.opcode() != HloOpcode::kAllGather;
    return DenseBytes(started && s.IsTuple() && s.tuple_size() >= 2 ? s.tuple_shapes(1) : s);
  }
  if (opcode == HloOpcode::kRaggedAllToAll || opcode == HloOpcode::kSend) {
    if (inst.operand_count() == 0) return 0;
    const hlo::Shape& input = inst.operand(0)->shape();
    const int64_t bytes = DenseBytes(input);
    const auto sent = rows_sent.find(&inst);  // a ragged-all-to-all the values run saw
    if (sent == rows_sent.end() || !input.IsArray() || input.rank() == 0 ||
        input.dimensions(0) == 0) {
      return bytes;
    }
    // Rows sent to several peers count once for each (they may overlap).
    return std::max<int64_t>(sent->second, 0) * (bytes / input.dimensions(0));
  }
  int64_t bytes = 0;
  for (const HloInstruction* operand : inst.operands()) bytes += DenseBytes(operand->shape());
  return bytes;
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

StatusOr<CollectivePlans> PlanCollectives(
    const hlo::HloModule& module, const Program& program, const hlo::SpmdConfig& config,
    const std::map<const HloInstruction*, int64_t>& ragged_rows_sent) {
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
    made->bytes = CollectiveBytes(*carrier, opcode, ragged_rows_sent);
    made->group_of_device.assign(static_cast<size_t>(config.device_count()), -1);
    for (size_t g = 0; g < made->participants.groups.size(); ++g) {
      for (int64_t d : made->participants.groups[g]) made->group_of_device[d] = static_cast<int32_t>(g);
    }
    plan = std::move(made);
  }
  return plans;
}

}  // namespace tpusim::timing
