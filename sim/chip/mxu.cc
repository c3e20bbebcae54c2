#include "sim/chip/mxu.h"

#include <algorithm>

#include "sim/base/arith.h"

namespace tpusim::chip {

Mxu::Mxu(const arch::ChipConfig& chip)
    : rows_(chip.mxu.rows),
      cols_(chip.mxu.cols),
      count_(chip.mxu.count_per_core),
      int8_rate_(chip.mxu.int8_rate),
      fp8_rate_(chip.mxu.fp8_rate),
      f16_passes_(chip.mxu.f16_passes),
      row_quantum_(chip.vpu.sublanes) {}

int64_t Mxu::Rate(MxuInput input) const {
  switch (input) {
    case MxuInput::kInt8:
      return std::max<int64_t>(1, int8_rate_);
    case MxuInput::kFp8:
      return std::max<int64_t>(1, fp8_rate_);
    case MxuInput::kBf16:
    case MxuInput::kF16:
      break;
  }
  return 1;
}

int64_t Mxu::WeightTiles(const MatmulWork& work) const {
  if (work.batch <= 0 || work.m <= 0 || work.k <= 0 || work.n <= 0) return 0;
  const int64_t depth = rows_ * Rate(work.input);
  // f16 products run as bf16 pieces: at least f16_passes passes each.
  const int64_t passes =
      work.input == MxuInput::kF16 ? std::max(work.passes, f16_passes_) : work.passes;
  return SatMul(SatMul(SatMul(work.batch, CeilDiv(work.k, depth)), CeilDiv(work.n, cols_)),
                passes);
}

int64_t Mxu::MatmulCycles(const MatmulWork& work) const {
  const int64_t tiles = WeightTiles(work);
  if (tiles == 0) return 0;
  return TileSequenceCycles(CeilDiv(tiles, count_), RoundUp(work.m, row_quantum_), true);
}

int64_t Mxu::TileSequenceCycles(int64_t tiles, int64_t streamed_rows, bool double_buffered) const {
  if (tiles <= 0 || streamed_rows <= 0) return 0;
  const int64_t load = CeilDiv(rows_, row_quantum_);
  const int64_t per_tile = double_buffered ? std::max(streamed_rows, load)
                                           : SatAdd(streamed_rows, load - 1);
  return SatAdd(SatAdd(SatMul(tiles - 1, per_tile), streamed_rows), rows_ + cols_);
}

}  // namespace tpusim::chip
