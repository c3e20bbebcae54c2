// Shape inference for the structured ops: contractions, reductions, indexing,
// control flow, collectives and the linear-algebra/normalization specials.
// Elementwise and data-movement rules and the dispatch live in shape_inference.cc.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/hlo/computation.h"
#include "sim/hlo/dot_dimensions.h"
#include "sim/hlo/shape_inference_rule.h"

namespace tpusim::hlo::shape_inference_internal {
namespace {

std::string OperandText(int64_t i) { return "operand " + std::to_string(i); }

/// `need` says which operand counts the operation accepts; `found` is the count.
Status CountError(const Rule& r, std::string_view need, int64_t found) {
  return r.Error(r.name() + " takes " + std::string(need) + ", found " + std::to_string(found));
}

/// Operands [begin, end) are arrays with the dimensions of operand `begin`.
Status ExpectArraysLike(const Rule& r, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    TPUSIM_RETURN_IF_ERROR(r.ExpectArray(i));
    if (i > begin) TPUSIM_RETURN_IF_ERROR(r.ExpectSameDimensions(i, begin));
  }
  return Status::Ok();
}

/// `shape` without the dimensions in `removed`, as `type`, keeping dynamism.
Shape DropDimensions(const Shape& shape, std::span<const int64_t> removed, PrimitiveType type) {
  std::vector<int64_t> sizes;
  std::vector<bool> dynamic;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (std::find(removed.begin(), removed.end(), i) != removed.end()) continue;
    sizes.push_back(shape.dimensions(i));
    dynamic.push_back(shape.is_dynamic_dimension(i));
  }
  Shape out(type, std::move(sizes));
  for (size_t i = 0; i < dynamic.size(); ++i) {
    out.set_dynamic_dimension(static_cast<int64_t>(i), dynamic[i]);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Windows (convolution, reduce-window, select-and-scatter).
// ---------------------------------------------------------------------------

/// (size - 1) * dilation + 1, or 0 for an empty bound; nullopt on overflow.
std::optional<int64_t> DilatedBound(int64_t size, int64_t dilation) {
  if (size == 0) return 0;
  std::optional<int64_t> scaled = CheckedMul(size - 1, dilation);
  return scaled ? CheckedAdd(*scaled, 1) : std::nullopt;
}

/// Number of window positions along one dimension of `base` elements.
StatusOr<int64_t> WindowedSize(const Rule& r, int64_t base, const WindowDimension& w) {
  std::optional<int64_t> dilated = DilatedBound(base, w.base_dilation);
  std::optional<int64_t> padded = dilated ? CheckedAdd(*dilated, w.padding_low) : std::nullopt;
  if (padded) padded = CheckedAdd(*padded, w.padding_high);
  std::optional<int64_t> window = DilatedBound(w.size, w.window_dilation);
  if (!padded || !window) return r.Error("window of " + r.name() + " overflows int64 sizes");
  return *padded < *window ? 0 : (*padded - *window) / w.stride + 1;
}

const Window& WindowOrEmpty(const Rule& r) {
  static const Window kEmpty;
  const Window* w = r.in().window();
  return w ? *w : kEmpty;
}

/// The window has one dimension per dimension of `base` and positive sizes,
/// strides and dilations.
Status CheckWindow(const Rule& r, const Window& window, int64_t rank, std::string_view of_what) {
  if (static_cast<int64_t>(window.dimensions.size()) != rank) {
    return r.Error("window of " + r.name() + " has " + std::to_string(window.dimensions.size()) +
                   " dimensions but " + std::string(of_what) + " has " + std::to_string(rank));
  }
  for (size_t i = 0; i < window.dimensions.size(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    if (w.size <= 0 || w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0) {
      return r.Error("window of " + r.name() +
                     " has a non-positive size, stride or dilation in dimension " +
                     std::to_string(i));
    }
  }
  return Status::Ok();
}

/// The shape of applying `window` to `base`, with element type `type`.
StatusOr<Shape> Windowed(const Rule& r, const Shape& base, const Window& window,
                         PrimitiveType type) {
  Shape out = WithElementType(base, type);
  for (int64_t i = 0; i < base.rank(); ++i) {
    if (base.dimensions(i) != Shape::kUnboundedSize) {
      TPUSIM_ASSIGN_OR_RETURN(out.mutable_dimensions()[i],
                              WindowedSize(r, base.dimensions(i), window.dimensions[i]));
    }
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// Contractions.
// ---------------------------------------------------------------------------

namespace {

/// The dimension numbers of a dot or ragged-dot.
struct DotDims {
  const std::vector<int64_t>& lb;
  const std::vector<int64_t>& rb;
  const std::vector<int64_t>& lc;
  const std::vector<int64_t>& rc;
};

DotDims DotDimsOf(const Rule& r) {
  return {r.OptionalIntList(AttrId::kLhsBatchDims), r.OptionalIntList(AttrId::kRhsBatchDims),
          r.OptionalIntList(AttrId::kLhsContractingDims),
          r.OptionalIntList(AttrId::kRhsContractingDims)};
}

/// The batch and contracting dimensions pair up, lie in their operands and
/// have the same size on both sides.
Status CheckDotDims(const Rule& r, const Shape& lhs, const Shape& rhs, const DotDims& d) {
  const std::string op = r.name();
  if (d.lb.size() != d.rb.size()) {
    return r.Error(op + " has " + std::to_string(d.lb.size()) + " lhs_batch_dims but " +
                   std::to_string(d.rb.size()) + " rhs_batch_dims");
  }
  if (d.lc.size() != d.rc.size()) {
    return r.Error(op + " has " + std::to_string(d.lc.size()) + " lhs_contracting_dims but " +
                   std::to_string(d.rc.size()) + " rhs_contracting_dims");
  }
  std::vector<int64_t> lhs_used(d.lb);
  lhs_used.insert(lhs_used.end(), d.lc.begin(), d.lc.end());
  std::vector<int64_t> rhs_used(d.rb);
  rhs_used.insert(rhs_used.end(), d.rc.begin(), d.rc.end());
  TPUSIM_RETURN_IF_ERROR(
      r.CheckDimensions(lhs_used, lhs.rank(), "lhs batch and contracting dims", "lhs"));
  TPUSIM_RETURN_IF_ERROR(
      r.CheckDimensions(rhs_used, rhs.rank(), "rhs batch and contracting dims", "rhs"));
  for (size_t i = 0; i < d.lb.size(); ++i) {
    if (!SizesAgree(lhs.dimensions(d.lb[i]), rhs.dimensions(d.rb[i]))) {
      return r.Error(op + " batch dimension " + std::to_string(i) + " has size " +
                     std::to_string(lhs.dimensions(d.lb[i])) + " in lhs " + Str(lhs) + " but " +
                     std::to_string(rhs.dimensions(d.rb[i])) + " in rhs " + Str(rhs));
    }
  }
  for (size_t i = 0; i < d.lc.size(); ++i) {
    if (!SizesAgree(lhs.dimensions(d.lc[i]), rhs.dimensions(d.rc[i]))) {
      return r.Error(op + " contracting dimension " + std::to_string(i) + " has size " +
                     std::to_string(lhs.dimensions(d.lc[i])) + " in lhs " + Str(lhs) + " but " +
                     std::to_string(rhs.dimensions(d.rc[i])) + " in rhs " + Str(rhs));
    }
  }
  return Status::Ok();
}

/// A dot's result: the batch dimensions, then the lhs free dimensions, then
/// `rhs_free`, after `leading` (ragged-dot's groups). The element type
/// follows the lhs; the text may ask for another one (preferred element
/// type), which the verifier accepts.
Shape DotResult(const Shape& lhs, const Shape& rhs, const DotDims& d,
                std::span<const int64_t> rhs_free, std::optional<int64_t> leading) {
  std::vector<int64_t> sizes;
  std::vector<bool> dynamic;
  if (leading.has_value()) {
    sizes.push_back(*leading);
    dynamic.push_back(false);
  }
  auto add = [&](const Shape& s, int64_t dim) {
    sizes.push_back(s.dimensions(dim));
    dynamic.push_back(s.is_dynamic_dimension(dim));
  };
  for (int64_t dim : d.lb) add(lhs, dim);
  for (int64_t dim : DotFreeDimensions(lhs.rank(), d.lb, d.lc)) add(lhs, dim);
  for (int64_t dim : rhs_free) add(rhs, dim);
  Shape out(lhs.element_type(), std::move(sizes));
  for (size_t i = 0; i < dynamic.size(); ++i) {
    out.set_dynamic_dimension(static_cast<int64_t>(i), dynamic[i]);
  }
  return out;
}

}  // namespace

StatusOr<Shape> InferDot(const Rule& r) {
  // A sparse dot adds metadata operands, and its lhs contracting size is
  // compressed; leave it to the text.
  if (r.count() > 2) return NotInferable(r, "sparse dot");
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(1));
  const Shape& lhs = r.shape(0);
  const Shape& rhs = r.shape(1);
  const DotDims d = DotDimsOf(r);
  TPUSIM_RETURN_IF_ERROR(CheckDotDims(r, lhs, rhs, d));
  return DotResult(lhs, rhs, d, DotFreeDimensions(rhs.rank(), d.rb, d.rc), std::nullopt);
}

StatusOr<Shape> InferRaggedDot(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(3));
  for (int64_t i = 0; i < 3; ++i) TPUSIM_RETURN_IF_ERROR(r.ExpectArray(i));
  const Shape& lhs = r.shape(0);
  const Shape& rhs = r.shape(1);
  const DotDims d = DotDimsOf(r);
  TPUSIM_RETURN_IF_ERROR(CheckDotDims(r, lhs, rhs, d));
  StatusOr<RaggedDotDimensions> ragged = ResolveRaggedDot(
      lhs, rhs, r.shape(2), d.lb, d.lc, d.rb, d.rc, r.OptionalIntList(AttrId::kLhsRaggedDims),
      r.OptionalIntList(AttrId::kRhsGroupDims));
  if (!ragged.ok()) return r.Error(ragged.status().message());
  return DotResult(
      lhs, rhs, d, ragged->rhs_free,
      ragged->mode == RaggedDotMode::kContracting ? std::optional(ragged->groups) : std::nullopt);
}

StatusOr<Shape> InferConvolution(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(1));
  const ConvolutionDimensionNumbers* dn = r.in().convolution_dimension_numbers();
  if (dn == nullptr) return r.Error("convolution needs dim_labels=..._...->...");
  if (dn->HasUnknownDims()) {
    return r.Error("dim_labels " + DimLabelsText(*dn) +
                   " of convolution label a dimension '?' (no role): every operand and result "
                   "dimension of a convolution must be batch, feature or spatial");
  }
  const Shape& lhs = r.shape(0);
  const Shape& rhs = r.shape(1);
  const int64_t spatial = static_cast<int64_t>(dn->input_spatial_dimensions.size());
  if (lhs.rank() != spatial + 2 || rhs.rank() != spatial + 2 ||
      static_cast<int64_t>(dn->kernel_spatial_dimensions.size()) != spatial ||
      static_cast<int64_t>(dn->output_spatial_dimensions.size()) != spatial) {
    return r.Error("dim_labels of convolution describe " + std::to_string(spatial) +
                   " spatial dimensions, which needs rank-" + std::to_string(spatial + 2) +
                   " operands, found " + Str(lhs) + " and " + Str(rhs));
  }
  const Window& window = WindowOrEmpty(r);
  TPUSIM_RETURN_IF_ERROR(CheckWindow(r, window, spatial, "dim_labels"));
  const int64_t feature_groups = r.in().int_attr(AttrId::kFeatureGroupCount).value_or(1);
  const int64_t batch_groups = r.in().int_attr(AttrId::kBatchGroupCount).value_or(1);
  if (feature_groups <= 0 || batch_groups <= 0) {
    return r.Error("convolution needs positive feature_group_count and batch_group_count");
  }
  const int64_t batch = lhs.dimensions(dn->input_batch_dimension);
  const int64_t in_features = lhs.dimensions(dn->input_feature_dimension);
  const int64_t kernel_in = rhs.dimensions(dn->kernel_input_feature_dimension);
  const int64_t kernel_out = rhs.dimensions(dn->kernel_output_feature_dimension);
  if (in_features % feature_groups != 0 || in_features / feature_groups != kernel_in) {
    return r.Error("convolution input feature size " + std::to_string(in_features) +
                   " divided by feature_group_count " + std::to_string(feature_groups) +
                   " must equal the kernel input feature size " + std::to_string(kernel_in));
  }
  if (kernel_out % feature_groups != 0) {
    return r.Error("convolution kernel output feature size " + std::to_string(kernel_out) +
                   " is not a multiple of feature_group_count " + std::to_string(feature_groups));
  }
  if (batch % batch_groups != 0 || kernel_out % batch_groups != 0) {
    return r.Error("convolution batch size " + std::to_string(batch) +
                   " and kernel output feature size " + std::to_string(kernel_out) +
                   " must be multiples of batch_group_count " + std::to_string(batch_groups));
  }
  std::vector<int64_t> sizes(static_cast<size_t>(spatial + 2), 0);
  sizes[dn->output_batch_dimension] = batch / batch_groups;
  sizes[dn->output_feature_dimension] = kernel_out;
  for (int64_t i = 0; i < spatial; ++i) {
    const WindowDimension& w = window.dimensions[i];
    // XLA also requires w.size to equal the kernel's spatial size, but real
    // modules break that (hlo_import_all_ops: a 3x3 window over a 2x2 kernel)
    // and the result depends on the window only.
    TPUSIM_ASSIGN_OR_RETURN(sizes[dn->output_spatial_dimensions[i]],
                            WindowedSize(r, lhs.dimensions(dn->input_spatial_dimensions[i]), w));
  }
  return Shape(lhs.element_type(), std::move(sizes));
}

// ---------------------------------------------------------------------------
// Reductions and windows.
// ---------------------------------------------------------------------------

namespace {

/// True when a reduce has init values that are arrays: an MHLO form that
/// XLA rejects but XLA's importer fixtures keep (hlo_import_all_ops reduces
/// f32[4,4] with an f32[4] init and an f32[4] reducer). Its meaning is not
/// XLA's, so tpusim neither infers nor checks it further.
bool HasArrayInits(const Rule& r) {
  for (int64_t i = r.count() / 2; i < r.count(); ++i) {
    if (r.shape(i).IsArray() && r.shape(i).rank() != 0) return true;
  }
  return false;
}

/// reduce and reduce-window take N inputs then N scalar inits; returns N.
StatusOr<int64_t> CheckInputsAndInits(const Rule& r) {
  if (r.count() < 2 || r.count() % 2 != 0) {
    return CountError(r, "N inputs followed by N init values", r.count());
  }
  const int64_t n = r.count() / 2;
  TPUSIM_RETURN_IF_ERROR(ExpectArraysLike(r, 0, n));
  for (int64_t i = n; i < 2 * n; ++i) TPUSIM_RETURN_IF_ERROR(r.ExpectScalar(i));
  return n;
}

}  // namespace

StatusOr<Shape> InferReduce(const Rule& r) {
  if (r.count() % 2 == 0 && HasArrayInits(r)) return NotInferable(r, "array init values");
  TPUSIM_ASSIGN_OR_RETURN(const int64_t n, CheckInputsAndInits(r));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* dims, r.IntList(AttrId::kDimensions));
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(*dims, r.shape(0).rank(), "dimensions", "the input"));
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    results.push_back(DropDimensions(r.shape(0), *dims, r.shape(n + i).element_type()));
  }
  return OneOrTuple(std::move(results));
}

