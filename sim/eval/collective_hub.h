// CollectiveHub: where the devices of an SPMD evaluation meet. Each device
// runs on its own thread and shares nothing mutable with the others except
// through the hub, which serves two kinds of exchange:
//  - rendezvous (all-reduce, all-gather, all-to-all, collective-permute, ...):
//    every participant blocks until all have arrived at the same execution of
//    the same instruction; one of them then computes every participant's
//    result from the contributions in participant order, so the values never
//    depend on which thread arrived last;
//  - mailboxes (send/recv): a send never blocks; a recv-done blocks until the
//    matching send has posted its data.
// The hub never hangs: when every device still running is blocked, nothing
// can complete, and the hub fails them all with an error naming the waits.
// Internal to sim/eval.
#ifndef TPUSIM_SIM_EVAL_COLLECTIVE_HUB_H_
#define TPUSIM_SIM_EVAL_COLLECTIVE_HUB_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "sim/base/status.h"
#include "sim/eval/evaluator.h"
#include "sim/hlo/instruction.h"
#include "sim/hlo/module.h"
#include "sim/value/literal.h"

namespace tpusim::eval {

class CollectiveHub {
 public:
  /// `running`: the device numbers being evaluated (each by one thread, which
  /// calls Finish when it is done). Collectives may only involve these,
  /// unless `others_alike`: then a device not evaluated contributes what the
  /// evaluated participant does, which is exact only for a program whose
  /// devices all compute the same values (Evaluator::EvaluateAlike).
  CollectiveHub(const hlo::HloModule& module, SpmdConfig config, std::vector<int64_t> running,
                bool others_alike = false);

  const SpmdConfig& config() const { return config_; }

  /// An error at the first collective of the module (in text order) with a
  /// group that holds a device being evaluated and one that is not, naming
  /// the first such device; Ok when the devices evaluated are closed under
  /// every collective. Checked before any device runs: found at run time, the
  /// device reported would be whichever thread got there first.
  Status CheckClosed() const;

  /// Contributions of a rendezvous, one list of operand values per
  /// participant, in participant order.
  using Contributions = std::vector<std::vector<const value::Literal*>>;
  /// Computes the results of a rendezvous from all contributions: one per
  /// participant (in participant order), or a single one every participant
  /// receives a copy of.
  using ExchangeFn = std::function<StatusOr<std::vector<value::Literal>>(const Contributions&)>;

  /// Device `device` arrives at its next execution of `inst` with
  /// `contribution` (values that stay alive until this returns), among
  /// `participants` (device numbers in group order, including `device`).
  /// Blocks until every participant has arrived, then returns this device's
  /// result. `exchange` runs once per rendezvous, on one participant's thread.
  StatusOr<value::Literal> Rendezvous(const hlo::HloInstruction& inst, int64_t device,
                                      const std::vector<int64_t>& participants,
                                      std::vector<const value::Literal*> contribution,
                                      const ExchangeFn& exchange);

  /// send: posts `data` from `source` to `target` on `channel`. Messages of
  /// one (channel, source, target) are received in the order sent.
  void Send(int64_t channel, int64_t source, int64_t target, value::Literal data);
  /// recv on device `target`: reserves the next message from `source` on
  /// `channel` (source -1: the device is no target and receives zeros) and
  /// returns a ticket for CompleteReceive; an error when `source` is not
  /// being evaluated.
  StatusOr<int64_t> PostReceive(const hlo::HloInstruction& recv, int64_t channel, int64_t source,
                      int64_t target);
  /// recv-done on device `target`: blocks until the message of `ticket`
  /// arrives and returns it; nullopt when the recv has no source.
  StatusOr<std::optional<value::Literal>> CompleteReceive(const hlo::HloInstruction& recv_done,
                                                          int64_t target, int64_t ticket);

  /// Device `device` has stopped: finished, or failed with `status`, which
  /// cancels every other device (their waits return an error).
  void Finish(int64_t device, const Status& status);
  /// What stopped the evaluation, or Ok: the failure of the lowest-numbered
  /// device that failed on its own (several may, on threads in any order:
  /// the report must not depend on which came first), else the deadlock.
  Status error() const;

 private:
  /// One execution of a collective by one group: (instruction id, the
  /// execution's number on each device, first participant).
  using MeetingKey = std::tuple<int64_t, int64_t, int64_t>;
  struct Meeting {
    const hlo::HloInstruction* inst = nullptr;
    std::vector<int64_t> participants;
    Contributions contributions;
    std::vector<bool> arrived;
    int64_t arrived_count = 0;
    /// Participants that take a result: the evaluated ones.
    int64_t takers = 0;
    /// The last arrival is computing the results, unlocked, from the others'
    /// operands: until it is done they must not leave, even on an abort.
    bool exchanging = false;
    bool done = false;
    Status status;
    std::vector<value::Literal> results;
    int64_t taken = 0;
  };
  /// (channel, source, target) and, for a message, its number on that link.
  using Link = std::tuple<int64_t, int64_t, int64_t>;
  using MessageKey = std::tuple<int64_t, int64_t, int64_t, int64_t>;
  struct Ticket {
    const hlo::HloInstruction* recv = nullptr;
    int64_t channel = 0;
    int64_t source = -1;
    int64_t number = 0;
  };
  /// What one device is doing, for the deadlock report.
  struct DeviceState {
    /// One of the devices this hub was built for.
    bool evaluated = false;
    /// Evaluated and not finished.
    bool running = false;
    /// Executions so far of each collective instruction, by unique id.
    std::map<int64_t, int64_t> executions;
    /// Receives posted by this device, indexed by ticket.
    std::vector<Ticket> tickets;
    /// Set while blocked: the meeting or the message waited for.
    std::optional<MeetingKey> waiting_meeting;
    std::optional<MessageKey> waiting_message;
    const hlo::HloInstruction* waiting_at = nullptr;
    /// Its own failure, not the cancellation another device's caused.
    std::optional<Status> failure;
  };

  /// Blocks on `cv_` until `ready()` or the evaluation is aborted; counts the
  /// caller as blocked meanwhile and detects a deadlock. Needs `lock` held,
  /// and the caller's waiting_* fields set.
  /// The waker (a rendezvous' completer, a send) clears the wait and the count.
  Status WaitLocked(std::unique_lock<std::mutex>& lock, const std::function<bool()>& ready);
  /// An error unless every one of `devices` is being evaluated.
  Status CheckEvaluated(const hlo::HloInstruction& inst,
                        const std::vector<int64_t>& devices) const;
  /// Fails every device with `status` (the first failure wins).
  void AbortLocked(Status status);
  /// Aborts with a deadlock report when every running device is blocked.
  void CheckDeadlockLocked();
  std::string DescribeDeadlockLocked() const;
  std::string DeviceName(int64_t device) const;
  std::string Where(const hlo::HloInstruction& inst) const;

  /// For FILE:LINE:COL in messages.
  const hlo::HloModule& module_;
  const SpmdConfig config_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<DeviceState> devices_;
  int64_t running_count_ = 0;
  const bool others_alike_;
  int64_t blocked_count_ = 0;
  /// Set once: the evaluation stops and every wait returns it.
  std::optional<Status> abort_;
  /// Ordered maps: the deadlock report lists waits in a fixed order.
  std::map<MeetingKey, Meeting> meetings_;
  std::map<MessageKey, value::Literal> mail_;
  std::map<Link, int64_t> sent_, reserved_;
};

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_COLLECTIVE_HUB_H_
