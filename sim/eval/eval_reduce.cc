// reduce and reduce-window, variadic included, and select-and-scatter.
//
// Order (docs/evaluator.md): each result element starts from the init values
// and combines the reduced elements one at a time, in row-major order of the
// reduced dimensions taken in increasing dimension number (the highest
// reduced dimension varies fastest): acc = f(acc, x). This is a sequential,
// deterministic order; it is not the tree order a TPU's vector unit may use.
// reduce-window does the same per window, over window positions in row-major
// order, skipping positions that fall in padding or between dilated elements
// (as XLA's evaluator does).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using value::Literal;

/// The op of a reducer that is exactly `ROOT r = op(p0, p1)` on scalars of
/// `type`, for an op ApplyBinaryInPlace implements; nullopt otherwise.
std::optional<BinaryArith> SimpleReducer(const HloComputation& reducer, hlo::PrimitiveType type) {
  if (reducer.instruction_count() != 3 || reducer.parameter_count() != 2) return std::nullopt;
  const HloInstruction* root = reducer.root();
  const std::optional<BinaryArith> op = InPlaceBinaryArith(root->opcode());
  if (!op || root->operand_count() != 2 ||
      root->operand(0) != reducer.parameters()[0] || root->operand(1) != reducer.parameters()[1]) {
    return std::nullopt;
  }
  const HloInstruction* const checked[] = {root, reducer.parameters()[0], reducer.parameters()[1]};
  for (const HloInstruction* p : checked) {
    if (!p->shape().IsArray() || p->shape().rank() != 0 || p->shape().element_type() != type) {
      return std::nullopt;
    }
  }
  return op;
}

/// Input offsets split in two: `kept[o]` for result element o and
/// `reduced[r]` for the r-th reduced position, so element (o, r) of the input
/// is at kept[o] + reduced[r].
struct ReduceOffsets {
  std::vector<int64_t> kept;
  std::vector<int64_t> reduced;
};

ReduceOffsets ComputeOffsets(const hlo::Shape& input, std::span<const int64_t> reduce_dims) {
  const std::vector<int64_t> strides = RowMajorStrides(input.dimensions());
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
  for (int64_t d = 0; d < input.rank(); ++d) {
    const bool reduced = std::find(reduce_dims.begin(), reduce_dims.end(), d) != reduce_dims.end();
    (reduced ? reduced_dims : kept_dims).push_back(input.dimensions(d));
    (reduced ? reduced_strides : kept_strides).push_back(strides[d]);
  }
  ReduceOffsets offsets;
  auto collect = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& dim_strides,
                    std::vector<int64_t>& out) {
    ForEachIndex(dims, [&](std::span<const int64_t> index) {
      int64_t offset = 0;
      for (size_t i = 0; i < index.size(); ++i) offset += index[i] * dim_strides[i];
      out.push_back(offset);
    });
  };
  collect(kept_dims, kept_strides, offsets.kept);
  collect(reduced_dims, reduced_strides, offsets.reduced);
  return offsets;
}

}  // namespace

Combiner::Combiner(EvalContext& ctx, const HloInstruction& inst, const HloComputation& reducer,
                   Operands inputs)
    : ctx_(ctx), inst_(inst), reducer_(reducer), n_(inputs.size()) {
  if (n_ == 1) simple_ = SimpleReducer(reducer, inputs[0]->element_type());
  for (const value::Literal* input : inputs) {
    acc_.emplace_back(hlo::Shape(input->element_type(), {}));
    x_.emplace_back(hlo::Shape(input->element_type(), {}));
  }
}

void Combiner::Reset(Operands sources, int64_t offset) {
  for (size_t k = 0; k < n_; ++k) CopyElement(*sources[k], offset, acc_[k], 0);
}

Status Combiner::Combine(Operands inputs, int64_t offset) {
  for (size_t k = 0; k < n_; ++k) CopyElement(*inputs[k], offset, x_[k], 0);
  if (simple_) {
    const Status status = ApplyBinaryInPlace(*simple_, acc_[0], x_[0]);
    if (!status.ok()) return ctx_.Error(inst_, status.code(), status.message());
    return Status::Ok();
  }
  std::vector<const value::Literal*> args;
  for (const value::Literal& a : acc_) args.push_back(&a);
  for (const value::Literal& x : x_) args.push_back(&x);
  TPUSIM_ASSIGN_OR_RETURN(value::Literal combined, ctx_.Call(reducer_, args));
  std::vector<value::Literal> parts;
  if (n_ == 1) {
    parts.push_back(std::move(combined));
  } else if (combined.shape().IsTuple() && combined.tuple_size() == static_cast<int64_t>(n_)) {
    parts = std::move(combined).DecomposeTuple();
  }
  for (size_t k = 0; k < n_; ++k) {
    if (k >= parts.size() || !parts[k].shape().IsArray() || parts[k].element_count() != 1 ||
        parts[k].element_type() != acc_[k].element_type()) {
      return ctx_.Error(inst_, StatusCode::kInvalidArgument,
                        "the reducer must return one scalar per input, of its type");
    }
    acc_[k] = std::move(parts[k]);
  }
  return Status::Ok();
}