StatusOr<Shape> InferReduceWindow(const Rule& r) {
  TPUSIM_ASSIGN_OR_RETURN(const int64_t n, CheckInputsAndInits(r));
  if (r.in().window() == nullptr) return r.Error("reduce-window needs window={...}");
  const Window& window = *r.in().window();
  TPUSIM_RETURN_IF_ERROR(CheckWindow(r, window, r.shape(0).rank(), "the input"));
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    TPUSIM_ASSIGN_OR_RETURN(Shape result,
                            Windowed(r, r.shape(0), window, r.shape(n + i).element_type()));
    results.push_back(std::move(result));
  }
  return OneOrTuple(std::move(results));
}

StatusOr<Shape> InferSelectAndScatter(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(3));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectScalar(2));
  if (r.in().window() == nullptr) return r.Error("select-and-scatter needs window={...}");
  const Window& window = *r.in().window();
  TPUSIM_RETURN_IF_ERROR(CheckWindow(r, window, r.shape(0).rank(), "the operand"));
  TPUSIM_ASSIGN_OR_RETURN(const Shape windowed,
                          Windowed(r, r.shape(0), window, r.shape(1).element_type()));
  if (!SameDimensions(windowed, r.shape(1))) {
    return r.Error("source " + Str(r.shape(1)) +
                   " of select-and-scatter must have the windowed operand's shape " +
                   Str(windowed));
  }
  return WithoutLayout(r.shape(0));
}

