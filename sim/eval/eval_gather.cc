// gather and scatter, as XLA defines them. gather: each output index splits
// into batch dimensions (which pick a start-index vector from start_indices)
// and offset dimensions (which walk the slice); start indices are clamped per
// dimension so the slice stays inside the operand. scatter: the mirror image,
// except that an update window that would not fit is skipped whole (XLA's
// behaviour) rather than clamped; updates apply one element at a time in
// row-major order of the updates, combined by to_apply.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::AttrId;
using hlo::HloInstruction;
using value::Literal;

std::vector<int64_t> IntList(const HloInstruction& inst, AttrId id) {
  const auto* v = inst.GetAttr<std::vector<int64_t>>(id);
  return v ? *v : std::vector<int64_t>{};
}

bool Contains(const std::vector<int64_t>& list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

/// An index element as int64; values beyond ±9e18 are past any dimension and
/// saturate (clamping then treats them like any other out-of-range index).
int64_t IndexValue(const Literal& indices, int64_t linear) {
  return static_cast<int64_t>(std::clamp(indices.GetAsDouble(linear), -9e18, 9e18));
}

/// The start-index vector of batch position `batch` (values of the batch
/// dimensions, in order), mapped into an operand index by `dims_map`.
void StartIndex(const Literal& indices, int64_t index_vector_dim, std::span<const int64_t> batch,
                const std::vector<int64_t>& dims_map, std::vector<int64_t>& start) {
  const std::vector<int64_t> strides = RowMajorStrides(indices.shape().dimensions());
  const bool implicit_vector = index_vector_dim == indices.shape().rank();
  int64_t base = 0;
  for (int64_t i = 0, b = 0; i < indices.shape().rank(); ++i) {
    if (i != index_vector_dim) base += batch[b++] * strides[i];
  }
  std::fill(start.begin(), start.end(), 0);
  for (size_t k = 0; k < dims_map.size(); ++k) {
    const int64_t at =
        implicit_vector ? base : base + static_cast<int64_t>(k) * strides[index_vector_dim];
    start[dims_map[k]] = IndexValue(indices, at);
  }
}

/// Batching dimensions (gather's operand_batching_dims with
/// start_indices_batching_dims, scatter's input_batching_dims with
/// scatter_indices_batching_dims): operand dimension `operand_dims[i]` is
/// indexed by the position along start-indices dimension `index_dims[i]`,
/// exactly, as if the indices held an iota there. Checks the pairing and
/// returns, per pair, where that indices dimension sits in the batch index
/// (the indices' dimensions without index_vector_dim), or an error.
StatusOr<std::vector<int64_t>> BatchingPositions(const std::vector<int64_t>& operand_dims,
                                                 const std::vector<int64_t>& index_dims,
                                                 const hlo::Shape& operand,
                                                 const hlo::Shape& indices,
                                                 int64_t index_vector_dim) {
  if (operand_dims.size() != index_dims.size()) {
    return InvalidArgument("the operand and the indices need as many batching dimensions");
  }
  std::vector<int64_t> positions;
  for (size_t i = 0; i < operand_dims.size(); ++i) {
    const int64_t od = operand_dims[i], id = index_dims[i];
    if (od < 0 || od >= operand.rank() || id < 0 || id >= indices.rank() ||
        id == index_vector_dim || operand.dimensions(od) != indices.dimensions(id)) {
      return InvalidArgument("batching dimensions must pair equal-sized dimensions");
    }
    positions.push_back(id < index_vector_dim ? id : id - 1);
  }
  return positions;
}

Status Gather(const HloInstruction& inst, const Literal& operand, const Literal& indices,
              Literal& out) {
  const std::vector<int64_t> operand_batching = IntList(inst, AttrId::kOperandBatchingDims);
  const std::vector<int64_t> offset_dims = IntList(inst, AttrId::kOffsetDims);
  const std::vector<int64_t> collapsed = IntList(inst, AttrId::kCollapsedSliceDims);
  const std::vector<int64_t> start_index_map = IntList(inst, AttrId::kStartIndexMap);
  const std::vector<int64_t> slice_sizes = IntList(inst, AttrId::kSliceSizes);
  const int64_t index_vector_dim =
      inst.int_attr(AttrId::kIndexVectorDim).value_or(indices.shape().rank());
  const hlo::Shape& op_shape = operand.shape();
  const int64_t rank = op_shape.rank();
  std::vector<int64_t> window_dims;  // operand dimensions the offset dims walk
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(collapsed, d) && !Contains(operand_batching, d)) window_dims.push_back(d);
  }
  TPUSIM_ASSIGN_OR_RETURN(
      const std::vector<int64_t> batching_positions,
      BatchingPositions(operand_batching, IntList(inst, AttrId::kStartIndicesBatchingDims),
                        op_shape, indices.shape(), index_vector_dim));
  const bool implicit_vector = index_vector_dim == indices.shape().rank();
  const int64_t batch_rank = out.shape().rank() - static_cast<int64_t>(offset_dims.size());
  if (static_cast<int64_t>(slice_sizes.size()) != rank ||
      window_dims.size() != offset_dims.size() || index_vector_dim < 0 ||
      index_vector_dim > indices.shape().rank() ||
      batch_rank != indices.shape().rank() - (implicit_vector ? 0 : 1) ||
      (implicit_vector ? 1 : indices.shape().dimensions(index_vector_dim)) !=
          static_cast<int64_t>(start_index_map.size()) ||
      std::any_of(start_index_map.begin(), start_index_map.end(),
                  [&](int64_t d) { return d < 0 || d >= rank; }) ||
      std::any_of(offset_dims.begin(), offset_dims.end(),
                  [&](int64_t d) { return d < 0 || d >= out.shape().rank(); })) {
    return InvalidArgument("inconsistent gather dimension numbers");
  }
  // Every read must stay inside the operand and start_indices: slices fit,
  // offset dimensions walk their slice, batch dimensions match the indices.
  for (int64_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > op_shape.dimensions(d)) {
      return InvalidArgument("slice_sizes exceed the operand");
    }
  }
  for (size_t i = 0; i < offset_dims.size(); ++i) {
    if (out.shape().dimensions(offset_dims[i]) != slice_sizes[window_dims[i]]) {
      return InvalidArgument("offset dimensions must have the slice sizes");
    }
  }
  for (int64_t d = 0, i = 0; d < out.shape().rank(); ++d) {
    if (Contains(offset_dims, d)) continue;
    if (i == index_vector_dim) ++i;
    if (out.shape().dimensions(d) != indices.shape().dimensions(i++)) {
      return InvalidArgument("batch dimensions must match start_indices");
    }
  }
  const std::vector<int64_t> op_strides = RowMajorStrides(op_shape.dimensions());
  int64_t linear = 0;
  std::vector<int64_t> batch, source(rank);
  ForEachIndex(out.shape().dimensions(), [&](std::span<const int64_t> o) {
    batch.clear();
    for (int64_t d = 0; d < out.shape().rank(); ++d) {
      if (!Contains(offset_dims, d)) batch.push_back(o[d]);
    }
    StartIndex(indices, index_vector_dim, batch, start_index_map, source);
    for (int64_t d : start_index_map) {
      source[d] = std::clamp<int64_t>(source[d], 0, op_shape.dimensions(d) - slice_sizes[d]);
    }
    for (size_t i = 0; i < operand_batching.size(); ++i) {
      source[operand_batching[i]] = batch[batching_positions[i]];
    }
    for (size_t i = 0; i < offset_dims.size(); ++i) source[window_dims[i]] += o[offset_dims[i]];
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) offset += source[d] * op_strides[d];
    CopyElement(operand, offset, out, linear++);
  });
  return Status::Ok();
}