StatusOr<Literal> EvalReduce(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const HloComputation* reducer = inst.to_apply();
  const size_t n = ops.size() / 2;
  if (reducer == nullptr || n == 0 || ops.size() != 2 * n) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs to_apply= and as many init values as inputs");
  }
  const hlo::Shape& input_shape = ops[0]->shape();
  for (size_t k = 0; k < n; ++k) {
    if (!ops[k]->shape().IsArray() || ops[k]->shape().dimensions() != input_shape.dimensions() ||
        !ops[n + k]->shape().IsArray() || ops[n + k]->element_count() != 1 ||
        ops[n + k]->element_type() != ops[k]->element_type()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "inputs must share dimensions and each init must be a scalar of its type");
    }
  }
  const ReduceOffsets offsets = ComputeOffsets(input_shape, inst.dimensions());
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  auto result = [&](size_t k) -> Literal& { return n == 1 ? out : out.mutable_tuple_element(k); };
  for (size_t k = 0; k < n; ++k) {
    if (!result(k).shape().IsArray() ||
        result(k).element_count() != static_cast<int64_t>(offsets.kept.size()) ||
        result(k).element_type() != ops[k]->element_type()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "result does not match the kept dimensions of the inputs");
    }
  }
  const int64_t out_count = static_cast<int64_t>(offsets.kept.size());

  // Fast path: a plain add/max/min/... reducer runs as whole-array steps of
  // the elementwise kernel, one per reduced position in the same order, so
  // every element sees exactly the sequence of roundings the generic path
  // would give it.
  if (n == 1) {
    if (auto op = SimpleReducer(*reducer, ops[0]->element_type())) {
      for (int64_t o = 0; o < out_count; ++o) CopyElement(*ops[1], 0, out, o);
      Literal column(out.shape());
      for (int64_t r : offsets.reduced) {
        for (int64_t o = 0; o < out_count; ++o)
          CopyElement(*ops[0], offsets.kept[o] + r, column, o);
        const Status status = ApplyBinaryInPlace(*op, out, column);
        if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
      }
      return out;
    }
  }

  // Generic path: the reducer called on scalars, (acc..., x...) -> acc.
  const Operands inputs = ops.subspan(0, n), inits = ops.subspan(n);
  Combiner combiner(ctx, inst, *reducer, inputs);
  for (int64_t o = 0; o < out_count; ++o) {
    combiner.Reset(inits);
    for (int64_t r : offsets.reduced) {
      TPUSIM_RETURN_IF_ERROR(combiner.Combine(inputs, offsets.kept[o] + r));
    }
    for (size_t k = 0; k < n; ++k) CopyElement(combiner.acc(k), 0, result(k), o);
  }
  return out;
}

StatusOr<Literal> EvalReduceWindow(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const HloComputation* reducer = inst.to_apply();
  const hlo::Window* window = inst.window();
  const size_t n = ops.size() / 2;
  if (reducer == nullptr || window == nullptr || n == 0 || ops.size() != 2 * n) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs window=, to_apply= and as many init values as inputs");
  }
  const Operands inputs = ops.subspan(0, n), inits = ops.subspan(n);
  const hlo::Shape& shape = inputs[0]->shape();
  for (size_t k = 0; k < n; ++k) {
    if (!inputs[k]->shape().IsArray() || inputs[k]->shape().dimensions() != shape.dimensions() ||
        !inits[k]->shape().IsArray() || inits[k]->element_count() != 1 ||
        inits[k]->element_type() != inputs[k]->element_type()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "inputs must share dimensions and each init must be a scalar of its type");
    }
  }
  if (static_cast<int64_t>(window->dimensions.size()) != shape.rank()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "window must cover every dimension");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  auto result = [&](size_t k) -> Literal& { return n == 1 ? out : out.mutable_tuple_element(k); };
  const hlo::Shape& out_shape = result(0).shape();
  for (size_t k = 0; k < n; ++k) {
    if (!result(k).shape().IsArray() || result(k).element_type() != inputs[k]->element_type() ||
        result(k).shape().dimensions() != out_shape.dimensions() ||
        out_shape.rank() != shape.rank()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "result does not match the inputs");
    }
  }
  std::vector<int64_t> sizes;
  for (const hlo::WindowDimension& d : window->dimensions) sizes.push_back(d.size);
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  Combiner combiner(ctx, inst, *reducer, inputs);
  Status status;
  int64_t linear = 0;
  ForEachIndex(out_shape.dimensions(), [&](std::span<const int64_t> o) {
    if (!status.ok()) return;
    combiner.Reset(inits);
    ForEachIndex(sizes, [&](std::span<const int64_t> w) {
      if (!status.ok()) return;
      int64_t offset = 0;
      for (size_t d = 0; d < o.size(); ++d) {
        const hlo::WindowDimension& wd = window->dimensions[d];
        const int64_t p = o[d] * wd.stride + w[d] * wd.window_dilation - wd.padding_low;
        if (p < 0 || p % wd.base_dilation != 0 || p / wd.base_dilation >= shape.dimensions(d)) {
          return;  // padding or a dilation hole
        }
        offset += p / wd.base_dilation * strides[d];
      }
      status = combiner.Combine(inputs, offset);
    });
    for (size_t k = 0; k < n; ++k) CopyElement(combiner.acc(k), 0, result(k), linear);
    ++linear;
  });
  if (!status.ok()) return status;
  return out;
}

