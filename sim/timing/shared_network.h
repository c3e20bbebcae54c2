// The collectives of one SPMD run, or of several jobs on one pod, as they
// share the interconnect: each instance joins the network
// (ici::NetworkSession) when its first group completes, shares links
// max-min fairly with the instances still in flight, and can slow them. No
// SystemC here: the engine asks, and each instance's member re-notifies its
// waits from the end cycles that come back (docs/models.md, "SPMD runtime").
#ifndef TPUSIM_SIM_TIMING_SHARED_NETWORK_H_
#define TPUSIM_SIM_TIMING_SHARED_NETWORK_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/base/status.h"
#include "sim/ici/interconnect.h"

namespace tpusim::timing {

/// Whoever put an instance on the network (one job's SPMD runtime), told when
/// a later join moves its end.
class NetworkMember {
 public:
  virtual ~NetworkMember() = default;
  /// Instance `index` (SharedNetwork::instance) may end elsewhere, seen at cycle `now`.
  virtual void Moved(size_t index, int64_t now) = 0;
};

/// One collective instance on the network.
struct NetworkInstance {
  NetworkMember* member = nullptr;  ///< who joined it
  int64_t start_cycle = 0;
  Picoseconds start;         ///< start_cycle on the network's clock
  int64_t alone_cycles = 0;  ///< alone on the network, whole cycles rounded up
  int64_t cycles = 0;        ///< with every collective in flight with it
  ici::CollectiveTiming timing;  ///< as it joined (links, bytes, algorithm)
};

/// Instances in order of joining, on one session of the timer.
class SharedNetwork {
 public:
  /// `timer` outlives this; `clock_hz` converts picoseconds to cycles.
  SharedNetwork(const ici::CollectiveTimer& timer, int64_t clock_hz);

  /// `member` puts `collective` (its `start` ignored: set from `now`) on the
  /// network at cycle `now`, which never decreases from one join to the
  /// next. An algorithm the collective cannot run (kInvalidArgument) falls
  /// back to kAuto. Returns its index; `in_flight()` lists the instances in
  /// flight after the join, the new one last, whose cycles it updated: the
  /// caller tells their members. Errors: the timer's.
  StatusOr<size_t> Join(ici::Collective collective, int64_t now, NetworkMember& member);

  const NetworkInstance& instance(size_t index) const { return instances_[index]; }
  /// After Join: the instances it updated, by index.
  const std::vector<size_t>& in_flight() const { return in_flight_; }
  const ici::CollectiveTimer& timer() const { return timer_; }
  int64_t clock_hz() const { return clock_hz_; }

 private:
  int64_t CyclesOf(Picoseconds duration) const;

  const ici::CollectiveTimer& timer_;
  std::unique_ptr<ici::NetworkSession> session_;
  int64_t clock_hz_;
  std::vector<NetworkInstance> instances_;
  std::vector<size_t> in_flight_;  ///< at the last Join
};

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_SHARED_NETWORK_H_
