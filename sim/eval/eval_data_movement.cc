// Data-movement kernels: constant, iota, broadcast, reshape, bitcast,
// transpose, copy, slice, dynamic-slice, dynamic-update-slice, pad,
// concatenate, reverse, tuple, get-tuple-element. They move element bytes
// without looking at them, so one code path serves every element type.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/eval/kernels.h"
#include "sim/eval/physical_order.h"
#include "sim/eval/program_inputs.h"
#include "sim/value/element_type.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using value::Literal;

/// Fills a value of `shape` from a constant's text values. Integers are exact;
/// real numbers (held as the nearest double of their decimal text) round once
/// to the element type.
Status FillConstant(const hlo::ConstantLiteral& constant, Literal& out) {
  if (out.shape().IsTuple()) {
    if (constant.elements.size() != static_cast<size_t>(out.tuple_size())) {
      return InvalidArgument("tuple constant has the wrong number of elements");
    }
    for (int64_t i = 0; i < out.tuple_size(); ++i) {
      TPUSIM_RETURN_IF_ERROR(FillConstant(constant.elements[i], out.mutable_tuple_element(i)));
    }
    return Status::Ok();
  }
  if (!out.shape().IsArray()) return Status::Ok();  // a token has no values
  const PrimitiveType type = out.element_type();
  const int64_t n = out.element_count();
  if (hlo::IsComplex(type)) {
    if (static_cast<int64_t>(constant.reals.size()) != n ||
        static_cast<int64_t>(constant.imags.size()) != n) {
      return InvalidArgument("constant has " + std::to_string(constant.reals.size()) +
                             " values for " + std::to_string(n) + " elements");
    }
    // Each part rounds once to the component type, as a real constant does.
    if (type == PrimitiveType::kC64) {
      auto o = out.data<std::complex<float>>();
      for (int64_t i = 0; i < n; ++i) {
        o[i] = {static_cast<float>(constant.reals[i]), static_cast<float>(constant.imags[i])};
      }
    } else {
      auto o = out.data<std::complex<double>>();
      for (int64_t i = 0; i < n; ++i) o[i] = {constant.reals[i], constant.imags[i]};
    }
    return Status::Ok();
  }
  if (hlo::IsFloatingPoint(type)) {
    if (static_cast<int64_t>(constant.reals.size()) != n) {
      return InvalidArgument("constant has " + std::to_string(constant.reals.size()) +
                             " values for " + std::to_string(n) + " elements");
    }
    for (int64_t i = 0; i < n; ++i) out.SetFromDouble(i, constant.reals[i]);
    return Status::Ok();
  }
  if (static_cast<int64_t>(constant.ints.size()) != n) {
    return InvalidArgument("constant has " + std::to_string(constant.ints.size()) + " values for " +
                           std::to_string(n) + " elements");
  }
  value::VisitArrayType(type, [&](auto tag) {
    using T = value::NativeType<decltype(tag)::value>;
    if constexpr (std::is_integral_v<T>) {
      // Unsigned values arrive bit-cast in int64; the cast restores them.
      auto o = out.data<T>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(constant.ints[i]);
    }
  });
  return Status::Ok();
}

Status Iota(const HloInstruction& inst, Literal& out) {
  const int64_t dim = inst.int_attr(hlo::AttrId::kIotaDimension).value_or(0);
  const auto& dims = out.shape().dimensions();
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) {
    return InvalidArgument("iota_dimension out of range");
  }
  int64_t linear = 0;
  ForEachIndex(dims, [&](std::span<const int64_t> index) {
    // Indices are below 2^53, so the double is exact and rounds once.
    out.SetFromDouble(linear++, static_cast<double>(index[dim]));
  });
  return Status::Ok();
}

/// out[index] = in[sum of index[i] * in_strides[i]] + offset, for every index
/// of out: the common shape of broadcast, transpose, slice and reverse.
void Gather(const Literal& in, std::span<const int64_t> in_strides, int64_t offset, Literal& out) {
  int64_t linear = 0;
  ForEachIndex(out.shape().dimensions(), [&](std::span<const int64_t> index) {
    int64_t source = offset;
    for (size_t i = 0; i < index.size(); ++i) source += index[i] * in_strides[i];
    CopyElement(in, source, out, linear++);
  });
}

