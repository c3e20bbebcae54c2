// The collectives of one SPMD run as they share the interconnect: each
// instance joins the network when its first group completes, and the
// instances in flight at that moment are timed together (links shared max-min
// fairly by ici::CollectiveTimer::TimeConcurrent), so a later arrival can
// slow an earlier one. No SystemC here: the engine asks, and re-notifies its
// waits from the end cycles that come back (docs/models.md, "SPMD runtime").
#ifndef TPUSIM_SIM_TIMING_SHARED_NETWORK_H_
#define TPUSIM_SIM_TIMING_SHARED_NETWORK_H_

#include <cstdint>
#include <tuple>
#include <vector>

#include "sim/base/status.h"
#include "sim/ici/interconnect.h"

namespace tpusim::timing {

/// One collective instance on the network.
struct NetworkInstance {
  ici::Collective collective;  ///< as timed (the algorithm it could run)
  /// Orders the instances of one batch whatever order the SystemC processes
  /// ran in: (start cycle, rendezvous key, execution).
  std::tuple<int64_t, int64_t, int64_t> order;
  int64_t start_cycle = 0;
  int64_t alone_cycles = 0;  ///< alone on the network, whole cycles rounded up
  int64_t cycles = 0;        ///< with every collective in flight with it
  ici::CollectiveTiming timing;  ///< the latest answer for it
};

/// Instances in order of joining. Busy period: the instances since the
/// network was last idle (no instance in flight); a join times the whole
/// period again, which reproduces its past exactly (flows never start before
/// their collective, and max-min rates depend only on the flows active), so
/// its cost grows with the instances of one busy period.
class SharedNetwork {
 public:
  /// `timer` outlives this; `clock_hz` converts picoseconds to cycles.
  SharedNetwork(const ici::CollectiveTimer& timer, int64_t clock_hz);

  /// Puts `collective` (its `start` ignored: set from `now`) on the network at
  /// cycle `now`, which never decreases from one join to the next. An
  /// algorithm the collective cannot run (kInvalidArgument) falls back to
  /// kAuto. Returns its index; `in_flight()` lists the instances in flight at
  /// `now`, the new one last, whose timings it updated. Errors: the timer's.
  StatusOr<size_t> Join(ici::Collective collective, int64_t now,
                        std::tuple<int64_t, int64_t, int64_t> order);

  const NetworkInstance& instance(size_t index) const { return instances_[index]; }
  /// After Join: the instances it updated, by index.
  const std::vector<size_t>& in_flight() const { return in_flight_; }

 private:
  int64_t CyclesOf(Picoseconds duration) const;

  const ici::CollectiveTimer& timer_;
  int64_t clock_hz_;
  std::vector<NetworkInstance> instances_;
  size_t period_begin_ = 0;      ///< first instance of the current busy period
  std::vector<size_t> in_flight_;  ///< at the last Join
};

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_SHARED_NETWORK_H_
