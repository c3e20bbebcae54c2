#include "sim/timing/shared_network.h"

#include <algorithm>
#include <utility>

#include "sim/base/arith.h"

namespace tpusim::timing {

namespace {
constexpr int64_t kPicosecondsPerSecond = 1'000'000'000'000;
}  // namespace

SharedNetwork::SharedNetwork(const ici::CollectiveTimer& timer, int64_t clock_hz)
    : timer_(timer), session_(timer.NewSession()), clock_hz_(clock_hz) {}

int64_t SharedNetwork::CyclesOf(Picoseconds duration) const {
  // Whole cycles, rounded up: a transfer never ends early.
  return MulDivCeil(std::max<int64_t>(0, duration.value()), clock_hz_,
                          kPicosecondsPerSecond);
}

StatusOr<size_t> SharedNetwork::Join(ici::Collective collective, int64_t now,
                                     NetworkMember& member) {
  collective.start = Picoseconds(MulDivCeil(now, kPicosecondsPerSecond, clock_hz_));
  StatusOr<ici::NetworkSession::Joined> joined = session_->Join(collective);
  if (!joined.ok() && joined.status().code() == StatusCode::kInvalidArgument &&
      collective.algorithm != ici::Algorithm::kAuto) {
    // The algorithm asked for applies to the collectives that can run it
    // (a ring cannot run a permute); the others run the default.
    collective.algorithm = ici::Algorithm::kAuto;
    joined = session_->Join(collective);
  }
  if (!joined.ok()) return joined.status();

  const size_t index = instances_.size();
  NetworkInstance& added = instances_.emplace_back();
  added.member = &member;
  added.start_cycle = now;
  added.start = collective.start;
  added.cycles = CyclesOf(joined->timing.duration);
  added.alone_cycles = added.cycles;
  added.timing = std::move(joined->timing);
  in_flight_.clear();
  for (const auto& [id, end] : joined->ends) {
    NetworkInstance& instance = instances_[id];
    instance.cycles = CyclesOf(end - instance.start);
    in_flight_.push_back(id);
  }
  if (in_flight_.size() > 1) {
    // Shared: its time alone, for the contention it records.
    StatusOr<ici::CollectiveTiming> alone = timer_.Time(collective);
    if (!alone.ok()) return alone.status();
    added.alone_cycles = CyclesOf(alone->duration);
  }
  return index;
}

}  // namespace tpusim::timing
