// sort, variadic included: every operand is permuted the same way along
// `dimensions={d}`, by a comparator computation taking (lhs, rhs) scalar pairs
// of every operand in operand order. topk: the k largest (or smallest) of
// each row of the last dimension, with their indices.
//
// The algorithm is our own bottom-up merge sort, always stable (is_stable or
// not, so an unstable sort still has one documented answer), and it only ever
// asks "is right less than left": a comparator that is not a strict weak order
// (a LT on NaNs) still gives the same permutation everywhere, where a host
// std::sort could differ between standard libraries or misbehave. topk orders
// floats by IEEE totalOrder (NaN above +inf), ties keeping the lower index.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <numeric>
#include <type_traits>
#include <vector>

#include "sim/eval/kernels.h"
#include "sim/value/element_type.h"

namespace tpusim::eval {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using value::Literal;

/// Calls the comparator on elements of one sorted row.
class RowComparator {
 public:
  RowComparator(EvalContext& ctx, const HloInstruction& inst, const HloComputation& comparator,
                Operands ops)
      : ctx_(ctx), inst_(inst), comparator_(comparator), ops_(ops) {
    for (const Literal* operand : ops) {
      scalars_.emplace_back(hlo::Shape(operand->element_type(), {}));
      scalars_.emplace_back(hlo::Shape(operand->element_type(), {}));
    }
    for (const Literal& scalar : scalars_) args_.push_back(&scalar);
  }

  /// comparator(element a, element b), elements given as input offsets.
  StatusOr<bool> Less(int64_t a, int64_t b) {
    for (size_t k = 0; k < ops_.size(); ++k) {
      CopyElement(*ops_[k], a, scalars_[2 * k], 0);
      CopyElement(*ops_[k], b, scalars_[2 * k + 1], 0);
    }
    TPUSIM_ASSIGN_OR_RETURN(Literal result, ctx_.Call(comparator_, args_));
    if (!result.shape().IsArray() || result.element_count() != 1 ||
        result.element_type() != hlo::PrimitiveType::kPred) {
      return ctx_.Error(inst_, StatusCode::kInvalidArgument, "comparator must return pred[]");
    }
    return result.data<uint8_t>()[0] != 0;
  }

 private:
  /// For Call and error messages.
  EvalContext& ctx_;
  const HloInstruction& inst_;
  const HloComputation& comparator_;
  /// The operands being sorted.
  Operands ops_;
  /// The comparator's arguments: (lhs, rhs) per operand, refilled per call.
  std::vector<Literal> scalars_;
  std::vector<const Literal*> args_;
};

/// Sorts `perm` (positions along the row) stably: bottom-up merge sort whose
/// merge takes from the right run only when it is strictly less.
/// `less(a, b)` compares the elements at positions a and b of the row and
/// returns StatusOr<bool>.
template <typename Less>
Status MergeSort(std::vector<int64_t>& perm, Less&& less) {
  const int64_t n = static_cast<int64_t>(perm.size());
  std::vector<int64_t> buffer(perm.size());
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      int64_t i = lo, j = mid, out = lo;
      while (i < mid && j < hi) {
        TPUSIM_ASSIGN_OR_RETURN(bool right_first, less(perm[j], perm[i]));
        buffer[out++] = right_first ? perm[j++] : perm[i++];
      }
      while (i < mid) buffer[out++] = perm[i++];
      while (j < hi) buffer[out++] = perm[j++];
    }
    perm.swap(buffer);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Literal> EvalSort(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const HloComputation* comparator = inst.to_apply();
  const auto dims = inst.dimensions();
  if (comparator == nullptr || dims.size() != 1 || ops.empty()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs operands, one sort dimension and to_apply=");
  }
  const hlo::Shape& shape = ops[0]->shape();
  const int64_t dim = dims[0];
  for (const Literal* operand : ops) {
    if (!operand->shape().IsArray() || operand->shape().dimensions() != shape.dimensions()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "operands must share dimensions");
    }
  }
  if (dim < 0 || dim >= shape.rank()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "sort dimension out of range");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  const bool tuple = ops.size() > 1;
  for (size_t k = 0; k < ops.size(); ++k) {
    const Literal& result = tuple ? out.tuple_element(static_cast<int64_t>(k)) : out;
    if (!result.shape().IsArray() || result.element_type() != ops[k]->element_type() ||
        result.element_count() != ops[k]->element_count()) {
      return ctx.Error(inst, StatusCode::kInvalidArgument, "result must match the operands");
    }
  }
  const int64_t length = shape.dimensions(dim);
  const int64_t stride = RowMajorStrides(shape.dimensions())[dim];
  hlo::DimensionVector rows = shape.dimensions();
  rows[dim] = 1;  // one row per index of the other dimensions
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  RowComparator cmp(ctx, inst, *comparator, ops);
  Status status;
  std::vector<int64_t> perm(static_cast<size_t>(length));
  ForEachIndex(rows, [&](std::span<const int64_t> index) {
    if (!status.ok()) return;
    int64_t base = 0;
    for (size_t i = 0; i < index.size(); ++i) base += index[i] * strides[i];
    std::iota(perm.begin(), perm.end(), int64_t{0});
    status = MergeSort(
        perm, [&](int64_t a, int64_t b) { return cmp.Less(base + a * stride, base + b * stride); });
    for (size_t k = 0; k < ops.size() && status.ok(); ++k) {
      Literal& result = tuple ? out.mutable_tuple_element(static_cast<int64_t>(k)) : out;
      for (int64_t i = 0; i < length; ++i) {
        CopyElement(*ops[k], base + perm[i] * stride, result, base + i * stride);
      }
    }
  });
  if (!status.ok()) return status;
  return out;
}