Status Broadcast(const HloInstruction& inst, const Literal& in, Literal& out) {
  const auto dims = inst.dimensions();
  bool valid = static_cast<int64_t>(dims.size()) == in.shape().rank();
  for (size_t i = 0; valid && i < dims.size(); ++i) {
    valid = dims[i] >= 0 && dims[i] < out.shape().rank() &&
            out.shape().dimensions(dims[i]) == in.shape().dimensions(static_cast<int64_t>(i));
  }
  if (!valid) {
    return InvalidArgument(
        "dimensions must map each operand dimension to a result dimension "
        "of the same size");
  }
  const std::vector<int64_t> strides = RowMajorStrides(in.shape().dimensions());
  std::vector<int64_t> out_strides(out.shape().rank(), 0);  // 0: a broadcast dimension
  for (size_t i = 0; i < dims.size(); ++i) out_strides[dims[i]] = strides[i];
  Gather(in, out_strides, 0, out);
  return Status::Ok();
}

Status Transpose(const HloInstruction& inst, const Literal& in, Literal& out) {
  const auto perm = inst.dimensions();
  bool valid = static_cast<int64_t>(perm.size()) == in.shape().rank() &&
               out.shape().rank() == in.shape().rank();
  for (size_t i = 0; valid && i < perm.size(); ++i) {
    valid = perm[i] >= 0 && perm[i] < in.shape().rank() &&
            out.shape().dimensions(static_cast<int64_t>(i)) == in.shape().dimensions(perm[i]);
  }
  if (!valid) return InvalidArgument("dimensions must be a permutation matching the result");
  const std::vector<int64_t> strides = RowMajorStrides(in.shape().dimensions());
  std::vector<int64_t> out_strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out_strides[i] = strides[perm[i]];
  Gather(in, out_strides, 0, out);
  return Status::Ok();
}

Status Slice(const HloInstruction& inst, const Literal& in, Literal& out) {
  const auto* ranges = inst.GetAttr<std::vector<hlo::SliceRange>>(hlo::AttrId::kSlice);
  if (ranges == nullptr || static_cast<int64_t>(ranges->size()) != in.shape().rank()) {
    return InvalidArgument("slice needs one [start:limit:stride] per dimension");
  }
  for (int64_t i = 0; i < in.shape().rank(); ++i) {
    const hlo::SliceRange& r = (*ranges)[i];
    if (r.start < 0 || r.limit < r.start || r.limit > in.shape().dimensions(i) || r.stride < 1 ||
        out.shape().rank() != in.shape().rank() ||
        out.shape().dimensions(i) != (r.limit - r.start + r.stride - 1) / r.stride) {
      return InvalidArgument("slice range of dimension " + std::to_string(i) +
                             " does not fit the operand and result");
    }
  }
  const std::vector<int64_t> strides = RowMajorStrides(in.shape().dimensions());
  std::vector<int64_t> out_strides(strides.size());
  int64_t offset = 0;
  for (size_t i = 0; i < strides.size(); ++i) {
    offset += (*ranges)[i].start * strides[i];
    out_strides[i] = (*ranges)[i].stride * strides[i];
  }
  Gather(in, out_strides, offset, out);
  return Status::Ok();
}

Status Reverse(const HloInstruction& inst, const Literal& in, Literal& out) {
  const auto& dims = in.shape().dimensions();
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t offset = 0;
  for (int64_t d : inst.dimensions()) {
    if (d < 0 || d >= in.shape().rank()) return InvalidArgument("dimension out of range");
    offset += (dims[d] - 1) * strides[d];
    strides[d] = -strides[d];
  }
  Gather(in, strides, offset, out);
  return Status::Ok();
}

