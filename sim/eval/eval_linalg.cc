// cholesky and triangular-solve on f32 and f64 matrices, batched over the
// leading dimensions. Each computes in the element type with one rounding
// per operation (no FMA) in the fixed orders documented below and in
// docs/evaluator.md.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/eval/det_math.h"
#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::PrimitiveType;
using value::Literal;

/// Cholesky-Banachiewicz, row by row. With `lower`, reads the lower triangle
/// of `a` and writes L (a = L L^T); otherwise reads the upper triangle and
/// writes U = L^T (a = U^T U). The other triangle of the result is zero.
/// A matrix that is not positive definite gets NaN from the first failing
/// pivot on (the square root of a negative number propagates).
template <typename T>
void Cholesky(const T* a, int64_t n, bool lower, T* out) {
  // Element (i, j) of the triangle read, as a lower-triangular view.
  auto in = [&](int64_t i, int64_t j) { return lower ? a[i * n + j] : a[j * n + i]; };
  auto l = [&](int64_t i, int64_t j) -> T& { return lower ? out[i * n + j] : out[j * n + i]; };
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      T s = in(i, j);
      for (int64_t k = 0; k < j; ++k) s = s - l(i, k) * l(j, k);
      l(i, j) = i == j ? detmath::Sqrt(s) : s / l(j, j);
    }
  }
}

/// What triangular-solve solves: op(a) x = b (left_side) or x op(a) = b.
struct SolveForm {
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  /// TRANSPOSE or ADJOINT (the same for real matrices).
  bool transpose = false;
};

/// Solves one system in place in `x` (which holds b on entry). `a` is m x m
/// for left_side (x is m x n), n x n otherwise. Only the triangle `lower`
/// names is read, and not its diagonal when unit_diagonal. Substitution runs
/// in the order that uses only solved values: forward when op(a) is lower
/// triangular, backward when upper; each dot product in increasing k.
template <typename T>
void Solve(const T* a, T* x, int64_t m, int64_t n, const SolveForm& f) {
  const int64_t size = f.left_side ? m : n;
  // op(a)(i, j), zero outside the triangle read.
  auto op = [&](int64_t i, int64_t j) -> T {
    if (f.transpose) std::swap(i, j);
    const bool inside = f.lower ? j <= i : j >= i;
    return inside ? a[i * size + j] : T{0};
  };
  const bool op_lower = f.lower != f.transpose;
  auto finish = [&](T s, int64_t d) { return f.unit_diagonal ? s : s / op(d, d); };
  if (f.left_side) {
    // Column c of x: sum_k op(i, k) x[k][c] = b[i][c].
    for (int64_t c = 0; c < n; ++c) {
      for (int64_t step = 0; step < m; ++step) {
        const int64_t i = op_lower ? step : m - 1 - step;
        T s = x[i * n + c];
        const int64_t begin = op_lower ? 0 : i + 1, end = op_lower ? i : m;
        for (int64_t k = begin; k < end; ++k) s = s - op(i, k) * x[k * n + c];
        x[i * n + c] = finish(s, i);
      }
    }
    return;
  }
  // Row r of x: sum_k x[r][k] op(k, j) = b[r][j].
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t step = 0; step < n; ++step) {
      const int64_t j = op_lower ? n - 1 - step : step;
      T s = x[r * n + j];
      const int64_t begin = op_lower ? j + 1 : 0, end = op_lower ? n : j;
      for (int64_t k = begin; k < end; ++k) s = s - x[r * n + k] * op(k, j);
      x[r * n + j] = finish(s, j);
    }
  }
}

/// Batch count and matrix sizes of the trailing two dimensions.
struct Batch {
  int64_t count = 1, rows = 0, cols = 0;
};
StatusOr<Batch> MatrixBatch(const hlo::Shape& shape) {
  if (!shape.IsArray() || shape.rank() < 2) return InvalidArgument("operands must be matrices");
  Batch b;
  for (int64_t d = 0; d + 2 < shape.rank(); ++d) b.count *= shape.dimensions(d);
  b.rows = shape.dimensions(shape.rank() - 2);
  b.cols = shape.dimensions(shape.rank() - 1);
  return b;
}

bool IsF32OrF64(PrimitiveType t) { return t == PrimitiveType::kF32 || t == PrimitiveType::kF64; }

}  // namespace

StatusOr<Literal> EvalCholesky(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& a = *ops[0];
  if (!IsF32OrF64(a.element_type())) {
    return ctx.Unsupported(inst, "cholesky of f32 or f64 matrices only");
  }
  StatusOr<Batch> batch = MatrixBatch(a.shape());
  if (!batch.ok() || batch->rows != batch->cols || !a.shape().Compatible(inst.shape())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "cholesky needs square matrices [..., n, n]");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  const bool lower = inst.bool_attr(hlo::AttrId::kLower);
  const int64_t n = batch->rows;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    for (int64_t b = 0; b < batch->count; ++b) {
      Cholesky<T>(a.data<T>().data() + b * n * n, n, lower, out.data<T>().data() + b * n * n);
    }
  };
  if (a.element_type() == PrimitiveType::kF32) {
    run(float{});
  } else {
    run(double{});
  }
  return out;
}

StatusOr<Literal> EvalTriangularSolve(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& a = *ops[0];
  const Literal& b = *ops[1];
  if (!IsF32OrF64(a.element_type()) || b.element_type() != a.element_type()) {
    return ctx.Unsupported(inst, "triangular-solve of f32 or f64 matrices only");
  }
  SolveForm form;
  form.left_side = inst.bool_attr(hlo::AttrId::kLeftSide);
  form.lower = inst.bool_attr(hlo::AttrId::kLower);
  form.unit_diagonal = inst.bool_attr(hlo::AttrId::kUnitDiagonal);
  const std::string_view transpose = inst.string_attr(hlo::AttrId::kTransposeA);
  if (transpose != "NO_TRANSPOSE" && transpose != "TRANSPOSE" && transpose != "ADJOINT" &&
      !transpose.empty()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "unknown transpose_a \"" + std::string(transpose) + "\"");
  }
  form.transpose = transpose == "TRANSPOSE" || transpose == "ADJOINT";
  StatusOr<Batch> ab = MatrixBatch(a.shape());
  StatusOr<Batch> bb = MatrixBatch(b.shape());
  if (!ab.ok() || !bb.ok() || ab->rows != ab->cols || ab->count != bb->count ||
      ab->rows != (form.left_side ? bb->rows : bb->cols) || !b.shape().Compatible(inst.shape())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "triangular-solve needs a [..., k, k] and b [..., m, n] with k = m "
                     "(left_side) or n, and the same batch");
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  std::copy(b.bytes().begin(), b.bytes().end(), out.mutable_bytes().begin());  // x starts as b
  const int64_t m = bb->rows, n = bb->cols, k = ab->rows;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < bb->count; ++i) {
      Solve<T>(a.data<T>().data() + i * k * k, out.data<T>().data() + i * m * n, m, n, form);
    }
  };
  if (a.element_type() == PrimitiveType::kF32) {
    run(float{});
  } else {
    run(double{});
  }
  return out;
}

}  // namespace tpusim::eval
