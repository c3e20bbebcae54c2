// The resolved description of one TPU chip, as loaded from a preset in models/
// (see models/README.md for the YAML schema and docs/presets.md for sources).
//
// Plain structs, immutable after loading: hardware models copy what they need
// at construction and never read YAML (style.md rule 3). Every dimensioned
// field is a unit type from sim/base/units.h.
#ifndef TPUSIM_SIM_ARCH_CHIP_CONFIG_H_
#define TPUSIM_SIM_ARCH_CHIP_CONFIG_H_

#include <algorithm>
#include <cstdint>
#include <string>

#include "sim/base/units.h"

namespace tpusim::arch {

/// One systolic matrix unit and how many each TensorCore has.
struct MxuConfig {
  int64_t rows = 0;            ///< systolic array height (weights stationary), e.g. 128
  int64_t cols = 0;            ///< systolic array width, e.g. 128 (256 on v6e)
  int64_t count_per_core = 0;  ///< MXUs per TensorCore
  /// int8 MACs per cycle relative to bf16 (2 where int8 runs at twice the bf16
  /// rate); 0 when the MXU has no int8 mode.
  int64_t int8_rate = 0;
  /// fp8 MACs per cycle relative to bf16; 0 when the MXU has no fp8 mode.
  int64_t fp8_rate = 0;
  /// bf16 passes an f16 x f16 product takes at least (the MXU has no f16
  /// input: an f16 value is the exact sum of two bf16 pieces); 0 or 1: the
  /// precision config alone decides.
  int64_t f16_passes = 0;
  /// Percentage of a matmul kernel's f16 conversions (the VPU widening its
  /// operands and rounding its result) that the MXUs wait for instead of
  /// overlapping; 0: conversions overlap the MXU fully.
  int64_t convert_exposed_percent = 0;
};

/// The vector unit of one TensorCore: a 2D SIMD array of (sublane, lane) slots.
struct VpuConfig {
  int64_t sublanes = 0;       ///< rows of a vreg, 8 on every generation so far
  int64_t lanes = 0;          ///< columns of a vreg, 128 on every generation so far
  int64_t alus_per_slot = 0;  ///< ALUs per (sublane, lane) slot issuing each cycle
  /// Issue cycles of one vreg op of the "medium" class (divide, exp, log, tanh,
  /// power, ...); a "cheap" op (add, multiply, compare, select, convert) takes 1.
  int64_t medium_op_cycles = 0;
  /// Issue cycles of one vreg op of the "transcendental" class (sin, cos, ...).
  int64_t transcendental_op_cycles = 0;
  /// vreg ops to widen one vreg of f16 values to f32 when a kernel reads them,
  /// and to round one back when it writes them: the VPU computes in 32 bits
  /// and, where it has no f16 arithmetic, converts in software. 0: free.
  int64_t f16_load_ops = 0;
  int64_t f16_store_ops = 0;  ///< see f16_load_ops
};

/// The transpose/permute units (XLU) of one TensorCore: minor-dimension
/// transposes and cross-lane reductions go through them.
struct XluConfig {
  int64_t count = 0;            ///< XLUs per TensorCore
  int64_t cycles_per_vreg = 0;  ///< cycles one XLU spends on one (sublanes, lanes) vreg
};

/// Fixed costs that do not scale with the work.
struct OverheadConfig {
  Cycles kernel_start;  ///< issue and pipeline start-up of one kernel (instruction)
  Cycles dma_start;     ///< from issuing a DMA to its first bytes moving
  Cycles program_launch;  ///< once per program run, before its first kernel; 0: none
  /// Per block of a kernel's HBM stream (vmem.pipeline_block bytes): the DMA
  /// issue and the wait that hand one block to the compute units. 0: none.
  Cycles pipeline_step;
};

/// On-chip vector memory, per TensorCore.
struct VmemConfig {
  Bytes capacity;            ///< per TensorCore
  BytesPerSecond bandwidth;  ///< vreg loads from VMEM per TensorCore
  /// Bytes a kernel moves between HBM and VMEM per pipeline step: its first
  /// input block is loaded before compute starts and its last output block
  /// stored after it ends (prologue and epilogue). 0: kernels overlap fully.
  Bytes pipeline_block;
};

/// Off-chip high-bandwidth memory, per chip.
struct HbmConfig {
  Bytes capacity;            ///< per chip
  BytesPerSecond bandwidth;  ///< per chip, reads and writes combined: the published peak
  /// The percentage of `bandwidth` streaming kernels reach (refresh, bank and
  /// protocol overheads); timing uses bandwidth x this / 100. 100 when unset.
  int64_t efficiency_percent = 0;
  Bytes access_granularity;  ///< smallest transfer; a smaller access costs this much
};

/// Inter-chip interconnect ports of one chip.
struct IciConfig {
  int64_t links = 0;                                ///< ICI ports per chip
  BytesPerSecond bandwidth_per_link_per_direction;  ///< one-way bandwidth of one link
  Picoseconds hop_latency;                          ///< per chip-to-chip hop
  /// The percentage of a link's bandwidth that collective payload reaches
  /// (packet headers, flow control): links carry bandwidth x this / 100.
  int64_t efficiency_percent = 100;
  /// Fixed time of every collective beyond its transfers and hops: the
  /// participants' synchronisation and the DMA descriptor set-up. 0: none.
  Picoseconds collective_latency;
};

/// The chip's link to its host (PCIe): copies to and from host memory
/// (memory space `S(5)`) cross it.
struct PcieConfig {
  /// One-way bandwidth per chip, shared by its TensorCores. 0: not modelled,
  /// host memory copies cross HBM like any other.
  BytesPerSecond bandwidth;
};

/// Published peak throughput of the whole chip, used to report the fraction
/// of peak a kernel achieves. The MXU geometry times the clock reproduces
/// these within 1% (a test checks it); the timing model uses the geometry.
struct PeakConfig {
  FlopsPerSecond bf16;  ///< dense bf16 matmul FLOP/s per chip
  FlopsPerSecond int8;  ///< dense int8 matmul OP/s per chip; 0 when unsupported
};

/// One chip preset after following `inherits:` and applying overrides.
struct ChipConfig {
  std::string name;         ///< preset name (file stem), e.g. "tpu-v5e"; not hashed
  std::string inherits;     ///< direct parent preset as written, or ""; not hashed
  std::string description;  ///< one line for `tpusim presets`; not hashed

