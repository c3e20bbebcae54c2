// Evaluator::EvaluateSpmd: every device of an SPMD program on its own thread,
// meeting at one CollectiveHub. A device that fails stops the others through
// the hub, so every thread ends and is joined before the result is returned.
#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/eval/collective_hub.h"
#include "sim/eval/evaluator.h"
#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

/// Counts within what one thread per device can run, checked before any
/// per-device list is sized from them (their product could overflow).
Status CheckConfig(const hlo::HloModule& module, const SpmdConfig& config) {
  if (config.replica_count < 1 || config.partition_count < 1 ||
      config.replica_count > hlo::kMaxSpmdDevices ||
      config.partition_count > hlo::kMaxSpmdDevices ||
      config.device_count() > hlo::kMaxSpmdDevices) {
    return InvalidArgument(module.filename() + ": SPMD config of " +
                           std::to_string(config.replica_count) + " replicas x " +
                           std::to_string(config.partition_count) +
                           " partitions: each count must be at least 1 and the devices at most " +
                           std::to_string(hlo::kMaxSpmdDevices));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<value::Literal>> Evaluator::EvaluateSpmd(
    const hlo::HloModule& module, std::span<const std::vector<value::Literal>> args) const {
  return EvaluateSpmd(module, SpmdConfig::FromModule(module), args);
}

StatusOr<std::vector<value::Literal>> Evaluator::EvaluateSpmd(
    const hlo::HloModule& module, SpmdConfig config,
    std::span<const std::vector<value::Literal>> args) const {
  TPUSIM_RETURN_IF_ERROR(CheckConfig(module, config));
  std::vector<int64_t> all(static_cast<size_t>(config.device_count()));
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
  return EvaluateSpmd(module, config, all, args);
}

StatusOr<std::vector<value::Literal>> Evaluator::EvaluateSpmd(
    const hlo::HloModule& module, SpmdConfig config, std::span<const int64_t> devices,
    std::span<const std::vector<value::Literal>> args) const {
  TPUSIM_RETURN_IF_ERROR(CheckConfig(module, config));
  const size_t n = devices.size();
  if (args.size() != n) {
    return InvalidArgument(module.filename() + ": " + std::to_string(n) +
                           " devices need one argument list each, got " +
                           std::to_string(args.size()));
  }
  for (size_t i = 0; i < n; ++i) {
    if (devices[i] < 0 || devices[i] >= config.device_count() ||
        (i > 0 && devices[i] <= devices[i - 1])) {
      return InvalidArgument(module.filename() + ": devices to evaluate must be ascending device "
                             "numbers below " + std::to_string(config.device_count()));
    }
  }
  CollectiveHub hub(module, config, std::vector<int64_t>(devices.begin(), devices.end()));
  TPUSIM_RETURN_IF_ERROR(hub.CheckClosed());
  std::vector<StatusOr<value::Literal>> results(n, value::Literal());
  // Each device records into a record of its own, so that threads never
  // share a writer; device 0's is the caller's.
  std::vector<RunRecord> records(options_.record != nullptr ? n : 0);
  auto run = [&](size_t i) {
    EvaluatorOptions options = options_;
    if (options.record != nullptr && devices[i] != 0) options.record = &records[i];
    results[i] = EvaluateOnDevice(module, options, config.Device(devices[i]), hub, args[i]);
    hub.Finish(devices[i], results[i].status());
  };
  if (n == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (size_t i = 0; i < n; ++i) threads.emplace_back(run, i);
    for (std::thread& thread : threads) thread.join();
  }
  TPUSIM_RETURN_IF_ERROR(hub.error());
  // Each other device's record, kept by device number where it holds anything.
  const auto keep = [](auto& by_device, int64_t device, auto& values) {
    if (!values.empty()) by_device[device] = std::move(values);
  };
  for (size_t i = 0; i < records.size(); ++i) {  // empty unless recording
    if (devices[i] == 0) continue;
    RunRecord& all = *options_.record;
    keep(all.device_trip_counts, devices[i], records[i].trip_counts);
    keep(all.device_branches, devices[i], records[i].branches);
    keep(all.device_ragged_group_shares, devices[i], records[i].ragged_group_shares);
    keep(all.device_ragged_send_sizes, devices[i], records[i].ragged_send_sizes);
  }
  std::vector<value::Literal> outputs;
  outputs.reserve(n);
  for (StatusOr<value::Literal>& result : results) outputs.push_back(std::move(result).value());
  return outputs;
}

StatusOr<value::Literal> Evaluator::EvaluateAlike(const hlo::HloModule& module, SpmdConfig config,
                                                  std::span<const value::Literal> args) const {
  TPUSIM_RETURN_IF_ERROR(CheckConfig(module, config));
  CollectiveHub hub(module, config, {0}, /*others_alike=*/true);
  StatusOr<value::Literal> result = EvaluateOnDevice(module, options_, config.Device(0), hub, args);
  hub.Finish(0, result.status());
  TPUSIM_RETURN_IF_ERROR(hub.error());
  return result;
}

StatusOr<std::optional<std::string>> WhyDevicesDiffer(const hlo::HloModule& module,
                                                      const SpmdConfig& config) {
  const int64_t n = config.device_count();
  for (const auto& computation : module.computations()) {
    for (const auto& owned : computation->instructions()) {
      const hlo::HloInstruction& inst = *owned;
      const auto named = [&](const hlo::HloInstruction& at, std::string_view what) {
        const hlo::SourceLocation loc = at.location();
        return std::optional<std::string>(at.OpcodeSpelling() + " " + at.name() + " (" +
                                          module.filename() + ":" + std::to_string(loc.line) +
                                          ":" + std::to_string(loc.column) + ") " +
                                          std::string(what));
      };
      if (inst.opcode() == hlo::HloOpcode::kReplicaId ||
          inst.opcode() == hlo::HloOpcode::kPartitionId) {
        return named(inst, "reads its device's id");
      }
      if (inst.opcode() == hlo::HloOpcode::kInfeed) {
        return named(inst, "reads each device's own data");
      }
      if (TakesItsPartitionsTile(inst)) return named(inst, "takes its partition's tile");
      const std::optional<hlo::CollectiveSite> site = hlo::FindCollective(inst);
      if (!site.has_value()) continue;
      switch (hlo::CollectiveKindOf(site->opcode)) {
        case hlo::CollectiveKind::kNone:
        case hlo::CollectiveKind::kCollectiveBroadcast:
          break;  // every device gets the one source's value
        case hlo::CollectiveKind::kAllGather:
        case hlo::CollectiveKind::kAllReduce: {
          TPUSIM_ASSIGN_OR_RETURN(
              const hlo::CollectiveParticipants participants,
              hlo::ResolveCollective(module, *site->inst, site->opcode, config));
          for (const std::vector<int64_t>& group : participants.groups) {
            if (group.size() != participants.groups.front().size()) {
              return named(inst, "has groups of different sizes");
            }
          }
          break;
        }
        case hlo::CollectiveKind::kCollectivePermute: {
          TPUSIM_ASSIGN_OR_RETURN(
              const hlo::CollectiveParticipants participants,
              hlo::ResolveCollective(module, *site->inst, site->opcode, config));
          std::vector<bool> receives(static_cast<size_t>(n), false);
          for (const auto& [source, target] : participants.pairs) receives[target] = true;
          if (std::find(receives.begin(), receives.end(), false) != receives.end()) {
            return named(inst, "sends nothing to some devices");
          }
          break;
        }
        case hlo::CollectiveKind::kAllToAll:
        case hlo::CollectiveKind::kRaggedAllToAll:
        case hlo::CollectiveKind::kReduceScatter:
          return named(inst, "gives each device a different part");
        case hlo::CollectiveKind::kSendRecv:
          return named(inst, "moves data between particular devices");
      }
    }
  }
  return std::optional<std::string>();
}

}  // namespace tpusim::eval
