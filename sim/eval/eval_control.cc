// Control-flow kernels: call, fusion, while, conditional, map, the async
// wrappers (async-start/-update/-done, copy-start/-done), the ops that only
// order or annotate values (opt-barrier, after-all, add-dependency, domain)
// and the device-id ops.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::AttrId;
using hlo::HloComputation;
using hlo::HloInstruction;
using value::Literal;

/// "; REMEDY" after a limit's error, when the caller said how to raise it.
std::string Remedy(const std::string& remedy) { return remedy.empty() ? "" : "; " + remedy; }

}  // namespace

StatusOr<Literal> EvalWhile(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const HloComputation* condition = inst.called_computation(AttrId::kCondition);
  const HloComputation* body = inst.called_computation(AttrId::kBody);
  if (condition == nullptr || body == nullptr) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "needs condition= and body=");
  }
  Literal state = *ops[0];
  const int64_t work_at_start = ctx.work();
  for (int64_t iteration = 0;; ++iteration) {
    if (ctx.work() - work_at_start > ctx.options().max_loop_work) {
      return ctx.Error(inst, StatusCode::kFailedPrecondition,
                       "loop did not finish within its work budget: " +
                           std::to_string(iteration) + " iterations did " +
                           std::to_string(ctx.work() - work_at_start) +
                           " units of work (an instruction is 64, plus its result's elements), "
                           "more than the limit of " +
                           std::to_string(ctx.options().max_loop_work) +
                           Remedy(ctx.options().raise_loop_work));
    }
    const Literal* args[] = {&state};
    TPUSIM_ASSIGN_OR_RETURN(Literal keep_going, ctx.Call(*condition, args));
    if (!keep_going.shape().IsArray() || keep_going.element_count() != 1 ||
        keep_going.element_type() != hlo::PrimitiveType::kPred) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "condition must return pred[]");
    }
    if (keep_going.data<uint8_t>()[0] == 0) {
      if (RunRecord* record = ctx.record()) {
        record->trip_counts[&inst].Append(iteration);
      }
      return state;
    }
    if (iteration >= ctx.options().max_while_iterations) {
      return ctx.Error(inst, StatusCode::kFailedPrecondition,
                       "loop did not finish within " +
                           std::to_string(ctx.options().max_while_iterations) + " iterations" +
                           Remedy(ctx.options().raise_while_iterations));
    }
    TPUSIM_ASSIGN_OR_RETURN(state, ctx.Call(*body, args));
  }
}

/// Both forms: a pred selects true_computation (operand 1) or
/// false_computation (operand 2); an s32 index selects branch_computations[i]
/// with operand i + 1, and an index out of range selects the last branch, as
/// XLA defines.
StatusOr<Literal> EvalConditional(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& selector = *ops[0];
  if (!selector.shape().IsArray() || selector.element_count() != 1) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "branch selector must be a scalar");
  }
  const HloComputation* branch = nullptr;
  int64_t operand = 0;  // the branch's argument; the branch number is operand - 1
  if (selector.element_type() == hlo::PrimitiveType::kPred) {
    const bool taken = selector.data<uint8_t>()[0] != 0;
    branch = inst.called_computation(taken ? AttrId::kTrueComputation : AttrId::kFalseComputation);
    operand = taken ? 1 : 2;
  } else if (const auto* list = inst.GetAttr<hlo::ComputationList>(AttrId::kBranchComputations)) {
    const int64_t count = static_cast<int64_t>(list->computations.size());
    int64_t index = ScalarAsInt64(selector);
    if (index < 0 || index >= count) index = count - 1;
    if (count > 0) branch = list->computations[index];
    operand = index + 1;
  }
  if (branch == nullptr || operand >= static_cast<int64_t>(ops.size())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs a branch computation and an operand for the selected branch");
  }
  if (RunRecord* record = ctx.record()) {
    record->branches[&inst].Append(operand - 1);
  }
  const Literal* args[] = {ops[operand]};
  return ctx.Call(*branch, args);
}

/// map: the scalar computation applied to each element, in row-major order.
StatusOr<Literal> EvalMap(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const HloComputation* fn = inst.to_apply();
  if (fn == nullptr) return ctx.Error(inst, StatusCode::kInvalidArgument, "needs to_apply=");
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (!out.shape().IsArray()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "result must be an array");
  }
  std::vector<Literal> scalars;
  std::vector<const Literal*> args;
  for (const Literal* operand : ops) {
    if (!operand->shape().IsArray() || operand->element_count() != out.element_count()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "operands must match the result");
    }
    scalars.emplace_back(hlo::Shape(operand->element_type(), {}));
  }
  for (const Literal& scalar : scalars) args.push_back(&scalar);
  for (int64_t i = 0; i < out.element_count(); ++i) {
    for (size_t k = 0; k < ops.size(); ++k) CopyElement(*ops[k], i, scalars[k], 0);
    TPUSIM_ASSIGN_OR_RETURN(Literal result, ctx.Call(*fn, args));
    if (!result.shape().IsArray() || result.element_count() != 1 ||
        result.element_type() != out.element_type()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "to_apply must return a scalar of the result's element type");
    }
    CopyElement(result, 0, out, i);
  }
  return out;
}

