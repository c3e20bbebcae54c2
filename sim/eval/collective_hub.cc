#include "sim/eval/collective_hub.h"

#include <algorithm>
#include <utility>

#include "sim/hlo/collective_groups.h"

namespace tpusim::eval {

using hlo::HloInstruction;
using value::Literal;

CollectiveHub::CollectiveHub(const hlo::HloModule& module, SpmdConfig config,
                             std::vector<int64_t> running, bool others_alike)
    : module_(module),
      config_(config),
      devices_(static_cast<size_t>(config.device_count())),
      others_alike_(others_alike) {
  for (int64_t device : running) {
    devices_[device].evaluated = true;
    devices_[device].running = true;
    ++running_count_;
  }
}

std::string CollectiveHub::DeviceName(int64_t device) const {
  const DeviceId id = config_.Device(device);
  return "device " + std::to_string(device) + " (replica " + std::to_string(id.replica_id) +
         ", partition " + std::to_string(id.partition_id) + ")";
}

std::string CollectiveHub::Where(const HloInstruction& inst) const {
  const hlo::SourceLocation loc = inst.location();
  return inst.OpcodeSpelling() + " " + inst.name() + " at " + module_.filename() + ":" +
         std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

Status CollectiveHub::CheckClosed() const {
  const auto evaluated = std::count_if(devices_.begin(), devices_.end(),
                                       [](const DeviceState& d) { return d.evaluated; });
  if (evaluated == config_.device_count() || others_alike_) return Status::Ok();
  return hlo::ForEachCollectiveGroup(
      module_, config_, [&](const hlo::CollectiveSite& site, const std::vector<int64_t>& group) {
        const bool touches = std::any_of(group.begin(), group.end(), [&](int64_t d) {
          return d >= 0 && d < config_.device_count() && devices_[d].evaluated;
        });
        return touches ? CheckEvaluated(*site.inst, group) : Status::Ok();
      });
}

Status CollectiveHub::CheckEvaluated(const HloInstruction& inst,
                                     const std::vector<int64_t>& devices) const {
  for (int64_t device : devices) {
    if (device < 0 || device >= config_.device_count() || !devices_[device].evaluated) {
      return FailedPrecondition(module_.ErrorAt(
          inst.location(), inst.OpcodeSpelling() + " " + inst.name() + ": needs device " +
                               std::to_string(device) +
                               ", which is not being evaluated (Evaluator::EvaluateSpmd runs "
                               "every device of the program)"));
    }
  }
  return Status::Ok();
}

StatusOr<Literal> CollectiveHub::Rendezvous(const HloInstruction& inst, int64_t device,
                                            const std::vector<int64_t>& participants,
                                            std::vector<const Literal*> contribution,
                                            const ExchangeFn& exchange) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (abort_) return *abort_;
  if (!others_alike_) TPUSIM_RETURN_IF_ERROR(CheckEvaluated(inst, participants));
  const auto pos_it = std::find(participants.begin(), participants.end(), device);
  if (pos_it == participants.end()) {
    return Internal(module_.ErrorAt(inst.location(), "a device rendezvous outside its group"));
  }
  const size_t pos = static_cast<size_t>(pos_it - participants.begin());
  const size_t n = participants.size();
  const int64_t execution = devices_[device].executions[inst.unique_id()]++;
  const MeetingKey key{inst.unique_id(), execution, participants.front()};
  auto [it, inserted] = meetings_.try_emplace(key);
  Meeting& meeting = it->second;
  if (inserted) {
    meeting.inst = &inst;
    meeting.participants = participants;
    meeting.contributions.resize(n);
    meeting.arrived.assign(n, false);
    for (size_t i = 0; i < n; ++i) {
      const int64_t p = participants[i];
      if (p >= 0 && p < config_.device_count() && devices_[p].evaluated) {
        ++meeting.takers;
      } else if (others_alike_ && i != pos) {
        // A device that is not evaluated brings what this one brings.
        meeting.contributions[i] = contribution;
        meeting.arrived[i] = true;
        ++meeting.arrived_count;
      }
    }
  } else if (meeting.participants != participants || meeting.arrived[pos]) {
    Status mismatch = FailedPrecondition(module_.ErrorAt(
        inst.location(), inst.OpcodeSpelling() + " " + inst.name() + ": " + DeviceName(device) +
                             " disagrees with the other participants about the group"));
    AbortLocked(mismatch);
    return mismatch;
  }
  meeting.contributions[pos] = std::move(contribution);
  meeting.arrived[pos] = true;
  ++meeting.arrived_count;

  if (meeting.arrived_count == static_cast<int64_t>(n)) {
    // Every participant is here and blocked: their contributions stay put
    // while the results are computed without holding the lock.
    meeting.exchanging = true;
    lock.unlock();
    StatusOr<std::vector<Literal>> results = exchange(meeting.contributions);
    lock.lock();
    meeting.exchanging = false;
    if (results.ok() && results->size() != 1 && results->size() != n) {
      results = Internal("a collective exchange returned the wrong number of results");
    }
    if (results.ok()) {
      meeting.results = std::move(results).value();
    } else {
      meeting.status = results.status();
    }
    meeting.done = true;
    for (int64_t p : participants) {
      if (p != device && devices_[p].waiting_meeting == key) {
        devices_[p].waiting_meeting.reset();
        --blocked_count_;
      }
    }
    cv_.notify_all();
  } else {
    devices_[device].waiting_meeting = key;
    devices_[device].waiting_at = &inst;
    if (Status waited = WaitLocked(lock, [&meeting] { return meeting.done; }); !waited.ok()) {
      // Aborted by another device's failure. If the results are being
      // computed, they read this device's operands: leaving now would free
      // them under the exchange.
      cv_.wait(lock, [&meeting] { return !meeting.exchanging; });
      return waited;
    }
  }

  const bool last = ++meeting.taken == meeting.takers;
  if (!meeting.status.ok()) {
    Status status = meeting.status;
    if (last) meetings_.erase(it);
    return status;
  }
  Literal result;
  if (meeting.results.size() == 1) {
    result = last ? std::move(meeting.results[0]) : meeting.results[0];
  } else {
    result = std::move(meeting.results[pos]);
  }
  if (last) meetings_.erase(it);
  return result;
}

void CollectiveHub::Send(int64_t channel, int64_t source, int64_t target, Literal data) {
  std::lock_guard<std::mutex> lock(mutex_);
  const MessageKey key{channel, source, target, sent_[{channel, source, target}]++};
  mail_.insert_or_assign(key, std::move(data));
  if (target >= 0 && target < config_.device_count() && devices_[target].waiting_message == key) {
    devices_[target].waiting_message.reset();
    --blocked_count_;
    cv_.notify_all();
  }
}

StatusOr<int64_t> CollectiveHub::PostReceive(const HloInstruction& recv, int64_t channel,
                                             int64_t source, int64_t target) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (abort_) return *abort_;
  Ticket ticket{&recv, channel, source, 0};
  if (source >= 0) {
    TPUSIM_RETURN_IF_ERROR(CheckEvaluated(recv, {source}));
    ticket.number = reserved_[{channel, source, target}]++;
  }
  std::vector<Ticket>& tickets = devices_[target].tickets;
  tickets.push_back(ticket);
  return static_cast<int64_t>(tickets.size()) - 1;
}

