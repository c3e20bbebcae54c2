#include "sim/timing/shared_network.h"

#include <algorithm>
#include <utility>

#include "sim/chip/arith.h"

namespace tpusim::timing {

namespace {
constexpr int64_t kPicosecondsPerSecond = 1'000'000'000'000;
}  // namespace

SharedNetwork::SharedNetwork(const ici::CollectiveTimer& timer, int64_t clock_hz)
    : timer_(timer), clock_hz_(clock_hz) {}

int64_t SharedNetwork::CyclesOf(Picoseconds duration) const {
  // Whole cycles, rounded up: a transfer never ends early.
  return chip::MulDivCeil(std::max<int64_t>(0, duration.value()), clock_hz_,
                          kPicosecondsPerSecond);
}

StatusOr<size_t> SharedNetwork::Join(ici::Collective collective, int64_t now,
                                     std::tuple<int64_t, int64_t, int64_t> order) {
  collective.start = Picoseconds(chip::MulDivCeil(now, kPicosecondsPerSecond, clock_hz_));
  StatusOr<ici::CollectiveTiming> alone = timer_.Time(collective);
  if (!alone.ok() && alone.status().code() == StatusCode::kInvalidArgument &&
      collective.algorithm != ici::Algorithm::kAuto) {
    // The algorithm asked for applies to the collectives that can run it
    // (a ring cannot run a permute); the others run the default.
    collective.algorithm = ici::Algorithm::kAuto;
    alone = timer_.Time(collective);
  }
  if (!alone.ok()) return alone.status();

  in_flight_.clear();
  for (size_t i = period_begin_; i < instances_.size(); ++i) {
    if (instances_[i].start_cycle + instances_[i].cycles > now) in_flight_.push_back(i);
  }
  if (in_flight_.empty()) period_begin_ = instances_.size();  // the network was idle
  const size_t index = instances_.size();
  NetworkInstance& added = instances_.emplace_back();
  added.collective = std::move(collective);
  added.order = order;
  added.start_cycle = now;
  added.alone_cycles = CyclesOf(alone->duration);
  added.cycles = added.alone_cycles;
  added.timing = std::move(*alone);
  const bool shared = !in_flight_.empty();
  in_flight_.push_back(index);
  if (!shared) return index;

  // The busy period again, in an order that does not depend on which
  // SystemC process arrived first.
  std::vector<size_t> batch;
  for (size_t i = period_begin_; i < instances_.size(); ++i) batch.push_back(i);
  std::stable_sort(batch.begin(), batch.end(), [&](size_t a, size_t b) {
    return instances_[a].order < instances_[b].order;
  });
  std::vector<ici::Collective> collectives;
  for (const size_t i : batch) collectives.push_back(instances_[i].collective);
  StatusOr<std::vector<ici::CollectiveTiming>> together = timer_.TimeConcurrent(collectives);
  if (!together.ok()) {
    instances_.pop_back();  // indices stay those of the joins that succeeded
    in_flight_.clear();
    return together.status();
  }
  std::vector<ici::CollectiveTiming>& timings = *together;
  for (size_t k = 0; k < batch.size(); ++k) {
    NetworkInstance& instance = instances_[batch[k]];
    // Finished before `now`: its past, and so its answer, is unchanged.
    if (std::find(in_flight_.begin(), in_flight_.end(), batch[k]) == in_flight_.end()) continue;
    instance.cycles = CyclesOf(timings[k].duration);
    instance.timing = std::move(timings[k]);
  }
  return index;
}

}  // namespace tpusim::timing
