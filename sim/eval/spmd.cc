// Evaluator::EvaluateSpmd: every device of an SPMD program on its own thread,
// meeting at one CollectiveHub. A device that fails stops the others through
// the hub, so every thread ends and is joined before the result is returned.
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/eval/collective_hub.h"
#include "sim/eval/evaluator.h"
#include "sim/eval/kernels.h"

namespace tpusim::eval {

StatusOr<std::vector<value::Literal>> Evaluator::EvaluateSpmd(
    const hlo::HloModule& module, std::span<const std::vector<value::Literal>> args) const {
  return EvaluateSpmd(module, SpmdConfig::FromModule(module), args);
}

StatusOr<std::vector<value::Literal>> Evaluator::EvaluateSpmd(
    const hlo::HloModule& module, SpmdConfig config,
    std::span<const std::vector<value::Literal>> args) const {
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
  const int64_t n = config.device_count();
  if (static_cast<int64_t>(args.size()) != n) {
    return InvalidArgument(module.filename() + ": " + std::to_string(n) +
                           " devices need one argument list each, got " +
                           std::to_string(args.size()));
  }
  std::vector<int64_t> all(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) all[d] = d;
  CollectiveHub hub(module, config, all);
  std::vector<StatusOr<value::Literal>> results(static_cast<size_t>(n), value::Literal());
  auto run = [&](int64_t d) {
    results[d] = EvaluateOnDevice(module, options_, config.Device(d), hub, args[d]);
    hub.Finish(d, results[d].status());
  };
  if (n == 1) {
    run(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(n));
    for (int64_t d = 0; d < n; ++d) threads.emplace_back(run, d);
    for (std::thread& thread : threads) thread.join();
  }
  TPUSIM_RETURN_IF_ERROR(hub.error());
  std::vector<value::Literal> outputs;
  outputs.reserve(static_cast<size_t>(n));
  for (StatusOr<value::Literal>& result : results) outputs.push_back(std::move(result).value());
  return outputs;
}

}  // namespace tpusim::eval
