// convolution, lowered to MatMul so that it has exactly dot's MXU numerics.
//
// For each group g (feature groups split the input features, batch groups the
// input batch, as StableHLO's spec defines them; XLA allows one kind at a
// time), the input patches become a matrix [batch * output positions, K] and
// the kernel a matrix [K, output features of g], where K runs over kernel spatial positions (row-major in the order
// dim_labels lists the spatial dimensions) and, fastest, the group's input
// features. The MXU tiles that K (docs/evaluator.md). Padding and the holes
// of lhs dilation are zeros that are multiplied in, so a convolution with
// padding equals the unpadded convolution of the padded input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using value::Literal;

/// Where the convolution's pieces live, resolved once.
struct ConvGeometry {
  hlo::ConvolutionDimensionNumbers dn;
  std::vector<hlo::WindowDimension> window;  ///< one per spatial dimension
  int64_t groups = 1;         ///< feature_group_count x batch_group_count
  bool batch_groups = false;  ///< groups split the input batch, not its features
  int64_t batch = 0;          ///< output batch: per group, input batch / batch groups
  int64_t in_features = 0;   ///< per group: the kernel's input feature size
  int64_t out_features = 0;  ///< per group
  std::vector<int64_t> out_spatial;
  std::vector<int64_t> kernel_spatial;
};

StatusOr<ConvGeometry> Resolve(const HloInstruction& inst, const hlo::Shape& lhs,
                               const hlo::Shape& rhs, const hlo::Shape& out) {
  const hlo::ConvolutionDimensionNumbers* dn = inst.convolution_dimension_numbers();
  if (dn == nullptr) return InvalidArgument("needs dim_labels=");
  if (dn->HasUnknownDims()) {
    return InvalidArgument("dim_labels " + hlo::DimLabelsText(*dn) +
                           " label a dimension '?' (no role), which a convolution cannot compute");
  }
  auto in_range = [](int64_t d, const hlo::Shape& s) { return d >= 0 && d < s.rank(); };
  auto all_in_range = [&](const std::vector<int64_t>& dims, const hlo::Shape& s) {
    return std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return in_range(d, s); });
  };
  if (!in_range(dn->input_batch_dimension, lhs) || !in_range(dn->input_feature_dimension, lhs) ||
      !all_in_range(dn->input_spatial_dimensions, lhs) ||
      !in_range(dn->kernel_input_feature_dimension, rhs) ||
      !in_range(dn->kernel_output_feature_dimension, rhs) ||
      !all_in_range(dn->kernel_spatial_dimensions, rhs) ||
      !in_range(dn->output_batch_dimension, out) || !in_range(dn->output_feature_dimension, out) ||
      !all_in_range(dn->output_spatial_dimensions, out)) {
    return InvalidArgument("dim_labels do not fit the operand and result ranks");
  }
  ConvGeometry g;
  g.dn = *dn;
  const int64_t feature_groups = inst.int_attr(hlo::AttrId::kFeatureGroupCount).value_or(1);
  const int64_t batch_groups = inst.int_attr(hlo::AttrId::kBatchGroupCount).value_or(1);
  if (feature_groups < 1 || batch_groups < 1 || (feature_groups > 1 && batch_groups > 1)) {
    return InvalidArgument(
        "feature_group_count and batch_group_count must be at least 1, and not both above 1");
  }
  g.groups = feature_groups * batch_groups;
  g.batch_groups = batch_groups > 1;
  const size_t spatial = dn->input_spatial_dimensions.size();
  if (dn->kernel_spatial_dimensions.size() != spatial ||
      dn->output_spatial_dimensions.size() != spatial) {
    return InvalidArgument("dim_labels must give every operand the same spatial dimensions");
  }
  for (size_t i = 0; i < spatial; ++i) {
    g.kernel_spatial.push_back(rhs.dimensions(dn->kernel_spatial_dimensions[i]));
    g.out_spatial.push_back(out.dimensions(dn->output_spatial_dimensions[i]));
  }
  if (const hlo::Window* window = inst.window()) {
    if (window->dimensions.size() != spatial) {
      return InvalidArgument("window must have one dimension per spatial dimension");
    }
    g.window = window->dimensions;
  } else {
    for (int64_t size : g.kernel_spatial) g.window.push_back({.size = size});
  }
  g.batch = out.dimensions(dn->output_batch_dimension);
  g.in_features = rhs.dimensions(dn->kernel_input_feature_dimension);
  const int64_t total_out = rhs.dimensions(dn->kernel_output_feature_dimension);
  if (g.in_features * feature_groups != lhs.dimensions(dn->input_feature_dimension) ||
      total_out % g.groups != 0 || out.dimensions(dn->output_feature_dimension) != total_out ||
      g.batch * batch_groups != lhs.dimensions(dn->input_batch_dimension)) {
    return InvalidArgument("feature, group and batch sizes are inconsistent");
  }
  g.out_features = total_out / g.groups;
  return g;
}

