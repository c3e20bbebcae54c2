// batch-norm-training, batch-norm-inference and batch-norm-grad, with the
// formulas of XLA's operation semantics.
//
// Numerics (docs/evaluator.md): every statistic and every output element is
// computed in the compute type (f32 for f32 and narrower floats, f64 for
// f64), each sum in row-major order of the elements of one feature, with
// one rounding per operation (no FMA) and 1/sqrt from detmath, and is
// rounded once to the element type at the end. The variance is the mean of
// squared deviations from the mean (two passes), as the semantics define it.
#include <cstdint>
#include <type_traits>
#include <vector>

#include "sim/det_math/det_math.h"
#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using value::Literal;

/// The elements of an operand grouped by feature: `count` elements per
/// feature, visited in row-major order.
struct FeatureLayout {
  int64_t features = 0;
  int64_t inner = 1;  ///< elements after the feature dimension (its stride)
  int64_t count = 0;  ///< elements per feature
  /// Row-major index of the j-th element (row-major order) of feature f.
  int64_t Index(int64_t f, int64_t j) const {
    return (j / inner) * features * inner + f * inner + j % inner;
  }
};

StatusOr<FeatureLayout> LayoutOf(const Literal& operand, int64_t feature_index) {
  const hlo::Shape& shape = operand.shape();
  if (!shape.IsArray() || !hlo::IsFloatingPoint(operand.element_type())) {
    return InvalidArgument("the operand must be a floating-point array");
  }
  if (feature_index < 0 || feature_index >= shape.rank()) {
    return InvalidArgument("feature_index " + std::to_string(feature_index) +
                           " is not a dimension of the operand");
  }
  FeatureLayout layout;
  layout.features = shape.dimensions(feature_index);
  for (int64_t d = feature_index + 1; d < shape.rank(); ++d) layout.inner *= shape.dimensions(d);
  layout.count = layout.features == 0 ? 0 : operand.element_count() / layout.features;
  return layout;
}

/// A per-feature operand (scale, offset, mean, variance) of the right size.
Status CheckFeatureVector(const Literal& v, const Literal& operand, int64_t features,
                          const char* what) {
  if (!v.shape().IsArray() || v.shape().rank() != 1 || v.element_count() != features ||
      v.element_type() != operand.element_type()) {
    return InvalidArgument(std::string(what) + " must be a vector of " +
                           std::to_string(features) + " elements of the operand's type");
  }
  return Status::Ok();
}

/// Reads element i as the compute type T.
template <typename T>
T At(const Literal& l, int64_t i) {
  return static_cast<T>(l.GetAsDouble(i));
}

/// Mean and variance of each feature (two passes).
template <typename T>
void Moments(const Literal& x, const FeatureLayout& fl, std::vector<T>& mean,
             std::vector<T>& var) {
  mean.assign(fl.features, T(0));
  var.assign(fl.features, T(0));
  const T m = static_cast<T>(fl.count);
  for (int64_t f = 0; f < fl.features; ++f) {
    T sum = 0;
    for (int64_t j = 0; j < fl.count; ++j) sum = sum + At<T>(x, fl.Index(f, j));
    mean[f] = sum / m;
    T squares = 0;
    for (int64_t j = 0; j < fl.count; ++j) {
      const T d = At<T>(x, fl.Index(f, j)) - mean[f];
      squares = squares + d * d;
    }
    var[f] = squares / m;
  }
}

/// y = scale * (x - mean) * rsqrt(var + epsilon) + offset, per element.
template <typename T>
void Normalize(const Literal& x, const FeatureLayout& fl, const Literal& scale,
               const Literal& offset, const std::vector<T>& mean, const std::vector<T>& var,
               T epsilon, Literal& y) {
  for (int64_t f = 0; f < fl.features; ++f) {
    const T inv = detmath::Rsqrt(var[f] + epsilon);
    const T s = At<T>(scale, f), o = At<T>(offset, f);
    for (int64_t j = 0; j < fl.count; ++j) {
      const int64_t i = fl.Index(f, j);
      y.SetFromDouble(i, static_cast<double>(s * ((At<T>(x, i) - mean[f]) * inv) + o));
    }
  }
}

template <typename T>
Literal FeatureVector(const Literal& like, const std::vector<T>& values) {
  Literal v(hlo::Shape(like.element_type(), {static_cast<int64_t>(values.size())}));
  for (size_t f = 0; f < values.size(); ++f) v.SetFromDouble(f, static_cast<double>(values[f]));
  return v;
}

template <typename T>
StatusOr<Literal> Training(const Literal& x, const Literal& scale, const Literal& offset,
                           const FeatureLayout& fl, T epsilon) {
  std::vector<T> mean, var;
  Moments(x, fl, mean, var);
  Literal y(x.shape());
  Normalize(x, fl, scale, offset, mean, var, epsilon, y);
  std::vector<Literal> parts;
  parts.push_back(std::move(y));
  parts.push_back(FeatureVector(x, mean));
  parts.push_back(FeatureVector(x, var));
  return Literal::CreateTuple(std::move(parts));
}

