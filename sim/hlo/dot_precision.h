// How many bf16 MXU passes a dot or convolution takes, from its precision
// config or `algorithm=`: one definition shared by the evaluator (which runs
// the passes) and the timing model (which charges for them).
#ifndef TPUSIM_SIM_HLO_DOT_PRECISION_H_
#define TPUSIM_SIM_HLO_DOT_PRECISION_H_

#include <span>
#include <utility>

#include "sim/base/status.h"
#include "sim/hlo/instruction.h"

namespace tpusim::hlo {

/// bf16 passes for f32 operands: DEFAULT 1, HIGH 3, HIGHEST 6 (the higher of
/// the two operand precisions applies); `algorithm=` overrides
/// (dot_bf16_bf16_f32, _bf16 and the f8 ones 1; _x3, tf32 and f16 3; _x6,
/// tf32 x3 and dot_f32_f32_f32 6; _x9 9). Errors: an unknown precision or
/// an unsupported algorithm (dot_f64_f64_f64).
StatusOr<int> MxuPassCount(const HloInstruction& inst);

/// The passes of a pass count as (lhs piece, rhs piece) products, smallest
/// terms first: 1 -> x0*y0; 3 -> x0*y1, x1*y0, x0*y0; 6 -> x0*y2, x2*y0,
/// x1*y1, x0*y1, x1*y0, x0*y0; 9 -> every product of three pieces. An
/// operand that is exactly bf16 has only piece 0, so passes using its other
/// pieces are skipped.
std::span<const std::pair<int, int>> MxuPasses(int count);

/// bf16 pieces an f32 operand is split into for a pass count: 1 -> 1, 3 -> 2, 6 and 9 -> 3.
int MxuPieces(int count);

/// True for element types whose every value is a bf16 value (one piece):
/// bf16 and the 8- and 4-bit floats.
bool IsExactlyBf16(PrimitiveType type);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_DOT_PRECISION_H_