StatusOr<Shape> InferSort(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(1));
  TPUSIM_RETURN_IF_ERROR(ExpectArraysLike(r, 0, r.count()));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* dims, r.IntList(AttrId::kDimensions));
  if (dims->size() != 1) {
    return r.Error("sort needs exactly one dimension, found dimensions=" + Str(*dims));
  }
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(*dims, r.shape(0).rank(), "dimensions", "operand 0"));
  return OneOrTuple(r.OperandShapes(0, r.count()));
}

namespace {

/// The scalar type a called computation returns (a 1-tuple counts: XLA's
/// importer accepts reducers that wrap their result).
std::optional<PrimitiveType> ScalarResultType(const Shape& root) {
  if (root.IsArray() && root.rank() == 0) return root.element_type();
  if (root.IsTuple() && root.tuple_size() == 1) return ScalarResultType(root.tuple_shapes(0));
  return std::nullopt;
}

}  // namespace

StatusOr<Shape> InferMap(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(1));
  TPUSIM_RETURN_IF_ERROR(ExpectArraysLike(r, 0, r.count()));
  if (const auto* dims = r.in().GetAttr<std::vector<int64_t>>(AttrId::kDimensions)) {
    // XLA maps over every dimension, in order.
    bool all = static_cast<int64_t>(dims->size()) == r.shape(0).rank();
    for (size_t i = 0; all && i < dims->size(); ++i) all = (*dims)[i] == static_cast<int64_t>(i);
    if (!all) {
      return r.Error("dimensions=" + Str(*dims) + " of map must list every dimension of " +
                     Str(r.shape(0)) + " in order");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Shape root, r.RootOf(r.in().to_apply(), "to_apply"));
  std::optional<PrimitiveType> type = ScalarResultType(root);
  if (!type) return r.Error("to_apply of map must return a scalar, found " + Str(root));
  return WithElementType(r.shape(0), *type);
}

