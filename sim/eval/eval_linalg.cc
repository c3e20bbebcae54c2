// cholesky and triangular-solve on f32, f64, c64 and c128 matrices, batched
// over the leading dimensions. Each computes in the element type (complex:
// the elementwise kernel's product and quotient) with one rounding per
// operation (no FMA) in the fixed orders documented below and in
// docs/evaluator.md.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/det_math/det_math.h"
#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::PrimitiveType;
using value::Literal;

template <typename T>
constexpr bool kIsComplex = !std::is_floating_point_v<T>;

/// Element arithmetic shared by real and complex matrices.
template <typename T>
T Mul(T x, T y) {
  if constexpr (kIsComplex<T>) {
    return ComplexMultiply(x, y);
  } else {
    return x * y;
  }
}
template <typename T>
T Div(T x, T y) {
  if constexpr (kIsComplex<T>) {
    return ComplexDivide(x, y);
  } else {
    return x / y;
  }
}
template <typename T>
T Sub(T x, T y) {
  if constexpr (kIsComplex<T>) {
    return {x.real() - y.real(), x.imag() - y.imag()};
  } else {
    return x - y;
  }
}
template <typename T>
T Conj(T x) {
  if constexpr (kIsComplex<T>) {
    return {x.real(), -x.imag()};
  } else {
    return x;
  }
}
/// The square root of a Cholesky pivot, which is real for a Hermitian
/// matrix: a complex pivot's imaginary part is dropped.
template <typename T>
T PivotSqrt(T x) {
  if constexpr (kIsComplex<T>) {
    return {detmath::Sqrt(x.real()), 0};
  } else {
    return detmath::Sqrt(x);
  }
}

/// Cholesky-Banachiewicz, row by row. With `lower`, reads the lower triangle
/// of `a` and writes L (a = L L^H, ^H the conjugate transpose, ^T for real
/// matrices); otherwise reads the upper triangle and writes U = L^H
/// (a = U^H U). The other triangle of the result is zero.
/// A matrix that is not positive definite gets NaN from the first failing
/// pivot on (the square root of a negative number propagates).
template <typename T>
void Cholesky(const T* a, int64_t n, bool lower, T* out) {
  // Element (i, j) of the triangle read, as a lower-triangular view.
  auto in = [&](int64_t i, int64_t j) { return lower ? a[i * n + j] : Conj(a[j * n + i]); };
  std::vector<T> l(static_cast<size_t>(n * n));  // L, row-major
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      T s = in(i, j);
      for (int64_t k = 0; k < j; ++k) s = Sub(s, Mul(l[i * n + k], Conj(l[j * n + k])));
      l[i * n + j] = i == j ? PivotSqrt(s) : Div(s, l[j * n + j]);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      if (lower) {
        out[i * n + j] = l[i * n + j];
      } else {
        // The diagonal is real: conjugating it would only flip the sign of
        // its zero imaginary part.
        out[j * n + i] = i == j ? l[i * n + j] : Conj(l[i * n + j]);
      }
    }
  }
}

/// What triangular-solve solves: op(a) x = b (left_side) or x op(a) = b.
struct SolveForm {
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  /// TRANSPOSE or ADJOINT.
  bool transpose = false;
  /// ADJOINT: the transpose is conjugated too (no-op for real matrices).
  bool conjugate = false;
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
    if (!inside) return T{0};
    return f.conjugate ? Conj(a[i * size + j]) : a[i * size + j];
  };
  const bool op_lower = f.lower != f.transpose;
  auto finish = [&](T s, int64_t d) { return f.unit_diagonal ? s : Div(s, op(d, d)); };
  if (f.left_side) {
    // Column c of x: sum_k op(i, k) x[k][c] = b[i][c].
    for (int64_t c = 0; c < n; ++c) {
      for (int64_t step = 0; step < m; ++step) {
        const int64_t i = op_lower ? step : m - 1 - step;
        T s = x[i * n + c];
        const int64_t begin = op_lower ? 0 : i + 1, end = op_lower ? i : m;
        for (int64_t k = begin; k < end; ++k) s = Sub(s, Mul(op(i, k), x[k * n + c]));
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
      for (int64_t k = begin; k < end; ++k) s = Sub(s, Mul(x[r * n + k], op(k, j)));
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

bool IsSupported(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || t == PrimitiveType::kC64 ||
         t == PrimitiveType::kC128;
}

/// Calls `fn(T{})` with T the element type's native type.
template <typename Fn>
void ByType(PrimitiveType t, Fn fn) {
  switch (t) {
    case PrimitiveType::kF32:
      return fn(float{});
    case PrimitiveType::kF64:
      return fn(double{});
    case PrimitiveType::kC64:
      return fn(std::complex<float>{});
    case PrimitiveType::kPred: case PrimitiveType::kS1: case PrimitiveType::kS2:
    case PrimitiveType::kS4: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64: case PrimitiveType::kU1:
    case PrimitiveType::kU2: case PrimitiveType::kU4: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3: case PrimitiveType::kF8E4M3FN: case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ: case PrimitiveType::kF8E4M3FNUZ: case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E8M0FNU: case PrimitiveType::kF4E2M1FN: case PrimitiveType::kC128:
    case PrimitiveType::kToken: case PrimitiveType::kOpaque:
      return fn(std::complex<double>{});
  }
}

}  // namespace

StatusOr<Literal> EvalCholesky(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& a = *ops[0];
  if (!IsSupported(a.element_type())) {
    return ctx.Unsupported(inst, "cholesky of f32, f64, c64 or c128 matrices only");
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
  ByType(a.element_type(), run);
  return out;
}

StatusOr<Literal> EvalTriangularSolve(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& a = *ops[0];
  const Literal& b = *ops[1];
  if (!IsSupported(a.element_type()) || b.element_type() != a.element_type()) {
    return ctx.Unsupported(inst, "triangular-solve of f32, f64, c64 or c128 matrices only");
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
  form.conjugate = transpose == "ADJOINT";
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
  ByType(a.element_type(), run);
  return out;
}

}  // namespace tpusim::eval