template <typename T>
StatusOr<Literal> Inference(const Literal& x, const Literal& scale, const Literal& offset,
                            const Literal& mean, const Literal& var, const FeatureLayout& fl,
                            T epsilon) {
  std::vector<T> m(fl.features), v(fl.features);
  for (int64_t f = 0; f < fl.features; ++f) {
    m[f] = At<T>(mean, f);
    v[f] = At<T>(var, f);
  }
  Literal y(x.shape());
  Normalize(x, fl, scale, offset, m, v, epsilon, y);
  return y;
}

/// XLA's semantics, per feature with m elements and inv = 1/sqrt(var + eps):
///   grad_offset = sum(dy)
///   grad_scale  = sum(dy * (x - mean)) * inv
///   grad_x      = scale * inv * (dy - grad_offset / m
///                                 - (x - mean) * sum(dy * (x - mean)) / (m * (var + eps)))
template <typename T>
StatusOr<Literal> Grad(const Literal& x, const Literal& scale, const Literal& mean,
                       const Literal& var, const Literal& dy, const FeatureLayout& fl,
                       T epsilon) {
  Literal dx(x.shape());
  std::vector<T> grad_scale(fl.features), grad_offset(fl.features);
  const T m = static_cast<T>(fl.count);
  for (int64_t f = 0; f < fl.features; ++f) {
    const T mu = At<T>(mean, f);
    const T var_eps = At<T>(var, f) + epsilon;
    const T inv = detmath::Rsqrt(var_eps);
    T sum_dy = 0, sum_dy_xc = 0;
    for (int64_t j = 0; j < fl.count; ++j) {
      const int64_t i = fl.Index(f, j);
      const T g = At<T>(dy, i);
      sum_dy = sum_dy + g;
      sum_dy_xc = sum_dy_xc + g * (At<T>(x, i) - mu);
    }
    grad_offset[f] = sum_dy;
    grad_scale[f] = sum_dy_xc * inv;
    const T mean_dy = sum_dy / m;
    const T c = sum_dy_xc / (m * var_eps);
    const T k = At<T>(scale, f) * inv;
    for (int64_t j = 0; j < fl.count; ++j) {
      const int64_t i = fl.Index(f, j);
      const T centred = At<T>(x, i) - mu;
      dx.SetFromDouble(i, static_cast<double>(k * ((At<T>(dy, i) - mean_dy) - centred * c)));
    }
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(dx));
  parts.push_back(FeatureVector(x, grad_scale));
  parts.push_back(FeatureVector(x, grad_offset));
  return Literal::CreateTuple(std::move(parts));
}

template <typename T>
StatusOr<Literal> Run(const HloInstruction& inst, Operands ops, const FeatureLayout& fl,
                      T epsilon) {
  // KernelFor sends only the three batch-norm opcodes here.
  if (inst.opcode() == HloOpcode::kBatchNormTraining) {
    return Training<T>(*ops[0], *ops[1], *ops[2], fl, epsilon);
  }
  if (inst.opcode() == HloOpcode::kBatchNormInference) {
    return Inference<T>(*ops[0], *ops[1], *ops[2], *ops[3], *ops[4], fl, epsilon);
  }
  return Grad<T>(*ops[0], *ops[1], *ops[2], *ops[3], *ops[4], fl, epsilon);
}

StatusOr<Literal> BatchNorm(const HloInstruction& inst, Operands ops) {
  const size_t expected = inst.opcode() == HloOpcode::kBatchNormTraining ? 3 : 5;
  if (ops.size() != expected) {
    return InvalidArgument("takes " + std::to_string(expected) + " operands");
  }
  const Literal& x = *ops[0];
  TPUSIM_ASSIGN_OR_RETURN(const FeatureLayout fl,
                          LayoutOf(x, inst.int_attr(hlo::AttrId::kFeatureIndex).value_or(-1)));
  // Per-feature operands: all but the operand itself and grad's grad_output.
  static constexpr const char* kNames[] = {"operand", "operand 1", "operand 2", "operand 3",
                                           "operand 4"};
  for (size_t k = 1; k < ops.size(); ++k) {
    if (inst.opcode() == HloOpcode::kBatchNormGrad && k == 4) {
      if (!ops[k]->shape().Compatible(x.shape())) {
        return InvalidArgument("grad_output must have the operand's shape");
      }
      continue;
    }
    TPUSIM_RETURN_IF_ERROR(CheckFeatureVector(*ops[k], x, fl.features, kNames[k]));
  }
  const auto* epsilon = inst.GetAttr<double>(hlo::AttrId::kEpsilon);
  if (epsilon == nullptr) return InvalidArgument("needs epsilon=");
  if (x.element_type() == hlo::PrimitiveType::kF64) return Run<double>(inst, ops, fl, *epsilon);
  return Run<float>(inst, ops, fl, static_cast<float>(*epsilon));
}

}  // namespace

StatusOr<Literal> EvalBatchNorm(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  StatusOr<Literal> result = BatchNorm(inst, ops);
  if (!result.ok()) return ctx.Error(inst, result.status().code(), result.status().message());
  if (!result->shape().Compatible(inst.shape())) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "result shape " + result->shape().ToString(false) +
                         " does not match the instruction's");
  }
  return result;
}

}  // namespace tpusim::eval
