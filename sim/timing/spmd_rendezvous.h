// Where the devices of an SPMD run meet at collectives (docs/models.md,
// "SPMD runtime"). A collective is a rendezvous of its group: the last
// participant to arrive puts the instance on the shared network
// (SharedNetwork), which times it with the collectives still in flight and
// may move their ends; a sync collective's participants continue when the
// transfer ends, an async one's *-done waits for it, each woken by its
// rendezvous' event at the end as it stands. The engine's TensorCore threads
// arrive and wait here; this file knows SystemC events, not modules.
#ifndef TPUSIM_SIM_TIMING_SPMD_RENDEZVOUS_H_
#define TPUSIM_SIM_TIMING_SPMD_RENDEZVOUS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/module.h"
#include "sim/ici/interconnect.h"
#include "sim/timing/collective_plan.h"
#include "sim/timing/shared_network.h"
#include "sim/timing/timing.h"

namespace tpusim::timing {

/// One group (for send/recv: one pair) of one instance of a collective:
/// complete when each of its simulated participants has made the arrivals it
/// owes (ArrivalsOwed).
struct Rendezvous {
  const CollectivePlan* plan = nullptr;
  int64_t execution = 0;
  int32_t group = 0;
  /// The instruction the instance's record names (the send, once it arrived).
  const hlo::HloInstruction* named = nullptr;
  int64_t expected = 0;
  std::map<int64_t, int64_t> owed;      ///< device -> arrivals it owes
  std::map<int64_t, int64_t> arrivals;  ///< device -> arrivals so far
  int64_t arrived = 0;
  bool complete = false;
  int64_t start = 0;  ///< cycle the last participant arrived
  /// Cycle its transfer ends, as the network stands: a collective joining
  /// later may move it until it has passed.
  int64_t end = 0;
  /// Notified at `end` (again whenever `end` moves) and on an interconnect error.
  sc_core::sc_event done;
};

/// The collectives of one job's SPMD run: rendezvous, the collective
/// timeline and the link totals. SystemC runs its processes one at a time,
/// so no locking.
class SpmdRendezvous : public NetworkMember {
 public:
  /// `network` (which other jobs may share) and `result` outlive this;
  /// `simulated` is by device number; the job's device d is the network's
  /// device `placement[d]` (empty: d).
  SpmdRendezvous(SharedNetwork& network, ici::Algorithm algorithm, CollectivePlans plans,
                 std::vector<bool> simulated, std::vector<int64_t> placement, TimingResult& result);

  /// The plan of `inst` when `device` takes part in it, else nullptr.
  const CollectivePlan* PlanFor(const hlo::HloInstruction& inst, int64_t device) const {
    const CollectivePlan* plan = plans_[inst.unique_id()].get();
    return plan != nullptr && plan->group_of_device[device] >= 0 ? plan : nullptr;
  }

  /// `device` arrives at rendezvous `group` of its `execution`-th execution
  /// of `plan`'s instance at cycle `now`; the last arrival completes it and
  /// times it.
  Rendezvous& Arrive(const CollectivePlan& plan, int64_t execution, int32_t group, int64_t device,
                     int64_t now);

  /// Waits (the calling thread's kernel synchronised) until `r` is complete
  /// and its end has passed; false when the run was stopped.
  bool AwaitEnd(const Rendezvous& r) const;

  const Status& error() const { return error_; }

  /// Why the run stopped with devices still waiting: each incomplete group
  /// with the devices that never arrived.
  Status Deadlock(const hlo::HloModule& module) const;

 private:
  /// Rendezvous `r` completed at `now`: the first group of its instance
  /// puts the instance (every group) on the network, which may move the ends
  /// of the instances in flight; a later group (a straggler) takes the
  /// instance's network time from its own start.
  void Transfer(const CollectivePlan& plan, int64_t execution, int64_t now, Rendezvous& r);

  /// Records a new instance and puts it on the network at `now`.
  void Join(const CollectivePlan& plan, int64_t execution, int64_t now,
            const hlo::HloInstruction& named);

  /// Copies instance `record`'s network answer into its record and moves the
  /// ends of its rendezvous (and their events) to match.
  void Refresh(size_t record, int64_t now);

  /// NetworkMember: one of this job's instances moved.
  void Moved(size_t index, int64_t now) override { Refresh(record_of_.at(index), now); }

  /// The job's device `device` as the network numbers it.
  int64_t OnNetwork(int64_t device) const {
    return placement_.empty() ? device : placement_[device];
  }

  SharedNetwork& network_;
  ici::Algorithm algorithm_;
  CollectivePlans plans_;
  std::vector<bool> simulated_;  ///< by device number
  std::vector<int64_t> placement_;
  TimingResult& result_;
  std::map<std::tuple<int64_t, int64_t, int32_t>, std::unique_ptr<Rendezvous>> rendezvous_;
  std::map<std::pair<int64_t, int64_t>, size_t> instances_;  ///< (key, execution) -> record
  static constexpr size_t kUntimed = SIZE_MAX;               ///< the interconnect could not time it
  std::vector<size_t> network_index_;  ///< by record: its SharedNetwork index, or kUntimed
  /// SharedNetwork index -> its record, for this job's instances (the
  /// network's others belong to the jobs sharing it).
  std::map<size_t, size_t> record_of_;
  /// By record: its completed rendezvous, whose ends follow its network time.
  std::vector<std::vector<Rendezvous*>> instance_rendezvous_;
  Status error_;
};

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_SPMD_RENDEZVOUS_H_
