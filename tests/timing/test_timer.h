// A deterministic stand-in for the interconnect in timing tests: every
// collective takes a fixed time, alone or with others (nothing is shared),
// puts its bytes on link 0 and twice its bytes on link 1, and is remembered,
// so tests can assert exact cycles and what the runtime asked.
#ifndef TPUSIM_TESTS_TIMING_TEST_TIMER_H_
#define TPUSIM_TESTS_TIMING_TEST_TIMER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/base/units.h"
#include "sim/base/arith.h"
#include "sim/ici/interconnect.h"

namespace tpusim::timing {

class TestTimer : public ici::CollectiveTimer {
  class Session : public ici::NetworkSession {
   public:
    explicit Session(const TestTimer& timer) : timer_(timer) {}
    StatusOr<Joined> Join(const ici::Collective& collective) override {
      Joined joined;
      TPUSIM_ASSIGN_OR_RETURN(joined.timing, timer_.Time(collective));
      ends_.push_back(collective.start + joined.timing.duration);
      for (size_t id = 0; id < ends_.size(); ++id) {
        if (ends_[id] > collective.start || id + 1 == ends_.size()) {
          joined.ends.emplace_back(id, ends_[id]);
        }
      }
      return joined;
    }

   private:
    const TestTimer& timer_;
    std::vector<Picoseconds> ends_;  ///< by join
  };

 public:
  explicit TestTimer(int64_t duration_ps, bool fail = false)
      : duration_ps_(duration_ps), fail_(fail) {}

  StatusOr<ici::CollectiveTiming> Time(const ici::Collective& collective) const override {
    calls.push_back(collective);
    if (fail_) return InvalidArgument("no route between the devices");
    ici::CollectiveTiming timing;
    timing.duration = Picoseconds(duration_ps_);
    timing.algorithm = ici::Algorithm::kRing;
    timing.links = {{0, collective.bytes}, {1, 2 * collective.bytes}};
    timing.ici_bytes = 3 * collective.bytes;
    timing.explanation = "test network";
    return timing;
  }
  /// Nothing is shared: each collective ends its fixed time after its start.
  std::unique_ptr<ici::NetworkSession> NewSession() const override {
    return std::make_unique<Session>(*this);
  }
  int64_t link_count() const override { return 2; }
  std::string LinkName(int32_t link) const override { return "L" + std::to_string(link); }
  std::string Describe() const override { return "test network, 2 links"; }
  BytesPerSecond LinkBandwidth(int32_t) const override { return kBandwidth; }

  static constexpr BytesPerSecond kBandwidth{1'000'000'000};
  /// Every collective timed, in order: put on the network (and again alone
  /// when collectives in flight shared it).
  mutable std::vector<ici::Collective> calls;

 private:
  int64_t duration_ps_;
  bool fail_;
};

/// Cycles of `ps` picoseconds at `clock_hz`, rounded up (as the runtime does).
inline int64_t CyclesOf(int64_t ps, int64_t clock_hz) {
  return MulDivCeil(ps, clock_hz, 1'000'000'000'000);
}

}  // namespace tpusim::timing

#endif  // TPUSIM_TESTS_TIMING_TEST_TIMER_H_
