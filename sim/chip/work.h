// The work one instruction asks of one TensorCore's units, as timing/ lowers
// it: matmuls for the MXUs, vreg operations for the vector and transpose
// units, and byte counts for HBM and VMEM. Knows nothing of HLO.
#ifndef TPUSIM_SIM_CHIP_WORK_H_
#define TPUSIM_SIM_CHIP_WORK_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tpusim::chip {

/// The units of a TensorCore that an instruction can occupy. kDma carries the
/// asynchronous copies of `copy-start`/`*-start`, and a kernel's own transfer
/// to or from host memory; within an instruction the units overlap, and it
/// takes as long as the slowest of them.
enum class Unit : uint8_t {
#define V(enumerator, name) enumerator,
#include "sim/chip/unit.def"
#undef V
};
inline constexpr int kUnitCount = 0
#define V(enumerator, name) +1
#include "sim/chip/unit.def"
#undef V
    ;

/// unit.def's display name: "MXU", "VPU", "transpose", "HBM", "VMEM", "DMA".
std::string_view UnitName(Unit unit);

/// The operand format the MXU runs a matmul at. kF16: f16 operands, which the
/// MXU takes as bf16 pieces (`mxu.f16_passes` passes per product).
enum class MxuInput : uint8_t { kBf16, kInt8, kFp8, kF16 };

/// One matmul `batch` x ([m, k] @ [k, n]) on the MXUs: the [k, n] operand is
/// the stationary weight tile, the m rows stream through.
struct MatmulWork {
  int64_t batch = 1;   ///< independent matmuls (dot batch dimensions, convolution groups)
  int64_t m = 0;       ///< streamed rows
  int64_t k = 0;       ///< contraction depth
  int64_t n = 0;       ///< output columns
  int64_t passes = 1;  ///< bf16 passes per product (f32 precision emulation: 1, 3 or 6)
  MxuInput input = MxuInput::kBf16;
};

/// Vector-unit work counted in vreg operations (one op on one (8,128) vreg).
struct VectorWork {
  int64_t cheap_ops = 0;           ///< add, multiply, compare, select, convert, moves
  int64_t medium_ops = 0;          ///< divide, exp, log, tanh, power, sqrt
  int64_t transcendental_ops = 0;  ///< sin, cos, tan and the inverse/hyperbolic ones
  int64_t xlu_vregs = 0;  ///< vregs through the transpose unit (minor transposes, lane reductions)
  int64_t convert_ops = 0;  ///< of cheap_ops, those widening f16 inputs and rounding f16 results
  /// Of xlu_vregs, those whose results the VPU's next op waits for, so that
  /// their XLU time adds to the VPU's instead of overlapping it.
  int64_t xlu_waited_vregs = 0;
};

/// Everything one instruction asks of one TensorCore.
struct CoreWork {
  std::vector<MatmulWork> matmuls;
  VectorWork vector;
  int64_t hbm_bytes = 0;   ///< bytes crossing HBM, read plus write, after granularity rounding
  int64_t hbm_write_bytes = 0;  ///< of hbm_bytes, those the kernel writes (its results)
  int64_t vmem_bytes = 0;  ///< bytes moved between VMEM and vregs
  int64_t dma_bytes = 0;   ///< HBM bytes of an asynchronous copy (kDma only)
  /// Bytes crossing PCIe between host memory and HBM: an asynchronous copy's
  /// side in host memory, or what a kernel moves to or from there.
  int64_t host_bytes = 0;
};

/// Busy cycles of each unit for one instruction on one TensorCore.
using UnitCycles = std::array<int64_t, kUnitCount>;

}  // namespace tpusim::chip

#endif  // TPUSIM_SIM_CHIP_WORK_H_
