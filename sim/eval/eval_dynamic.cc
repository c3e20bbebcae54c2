// Bounded dynamic dimensions (`f32[<=128]`): a value holds its array at the
// bound and carries each dimension's current size (value::Literal), its
// padding zero. get-dimension-size, set-dimension-size and dynamic-reshape
// read and set the sizes; EvalOnPaddedOperands runs the other ops on operands
// smaller than their bounds where their meaning is clear, and refuses the rest.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/eval/kernels.h"
#include "sim/hlo/opcode.h"

namespace tpusim::eval {

using hlo::HloInstruction;
using hlo::HloOpcode;
using value::Literal;

namespace {

/// The one dimension named by `dimensions={d}`, checked against `rank`.
StatusOr<int64_t> NamedDimension(EvalContext& ctx, const HloInstruction& inst, int64_t rank) {
  const std::span<const int64_t> dims = inst.dimensions();
  if (dims.size() != 1 || dims[0] < 0 || dims[0] >= rank) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs dimensions={d} naming one dimension of the operand");
  }
  return dims[0];
}

/// Gives `result` the current sizes `sizes`, one per dimension: an error when
/// one is below its bound on a dimension the result's type keeps static.
Status SetSizes(EvalContext& ctx, const HloInstruction& inst, Literal& result,
                const std::vector<int64_t>& sizes) {
  for (int64_t d = 0; d < result.shape().rank(); ++d) {
    if (sizes[d] == result.shape().dimensions(d)) continue;
    if (!result.shape().is_dynamic_dimension(d)) {
      return ctx.Unsupported(inst, "dimension " + std::to_string(d) + " of the result is static (" +
                                       result.shape().ToString(false) + ") but has dynamic size " +
                                       std::to_string(sizes[d]) +
                                       ": not supported with dynamic dimension");
    }
    result.set_dynamic_size(d, sizes[d]);
  }
  return Status::Ok();
}

std::vector<int64_t> SizesOf(const Literal& array) {
  std::vector<int64_t> sizes(static_cast<size_t>(array.shape().rank()));
  for (int64_t d = 0; d < array.shape().rank(); ++d) sizes[d] = array.dynamic_size(d);
  return sizes;
}

/// An elementwise op's result sizes: each dimension's size is that of the
/// operands smaller than their bound there, which must agree (XLA's dynamic
/// dimension inference takes the dynamic operand's size).
StatusOr<std::vector<int64_t>> ElementwiseSizes(EvalContext& ctx, const HloInstruction& inst,
                                                Operands ops, const Literal& result) {
  std::vector<int64_t> sizes(result.shape().dimensions().begin(), result.shape().dimensions().end());
  for (const Literal* op : ops) {
    if (!op->shape().IsArray() || op->shape().rank() != result.shape().rank()) continue;
    for (int64_t d = 0; d < op->shape().rank(); ++d) {
      const int64_t size = op->dynamic_size(d);
      if (size == op->shape().dimensions(d)) continue;
      if (sizes[d] != result.shape().dimensions(d) && sizes[d] != size) {
        return ctx.Error(inst, StatusCode::kInvalidArgument,
                         "operands have different dynamic sizes in dimension " +
                             std::to_string(d) + " (" + std::to_string(sizes[d]) + " and " +
                             std::to_string(size) + ")");
      }
      sizes[d] = size;
    }
  }
  return sizes;
}

/// A copy of `array` whose padding holds element 0 of `fill` (a scalar of
/// its type): what XLA's dynamic padder does before a reduction, so that the
/// padding reduces as the reduction's identity.
Literal PaddedWith(const Literal& array, const Literal& fill) {
  Literal out = array;
  const std::vector<int64_t> sizes = SizesOf(array);
  const auto& dims = array.shape().dimensions();
  ForEachIndex(dims, [&](std::span<const int64_t> index) {
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (index[d] >= sizes[d]) {
        CopyElement(fill, 0, out, out.LinearIndex(index));
        return;
      }
    }
  });
  return out;
}