/// Start indices of dynamic-slice and dynamic-update-slice, clamped as XLA
/// does so that the window of `sizes` lies inside `dims`. The indices are
/// either one scalar operand per dimension or (old form) one vector operand.
std::vector<int64_t> ClampedStarts(Operands index_ops, std::span<const int64_t> dims,
                                   std::span<const int64_t> sizes) {
  std::vector<int64_t> starts(dims.size(), 0);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t start = 0;
    if (index_ops.size() == 1 && index_ops[0]->shape().rank() == 1) {
      const Literal& vector = *index_ops[0];
      start = static_cast<int64_t>(vector.GetAsDouble(static_cast<int64_t>(i)));
    } else {
      start = ScalarAsInt64(*index_ops[i]);
    }
    starts[i] = std::clamp<int64_t>(start, 0, dims[i] - sizes[i]);
  }
  return starts;
}

Status CheckIndexOperands(Operands index_ops, int64_t rank) {
  const bool scalars = static_cast<int64_t>(index_ops.size()) == rank;
  const bool vector = index_ops.size() == 1 && index_ops[0]->shape().rank() == 1 &&
                      index_ops[0]->element_count() == rank;
  if (!scalars && !vector) return InvalidArgument("needs one start index per operand dimension");
  return Status::Ok();
}

/// True when `window` has `array`'s rank and fits inside it.
bool Fits(const hlo::Shape& window, const hlo::Shape& array) {
  if (window.rank() != array.rank()) return false;
  for (int64_t i = 0; i < array.rank(); ++i) {
    if (window.dimensions(i) > array.dimensions(i)) return false;
  }
  return true;
}

Status DynamicSlice(const Literal& in, Operands index_ops, Literal& out) {
  TPUSIM_RETURN_IF_ERROR(CheckIndexOperands(index_ops, in.shape().rank()));
  if (!Fits(out.shape(), in.shape())) return InvalidArgument("slice sizes exceed the operand");
  const std::vector<int64_t> starts =
      ClampedStarts(index_ops, in.shape().dimensions(), out.shape().dimensions());
  const std::vector<int64_t> strides = RowMajorStrides(in.shape().dimensions());
  int64_t offset = 0;
  for (size_t i = 0; i < starts.size(); ++i) offset += starts[i] * strides[i];
  Gather(in, strides, offset, out);
  return Status::Ok();
}

Status DynamicUpdateSlice(const Literal& in, const Literal& update, Operands index_ops,
                          Literal& out) {
  TPUSIM_RETURN_IF_ERROR(CheckIndexOperands(index_ops, in.shape().rank()));
  if (!Fits(update.shape(), in.shape())) {
    return InvalidArgument("update must have the operand's rank and fit inside it");
  }
  out = in;
  const std::vector<int64_t> starts =
      ClampedStarts(index_ops, in.shape().dimensions(), update.shape().dimensions());
  const std::vector<int64_t> strides = RowMajorStrides(in.shape().dimensions());
  int64_t linear = 0;
  ForEachIndex(update.shape().dimensions(), [&](std::span<const int64_t> index) {
    int64_t target = 0;
    for (size_t i = 0; i < index.size(); ++i) target += (starts[i] + index[i]) * strides[i];
    CopyElement(update, linear++, out, target);
  });
  return Status::Ok();
}

/// Pad: element i of a dimension lands at low + i * (interior + 1); negative
/// low or high padding crops, and elements landing outside are dropped.
Status Pad(const HloInstruction& inst, const Literal& in, const Literal& pad_value, Literal& out) {
  const auto* padding = inst.GetAttr<std::vector<hlo::PaddingDimension>>(hlo::AttrId::kPadding);
  if (padding == nullptr || static_cast<int64_t>(padding->size()) != in.shape().rank()) {
    return InvalidArgument("padding needs one low_high[_interior] per dimension");
  }
  if (out.shape().rank() != in.shape().rank()) return InvalidArgument("pad keeps the rank");
  for (int64_t i = 0; i < out.element_count(); ++i) CopyElement(pad_value, 0, out, i);
  const auto& out_dims = out.shape().dimensions();
  const std::vector<int64_t> out_strides = RowMajorStrides(out_dims);
  int64_t linear = 0;
  ForEachIndex(in.shape().dimensions(), [&](std::span<const int64_t> index) {
    int64_t target = 0;
    bool inside = true;
    for (size_t i = 0; i < index.size(); ++i) {
      const auto& p = (*padding)[i];
      const int64_t position = p.low + index[i] * (p.interior + 1);
      inside = inside && position >= 0 && position < out_dims[i];
      target += position * out_strides[i];
    }
    if (inside) CopyElement(in, linear, out, target);
    ++linear;
  });
  return Status::Ok();
}

