// The SPMD rendezvous: arrivals, completion, the instances on the shared
// network and the deadlock report; spmd_rendezvous.h.
#include "sim/timing/spmd_rendezvous.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/base/arith.h"
#include "sim/timing/systemc_time.h"

namespace tpusim::timing {

SpmdRendezvous::SpmdRendezvous(SharedNetwork& network, ici::Algorithm algorithm,
                               CollectivePlans plans, std::vector<bool> simulated,
                               std::vector<int64_t> placement, TimingResult& result)
    : network_(network),
      algorithm_(algorithm),
      plans_(std::move(plans)),
      simulated_(std::move(simulated)),
      placement_(std::move(placement)),
      result_(result) {}

Rendezvous& SpmdRendezvous::Arrive(const CollectivePlan& plan, int64_t execution, int32_t group,
                                   int64_t device, int64_t now) {
  std::unique_ptr<Rendezvous>& slot = rendezvous_[{plan.key, execution, group}];
  if (slot == nullptr) {
    slot = std::make_unique<Rendezvous>();
    slot->plan = &plan;
    slot->execution = execution;
    slot->group = group;
    slot->owed = ArrivalsOwed(plan, group, simulated_);
    for (const auto& [member, n] : slot->owed) slot->expected += n;
  }
  Rendezvous& r = *slot;
  if (r.named == nullptr || plan.inst->opcode() == hlo::HloOpcode::kSend) r.named = plan.named;
  ++r.arrivals[device];
  if (++r.arrived == r.expected) {
    r.complete = true;
    r.start = now;
    Transfer(plan, execution, now, r);
  }
  return r;
}

bool SpmdRendezvous::AwaitEnd(const Rendezvous& r) const {
  while (!r.complete || TimeToCycles(sc_core::sc_time_stamp()) < r.end) {
    sc_core::wait(r.done);
    if (!error_.ok()) return false;
  }
  return error_.ok();
}

Status SpmdRendezvous::Deadlock(const hlo::HloModule& module) const {
  for (const auto& [key, r] : rendezvous_) {
    if (r->complete) continue;
    std::string arrived, missing;
    for (const auto& [member, owed] : r->owed) {
      const auto it = r->arrivals.find(member);
      const int64_t n = it == r->arrivals.end() ? 0 : it->second;
      std::string& list = n < owed ? missing : arrived;
      list += (list.empty() ? "" : ",") + std::to_string(member);
    }
    const std::string both = r->plan->point_to_point
                                 ? " (a transfer needs its source's send and its target's recv)"
                                 : "";
    return InvalidArgument(module.ErrorAt(
        r->plan->inst->location(),
        std::string(CollectiveKindSpelling(r->plan->kind)) + " " + r->named->name() + " (execution " + std::to_string(r->execution) +
            ") never completes: devices {" + missing + "} do not reach it" + both +
            (arrived.empty() ? "" : ", devices {" + arrived + "} wait") +
            "; a deadlock: mismatched channels, or a collective in a branch or loop that "
            "some participants do not run" +
            (std::count(simulated_.begin(), simulated_.end(), true) == 1 && simulated_.size() > 1
                 ? " (symmetry: device 0 simulated for all)"
                 : "")));
  }
  return InvalidArgument(module.filename() +
                         ": error: the simulation stopped with devices "
                         "still waiting");
}

void SpmdRendezvous::Transfer(const CollectivePlan& plan, int64_t execution, int64_t now,
                              Rendezvous& r) {
  const auto [it, added] =
      instances_.try_emplace({plan.key, execution}, result_.collectives.size());
  if (added) Join(plan, execution, now, *r.named);
  const size_t record = it->second;
  instance_rendezvous_[record].push_back(&r);
  if (network_index_[record] == kUntimed) {
    r.end = now;  // the error stops every waiting device at its next wake-up
    r.done.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  if (!added) return Refresh(record, now);
  for (const size_t index : network_.in_flight())
    network_.instance(index).member->Moved(index, now);
}

void SpmdRendezvous::Join(const CollectivePlan& plan, int64_t execution, int64_t now,
                          const hlo::HloInstruction& named) {
  CollectiveRecord& record = result_.collectives.emplace_back();
  record.instruction = &named;
  record.kind = plan.kind;
  record.execution = execution;
  record.start_cycle = now;
  record.bytes = plan.bytes;
  record.groups = plan.participants.groups;
  instance_rendezvous_.emplace_back();
  network_index_.push_back(kUntimed);
  ici::Collective collective;
  collective.kind = plan.kind;
  collective.groups = plan.participants.groups;
  collective.pairs = plan.participants.pairs;
  for (std::vector<int64_t>& group : collective.groups) {
    for (int64_t& device : group) device = OnNetwork(device);
  }
  for (auto& [source, target] : collective.pairs) {
    source = OnNetwork(source);
    target = OnNetwork(target);
  }
  collective.bytes = plan.bytes;
  if (!plan.ragged_traffic.empty()) {
    const RaggedTraffic& traffic = plan.ragged_traffic.At(execution);
    record.bytes = collective.bytes = traffic.bytes;
    collective.sent_bytes = traffic.sent_bytes;
  }
  collective.algorithm = algorithm_;
  const StatusOr<size_t> joined = network_.Join(std::move(collective), now, *this);
  if (!joined.ok()) {
    // Recorded for SimulateBatch; the run ends without the SystemC stop banner.
    if (error_.ok()) {
      error_ =
          Status(joined.status().code(), named.name() + ": the interconnect cannot time this " +
                                             std::string(CollectiveKindSpelling(plan.kind)) + ": " +
                                             joined.status().message());
    }
    return;
  }
  network_index_.back() = *joined;
  record_of_[*joined] = result_.collectives.size() - 1;
}

void SpmdRendezvous::Refresh(size_t record, int64_t now) {
  const NetworkInstance& instance = network_.instance(network_index_[record]);
  CollectiveRecord& out = result_.collectives[record];
  const ici::CollectiveTiming& timing = instance.timing;
  out.ici_bytes = timing.ici_bytes;
  out.algorithm = timing.algorithm;
  out.explanation = timing.explanation;
  out.links = timing.links;
  out.contention_cycles = instance.cycles - instance.alone_cycles;
  out.cycles = 0;
  for (Rendezvous* r : instance_rendezvous_[record]) {
    r->end = SatAdd(r->start, instance.cycles);
    out.cycles = std::max(out.cycles, r->end - out.start_cycle);
    if (r->end < now) continue;  // passed: nobody waits for it
    r->done.cancel();
    r->done.notify(CyclesToTime(r->end - now));
  }
}

}  // namespace tpusim::timing