/// reduce over operands smaller than their bounds: the padding of each input
/// becomes its init value, and the kept dimensions keep their sizes.
StatusOr<Literal> EvalReduceOnPadded(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const size_t inputs = ops.size() / 2;
  std::vector<Literal> padded;
  padded.reserve(inputs);
  std::vector<const Literal*> args(ops.begin(), ops.end());
  for (size_t i = 0; i < inputs; ++i) {
    if (!ops[i]->shape().IsArray() || !ops[i + inputs]->shape().IsArray()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "reduce operands must be arrays");
    }
    padded.push_back(PaddedWith(*ops[i], *ops[i + inputs]));
    args[i] = &padded.back();
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, EvalReduce(ctx, inst, args));
  const std::span<const int64_t> reduced = inst.dimensions();
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < ops[0]->shape().rank(); ++d) {
    bool is_reduced = false;
    for (int64_t r : reduced) is_reduced |= r == d;
    if (!is_reduced) kept.push_back(ops[0]->dynamic_size(d));
  }
  if (result.shape().IsTuple()) {
    for (int64_t i = 0; i < result.tuple_size(); ++i) {
      TPUSIM_RETURN_IF_ERROR(SetSizes(ctx, inst, result.mutable_tuple_element(i), kept));
    }
  } else {
    TPUSIM_RETURN_IF_ERROR(SetSizes(ctx, inst, result, kept));
  }
  return result;
}

/// dynamic-update-slice into an operand smaller than its bound: the update is
/// written where it would be in the padded array (the start indices clamped
/// to the bound, as XLA's dynamic padder leaves the op), and the result keeps
/// the operand's sizes. An update smaller than its bound, or one that reaches
/// past the operand's size into its padding (which a value keeps zero, where
/// XLA's padder would keep the written elements), is kUnimplemented.
StatusOr<Literal> EvalDynamicUpdateSliceOnPadded(EvalContext& ctx, const HloInstruction& inst,
                                                 Operands ops, Kernel kernel) {
  const Literal& operand = *ops[0];
  const Literal& update = *ops[1];
  const int64_t rank = operand.shape().IsArray() ? operand.shape().rank() : -1;
  if (!update.shape().IsArray() || update.shape().rank() != rank ||
      static_cast<int64_t>(ops.size()) != 2 + rank) {
    return ctx.Error(
        inst, StatusCode::kInvalidArgument,
        "needs an array operand, an update of its rank and a start index per dimension");
  }
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t bound = operand.shape().dimensions(d);
    const int64_t length = update.shape().dimensions(d);
    if (update.dynamic_size(d) != length) {
      return ctx.Unsupported(inst,
                             "not supported with dynamic dimension (the update is smaller "
                             "than its bound in dimension " +
                                 std::to_string(d) + ")");
    }
    const int64_t start =
        std::clamp<int64_t>(ScalarAsInt64(*ops[2 + d]), 0, std::max<int64_t>(0, bound - length));
    if (start + length > operand.dynamic_size(d)) {
      return ctx.Unsupported(
          inst, "not supported with dynamic dimension (the update reaches index " +
                    std::to_string(start + length - 1) + " of dimension " + std::to_string(d) +
                    ", past the operand's size " + std::to_string(operand.dynamic_size(d)) +
                    ", into its padding)");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, kernel(ctx, inst, ops));
  TPUSIM_RETURN_IF_ERROR(SetSizes(ctx, inst, result, SizesOf(operand)));
  return result;
}

}  // namespace

StatusOr<Literal> EvalGetDimensionSize(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  if (!ops[0]->shape().IsArray()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "operand is not an array");
  }
  TPUSIM_ASSIGN_OR_RETURN(const int64_t d, NamedDimension(ctx, inst, ops[0]->shape().rank()));
  return Literal::CreateR0<int32_t>(static_cast<int32_t>(ops[0]->dynamic_size(d)));
}