// ---------------------------------------------------------------------------
// Gather and scatter.
// ---------------------------------------------------------------------------

namespace {

bool Contains(std::span<const int64_t> v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

StatusOr<Shape> InferGather(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(1));
  const Shape& operand = r.shape(0);
  const Shape& indices = r.shape(1);
  if (!IsInteger(indices.element_type())) {
    return r.Error("start indices of gather must be integers, found " + Str(indices));
  }
  const auto& offset_dims = r.OptionalIntList(AttrId::kOffsetDims);
  const auto& collapsed = r.OptionalIntList(AttrId::kCollapsedSliceDims);
  const auto& operand_batching = r.OptionalIntList(AttrId::kOperandBatchingDims);
  const auto& indices_batching = r.OptionalIntList(AttrId::kStartIndicesBatchingDims);
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* start_index_map,
                          r.IntList(AttrId::kStartIndexMap));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* slice_sizes, r.IntList(AttrId::kSliceSizes));
  TPUSIM_ASSIGN_OR_RETURN(const int64_t index_vector_dim, r.Int(AttrId::kIndexVectorDim));
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return r.Error("index_vector_dim=" + std::to_string(index_vector_dim) +
                   " of gather is out of range for start indices " + Str(indices));
  }
  // An index vector dimension equal to the rank means a trailing size-1 one.
  DimensionVector expanded = indices.dimensions();
  if (index_vector_dim == indices.rank()) expanded.push_back(1);
  if (static_cast<int64_t>(start_index_map->size()) != expanded[index_vector_dim]) {
    return r.Error("start_index_map=" + Str(*start_index_map) +
                   " of gather must have one entry per index vector element (" +
                   std::to_string(expanded[index_vector_dim]) + ")");
  }
  TPUSIM_RETURN_IF_ERROR(
      r.CheckDimensions(*start_index_map, operand.rank(), "start_index_map", "the operand"));
  if (static_cast<int64_t>(slice_sizes->size()) != operand.rank()) {
    return r.Error("slice_sizes=" + Str(*slice_sizes) +
                   " of gather must have one entry per dimension of " + Str(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t s = (*slice_sizes)[i];
    if (s < 0 || (operand.dimensions(i) != Shape::kUnboundedSize && s > operand.dimensions(i))) {
      return r.Error("slice_sizes=" + Str(*slice_sizes) + " of gather does not fit in operand " +
                     Str(operand));
    }
  }
  std::vector<int64_t> removed(collapsed);
  removed.insert(removed.end(), operand_batching.begin(), operand_batching.end());
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(
      removed, operand.rank(), "collapsed_slice_dims and operand_batching_dims", "the operand"));
  for (int64_t d : removed) {
    if ((*slice_sizes)[d] > 1) {
      return r.Error("gather collapses operand dimension " + std::to_string(d) +
                     " whose slice size is " + std::to_string((*slice_sizes)[d]) +
                     " (must be 0 or 1)");
    }
  }
  if (indices_batching.size() != operand_batching.size()) {
    return r.Error("gather has " + std::to_string(operand_batching.size()) +
                   " operand_batching_dims but " + std::to_string(indices_batching.size()) +
                   " start_indices_batching_dims");
  }
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(indices_batching, static_cast<int64_t>(expanded.size()),
                                           "start_indices_batching_dims", "the start indices"));
  const int64_t offsets = operand.rank() - static_cast<int64_t>(removed.size());
  if (static_cast<int64_t>(offset_dims.size()) != offsets) {
    return r.Error("gather has " + std::to_string(offset_dims.size()) +
                   " offset_dims but the slice keeps " + std::to_string(offsets) +
                   " operand dimensions");
  }
  const int64_t out_rank = offsets + static_cast<int64_t>(expanded.size()) - 1;
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(offset_dims, out_rank, "offset_dims", "the result"));
  std::vector<int64_t> offset_sizes;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (!Contains(removed, i)) offset_sizes.push_back((*slice_sizes)[i]);
  }
  std::vector<int64_t> batch_sizes;
  for (int64_t i = 0; i < static_cast<int64_t>(expanded.size()); ++i) {
    if (i != index_vector_dim) batch_sizes.push_back(expanded[i]);
  }
  std::vector<int64_t> sizes;
  size_t next_offset = 0, next_batch = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    sizes.push_back(Contains(offset_dims, i) ? offset_sizes[next_offset++]
                                             : batch_sizes[next_batch++]);
  }
  return Shape(operand.element_type(), std::move(sizes));
}