/// Errors name the instruction (the combiner's already do).
Status Scatter(const EvalContext& ctx, Combiner& combiner, const HloInstruction& inst,
               Operands operands, const Literal& indices, Operands updates, Literal& out) {
  const std::vector<int64_t> input_batching = IntList(inst, AttrId::kInputBatchingDims);
  const std::vector<int64_t> window_dims = IntList(inst, AttrId::kUpdateWindowDims);
  const std::vector<int64_t> inserted = IntList(inst, AttrId::kInsertedWindowDims);
  const std::vector<int64_t> dims_map = IntList(inst, AttrId::kScatterDimsToOperandDims);
  const int64_t index_vector_dim =
      inst.int_attr(AttrId::kIndexVectorDim).value_or(indices.shape().rank());
  const hlo::Shape& op_shape = operands[0]->shape();
  const hlo::Shape& up_shape = updates[0]->shape();
  const int64_t rank = op_shape.rank();
  std::vector<int64_t> operand_window_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(inserted, d) && !Contains(input_batching, d)) operand_window_dims.push_back(d);
  }
  StatusOr<std::vector<int64_t>> batching_positions =
      BatchingPositions(input_batching, IntList(inst, AttrId::kScatterIndicesBatchingDims),
                        op_shape, indices.shape(), index_vector_dim);
  if (!batching_positions.ok()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, batching_positions.status().message());
  }
  const bool implicit_vector = index_vector_dim == indices.shape().rank();
  const int64_t scatter_rank = up_shape.rank() - static_cast<int64_t>(window_dims.size());
  if (operand_window_dims.size() != window_dims.size() || index_vector_dim < 0 ||
      index_vector_dim > indices.shape().rank() ||
      scatter_rank != indices.shape().rank() - (implicit_vector ? 0 : 1) ||
      (implicit_vector ? 1 : indices.shape().dimensions(index_vector_dim)) !=
          static_cast<int64_t>(dims_map.size()) ||
      std::any_of(dims_map.begin(), dims_map.end(),
                  [&](int64_t d) { return d < 0 || d >= rank; }) ||
      std::any_of(window_dims.begin(), window_dims.end(),
                  [&](int64_t d) { return d < 0 || d >= up_shape.rank(); })) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "inconsistent scatter dimension numbers");
  }
  // Size of the update window along each operand dimension (1 where inserted).
  std::vector<int64_t> window_size(rank, 1);
  for (size_t i = 0; i < window_dims.size(); ++i) {
    window_size[operand_window_dims[i]] = up_shape.dimensions(window_dims[i]);
  }
  for (int64_t d = 0, i = 0; d < up_shape.rank(); ++d) {
    if (Contains(window_dims, d)) continue;
    if (i == index_vector_dim) ++i;
    if (up_shape.dimensions(d) != indices.shape().dimensions(i++)) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "update scatter dimensions must match scatter_indices");
    }
  }
  // The result starts as the operands; Literal outputs are one array or a tuple.
  const size_t n = operands.size();
  auto result = [&](size_t k) -> Literal& { return n == 1 ? out : out.mutable_tuple_element(k); };
  for (size_t k = 0; k < n; ++k) result(k) = *operands[k];
  std::vector<const Literal*> targets;
  for (size_t k = 0; k < n; ++k) targets.push_back(&result(k));

  const std::vector<int64_t> op_strides = RowMajorStrides(op_shape.dimensions());
  std::vector<int64_t> scatter_index, start(rank);
  int64_t linear = 0;
  Status status;
  ForEachIndex(up_shape.dimensions(), [&](std::span<const int64_t> u) {
    const int64_t update_offset = linear++;
    if (!status.ok()) return;
    scatter_index.clear();
    for (int64_t d = 0; d < up_shape.rank(); ++d) {
      if (!Contains(window_dims, d)) scatter_index.push_back(u[d]);
    }
    StartIndex(indices, index_vector_dim, scatter_index, dims_map, start);
    for (size_t i = 0; i < input_batching.size(); ++i) {
      start[input_batching[i]] = scatter_index[(*batching_positions)[i]];
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (start[d] < 0 || start[d] > op_shape.dimensions(d) - window_size[d]) return;  // skipped
    }
    for (size_t i = 0; i < window_dims.size(); ++i) {
      start[operand_window_dims[i]] += u[window_dims[i]];
    }
    int64_t target = 0;
    for (int64_t d = 0; d < rank; ++d) target += start[d] * op_strides[d];
    combiner.Reset(targets, target);
    status = combiner.Combine(updates, update_offset);
    for (size_t k = 0; k < n && status.ok(); ++k)
      CopyElement(combiner.acc(k), 0, result(k), target);
  });
  return status;
}

}  // namespace

