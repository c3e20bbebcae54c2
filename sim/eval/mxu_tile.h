// The MXU's unit of work, one weight tile, behind an interface that the
// analytic C++ model (here) and the Verilated RTL array (sim/rtl) both
// implement, so that the RTL can be checked against the C++ numerics bit for
// bit and can stand in for them in the evaluator (`tpusim exec --mxu rtl`).
#ifndef TPUSIM_SIM_EVAL_MXU_TILE_H_
#define TPUSIM_SIM_EVAL_MXU_TILE_H_

#include <cmath>
#include <cstdint>
#include <span>

#include "sim/eval/mxu_matmul.h"
#include "sim/value/float_formats.h"

namespace tpusim::eval {

/// A weight tile of k x n weights times m streamed rows of k activations.
struct MxuTileShape {
  int64_t m = 0;
  int64_t k = 0;  ///< 1..kMxuTile
  int64_t n = 0;
};

/// Multiplies weight tiles by streamed rows, one k tile at a time.
class MxuTileEngine {
 public:
  virtual ~MxuTileEngine() = default;

  /// bf16: for each row i and column j, sums[i*n + j] (the seed on entry)
  /// plus act[i*k + kk] * weights[kk*n + j] for kk = 0, 1, ..., k-1 in that
  /// order: each product an f32 multiply of bf16 values (exact unless it
  /// leaves f32's normal range), each sum an f32 add, both round-to-nearest-
  /// even with subnormals kept. With `skip_zero`, a product with a zero
  /// factor (either sign) is skipped. Any NaN sum is 0x7FC00000. Every value
  /// of `weights` and `activations` must be a bf16 value.
  virtual void MultiplyBf16(const MxuTileShape& shape, std::span<const float> weights,
                            std::span<const float> activations, bool skip_zero,
                            std::span<float> sums) = 0;
  /// int8: sums[i*n + j] += sum over kk of act[i*k + kk] * weights[kk*n + j],
  /// modulo 2^32.
  virtual void MultiplyInt8(const MxuTileShape& shape, std::span<const int8_t> weights,
                            std::span<const int8_t> activations, std::span<int32_t> sums) = 0;
};

/// The C++ model of the tile: the loop MultiplyBf16 documents.
class AnalyticMxuTile final : public MxuTileEngine {
 public:
  void MultiplyBf16(const MxuTileShape& shape, std::span<const float> weights,
                    std::span<const float> activations, bool skip_zero,
                    std::span<float> sums) override;
  void MultiplyInt8(const MxuTileShape& shape, std::span<const int8_t> weights,
                    std::span<const int8_t> activations, std::span<int32_t> sums) override;
};

/// x split into `count` (1..3) bf16 pieces: piece 0 is bf16(x), piece p the
/// bf16 of what the earlier pieces leave. Inline: MxuMatMul's packing calls it
/// for every operand value.
inline void SplitIntoBf16Pieces(float x, int count, float* pieces) {
  float rest = x;
  for (int p = 0; p < count; ++p) {
    const float piece = value::Bf16ToFloat(value::Bf16FromFloat(rest));
    pieces[p] = piece;
    // An inf or NaN piece carries the whole value; nothing remains.
    if (p + 1 < count) rest = std::isfinite(piece) ? rest - piece : 0.0f;
  }
}

/// MxuMatMul's result (same operands, passes and order) computed tile by tile
/// through `engine`: per batch and k tile, the passes run in order on one
/// tile sum per result element, seeded with -0 (which equals seeding with the
/// first product), then the tile sums are added to the result.
void MxuMatMulByTiles(const MatrixView& lhs, const MatrixView& rhs, std::span<const MxuPass> passes,
                      MxuTileEngine& engine, std::span<float> result);

/// The MXU's int8 datapath for an s8 x s8 product: result[b][i][j] = sum over
/// k of lhs[b][i][k] * rhs[b][j][k] modulo 2^32, computed tile by tile
/// through `engine`.
void MxuInt8MatMulByTiles(const MatrixView& lhs, const MatrixView& rhs, MxuTileEngine& engine,
                          std::span<int32_t> result);

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_MXU_TILE_H_