StatusOr<Literal> EvalSetDimensionSize(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& operand = *ops[0];
  if (!operand.shape().IsArray() || !ops[1]->shape().IsArray() || ops[1]->shape().rank() != 0) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "needs an array and an s32[] size");
  }
  TPUSIM_ASSIGN_OR_RETURN(const int64_t d, NamedDimension(ctx, inst, operand.shape().rank()));
  const int64_t size = ScalarAsInt64(*ops[1]);
  const int64_t bound = operand.shape().dimensions(d);
  if (size < 0 || size > bound) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "size " + std::to_string(size) + " is outside [0, " + std::to_string(bound) +
                         "] for dimension " + std::to_string(d));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, ctx.NewValue(inst, inst.shape()));
  if (!result.shape().IsArray() || result.shape().dimensions() != operand.shape().dimensions() ||
      result.element_type() != operand.element_type() || !result.shape().is_dynamic_dimension(d)) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "result type " + inst.shape().ToString(false) +
                         " is not the operand's with dimension " + std::to_string(d) + " dynamic");
  }
  std::copy(operand.bytes().begin(), operand.bytes().end(), result.mutable_bytes().begin());
  std::vector<int64_t> sizes = SizesOf(operand);
  sizes[d] = size;
  TPUSIM_RETURN_IF_ERROR(SetSizes(ctx, inst, result, sizes));
  return result;
}

StatusOr<Literal> EvalDynamicReshape(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& operand = *ops[0];
  TPUSIM_ASSIGN_OR_RETURN(Literal result, ctx.NewValue(inst, inst.shape()));
  if (!operand.shape().IsArray() || !result.shape().IsArray() ||
      result.element_type() != operand.element_type() ||
      static_cast<int64_t>(ops.size()) != result.shape().rank() + 1) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs an array operand of the result's type and one size per result "
                     "dimension");
  }
  std::vector<int64_t> sizes;
  int64_t result_count = 1;
  for (int64_t d = 0; d < result.shape().rank(); ++d) {
    const int64_t size = ScalarAsInt64(*ops[d + 1]);
    const int64_t bound = result.shape().dimensions(d);
    if (size < 0 || size > bound) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "size " + std::to_string(size) + " of result dimension " +
                           std::to_string(d) + " is outside [0, " + std::to_string(bound) + "]");
    }
    sizes.push_back(size);
    result_count *= size;
  }
  const std::vector<int64_t> operand_sizes = SizesOf(operand);
  int64_t operand_count = 1;
  for (int64_t size : operand_sizes) operand_count *= size;
  if (operand_count != result_count) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "the operand has " + std::to_string(operand_count) +
                         " valid elements, the result sizes hold " + std::to_string(result_count));
  }
  // The operand's valid elements in row-major order, into the result's.
  std::vector<int64_t> sources;
  sources.reserve(static_cast<size_t>(operand_count));
  ForEachIndex(operand_sizes,
               [&](std::span<const int64_t> index) { sources.push_back(operand.LinearIndex(index)); });
  size_t next = 0;
  ForEachIndex(sizes, [&](std::span<const int64_t> index) {
    CopyElement(operand, sources[next++], result, result.LinearIndex(index));
  });
  TPUSIM_RETURN_IF_ERROR(SetSizes(ctx, inst, result, sizes));
  return result;
}

StatusOr<Literal> EvalPadToStatic(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const hlo::Shape& shape = inst.shape();
  const Literal* operand = ops.size() == 1 ? ops[0] : nullptr;
  const int64_t rank =
      operand != nullptr && operand->shape().IsArray() ? operand->shape().rank() : -1;
  bool well_formed = rank >= 0 && shape.IsTuple() && shape.tuple_size() == rank + 1 &&
                     shape.tuple_shapes(0).IsArray() && shape.tuple_shapes(0).is_static() &&
                     shape.tuple_shapes(0).element_type() == operand->element_type() &&
                     shape.tuple_shapes(0).dimensions() == operand->shape().dimensions();
  for (int64_t d = 1; well_formed && d <= rank; ++d) {
    well_formed = shape.tuple_shapes(d).IsArray() && shape.tuple_shapes(d).rank() == 0 &&
                  shape.tuple_shapes(d).element_type() == hlo::PrimitiveType::kS32;
  }
  if (!well_formed) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "custom-call target \"PadToStatic\" takes one array and gives (the array at "
                     "its bounds, one s32[] size per dimension)");
  }
  // The padding is already zero (what XLA leaves undefined), so the data is
  // the operand's bytes.
  TPUSIM_ASSIGN_OR_RETURN(Literal data, ctx.NewValue(inst, shape.tuple_shapes(0)));
  std::copy(operand->bytes().begin(), operand->bytes().end(), data.mutable_bytes().begin());
  std::vector<Literal> elements;
  elements.reserve(static_cast<size_t>(rank + 1));
  elements.push_back(std::move(data));
  for (int64_t d = 0; d < rank; ++d) {
    elements.push_back(Literal::CreateR0<int32_t>(static_cast<int32_t>(operand->dynamic_size(d))));
  }
  return Literal::CreateTuple(std::move(elements));
}