/// copy-start: (destination, source, context), both buffers holding the
/// operand: the asynchronous copy is a timing matter.
StatusOr<Literal> EvalCopyStart(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  TPUSIM_RETURN_IF_ERROR(SetAsyncElement(ctx, inst, out, 0, *ops[0]));
  TPUSIM_RETURN_IF_ERROR(SetAsyncElement(ctx, inst, out, 1, *ops[0]));
  return out;
}

/// copy-done: the destination of the copy.
StatusOr<Literal> EvalCopyDone(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return AsyncElement(ctx, inst, *ops[0], 0);
}

/// async-start: runs the wrapped computation at once (when it finishes is a
/// timing matter) and returns ((operands...), result, contexts...). The
/// `X-start` spelling (e.g. reduce-scatter-start) wraps no computation: the
/// instruction itself carries X's attributes.
StatusOr<Literal> EvalAsyncStart(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const HloComputation* wrapped = inst.called_computation(AttrId::kCalls);
  StatusOr<Literal> started = Literal();
  if (wrapped != nullptr) {
    started = ctx.Call(*wrapped, ops);
  } else if (inst.async_wrapped_opcode() && inst.shape().IsTuple() &&
             inst.shape().tuple_size() >= 2) {
    started = EvalCollectiveAs(ctx, inst, *inst.async_wrapped_opcode(),
                               inst.shape().tuple_shapes(1), ops);
  } else {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "needs calls=");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, std::move(started));
  std::vector<Literal> operands;
  for (const Literal* operand : ops) operands.push_back(*operand);
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  TPUSIM_RETURN_IF_ERROR(
      SetAsyncElement(ctx, inst, out, 0, Literal::CreateTuple(std::move(operands))));
  TPUSIM_RETURN_IF_ERROR(SetAsyncElement(ctx, inst, out, 1, std::move(result)));
  return out;
}

/// async-done: the result the started computation produced.
StatusOr<Literal> EvalAsyncDone(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return AsyncElement(ctx, inst, *ops[0], 1);
}

/// call and fusion.
StatusOr<Literal> EvalCall(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  // call names its callee with to_apply= (older dumps: calls=); fusion
  // with calls=.
  const HloComputation* callee = inst.to_apply();
  if (callee == nullptr) callee = inst.called_computation(AttrId::kCalls);
  if (callee == nullptr) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "names no computation to call");
  }
  return ctx.Call(*callee, ops);
}

/// opt-barrier, async-update, add-dependency and domain: scheduling and
/// sharding annotations, through which the value passes.
StatusOr<Literal> EvalPassThrough(EvalContext&, const HloInstruction&, Operands ops) {
  return *ops[0];
}

/// after-all: a token.
StatusOr<Literal> EvalAfterAll(EvalContext&, const HloInstruction&, Operands) {
  return Literal::CreateToken();
}

/// replica-id and partition-id: the device being evaluated, as u32[].
StatusOr<Literal> EvalReplicaId(EvalContext& ctx, const HloInstruction&, Operands) {
  return Literal::CreateR0<uint32_t>(static_cast<uint32_t>(ctx.device().replica_id));
}

StatusOr<Literal> EvalPartitionId(EvalContext& ctx, const HloInstruction&, Operands) {
  return Literal::CreateR0<uint32_t>(static_cast<uint32_t>(ctx.device().partition_id));
}

StatusOr<Literal> AsyncElement(EvalContext& ctx, const HloInstruction& inst, const Literal& tuple,
                               int64_t index) {
  if (!tuple.shape().IsTuple() || tuple.tuple_size() <= index) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "operand must be the tuple its -start op produced");
  }
  return tuple.tuple_element(index);
}

Status SetAsyncElement(EvalContext& ctx, const HloInstruction& inst, Literal& tuple, int64_t index,
                       Literal value) {
  if (!tuple.shape().IsTuple() || tuple.tuple_size() <= index ||
      !tuple.tuple_element(index).shape().Compatible(value.shape())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "result tuple does not match the started operation");
  }
  tuple.mutable_tuple_element(index) = std::move(value);
  return Status::Ok();
}

}  // namespace tpusim::eval
