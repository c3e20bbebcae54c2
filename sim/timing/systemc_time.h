// The engine's time base: one SystemC nanosecond is one TensorCore cycle of
// the job's chip, so cycles are exact integers (time_us = cycles / clock).
// Shared by the engine and the SPMD rendezvous, the two users of SystemC.
#ifndef TPUSIM_SIM_TIMING_SYSTEMC_TIME_H_
#define TPUSIM_SIM_TIMING_SYSTEMC_TIME_H_

#include <cstdint>
#include <systemc>

namespace tpusim::timing {

inline sc_core::sc_time CyclesToTime(int64_t cycles) {
  return sc_core::sc_time(static_cast<double>(cycles), sc_core::SC_NS);
}
inline int64_t TimeToCycles(const sc_core::sc_time& t) {
  return static_cast<int64_t>(t.value() / 1000);
}

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_SYSTEMC_TIME_H_
