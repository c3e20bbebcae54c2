// infeed and outfeed: the host side of a TPU program's data queues. The
// evaluator has no host process feeding it, so it defines both ends the
// deterministic way: infeed yields zeros of its data shape (plus the token),
// outfeed discards its data and returns the token. docs/evaluator.md says so.
#include "sim/eval/kernels.h"

namespace tpusim::eval {

using hlo::HloInstruction;
using value::Literal;

StatusOr<Literal> EvalInfeed(EvalContext& ctx, const HloInstruction& inst, Operands) {
  // (data, token): a zero-filled value of the shape has a token element.
  if (!inst.shape().IsTuple() || inst.shape().tuple_shapes().size() != 2) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "infeed's result must be (data, token)");
  }
  return ctx.NewValue(inst, inst.shape());
}

StatusOr<Literal> EvalOutfeed(EvalContext&, const HloInstruction&, Operands) {
  return Literal::CreateToken();
}

}  // namespace tpusim::eval
