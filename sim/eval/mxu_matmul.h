// The floating-point matrix product under TPU numerics, which dot and
// convolution both come down to: operands split into bf16 pieces, MXU passes
// of exact products, f32 accumulation in 128-wide tiles of the contracting
// dimension (docs/evaluator.md states the order). Internal to sim/eval.
//
// The kernel is blocked and vectorised across the result's columns, and gives
// exactly the bits of the scalar loop that follows the documented order
// (tests/eval/mxu_matmul_test.cc compares the two on random and edge inputs).
#ifndef TPUSIM_SIM_EVAL_MXU_MATMUL_H_
#define TPUSIM_SIM_EVAL_MXU_MATMUL_H_

#include <cstdint>
#include <span>

#include "sim/value/literal.h"

namespace tpusim::eval {

/// The contracting-dimension tile of the MXU: 128 rows on v2-v5 (DESIGN.md
/// glossary). Fixed here, not per chip preset, so that values never depend on
/// the timing model's configuration.
inline constexpr int64_t kMxuTile = 128;

/// One MXU pass: the products of lhs piece `lhs` with rhs piece `rhs`, where
/// piece 0 of x is bf16(x), piece 1 is bf16(x - piece 0), piece 2 is
/// bf16(x - piece 0 - piece 1).
struct MxuPass {
  int lhs = 0;
  int rhs = 0;
};

/// A batch of matrices inside an array: element (b, row, k) is at row-major
/// position batch_offsets[b] + row_offsets[row] + k_offsets[k] of `values`.
/// For the lhs, rows are the result's rows (m); for the rhs, its columns (n).
struct MatrixView {
  const value::Literal* values = nullptr;
  std::span<const int64_t> batch_offsets;
  std::span<const int64_t> row_offsets;
  std::span<const int64_t> k_offsets;
};

/// The vector instruction sets the kernel is compiled for. Every level gives
/// the same bits (see mxu_matmul.cc); wider ones are only faster.
enum class SimdLevel {
  kBaseline,  ///< x86-64 SSE2, which every x86-64 CPU has
  kAvx2,      ///< 256-bit vectors
};

/// The widest level this CPU supports.
SimdLevel BestSimdLevel();
/// True when the CPU can run `level`.
bool CpuSupports(SimdLevel level);

/// result[b][m][n] (row-major, batches x lhs rows x rhs rows f32 values) =
/// sum over k of the `passes`' products of lhs(b, m, k) and rhs(b, n, k), in
/// the documented order: per tile of kMxuTile consecutive k, pass by pass in
/// the order given and within a pass in increasing k, products added to a
/// tile sum seeded with the first; a pass other than (0, 0) skips products
/// with a zero piece; tile sums added in order to the result, seeded with the
/// first. An empty contraction gives +0. Any NaN result is the quiet NaN
/// 0x7FC00000 (see mxu_matmul.cc for why).
///
/// Both operands' element types are f32 or narrower floats (exact in f32);
/// each operand is split into as many pieces as the passes use. `result`
/// has exactly batches * rows(lhs) * rows(rhs) elements; `level` must be one
/// the CPU supports.
///
/// `threads` compute the product, the caller included. 0: the caller, plus,
/// for a product large enough to repay them, hardware threads that no other
/// product is using. Every count gives the same bits.
void MxuMatMul(const MatrixView& lhs, const MatrixView& rhs, std::span<const MxuPass> passes,
               SimdLevel level, std::span<float> result, int threads = 0);

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_MXU_MATMUL_H_
