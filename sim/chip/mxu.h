// The matrix units of one TensorCore: weight-stationary systolic arrays.
#ifndef TPUSIM_SIM_CHIP_MXU_H_
#define TPUSIM_SIM_CHIP_MXU_H_

#include <cstdint>

#include "sim/arch/chip_config.h"
#include "sim/chip/work.h"

namespace tpusim::chip {

/// Cost of matmuls on the `count_per_core` MXUs of one TensorCore.
///
/// A weight tile of `rows * rate` x `cols` (rate = int8_rate or fp8_rate for
/// those inputs, 1 for bf16) is loaded into an MXU and the m rows of the
/// other operand stream through it, one row per cycle, padded to whole
/// (sublanes)-row vregs ("bf16[8,128] @ bf16[128,128] every 8 cycles"). The
/// next tile's weights load while the current one streams (double-buffered
/// weights: the pipeline bubble is only at the start [Q SB Appendix B]), so a
/// tile costs its streamed rows, but at least the rows / sublanes cycles its
/// weights take to load one vreg of rows per cycle; k and n are padded to
/// whole tiles. Tiles
/// are dealt round-robin to the MXUs; the array fills (rows cycles) and drains
/// (cols cycles) once per instruction. TileSequenceCycles is the exact cycle
/// count of the RTL tile (models/rtl, docs/rtl.md), which tests/rtl checks.
class Mxu {
 public:
  explicit Mxu(const arch::ChipConfig& chip);

  /// Weight tiles of a matmul: batch x ceil(k / depth) x ceil(n / cols) x
  /// passes (for f16 operands at least `mxu.f16_passes`).
  int64_t WeightTiles(const MatmulWork& work) const;
  /// Busy cycles of the MXUs for one matmul, fill and drain included; 0 for empty work.
  int64_t MatmulCycles(const MatmulWork& work) const;
  /// Cycles of one MXU from the first streamed row of the first of `tiles`
  /// weight tiles entering to the last result leaving, each tile streaming
  /// `streamed_rows` (already padded) back to back. A weight tile loads in
  /// ceil(rows / sublanes) cycles. Double-buffered, a tile's weights load
  /// while the previous tile streams, so a tile takes max(streamed_rows, load)
  /// cycles; single-buffered, the load waits for the previous tile's last row
  /// to pass the top PE row, so a tile takes streamed_rows + load - 1. The
  /// last tile adds fill (rows) and drain (cols).
  /// 0 when tiles or streamed_rows is not positive.
  int64_t TileSequenceCycles(int64_t tiles, int64_t streamed_rows, bool double_buffered) const;

 private:
  /// MACs per cell per cycle for an input format (at least 1: a format the MXU
  /// lacks runs at the bf16 rate after conversion).
  int64_t Rate(MxuInput input) const;

  int64_t rows_;         ///< contraction depth of a bf16 weight tile
  int64_t cols_;         ///< output columns of a weight tile
  int64_t count_;        ///< MXUs per TensorCore
  int64_t int8_rate_;    ///< from MxuConfig
  int64_t fp8_rate_;     ///< from MxuConfig
  int64_t f16_passes_;   ///< from MxuConfig
  int64_t row_quantum_;  ///< streamed rows are padded to whole vregs of this many sublanes
};

}  // namespace tpusim::chip

#endif  // TPUSIM_SIM_CHIP_MXU_H_