Status Convolve(const EvalContext& ctx, const HloInstruction& inst, const Literal& lhs,
                const Literal& rhs, Literal& out) {
  TPUSIM_ASSIGN_OR_RETURN(ConvGeometry g, Resolve(inst, lhs.shape(), rhs.shape(), out.shape()));
  const std::vector<int64_t> ls = RowMajorStrides(lhs.shape().dimensions());
  const std::vector<int64_t> rs = RowMajorStrides(rhs.shape().dimensions());
  const std::vector<int64_t> os = RowMajorStrides(out.shape().dimensions());
  const auto& dn = g.dn;
  const size_t spatial = g.window.size();
  int64_t positions = 1, kernel_positions = 1;
  for (int64_t s : g.out_spatial) positions *= s;
  for (int64_t s : g.kernel_spatial) kernel_positions *= s;
  const int64_t rows = g.batch * positions;
  const int64_t k = kernel_positions * g.in_features;

  // The lowered matrices count against max_bytes like any value.
  TPUSIM_ASSIGN_OR_RETURN(Literal patches,
                          ctx.NewValue(inst, hlo::Shape(lhs.element_type(), {rows, k})));
  TPUSIM_ASSIGN_OR_RETURN(Literal kernel,
                          ctx.NewValue(inst, hlo::Shape(rhs.element_type(), {k, g.out_features})));
  TPUSIM_ASSIGN_OR_RETURN(
      Literal product, ctx.NewValue(inst, hlo::Shape(out.element_type(), {rows, g.out_features})));
  for (int64_t group = 0; group < g.groups; ++group) {
    // The input batches and features this group reads.
    const int64_t batch_base = g.batch_groups ? group * g.batch : 0;
    const int64_t feature_base = g.batch_groups ? 0 : group * g.in_features;
    // Patches: zero (padding, dilation holes) unless a real input element lands.
    std::fill(patches.mutable_bytes().begin(), patches.mutable_bytes().end(), std::byte{0});
    int64_t row = 0;
    std::vector<int64_t> row_base;  // out offset of each row, for the scatter
    for (int64_t b = 0; b < g.batch; ++b) {
      ForEachIndex(g.out_spatial, [&](std::span<const int64_t> o) {
        int64_t out_base = b * os[dn.output_batch_dimension];
        for (size_t d = 0; d < spatial; ++d) out_base += o[d] * os[dn.output_spatial_dimensions[d]];
        row_base.push_back(out_base);
        int64_t kpos = 0;
        ForEachIndex(g.kernel_spatial, [&](std::span<const int64_t> w) {
          int64_t in_offset = (batch_base + b) * ls[dn.input_batch_dimension];
          bool inside = true;
          for (size_t d = 0; d < spatial && inside; ++d) {
            const hlo::WindowDimension& wd = g.window[d];
            const int64_t p = o[d] * wd.stride + w[d] * wd.window_dilation - wd.padding_low;
            const int64_t i = p / wd.base_dilation;
            inside = p >= 0 && p % wd.base_dilation == 0 &&
                     i < lhs.shape().dimensions(dn.input_spatial_dimensions[d]);
            in_offset += i * ls[dn.input_spatial_dimensions[d]];
          }
          if (inside) {
            for (int64_t f = 0; f < g.in_features; ++f) {
              const int64_t feature = feature_base + f;
              CopyElement(lhs, in_offset + feature * ls[dn.input_feature_dimension], patches,
                          row * k + kpos * g.in_features + f);
            }
          }
          ++kpos;
        });
        ++row;
      });
    }
    // Kernel matrix: [kernel position, input feature] x [output feature].
    int64_t kpos = 0;
    ForEachIndex(g.kernel_spatial, [&](std::span<const int64_t> w) {
      int64_t offset = 0;
      for (size_t d = 0; d < spatial; ++d) {
        const int64_t index = g.window[d].window_reversal ? g.kernel_spatial[d] - 1 - w[d] : w[d];
        offset += index * rs[dn.kernel_spatial_dimensions[d]];
      }
      for (int64_t f = 0; f < g.in_features; ++f) {
        for (int64_t of = 0; of < g.out_features; ++of) {
          const int64_t source =
              offset + f * rs[dn.kernel_input_feature_dimension] +
              (group * g.out_features + of) * rs[dn.kernel_output_feature_dimension];
          CopyElement(rhs, source, kernel, (kpos * g.in_features + f) * g.out_features + of);
        }
      }
      ++kpos;
    });
    TPUSIM_RETURN_IF_ERROR(MatMul(ctx, inst, patches, kernel, product));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t of = 0; of < g.out_features; ++of) {
        CopyElement(product, r * g.out_features + of, out,
                    row_base[r] + (group * g.out_features + of) * os[dn.output_feature_dimension]);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Literal> EvalConvolution(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  if (!ops[0]->shape().IsArray() || !ops[1]->shape().IsArray() || !out.shape().IsArray()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument, "operands and result must be arrays");
  }
  const Status status = Convolve(ctx, inst, *ops[0], *ops[1], out);
  if (!status.ok()) return ctx.Error(inst, status.code(), status.message());
  return out;
}

}  // namespace tpusim::eval