StatusOr<std::optional<Literal>> CollectiveHub::CompleteReceive(const HloInstruction& recv_done,
                                                                int64_t target, int64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (abort_) return *abort_;
  const std::vector<Ticket>& tickets = devices_[target].tickets;
  if (ticket < 0 || ticket >= static_cast<int64_t>(tickets.size())) {
    return InvalidArgument(module_.ErrorAt(
        recv_done.location(), "recv-done " + recv_done.name() +
                                  ": its operand is not the result of a recv on this device"));
  }
  const Ticket t = tickets[ticket];
  if (t.source < 0) return std::optional<Literal>();
  const MessageKey key{t.channel, t.source, target, t.number};
  if (!mail_.contains(key)) {
    devices_[target].waiting_message = key;
    devices_[target].waiting_at = &recv_done;
    TPUSIM_RETURN_IF_ERROR(WaitLocked(lock, [&] { return mail_.contains(key); }));
  }
  auto node = mail_.extract(key);
  return std::optional<Literal>(std::move(node.mapped()));
}

Status CollectiveHub::WaitLocked(std::unique_lock<std::mutex>& lock,
                                 const std::function<bool()>& ready) {
  ++blocked_count_;
  CheckDeadlockLocked();
  cv_.wait(lock, [&] { return abort_.has_value() || ready(); });
  if (abort_) return *abort_;
  return Status::Ok();
}

void CollectiveHub::Finish(int64_t device, const Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  devices_[device].running = false;
  --running_count_;
  if (!status.ok()) {
    // A cancelled device fails with the abort's status; any other is its own.
    if (!abort_ || abort_->message() != status.message()) devices_[device].failure = status;
    AbortLocked(status);
  } else {
    CheckDeadlockLocked();
  }
}

Status CollectiveHub::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const DeviceState& device : devices_) {
    if (device.failure) return *device.failure;
  }
  return abort_.value_or(Status::Ok());
}

void CollectiveHub::AbortLocked(Status status) {
  if (!abort_) abort_ = std::move(status);
  cv_.notify_all();
}

void CollectiveHub::CheckDeadlockLocked() {
  if (abort_ || blocked_count_ == 0 || blocked_count_ < running_count_) return;
  AbortLocked(FailedPrecondition(DescribeDeadlockLocked()));
}

std::string CollectiveHub::DescribeDeadlockLocked() const {
  // What a device that never arrives is doing instead.
  auto doing = [&](int64_t device) {
    const DeviceState& state = devices_[device];
    if (!state.running) return DeviceName(device) + " finished without reaching it";
    return DeviceName(device) + " waits at " + Where(*state.waiting_at);
  };
  std::string report;
  auto add = [&](const HloInstruction& inst, const std::string& what) {
    if (!report.empty()) report += "\n";
    report += module_.ErrorAt(inst.location(),
                              inst.OpcodeSpelling() + " " + inst.name() + ": deadlock: " + what);
  };
  for (const auto& [key, meeting] : meetings_) {
    if (meeting.done) continue;
    std::string arrived, missing;
    for (size_t i = 0; i < meeting.participants.size(); ++i) {
      const int64_t p = meeting.participants[i];
      std::string& list = meeting.arrived[i] ? arrived : missing;
      if (meeting.arrived[i]) {
        list += (list.empty() ? "" : ", ") + std::to_string(p);
      } else {
        list += (list.empty() ? "" : "; ") + doing(p);
      }
    }
    add(*meeting.inst, "devices " + arrived +
                           " wait for the rest of their group, which never arrives: " + missing);
  }
  for (size_t device = 0; device < devices_.size(); ++device) {
    const DeviceState& state = devices_[device];
    if (!state.running || !state.waiting_message) continue;
    const auto& [channel, source, target, number] = *state.waiting_message;
    add(*state.waiting_at, DeviceName(target) + " waits for message " + std::to_string(number) +
                               " on channel " + std::to_string(channel) + " from " +
                               DeviceName(source) + ", which is never sent: " + doing(source));
  }
  return report;
}

}  // namespace tpusim::eval