StatusOr<Shape> InferScatter(const Rule& r) {
  if (r.count() < 3 || r.count() % 2 == 0) {
    return CountError(r, "N operands, the scatter indices and N updates", r.count());
  }
  const int64_t n = (r.count() - 1) / 2;
  TPUSIM_RETURN_IF_ERROR(ExpectArraysLike(r, 0, n));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(n));
  TPUSIM_RETURN_IF_ERROR(ExpectArraysLike(r, n + 1, 2 * n + 1));
  for (int64_t i = 0; i < n; ++i) TPUSIM_RETURN_IF_ERROR(r.ExpectSameType(n + 1 + i, i));
  const Shape& operand = r.shape(0);
  const Shape& indices = r.shape(n);
  const Shape& updates = r.shape(n + 1);
  if (!IsInteger(indices.element_type())) {
    return r.Error("scatter indices (operand " + std::to_string(n) + ") must be integers, found " +
                   Str(indices));
  }
  const auto& window_dims = r.OptionalIntList(AttrId::kUpdateWindowDims);
  const auto& inserted = r.OptionalIntList(AttrId::kInsertedWindowDims);
  const auto& input_batching = r.OptionalIntList(AttrId::kInputBatchingDims);
  const auto& indices_batching = r.OptionalIntList(AttrId::kScatterIndicesBatchingDims);
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* to_operand,
                          r.IntList(AttrId::kScatterDimsToOperandDims));
  TPUSIM_ASSIGN_OR_RETURN(const int64_t index_vector_dim, r.Int(AttrId::kIndexVectorDim));
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return r.Error("index_vector_dim=" + std::to_string(index_vector_dim) +
                   " of scatter is out of range for scatter indices " + Str(indices));
  }
  DimensionVector expanded = indices.dimensions();
  if (index_vector_dim == indices.rank()) expanded.push_back(1);
  if (static_cast<int64_t>(to_operand->size()) != expanded[index_vector_dim]) {
    return r.Error("scatter_dims_to_operand_dims=" + Str(*to_operand) +
                   " of scatter must have one entry per index vector element (" +
                   std::to_string(expanded[index_vector_dim]) + ")");
  }
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(*to_operand, operand.rank(),
                                           "scatter_dims_to_operand_dims", "the operand"));
  const int64_t update_rank = static_cast<int64_t>(window_dims.size() + expanded.size()) - 1;
  if (updates.rank() != update_rank) {
    return r.Error("updates " + Str(updates) + " of scatter must have rank " +
                   std::to_string(update_rank) +
                   " (update_window_dims plus the scatter batch dimensions)");
  }
  TPUSIM_RETURN_IF_ERROR(
      r.CheckDimensions(window_dims, update_rank, "update_window_dims", "the updates"));
  std::vector<int64_t> removed(inserted);
  removed.insert(removed.end(), input_batching.begin(), input_batching.end());
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(
      removed, operand.rank(), "inserted_window_dims and input_batching_dims", "the operand"));
  if (static_cast<int64_t>(window_dims.size() + removed.size()) != operand.rank()) {
    return r.Error(
        "scatter update_window_dims, inserted_window_dims and input_batching_dims must cover the " +
        std::to_string(operand.rank()) + " operand dimensions");
  }
  if (indices_batching.size() != input_batching.size()) {
    return r.Error("scatter has " + std::to_string(input_batching.size()) +
                   " input_batching_dims but " + std::to_string(indices_batching.size()) +
                   " scatter_indices_batching_dims");
  }
  // Update window k covers the k-th operand dimension not inserted or batched.
  size_t k = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(removed, d)) continue;
    const int64_t window = updates.dimensions(window_dims[k++]);
    if (operand.dimensions(d) != Shape::kUnboundedSize && window > operand.dimensions(d)) {
      return r.Error("updates " + Str(updates) + " of scatter have a window larger than operand " +
                     Str(operand));
    }
  }
  return OneOrTuple(r.OperandShapes(0, n));
}

