// custom-call targets whose meaning is public and value-preserving on one
// device. Any other target is kUnimplemented naming it.
#include <string>
#include <string_view>

#include "sim/eval/det_math.h"
#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using value::Literal;

/// Annotations that return their operand unchanged: sharding hints and
/// sharding-propagation barriers, host offload moves (where a value lives is
/// a timing matter), the dynamic-bound annotation SetBound (the bound is
/// shape metadata, the values pass through), the SPMD shape conversions
/// when the shard is the whole array (one partition), and PyTorch/XLA
/// Neuron's AwsNeuronTransferWithStaticRing. Neuron does not document the
/// last; it is taken as a transfer that moves data without changing it
/// (its name, and operand and result of one shape, in every dump that has
/// it) — docs/evaluator.md lists this assumption.
bool IsIdentityTarget(std::string_view target) {
  return target == "Sharding" || target == "MoveToHost" || target == "MoveToDevice" ||
         target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape" ||
         target == "ShardBarrierTo" || target == "ShardBarrierFrom" || target == "SetBound" ||
         target == "AwsNeuronTransferWithStaticRing";
}

/// DynamicGte (XLA's while-loop unroller tests): element `index` of a tuple,
/// with the index a runtime scalar; an index outside the tuple is an error.
StatusOr<Literal> DynamicGetTupleElement(EvalContext& ctx, const HloInstruction& inst,
                                         Operands ops) {
  if (ops.size() != 2 || !ops[0]->shape().IsTuple() || !ops[1]->shape().IsArray() ||
      ops[1]->element_count() != 1 || !hlo::IsInteger(ops[1]->element_type())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "DynamicGte takes a tuple and an integer scalar index");
  }
  const int64_t index = ScalarAsInt64(*ops[1]);
  if (index < 0 || index >= ops[0]->tuple_size()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "DynamicGte index " + std::to_string(index) + " is outside the tuple of " +
                         std::to_string(ops[0]->tuple_size()) + " elements");
  }
  const Literal& element = ops[0]->tuple_element(index);
  if (!element.shape().Compatible(inst.shape())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "DynamicGte element " + std::to_string(index) + " has shape " +
                         element.shape().ToString(false) + ", not the result's");
  }
  return element;
}

/// PyTorch/XLA Neuron's GELU custom calls (their metadata names PyTorch's
/// GeluForwardImpl and GeluBackwardImpl), as PyTorch defines GELU by default
/// (the exact, erf form): AwsNeuronGelu(x) = x/2 (1 + erf(x/sqrt 2)), and
/// AwsNeuronGeluBackward(x) its derivative, Phi(x) + x phi(x), which the
/// program multiplies by the incoming gradient. Computed in f64 with detmath
/// and rounded once to the element type.
StatusOr<Literal> NeuronGelu(EvalContext& ctx, const HloInstruction& inst, Operands ops,
                             bool derivative) {
  if (ops.size() != 1 || !ops[0]->shape().IsArray() ||
      !hlo::IsFloatingPoint(ops[0]->element_type()) ||
      !ops[0]->shape().Compatible(inst.shape())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "takes one floating-point array and returns its shape");
  }
  constexpr double kInvSqrt2 = 0.70710678118654752440;
  constexpr double kInvSqrt2Pi = 0.39894228040143267794;
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  for (int64_t i = 0; i < out.element_count(); ++i) {
    const double x = ops[0]->GetAsDouble(i);
    const double cdf = 0.5 * (1.0 + detmath::Erf(x * kInvSqrt2));
    out.SetFromDouble(
        i, derivative ? cdf + x * (kInvSqrt2Pi * detmath::Exp(-0.5 * (x * x))) : x * cdf);
  }
  return out;
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
  if (target == "DynamicGte") return DynamicGetTupleElement(ctx, inst, ops);
  if (target == "AwsNeuronGelu") return NeuronGelu(ctx, inst, ops, /*derivative=*/false);
  if (target == "AwsNeuronGeluBackward") return NeuronGelu(ctx, inst, ops, /*derivative=*/true);
  if (target == "AllocateBuffer") {
    // A fresh buffer the program writes before reading: zeros are as good as
    // any contents and keep results deterministic.
    return ctx.NewValue(inst, inst.shape());
  }
  return ctx.Unsupported(
      inst, "custom-call target \"" + std::string(target) + "\" is not supported by the evaluator");
}

}  // namespace tpusim::eval
