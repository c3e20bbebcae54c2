// custom-call targets whose meaning is public and value-preserving on one
// device. Any other target is kUnimplemented naming it.
#include <string>
#include <string_view>

#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using value::Literal;

/// Annotations that return their operand unchanged: sharding hints and
/// sharding-propagation barriers, host offload moves (where a value lives is
/// a timing matter), the dynamic-bound annotation SetBound (the bound is
/// shape metadata, the values pass through), and the SPMD shape conversions
/// when the shard is the whole array (one partition).
bool IsIdentityTarget(std::string_view target) {
  return target == "Sharding" || target == "MoveToHost" || target == "MoveToDevice" ||
         target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape" ||
         target == "ShardBarrierTo" || target == "ShardBarrierFrom" || target == "SetBound";
}

}  // namespace

StatusOr<Literal> EvalCustomCall(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const std::string_view target = inst.string_attr(hlo::AttrId::kCustomCallTarget);
  if (IsIdentityTarget(target)) {
    if (ops.size() != 1 || !ops[0]->shape().Compatible(inst.shape())) {
      return ctx.Unsupported(inst, "custom-call target \"" + std::string(target) +
                                       "\" that changes the shape (needs SPMD evaluation)");
    }
    return *ops[0];
  }
  if (target == "AllocateBuffer") {
    // A fresh buffer the program writes before reading: zeros are as good as
    // any contents and keep results deterministic.
    return ctx.NewValue(inst, inst.shape());
  }
  return ctx.Unsupported(
      inst, "custom-call target \"" + std::string(target) + "\" is not supported by the evaluator");
}

}  // namespace tpusim::eval