StatusOr<Literal> EvalSelectAndScatter(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const auto* select = inst.GetAttr<HloComputation*>(hlo::AttrId::kSelect);
  const auto* scatter = inst.GetAttr<HloComputation*>(hlo::AttrId::kScatter);
  const hlo::Window* window = inst.window();
  const Literal& operand = *ops[0];
  const Literal& source = *ops[1];
  const Literal& init = *ops[2];
  if (select == nullptr || scatter == nullptr || window == nullptr) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "needs window=, select= and scatter=");
  }
  const hlo::Shape& shape = operand.shape();
  if (!shape.IsArray() || !source.shape().IsArray() || source.shape().rank() != shape.rank() ||
      static_cast<int64_t>(window->dimensions.size()) != shape.rank() || !init.shape().IsArray() ||
      init.element_count() != 1 || init.element_type() != source.element_type()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "operand, source, window and init do not fit together");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (!out.shape().Compatible(shape) || out.element_type() != source.element_type()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "result must match the operand");
  }
  for (int64_t i = 0; i < out.element_count(); ++i) CopyElement(init, 0, out, i);
  std::vector<int64_t> sizes;
  for (const hlo::WindowDimension& d : window->dimensions) sizes.push_back(d.size);
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  // select(current, candidate) keeps the current element when true.
  Literal current(hlo::Shape(operand.element_type(), {}));
  Literal candidate(hlo::Shape(operand.element_type(), {}));
  const Literal* select_args[] = {&current, &candidate};
  const Literal* out_ptr[] = {&out};
  const Literal* source_ptr[] = {&source};
  Combiner combiner(ctx, inst, **scatter, source_ptr);
  Status status;
  int64_t source_index = 0;
  // Windows in row-major order of the source; within a window, positions in
  // row-major order, skipping padding; the first position is selected, then
  // each later one replaces it unless select(current, it) is true.
  ForEachIndex(source.shape().dimensions(), [&](std::span<const int64_t> o) {
    const int64_t s = source_index++;
    if (!status.ok()) return;
    int64_t selected = -1;
    ForEachIndex(sizes, [&](std::span<const int64_t> w) {
      if (!status.ok()) return;
      int64_t offset = 0;
      for (size_t d = 0; d < o.size(); ++d) {
        const hlo::WindowDimension& wd = window->dimensions[d];
        const int64_t p = o[d] * wd.stride + w[d] * wd.window_dilation - wd.padding_low;
        if (p < 0 || p % wd.base_dilation != 0 || p / wd.base_dilation >= shape.dimensions(d)) {
          return;  // padding
        }
        offset += p / wd.base_dilation * strides[d];
      }
      if (selected < 0) {
        selected = offset;
        return;
      }
      CopyElement(operand, selected, current, 0);
      CopyElement(operand, offset, candidate, 0);
      StatusOr<Literal> keep = ctx.Call(**select, select_args);
      if (!keep.ok()) {
        status = keep.status();
      } else if (!keep->shape().IsArray() || keep->element_count() != 1 ||
                 keep->element_type() != hlo::PrimitiveType::kPred) {
        status = ctx.Error(inst, StatusCode::kInvalidArgument, "select must return pred[]");
      } else if (keep->data<uint8_t>()[0] == 0) {
        selected = offset;
      }
    });
    if (selected < 0 || !status.ok()) return;  // a window entirely in padding
    combiner.Reset(out_ptr, selected);
    status = combiner.Combine(source_ptr, s);
    if (status.ok()) CopyElement(combiner.acc(0), 0, out, selected);
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace tpusim::eval