// ---------------------------------------------------------------------------
// Control flow and calls.
// ---------------------------------------------------------------------------

StatusOr<Shape> InferConditional(const Rule& r) {
  const HloComputation* first = nullptr;
  if (const auto* branches = r.in().GetAttr<ComputationList>(AttrId::kBranchComputations)) {
    if (!branches->computations.empty()) first = branches->computations[0];
  } else if (HloComputation* const* on_true =
                 r.in().GetAttr<HloComputation*>(AttrId::kTrueComputation)) {
    first = *on_true;
  }
  return r.RootOf(first, "branch_computations");
}

StatusOr<Shape> InferCalledRoot(const Rule& r, AttrId id) {
  return r.RootOf(r.in().called_computation(id), AttrName(id));
}

// ---------------------------------------------------------------------------
// Collectives.
// ---------------------------------------------------------------------------

namespace {

/// Participants per group when `replica_groups` lists them; nullopt when the
/// groups are empty or absent (then the size depends on how the module is run).
std::optional<int64_t> GroupSize(const Rule& r) {
  const ReplicaGroups* groups = r.in().replica_groups();
  if (groups == nullptr || groups->groups.empty() || groups->groups[0].empty()) return std::nullopt;
  return static_cast<int64_t>(groups->groups[0].size());
}

}  // namespace

/// all-gather (multiply) and reduce-scatter (divide) along `dimensions={d}`.
StatusOr<Shape> InferResizingCollective(const Rule& r, bool gather) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(1));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* dims, r.IntList(AttrId::kDimensions));
  if (dims->size() != 1) {
    return r.Error(r.name() + " needs exactly one dimension, found dimensions=" + Str(*dims));
  }
  const int64_t d = (*dims)[0];
  for (int64_t i = 0; i < r.count(); ++i) {
    TPUSIM_RETURN_IF_ERROR(r.ExpectArray(i));
    TPUSIM_RETURN_IF_ERROR(
        r.CheckDimensions(*dims, r.shape(i).rank(), "dimensions", OperandText(i)));
  }
  const std::optional<int64_t> group = GroupSize(r);
  if (!group) return NotInferable(r, "replica_groups does not list the participants");
  std::vector<Shape> results;
  for (int64_t i = 0; i < r.count(); ++i) {
    Shape s = WithoutLayout(r.shape(i));
    int64_t& size = s.mutable_dimensions()[d];
    if (size != Shape::kUnboundedSize) {
      if (!gather && size % *group != 0) {
        return r.Error("dimension " + std::to_string(d) + " of operand " + Str(r.shape(i)) +
                       " is not divisible by the replica group size " + std::to_string(*group));
      }
      std::optional<int64_t> resized = gather ? CheckedMul(size, *group) : size / *group;
      if (!resized) return r.Error("all-gather of " + Str(r.shape(i)) + " overflows int64 sizes");
      size = *resized;
    }
    results.push_back(std::move(s));
  }
  return OneOrTuple(std::move(results));
}