Status Concatenate(const HloInstruction& inst, Operands ops, Literal& out) {
  const auto dims = inst.dimensions();
  if (dims.size() != 1) return InvalidArgument("needs exactly one concatenation dimension");
  const int64_t dim = dims[0];
  int64_t total = 0;
  for (const Literal* operand : ops) {
    const hlo::Shape& s = operand->shape();
    bool valid = dim >= 0 && s.rank() == out.shape().rank() && dim < s.rank();
    for (int64_t i = 0; valid && i < s.rank(); ++i) {
      valid = i == dim || s.dimensions(i) == out.shape().dimensions(i);
    }
    if (!valid) return InvalidArgument("operands must match the result but along the dimension");
    total += s.dimensions(dim);
  }
  if (total != out.shape().dimensions(dim)) {
    return InvalidArgument("operand sizes along the dimension must add up to the result's");
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(out.shape().dimensions());
  int64_t offset = 0;
  for (const Literal* operand : ops) {
    int64_t linear = 0;
    ForEachIndex(operand->shape().dimensions(), [&](std::span<const int64_t> index) {
      int64_t target = offset * out_strides[dim];
      for (size_t i = 0; i < index.size(); ++i) target += index[i] * out_strides[i];
      CopyElement(*operand, linear++, out, target);
    });
    offset += operand->shape().dimensions(dim);
  }
  return Status::Ok();
}

/// A bitcast that changes the element count reinterprets memory: the two
/// tiled layouts pad differently but hold the same number of elements
/// (f32[33712,8,128]{2,1,0:T(8,128)} as f32[33708,1024]{1,0:T(8,128)}). Each
/// result element takes the operand element stored at its memory offset, and
/// zero where that offset is the operand's padding.
Status PaddingChangingBitcast(const HloInstruction& inst, const Literal& operand, Literal& out) {
  const std::optional<PhysicalOrder> from = PhysicalOrder::Of(inst.operand(0)->shape());
  const std::optional<PhysicalOrder> to = PhysicalOrder::Of(inst.shape());
  if (!from || !to || from->size() != to->size()) {
    return Unimplemented(
        "a bitcast that changes the element count, other than between single-level tiled "
        "layouts of one memory size");
  }
  // Walks memory in runs that both orders keep contiguous (rows of the minor
  // tile), copying those that are data in both.
  const int64_t bytes = value::ElementByteSize(out.element_type());
  for (int64_t offset = 0; offset < to->size();) {
    const int64_t run = std::min(to->RunLength(offset), from->RunLength(offset));
    const std::optional<int64_t> target = to->LogicalAt(offset);
    const std::optional<int64_t> source = from->LogicalAt(offset);
    if (target && source) {
      std::memcpy(out.mutable_bytes().data() + *target * bytes,
                  operand.bytes().data() + *source * bytes, static_cast<size_t>(run * bytes));
    }
    offset += run;
  }
  return Status::Ok();
}

/// reshape, and bitcast: values are logical row-major, so a reshape keeps
/// the bytes. A bitcast that keeps the element type and count is the same:
/// whatever layout change it stands for is invisible to logical values.
Status Reshape(const HloInstruction& inst, const Literal& in, Literal& out) {
  if (inst.opcode() == HloOpcode::kBitcast && in.element_type() == out.element_type() &&
      in.element_count() != out.element_count()) {
    return PaddingChangingBitcast(inst, in, out);
  }
  if (in.element_count() != out.element_count() || in.element_type() != out.element_type()) {
    return Unimplemented("a bitcast that changes the element type or count");
  }
  std::copy(in.bytes().begin(), in.bytes().end(), out.mutable_bytes().begin());
  return Status::Ok();
}

/// The kernels whose result is a fresh array of the instruction's shape: a
/// zero-filled one that `fill(out)` fills. The result and the first
/// `value_operands` operands (all but the index operands) must be arrays of
/// one element type; errors are located at `inst`.
template <typename Fill>
StatusOr<Literal> FillArray(EvalContext& ctx, const HloInstruction& inst, Operands ops,
                            int64_t value_operands, Fill fill) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (!out.shape().IsArray()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "result must be an array");
  }
  for (int64_t i = 0; i < value_operands; ++i) {
    if (!ops[i]->shape().IsArray() || ops[i]->element_type() != out.element_type()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "operand " + std::to_string(i) + " must be an array of the result's type");
    }
  }
  const Status status = fill(out);
  if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
  return out;
}

