// Writers for a TimingResult: the terminal op profile, the JSON metrics and
// the Perfetto/Chrome trace.
#ifndef TPUSIM_SIM_TIMING_REPORT_H_
#define TPUSIM_SIM_TIMING_REPORT_H_

#include <cstdint>
#include <string>

#include "sim/timing/timing.h"

namespace tpusim::timing {

/// The top `limit` instructions by total time (loop iterations of one
/// instruction summed), like the TPU profiler's op profile: name, opcode,
/// executions, cycles, µs, FLOPs, HBM bytes, achieved fraction of peak FLOP/s
/// and of HBM bandwidth, and what bound it (the most frequent binding unit
/// over its executions). Ends with a totals line, then notes naming the
/// custom calls that carry no cost estimate (timed by their bytes only), the
/// fused attentions of other backends' libraries (timed as TPU's flash
/// attention) and the computations the host ran (compute not timed). With an interconnect, a
/// collective table follows: the device count and symmetry, then per
/// collective instruction its kind, executions, participants, bytes, total
/// time and algorithm.
std::string FormatOpTable(const TimingResult& result, int64_t limit = 20);

/// JSON: chip, module, clock_hz, tensorcores, cycles, time_us, flops,
/// hbm_bytes, pcie_bytes, ops[] with name, opcode, start_cycle, cycles,
/// flops, hbm_bytes, bound_by (device 0's; pcie_bytes and runs when not 0 and 1);
/// unestimated_custom_calls[], fused_attention_calls[] and host_computations[]
/// (names, when there are any); device_count,
/// symmetry, interconnect, devices[] (device, end_cycle, collective_wait_cycles, slowdown),
/// collectives[] (name, kind, execution, start_cycle, cycles, time_us, bytes,
/// ici_bytes, algorithm, participants as a list of groups, explanation) and
/// links[] (link, name, bytes, utilisation). Deterministic: same result, same
/// bytes.
std::string TimingJson(const TimingResult& result);

/// Chrome trace-event JSON (loads in ui.perfetto.dev): one process per
/// TensorCore with an "instructions" track and one track per unit (MXU, VPU,
/// transpose, HBM, VMEM, DMA) showing each instruction's busy time (device
/// 0); a process per other traced device (its instructions); with
/// collectives, an "ICI" process with a collectives track and one track per
/// busiest link (top 8 by bytes) showing the collectives that used it.
/// Timestamps in µs.
std::string TimingTraceJson(const TimingResult& result);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_REPORT_H_