  Hertz clock;                       ///< TensorCore clock
  int64_t tensorcores_per_chip = 0;  ///< TensorCores on one chip
  bool megacore = false;             ///< XLA splits parallel work across the chip's TensorCores
  MxuConfig mxu;
  VpuConfig vpu;
  XluConfig xlu;
  VmemConfig vmem;
  HbmConfig hbm;
  IciConfig ici;
  PcieConfig pcie;
  PeakConfig peak;
  OverheadConfig overhead;
};

/// Devices the runtime exposes per chip: the whole chip with megacore (XLA
/// splits each program across its TensorCores), else one per TensorCore
/// (TPU7x and v3: 2).
inline int64_t DevicesPerChip(const ChipConfig& c) {
  return c.megacore ? 1 : std::max<int64_t>(1, c.tensorcores_per_chip);
}

/// bf16 FLOP/s that the MXU geometry delivers at `clock`:
/// TensorCores x MXUs x rows x cols x 2 (multiply and add) x clock.
inline FlopsPerSecond MxuPeakBf16(const ChipConfig& c) {
  return FlopsPerSecond(c.tensorcores_per_chip * c.mxu.count_per_core * c.mxu.rows * c.mxu.cols *
                        2 * c.clock.value());
}

}  // namespace tpusim::arch

#endif  // TPUSIM_SIM_ARCH_CHIP_CONFIG_H_