StatusOr<Literal> EvalSliceToDynamic(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const hlo::Shape& shape = inst.shape();
  const int64_t rank = shape.IsArray() ? shape.rank() : -1;
  bool well_formed = rank >= 0 && static_cast<int64_t>(ops.size()) == rank + 1 &&
                     ops[0]->shape().IsArray() && ops[0]->element_type() == shape.element_type() &&
                     ops[0]->shape().dimensions() == shape.dimensions();
  for (int64_t d = 1; well_formed && d <= rank; ++d) {
    well_formed = ops[d]->shape().IsArray() && ops[d]->shape().rank() == 0 &&
                  hlo::IsInteger(ops[d]->element_type());
  }
  if (!well_formed) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "custom-call target \"SliceToDynamic\" takes an array of the result's type at "
                     "its bounds and one integer size per dimension");
  }
  std::vector<int64_t> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = ScalarAsInt64(*ops[d + 1]);
    if (size < 0 || size > shape.dimensions(d)) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "size " + std::to_string(size) + " of dimension " + std::to_string(d) +
                           " is outside [0, " + std::to_string(shape.dimensions(d)) + "]");
    }
    sizes.push_back(size);
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, ctx.NewValue(inst, shape));
  std::copy(ops[0]->bytes().begin(), ops[0]->bytes().end(), result.mutable_bytes().begin());
  TPUSIM_RETURN_IF_ERROR(SetSizes(ctx, inst, result, sizes));
  return result;
}

StatusOr<Literal> EvalOnPaddedOperands(EvalContext& ctx, const HloInstruction& inst, Operands ops,
                                       Kernel kernel) {
  const HloOpcode opcode = inst.opcode();
  if (hlo::IsElementwise(opcode) || opcode == HloOpcode::kCopy) {
    TPUSIM_ASSIGN_OR_RETURN(Literal result, kernel(ctx, inst, ops));
    TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t> sizes, ElementwiseSizes(ctx, inst, ops, result));
    TPUSIM_RETURN_IF_ERROR(SetSizes(ctx, inst, result, sizes));
    return result;
  }
  if (opcode == HloOpcode::kReduce) return EvalReduceOnPadded(ctx, inst, ops);
  if (opcode == HloOpcode::kDynamicUpdateSlice) {
    return EvalDynamicUpdateSliceOnPadded(ctx, inst, ops, kernel);
  }
  // Values that are their operands, or computations whose own instructions
  // meet the sizes: the sizes travel with the values.
  static constexpr HloOpcode kCarriesSizes[] = {
      HloOpcode::kAddDependency, HloOpcode::kCall,   HloOpcode::kConditional,
      HloOpcode::kDomain,        HloOpcode::kFusion, HloOpcode::kGetTupleElement,
      HloOpcode::kOptimizationBarrier, HloOpcode::kTuple, HloOpcode::kWhile};
  if (std::find(std::begin(kCarriesSizes), std::end(kCarriesSizes), opcode) !=
      std::end(kCarriesSizes)) {
    return kernel(ctx, inst, ops);
  }
  return ctx.Unsupported(inst, "not supported with dynamic dimension (an operand is smaller than "
                               "its bound)");
}

}  // namespace tpusim::eval