StatusOr<Shape> InferAllToAll(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(1));
  if (const auto* dims = r.in().GetAttr<std::vector<int64_t>>(AttrId::kDimensions)) {
    // The array form splits and concatenates along one dimension, so the
    // shape is unchanged but the dimension must split evenly.
    TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
    TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
    if (dims->size() != 1) {
      return r.Error("all-to-all needs one split dimension, found dimensions=" + Str(*dims));
    }
    TPUSIM_RETURN_IF_ERROR(
        r.CheckDimensions(*dims, r.shape(0).rank(), "dimensions", "the operand"));
    const int64_t size = r.shape(0).dimensions((*dims)[0]);
    const std::optional<int64_t> group = GroupSize(r);
    if (group && size != Shape::kUnboundedSize && size % *group != 0) {
      return r.Error("dimension " + std::to_string((*dims)[0]) + " of operand " + Str(r.shape(0)) +
                     " is not divisible by the replica group size " + std::to_string(*group));
    }
    return OneOrTuple(r.OperandShapes(0, r.count()));
  }
  // The tuple form: XLA makes its result a tuple even of one operand; the
  // array that older dumps write for one is taken too.
  std::vector<Shape> results = r.OperandShapes(0, r.count());
  if (results.size() == 1 && r.in().shape().IsTuple()) return Shape::Tuple(std::move(results));
  return OneOrTuple(std::move(results));
}

/// collective-permute: one operand, several (combined), or the in-place form
/// (input, output, input offsets, output offsets) marked by slice_sizes,
/// which in that form is a list of lists that the parser keeps verbatim. A
/// start's result ends with two u32[] context values, which XLA's shape
/// inference leaves out when the instruction's own shape does.
StatusOr<Shape> InferCollectivePermute(const Rule& r, bool start) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(1));
  const Shape u32(PrimitiveType::kU32, {});
  const bool context = !r.in().shape().IsTuple() || r.in().shape().tuple_shapes().size() != 2;
  const auto started = [&](Shape input, Shape output) {
    return context ? Shape::Tuple({std::move(input), std::move(output), u32, u32})
                   : Shape::Tuple({std::move(input), std::move(output)});
  };
  if (r.in().FindAttribute(AttrId::kSliceSizes) != nullptr ||
      r.in().FindUnknownAttribute("slice_sizes") != nullptr) {
    TPUSIM_RETURN_IF_ERROR(r.ExpectCount(4));
    Shape output = WithoutLayout(r.shape(1));
    if (!start) return output;
    return started(WithoutLayout(r.shape(0)), std::move(output));
  }
  Shape value = OneOrTuple(r.OperandShapes(0, r.count()));
  if (!start) return value;
  return started(value, value);
}

// ---------------------------------------------------------------------------
// Dynamic shapes, sorting, linear algebra, normalization, FFT.
// ---------------------------------------------------------------------------

namespace {

/// The single dimension of `dimensions={d}` on operand 0.
StatusOr<int64_t> SingleDimension(const Rule& r) {
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* dims, r.IntList(AttrId::kDimensions));
  if (dims->size() != 1) {
    return r.Error(r.name() + " needs exactly one dimension, found dimensions=" + Str(*dims));
  }
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(*dims, r.shape(0).rank(), "dimensions", "the operand"));
  return (*dims)[0];
}

}  // namespace

StatusOr<Shape> InferGetDimensionSize(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(SingleDimension(r).status());
  return Shape(PrimitiveType::kS32, {});
}

StatusOr<Shape> InferSetDimensionSize(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  if (!r.shape(1).IsArray() || r.shape(1).rank() != 0 ||
      r.shape(1).element_type() != PrimitiveType::kS32) {
    return r.Error("operand 1 of set-dimension-size must be an s32[] size, found " +
                   Str(r.shape(1)));
  }
  TPUSIM_ASSIGN_OR_RETURN(const int64_t d, SingleDimension(r));
  Shape out = WithoutLayout(r.shape(0));
  out.set_dynamic_dimension(d, true);
  return out;
}

StatusOr<Shape> InferTopK(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  const Shape& operand = r.shape(0);
  TPUSIM_ASSIGN_OR_RETURN(const int64_t k, r.Int(AttrId::kK));
  if (operand.rank() == 0) {
    return r.Error("topk needs an operand of rank 1 or more, found " + Str(operand));
  }
  const int64_t last = operand.dimensions(operand.rank() - 1);
  if (k < 0 || (last != Shape::kUnboundedSize && k > last)) {
    return r.Error("k=" + std::to_string(k) + " of topk exceeds the last dimension of " +
                   Str(operand));
  }
  Shape values = WithoutLayout(operand);
  values.mutable_dimensions().back() = k;
  Shape indices = WithElementType(values, PrimitiveType::kS32);
  return Shape::Tuple({std::move(values), std::move(indices)});
}

