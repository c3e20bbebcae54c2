// The engine's time base: one SystemC nanosecond is one TensorCore cycle of
// the job's chip, so cycles are exact integers (time_us = cycles / clock).
// Shared by the engine and the SPMD rendezvous, the two users of SystemC.
#ifndef TPUSIM_SIM_TIMING_SYSTEMC_TIME_H_
#define TPUSIM_SIM_TIMING_SYSTEMC_TIME_H_

#include <cstdint>
#include <systemc>

namespace tpusim::timing {

/// The engine's horizon. SystemC keeps time as 2^64 picoseconds (about 1.8e16
/// cycles here) and CyclesToTime passes cycles through a double, exact only to
/// 2^53: a run whose clock would pass 2^53 cycles (about 100 days at 1 GHz) is
/// refused, naming the instruction, rather than wrapped or rounded.
inline constexpr int64_t kMaxSimulatedCycles = int64_t{1} << 53;

inline sc_core::sc_time CyclesToTime(int64_t cycles) {
  return sc_core::sc_time(static_cast<double>(cycles), sc_core::SC_NS);
}
inline int64_t TimeToCycles(const sc_core::sc_time& t) {
  return static_cast<int64_t>(t.value() / 1000);
}

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_SYSTEMC_TIME_H_
