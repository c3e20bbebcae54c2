// A per-cycle clocked SystemC engine doing the same work as the timing
// model's TLM engine, for the speed comparison in timing_bench only: each
// unit is an SC_METHOD on the clock that counts down its busy cycles, and
// each TensorCore an SC_THREAD that waits clock edge by clock edge until its
// units are idle. Not used by tpusim itself.
#ifndef TPUSIM_BENCH_CLOCKED_ENGINE_H_
#define TPUSIM_BENCH_CLOCKED_ENGINE_H_

#include <cstdint>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/timing/program.h"

namespace tpusim::bench {

/// Runs each program on its own clocked TensorCore (core 0 only; megacore
/// cores run in step) and returns each one's cycle count.
std::vector<int64_t> RunClocked(const std::vector<timing::Program>& programs,
                                const arch::ChipConfig& chip);

}  // namespace tpusim::bench

#endif  // TPUSIM_BENCH_CLOCKED_ENGINE_H_