namespace {

/// Operand i is a batch of square matrices.
Status ExpectSquareMatrices(const Rule& r, int64_t i) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(i));
  const Shape& s = r.shape(i);
  if (s.rank() < 2 || !SizesAgree(s.dimensions(s.rank() - 1), s.dimensions(s.rank() - 2))) {
    return r.Error(OperandText(i) + " of " + r.name() + " must be square matrices, found " +
                   Str(s));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Shape> InferCholesky(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  TPUSIM_RETURN_IF_ERROR(ExpectSquareMatrices(r, 0));
  return WithoutLayout(r.shape(0));
}

StatusOr<Shape> InferTriangularSolve(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
  TPUSIM_RETURN_IF_ERROR(ExpectSquareMatrices(r, 0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectSameType(1, 0));
  const Shape& a = r.shape(0);
  const Shape& b = r.shape(1);
  const int64_t rank = a.rank();
  bool fits = b.rank() == rank;
  for (int64_t i = 0; fits && i < rank - 2; ++i) {
    fits = SizesAgree(a.dimensions(i), b.dimensions(i));
  }
  // left_side solves a x = b (a's size is b's rows), otherwise x a = b (b's columns).
  const bool left = r.in().bool_attr(AttrId::kLeftSide);
  if (fits) fits = SizesAgree(a.dimensions(rank - 1), b.dimensions(left ? rank - 2 : rank - 1));
  if (!fits) {
    return r.Error("b " + Str(b) + " of triangular-solve does not fit a " + Str(a) +
                   (left ? " (left_side=true)" : " (left_side=false)"));
  }
  return WithoutLayout(b);
}

StatusOr<Shape> InferBatchNorm(const Rule& r) {
  const bool training = r.opcode() == HloOpcode::kBatchNormTraining;
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(training ? 3 : 5));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  const Shape& operand = r.shape(0);
  TPUSIM_ASSIGN_OR_RETURN(const int64_t feature, r.Int(AttrId::kFeatureIndex));
  if (feature < 0 || feature >= operand.rank()) {
    return r.Error("feature_index=" + std::to_string(feature) + " of " + r.name() +
                   " is out of range for operand " + Str(operand));
  }
  const Shape per_feature(operand.element_type(), {operand.dimensions(feature)});
  // Every operand after the input is one value per feature, except
  // batch-norm-grad's last (the output gradient, shaped like the input).
  const int64_t last_per_feature = r.opcode() == HloOpcode::kBatchNormGrad ? 3 : r.count() - 1;
  for (int64_t i = 1; i <= last_per_feature; ++i) {
    if (!r.shape(i).IsArray() || !SameDimensions(r.shape(i), per_feature)) {
      return r.Error(OperandText(i) + " of " + r.name() + " must be " + Str(per_feature) +
                     " (one value per feature), found " + Str(r.shape(i)));
    }
  }
  if (r.opcode() == HloOpcode::kBatchNormGrad) TPUSIM_RETURN_IF_ERROR(r.ExpectSameDimensions(4, 0));
  if (r.opcode() == HloOpcode::kBatchNormInference) return WithoutLayout(operand);
  return Shape::Tuple({WithoutLayout(operand), per_feature, per_feature});
}

StatusOr<Shape> InferFft(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  const Shape& operand = r.shape(0);
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* lengths, r.IntList(AttrId::kFftLength));
  const std::string_view type = r.in().string_attr(AttrId::kFftType);
  const int64_t n = static_cast<int64_t>(lengths->size());
  if (n < 1 || n > 3 || n > operand.rank()) {
    return r.Error("fft_length=" + Str(*lengths) +
                   " of fft needs 1 to 3 entries, at most the rank of " + Str(operand));
  }
  const int64_t first = operand.rank() - n;
  const int64_t last_length = lengths->back();
  if (type == "FFT" || type == "IFFT") {
    if (!IsComplex(operand.element_type())) {
      return r.Error(std::string(type) + " needs a complex operand, found " + Str(operand));
    }
    return WithoutLayout(operand);
  }
  if (type == "RFFT") {
    std::optional<PrimitiveType> complex =
        operand.element_type() == PrimitiveType::kF32   ? PrimitiveType::kC64
        : operand.element_type() == PrimitiveType::kF64 ? PrimitiveType::kC128
                                                        : std::optional<PrimitiveType>();
    if (!complex) return r.Error("RFFT needs an f32 or f64 operand, found " + Str(operand));
    for (int64_t i = 0; i < n; ++i) {
      if (!SizesAgree(operand.dimensions(first + i), (*lengths)[i])) {
        return r.Error("fft_length=" + Str(*lengths) +
                       " of RFFT does not match the trailing dimensions of " + Str(operand));
      }
    }
    Shape out = WithElementType(operand, *complex);
    // A real transform of length L keeps the L/2+1 non-redundant frequencies.
    if (last_length != 0) out.mutable_dimensions().back() = last_length / 2 + 1;
    return out;
  }
  if (type == "IRFFT") {
    if (!IsComplex(operand.element_type())) {
      return r.Error("IRFFT needs a complex operand, found " + Str(operand));
    }
    const PrimitiveType real =
        operand.element_type() == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    for (int64_t i = 0; i + 1 < n; ++i) {
      if (!SizesAgree(operand.dimensions(first + i), (*lengths)[i])) {
        return r.Error("fft_length=" + Str(*lengths) +
                       " of IRFFT does not match the trailing dimensions of " + Str(operand));
      }
    }
    const int64_t expected_last = last_length == 0 ? 0 : last_length / 2 + 1;
    if (!SizesAgree(operand.dimensions(operand.rank() - 1), expected_last)) {
      return r.Error("IRFFT of length " + std::to_string(last_length) + " needs " +
                     std::to_string(expected_last) + " input frequencies, found " + Str(operand));
    }
    Shape out = WithElementType(operand, real);
    out.mutable_dimensions().back() = last_length;
    return out;
  }
  return r.Error("fft needs fft_type=FFT|IFFT|RFFT|IRFFT, found " + Quote(type));
}

}  // namespace tpusim::hlo::shape_inference_internal