namespace {

/// A key whose unsigned order is the element order: integers by value, floats
/// by IEEE totalOrder (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN).
std::vector<uint64_t> OrderKeys(const Literal& values) {
  std::vector<uint64_t> keys(static_cast<size_t>(values.element_count()));
  value::VisitArrayType(values.element_type(), [&](auto tag) {
    using T = value::NativeType<decltype(tag)::value>;
    for (size_t i = 0; i < keys.size(); ++i) {
      if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        keys[i] =
            static_cast<uint64_t>(static_cast<int64_t>(values.data<T>()[i])) ^ (uint64_t{1} << 63);
      } else if constexpr (std::is_integral_v<T>) {
        keys[i] = static_cast<uint64_t>(values.data<T>()[i]);
      } else {
        // Exact for every real type; a NaN keeps its sign.
        const uint64_t bits = std::bit_cast<uint64_t>(values.GetAsDouble(static_cast<int64_t>(i)));
        keys[i] = (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
      }
    }
  });
  return keys;
}

/// A top-k's input must be rows of real values, checked before they are keyed.
Status CheckRealRows(EvalContext& ctx, const HloInstruction& inst, const Literal& input) {
  if (!input.shape().IsArray() || input.shape().rank() < 1 ||
      hlo::IsComplex(input.element_type())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "needs a real array of rank >= 1");
  }
  return Status::Ok();
}

/// `inst`'s (values, s32 indices) result: the first `k` elements of each row
/// (the last dimension) of `input` (CheckRealRows) in the order of
/// `before(a, b)` (element offsets in `input`), sorted stably, so that
/// elements neither before the other keep the lower index first.
template <typename Before>
StatusOr<Literal> FirstKOfEachRow(EvalContext& ctx, const HloInstruction& inst,
                                  const Literal& input, int64_t k, Before&& before) {
  const int64_t length = input.shape().dimensions().back();
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (k < 0 || k > length || !out.shape().IsTuple() || out.tuple_size() != 2 ||
      out.tuple_element(0).element_type() != input.element_type() ||
      out.tuple_element(1).element_type() != hlo::PrimitiveType::kS32 ||
      out.tuple_element(0).element_count() * length != input.element_count() * k ||
      out.tuple_element(1).element_count() != out.tuple_element(0).element_count()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "needs 0 <= k <= the last dimension and a (values, s32 indices) result");
  }
  Literal& values = out.mutable_tuple_element(0);
  auto indices = out.mutable_tuple_element(1).data<int32_t>();
  std::vector<int64_t> perm(static_cast<size_t>(length));
  for (int64_t row = 0; row * length < input.element_count(); ++row) {
    const int64_t base = row * length;
    std::iota(perm.begin(), perm.end(), int64_t{0});
    TPUSIM_RETURN_IF_ERROR(
        MergeSort(perm, [&](int64_t a, int64_t b) { return before(base + a, base + b); }));
    for (int64_t i = 0; i < k; ++i) {
      CopyElement(input, base + perm[i], values, row * k + i);
      indices[row * k + i] = static_cast<int32_t>(perm[i]);
    }
  }
  return out;
}

}  // namespace

StatusOr<Literal> EvalTopK(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& input = *ops[0];
  const int64_t k = inst.int_attr(hlo::AttrId::kK).value_or(-1);
  const bool largest = inst.bool_attr(hlo::AttrId::kLargest, true);
  TPUSIM_RETURN_IF_ERROR(CheckRealRows(ctx, inst, input));
  const std::vector<uint64_t> keys = OrderKeys(input);
  return FirstKOfEachRow(ctx, inst, input, k, [&](int64_t a, int64_t b) -> StatusOr<bool> {
    return largest ? keys[a] > keys[b] : keys[a] < keys[b];
  });
}

StatusOr<Literal> EvalTopKCustomCall(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const hlo::Shape& shape = inst.shape();
  if (ops.size() != 1 || !shape.IsTuple() || shape.tuple_size() != 2 ||
      !shape.tuple_shapes(0).IsArray() || shape.tuple_shapes(0).rank() < 1) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "custom-call target \"TopK\" takes one array and gives (values, indices)");
  }
  const int64_t k = shape.tuple_shapes(0).dimensions().back();
  TPUSIM_RETURN_IF_ERROR(CheckRealRows(ctx, inst, *ops[0]));
  if (const HloComputation* comparator = inst.to_apply()) {
    RowComparator cmp(ctx, inst, *comparator, ops);
    return FirstKOfEachRow(ctx, inst, *ops[0], k,
                           [&](int64_t a, int64_t b) { return cmp.Less(a, b); });
  }
  const std::vector<uint64_t> keys = OrderKeys(*ops[0]);
  return FirstKOfEachRow(ctx, inst, *ops[0], k,
                         [&](int64_t a, int64_t b) -> StatusOr<bool> { return keys[a] > keys[b]; });
}

}  // namespace tpusim::eval