/// Every operand is a value (no index operands).
int64_t AllOperands(Operands ops) { return static_cast<int64_t>(ops.size()); }

}  // namespace

StatusOr<Literal> EvalCopy(EvalContext&, const HloInstruction&, Operands ops) { return *ops[0]; }

StatusOr<Literal> EvalTuple(EvalContext&, const HloInstruction&, Operands ops) {
  std::vector<Literal> elements;
  elements.reserve(ops.size());
  for (const Literal* operand : ops) elements.push_back(*operand);
  return Literal::CreateTuple(std::move(elements));
}

StatusOr<Literal> EvalGetTupleElement(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const int64_t index = inst.int_attr(hlo::AttrId::kIndex).value_or(-1);
  if (!ops[0]->shape().IsTuple() || index < 0 || index >= ops[0]->tuple_size()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "tuple index out of range");
  }
  return ops[0]->tuple_element(index);
}

/// A constant may be a tuple or a token, and has no operands.
StatusOr<Literal> EvalConstant(EvalContext& ctx, const HloInstruction& inst, Operands) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (!inst.has_literal()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "constant without a literal");
  }
  if (inst.literal().elided) {
    if (!ctx.options().elided_constant_seed.has_value()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "the dump elided this constant's values (`{...}`) and no seed was given "
                       "to fill them (EvaluatorOptions::elided_constant_seed)");
    }
    // A stream of its own per constant, apart from every input's stream
    // (those have the top bit clear).
    FillSeeded(out, *ctx.options().elided_constant_seed,
               (uint64_t{1} << 63) | static_cast<uint64_t>(inst.unique_id()));
    return out;
  }
  const Status status = FillConstant(inst.literal(), out);
  if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
  return out;
}

StatusOr<Literal> EvalIota(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, AllOperands(ops), [&](Literal& out) { return Iota(inst, out); });
}

StatusOr<Literal> EvalBroadcast(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, AllOperands(ops),
                   [&](Literal& out) { return Broadcast(inst, *ops[0], out); });
}

StatusOr<Literal> EvalTranspose(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, AllOperands(ops),
                   [&](Literal& out) { return Transpose(inst, *ops[0], out); });
}

StatusOr<Literal> EvalSlice(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, AllOperands(ops),
                   [&](Literal& out) { return Slice(inst, *ops[0], out); });
}

StatusOr<Literal> EvalReverse(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, AllOperands(ops),
                   [&](Literal& out) { return Reverse(inst, *ops[0], out); });
}

StatusOr<Literal> EvalDynamicSlice(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, /*value_operands=*/1,
                   [&](Literal& out) { return DynamicSlice(*ops[0], ops.subspan(1), out); });
}

StatusOr<Literal> EvalDynamicUpdateSlice(EvalContext& ctx, const HloInstruction& inst,
                                         Operands ops) {
  return FillArray(ctx, inst, ops, /*value_operands=*/2, [&](Literal& out) {
    return DynamicUpdateSlice(*ops[0], *ops[1], ops.subspan(2), out);
  });
}

StatusOr<Literal> EvalPad(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, AllOperands(ops),
                   [&](Literal& out) { return Pad(inst, *ops[0], *ops[1], out); });
}

StatusOr<Literal> EvalConcatenate(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, AllOperands(ops),
                   [&](Literal& out) { return Concatenate(inst, ops, out); });
}

StatusOr<Literal> EvalReshape(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  return FillArray(ctx, inst, ops, AllOperands(ops),
                   [&](Literal& out) { return Reshape(inst, *ops[0], out); });
}

}  // namespace tpusim::eval