StatusOr<Literal> EvalScatter(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const size_t n = (ops.size() - 1) / 2;
  const hlo::HloComputation* combine = inst.to_apply();
  if (combine == nullptr || n == 0 || ops.size() != 2 * n + 1) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs to_apply= and operands, indices, and one update per operand");
  }
  const Operands operands = ops.subspan(0, n), updates = ops.subspan(n + 1);
  const Literal& indices = *ops[n];
  if (!indices.shape().IsArray() || !hlo::IsInteger(indices.element_type())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "scatter indices must be integers");
  }
  for (size_t k = 0; k < n; ++k) {
    if (!operands[k]->shape().IsArray() || !updates[k]->shape().IsArray() ||
        operands[k]->shape().dimensions() != operands[0]->shape().dimensions() ||
        updates[k]->shape().dimensions() != updates[0]->shape().dimensions() ||
        operands[k]->element_type() != updates[k]->element_type()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument,
                       "operands must share dimensions, updates too, each of its operand's type");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  for (size_t k = 0; k < n; ++k) {
    const Literal& r = n == 1 ? out : out.tuple_element(static_cast<int64_t>(k));
    if (!r.shape().IsArray() || !r.shape().Compatible(operands[k]->shape())) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "result must match the operands");
    }
  }
  Combiner combiner(ctx, inst, *combine, operands);
  TPUSIM_RETURN_IF_ERROR(Scatter(ctx, combiner, inst, operands, indices, updates, out));
  return out;
}

StatusOr<Literal> EvalGather(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (!out.shape().IsArray() || !ops[0]->shape().IsArray() || !ops[1]->shape().IsArray() ||
      ops[0]->element_type() != out.element_type() || !hlo::IsInteger(ops[1]->element_type())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs an operand of the result's type and integer start indices");
  }
  const Status status = Gather(inst, *ops[0], *ops[1], out);
  if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
  return out;
}

}  // namespace tpusim::eval
