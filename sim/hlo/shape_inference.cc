// Shape inference: the shared rule helpers, the elementwise and data-movement
// rules, and the dispatch. The structured ops (dot, convolution, reductions,
// gather/scatter, control flow, collectives, ...) are in shape_inference_ops.cc.
#include "sim/hlo/shape_inference.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/base/units.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/instruction.h"
#include "sim/hlo/shape_inference_rule.h"

namespace tpusim::hlo {

// ---------------------------------------------------------------------------
// Helpers shared with shape_inference_ops.cc (declared in shape_inference_rule.h).
// ---------------------------------------------------------------------------

namespace shape_inference_internal {

std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

std::string Str(std::span<const int64_t> values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(values[i]);
  }
  return out + "}";
}

namespace {

void ClearLayouts(Shape& shape) {
  shape.clear_layout();
  for (Shape& element : shape.mutable_tuple_shapes()) ClearLayouts(element);
}

}  // namespace

Shape WithoutLayout(const Shape& shape) {
  Shape copy = shape;
  ClearLayouts(copy);
  return copy;
}

Shape WithElementType(const Shape& like, PrimitiveType type) {
  Shape out = WithoutLayout(like);
  out.set_element_type(type);
  return out;
}

bool SizesAgree(int64_t a, int64_t b) {
  return a == b || a == Shape::kUnboundedSize || b == Shape::kUnboundedSize;
}

bool SameDimensions(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!SizesAgree(a.dimensions(i), b.dimensions(i))) return false;
  }
  return true;
}

Status Rule::ExpectCount(int64_t n) const {
  if (count() == n) return Status::Ok();
  return Error(name() + " takes " + CountOf(n, "operand") + ", found " + std::to_string(count()));
}

Status Rule::ExpectAtLeast(int64_t n) const {
  if (count() >= n) return Status::Ok();
  return Error(name() + " takes at least " + CountOf(n, "operand") + ", found " +
               std::to_string(count()));
}

Status Rule::ExpectArray(int64_t i) const {
  if (shape(i).IsArray()) return Status::Ok();
  return Error("operand " + std::to_string(i) + " of " + name() + " must be an array, found " +
               Str(shape(i)));
}

Status Rule::ExpectTuple(int64_t i) const {
  if (shape(i).IsTuple()) return Status::Ok();
  return Error("operand " + std::to_string(i) + " of " + name() + " must be a tuple, found " +
               Str(shape(i)));
}

Status Rule::ExpectScalar(int64_t i) const {
  if (shape(i).IsArray() && shape(i).rank() == 0) return Status::Ok();
  return Error("operand " + std::to_string(i) + " of " + name() + " must be a scalar, found " +
               Str(shape(i)));
}

Status Rule::ExpectSameType(int64_t i, int64_t j) const {
  if (shape(i).element_type() == shape(j).element_type()) return Status::Ok();
  return Error("operand " + std::to_string(i) + " has element type " +
               std::string(PrimitiveTypeName(shape(i).element_type())) + " but " + name() +
               " expects " + std::string(PrimitiveTypeName(shape(j).element_type())) +
               " (the type of operand " + std::to_string(j) + ")");
}

Status Rule::ExpectSameDimensions(int64_t i, int64_t j) const {
  if (SameDimensions(shape(i), shape(j))) return Status::Ok();
  return Error("operand " + std::to_string(i) + " has shape " + Str(shape(i)) + " but " + name() +
               " expects dimensions " + Str(shape(j).dimensions()) + " (those of operand " +
               std::to_string(j) + ")");
}

Status Rule::ExpectSameShape(int64_t i, int64_t j) const {
  if (SameDimensions(shape(i), shape(j)) && shape(i).element_type() == shape(j).element_type()) {
    return Status::Ok();
  }
  return Error("operand " + std::to_string(i) + " has shape " + Str(shape(i)) + " but " + name() +
               " expects " + Str(shape(j)) + " (the shape of operand " + std::to_string(j) + ")");
}

StatusOr<const std::vector<int64_t>*> Rule::IntList(AttrId id) const {
  if (const auto* v = in_.GetAttr<std::vector<int64_t>>(id)) return v;
  return Error(name() + " needs " + std::string(AttrName(id)) + "={...}");
}

const std::vector<int64_t>& Rule::OptionalIntList(AttrId id) const {
  static const std::vector<int64_t> kEmpty;
  const auto* v = in_.GetAttr<std::vector<int64_t>>(id);
  return v ? *v : kEmpty;
}

StatusOr<int64_t> Rule::Int(AttrId id) const {
  if (std::optional<int64_t> v = in_.int_attr(id)) return *v;
  return Error(name() + " needs " + std::string(AttrName(id)) + "=N");
}

Status Rule::CheckDimensions(std::span<const int64_t> dims, int64_t rank, std::string_view attr,
                             std::string_view of_what) const {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Error(std::string(attr) + "=" + Str(dims) + " of " + name() + ": dimension " +
                   std::to_string(d) + " is out of range for " + std::string(of_what) +
                   " of rank " + std::to_string(rank));
    }
    if (seen[d]) {
      return Error(std::string(attr) + "=" + Str(dims) + " of " + name() + ": dimension " +
                   std::to_string(d) + " appears twice");
    }
    seen[d] = true;
  }
  return Status::Ok();
}

StatusOr<Shape> Rule::RootOf(const HloComputation* computation, std::string_view attr) const {
  if (computation == nullptr) {
    return Error(name() + " needs " + std::string(attr) + "=%computation");
  }
  if (computation->root() == nullptr) {
    return Error(name() + " calls " + computation->name() + ", which has no root");
  }
  return WithoutLayout(computation->root()->shape());
}

std::vector<Shape> Rule::OperandShapes(int64_t begin, int64_t end) const {
  std::vector<Shape> out;
  out.reserve(static_cast<size_t>(end - begin));
  for (int64_t i = begin; i < end; ++i) out.push_back(WithoutLayout(shape(i)));
  return out;
}

Shape OneOrTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

Status NotInferable(const Rule& r, std::string_view why) {
  return Unimplemented("the shape of " + r.name() + " cannot be inferred (" + std::string(why) +
                       "); write it out");
}

}  // namespace shape_inference_internal

namespace {

using shape_inference_internal::CheckedAdd;
using shape_inference_internal::CheckedMul;
using shape_inference_internal::InferAllToAll;
using shape_inference_internal::InferBatchNorm;
using shape_inference_internal::InferCalledRoot;
using shape_inference_internal::InferCholesky;
using shape_inference_internal::InferCollectivePermute;
using shape_inference_internal::InferConditional;
using shape_inference_internal::InferConvolution;
using shape_inference_internal::InferDot;
using shape_inference_internal::InferFft;
using shape_inference_internal::InferGather;
using shape_inference_internal::InferGetDimensionSize;
using shape_inference_internal::InferMap;
using shape_inference_internal::InferRaggedDot;
using shape_inference_internal::InferReduce;
using shape_inference_internal::InferReduceWindow;
using shape_inference_internal::InferResizingCollective;
using shape_inference_internal::InferScatter;
using shape_inference_internal::InferSelectAndScatter;
using shape_inference_internal::InferSetDimensionSize;
using shape_inference_internal::InferSort;
using shape_inference_internal::InferTopK;
using shape_inference_internal::InferTriangularSolve;
using shape_inference_internal::NotInferable;
using shape_inference_internal::OneOrTuple;
using shape_inference_internal::Rule;
using shape_inference_internal::SizesAgree;
using shape_inference_internal::Str;
using shape_inference_internal::WithElementType;
using shape_inference_internal::WithoutLayout;

/// `a` with each dimension made dynamic where `b`'s is, and `?` replaced by
/// `b`'s size when `b` knows it: an elementwise result is dynamic wherever
/// any operand is.
Shape MergeDynamism(const Shape& a, const Shape& b) {
  Shape out = WithoutLayout(a);
  for (int64_t i = 0; i < out.rank() && i < b.rank(); ++i) {
    if (out.dimensions(i) == Shape::kUnboundedSize) out.mutable_dimensions()[i] = b.dimensions(i);
    if (b.is_dynamic_dimension(i)) out.set_dynamic_dimension(i, true);
  }
  return out;
}

std::optional<PrimitiveType> ComplexComponentType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return std::nullopt;
}

std::optional<PrimitiveType> ComplexTypeOf(PrimitiveType t) {
  if (t == PrimitiveType::kF32) return PrimitiveType::kC64;
  if (t == PrimitiveType::kF64) return PrimitiveType::kC128;
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Elementwise.
// ---------------------------------------------------------------------------

/// Whether opcode.def's operand-types column lets an operand of `type` in.
bool Accepts(OperandTypes types, PrimitiveType type) {
  switch (types) {
    case OperandTypes::kAny:
      return true;
    case OperandTypes::kFloat:
      return IsFloatingPoint(type);
    case OperandTypes::kFloatOrComplex:
      return IsFloatingPoint(type) || IsComplex(type);
    case OperandTypes::kInteger:
      return IsInteger(type);
    case OperandTypes::kIntegerOrPred:
      return IsInteger(type) || type == PrimitiveType::kPred;
  }
  return true;  // unreachable: every OperandTypes returns above
}

/// The operands `types` asks for, as a message says it ("an integer operand"
/// for unary ops, "integer operands" for binary ones).
std::string_view NeededOperands(OperandTypes types, bool unary) {
  switch (types) {
    case OperandTypes::kAny:
      return unary ? "an operand" : "operands";
    case OperandTypes::kFloat:
      return unary ? "a floating-point operand" : "floating-point operands";
    case OperandTypes::kFloatOrComplex:
      return unary ? "a floating-point or complex operand" : "floating-point or complex operands";
    case OperandTypes::kInteger:
      return unary ? "an integer operand" : "integer operands";
    case OperandTypes::kIntegerOrPred:
      return unary ? "an integer or pred operand" : "integer or pred operands";
  }
  return "";  // unreachable: every OperandTypes returns above
}

/// Fails unless operand 0's element type is one the op's operand-types
/// column accepts (binary ops have checked that both operands agree).
Status ExpectOperandTypes(const Rule& r) {
  const OperandTypes types = OperandTypesOf(r.opcode());
  if (Accepts(types, r.shape(0).element_type())) return Status::Ok();
  return r.Error(r.name() + " needs " + std::string(NeededOperands(types, r.count() == 1)) +
                 ", found " + Str(r.shape(0)));
}

StatusOr<Shape> InferUnary(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  const Shape& operand = r.shape(0);
  // copy and domain pass any value through, tuples and tokens included.
  if (r.opcode() == HloOpcode::kCopy || r.opcode() == HloOpcode::kDomain) {
    return WithoutLayout(operand);
  }
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(ExpectOperandTypes(r));
  const PrimitiveType type = operand.element_type();
  // abs, real and imag of a complex number are real; is-finite answers with
  // a pred; every other unary op keeps its operand's type.
  if (r.opcode() == HloOpcode::kAbs || r.opcode() == HloOpcode::kReal ||
      r.opcode() == HloOpcode::kImag) {
    return WithElementType(operand, ComplexComponentType(type).value_or(type));
  }
  if (r.opcode() == HloOpcode::kIsFinite) return WithElementType(operand, PrimitiveType::kPred);
  return WithoutLayout(operand);
}

/// The shape two operands of a binary elementwise op (or compare) combine to.
/// Besides equal shapes, XLA's shape inference lets a scalar stand for an
/// array of the other operand's shape; XLA's HLO verifier forbids that
/// implicit broadcast, but real modules use it (p2p_pipelined_send_recv_loop:
/// `add(u32[] c1, u32[2] recv-data)`), so tpusim accepts it.
StatusOr<Shape> CombineOperands(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(1));
  const Shape& lhs = r.shape(0);
  const Shape& rhs = r.shape(1);
  if (lhs.rank() == 0 && rhs.rank() != 0) {
    TPUSIM_RETURN_IF_ERROR(r.ExpectSameType(0, 1));
    return WithoutLayout(rhs);
  }
  if (rhs.rank() == 0 && lhs.rank() != 0) {
    TPUSIM_RETURN_IF_ERROR(r.ExpectSameType(1, 0));
    return WithoutLayout(lhs);
  }
  TPUSIM_RETURN_IF_ERROR(r.ExpectSameShape(1, 0));
  return MergeDynamism(lhs, rhs);
}

StatusOr<Shape> InferBinary(const Rule& r) {
  TPUSIM_ASSIGN_OR_RETURN(Shape out, CombineOperands(r));
  TPUSIM_RETURN_IF_ERROR(ExpectOperandTypes(r));
  return out;
}

StatusOr<Shape> InferCompare(const Rule& r) {
  TPUSIM_ASSIGN_OR_RETURN(Shape out, CombineOperands(r));
  if (r.in().string_attr(AttrId::kDirection).empty()) {
    return r.Error("compare needs direction=EQ|NE|LT|LE|GT|GE");
  }
  return WithElementType(out, PrimitiveType::kPred);
}

StatusOr<Shape> InferSelect(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(3));
  for (int64_t i = 0; i < 3; ++i) TPUSIM_RETURN_IF_ERROR(r.ExpectArray(i));
  const Shape& pred = r.shape(0);
  if (pred.element_type() != PrimitiveType::kPred) {
    return r.Error("operand 0 of select must be a pred array, found " + Str(pred));
  }
  TPUSIM_RETURN_IF_ERROR(r.ExpectSameShape(2, 1));
  // Older XLA allowed a scalar predicate choosing between whole arrays.
  if (pred.rank() != 0) TPUSIM_RETURN_IF_ERROR(r.ExpectSameDimensions(0, 1));
  return MergeDynamism(MergeDynamism(r.shape(1), r.shape(2)), pred);
}

StatusOr<Shape> InferClamp(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(3));
  for (int64_t i = 0; i < 3; ++i) TPUSIM_RETURN_IF_ERROR(r.ExpectArray(i));
  // clamp(min, operand, max): the bounds are scalars or shaped like the operand.
  for (int64_t i : {0, 2}) {
    TPUSIM_RETURN_IF_ERROR(r.ExpectSameType(i, 1));
    if (r.shape(i).rank() != 0) TPUSIM_RETURN_IF_ERROR(r.ExpectSameDimensions(i, 1));
  }
  return WithoutLayout(r.shape(1));
}

StatusOr<Shape> InferComplex(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectSameShape(1, 0));
  std::optional<PrimitiveType> type = ComplexTypeOf(r.shape(0).element_type());
  if (!type) return r.Error("complex needs f32 or f64 operands, found " + Str(r.shape(0)));
  return WithElementType(MergeDynamism(r.shape(0), r.shape(1)), *type);
}

// ---------------------------------------------------------------------------
// Data movement.
// ---------------------------------------------------------------------------

StatusOr<Shape> InferTranspose(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* perm, r.IntList(AttrId::kDimensions));
  const Shape& operand = r.shape(0);
  if (static_cast<int64_t>(perm->size()) != operand.rank()) {
    return r.Error("dimensions=" + Str(*perm) + " of transpose must permute all " +
                   std::to_string(operand.rank()) + " dimensions of " + Str(operand));
  }
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(*perm, operand.rank(), "dimensions", "the operand"));
  Shape out = WithoutLayout(operand);
  for (size_t i = 0; i < perm->size(); ++i) {
    out.mutable_dimensions()[i] = operand.dimensions((*perm)[i]);
    out.set_dynamic_dimension(static_cast<int64_t>(i), operand.is_dynamic_dimension((*perm)[i]));
  }
  return out;
}

StatusOr<Shape> InferSlice(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  const auto* ranges = r.in().GetAttr<std::vector<SliceRange>>(AttrId::kSlice);
  if (ranges == nullptr) return r.Error("slice needs slice={[start:limit:stride], ...}");
  const Shape& operand = r.shape(0);
  if (static_cast<int64_t>(ranges->size()) != operand.rank()) {
    return r.Error("slice has " + std::to_string(ranges->size()) + " ranges but its operand " +
                   Str(operand) + " has rank " + std::to_string(operand.rank()));
  }
  Shape out = WithoutLayout(operand);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceRange& s = (*ranges)[i];
    const int64_t size = operand.dimensions(i);
    const bool unbounded = size == Shape::kUnboundedSize;
    if (s.stride <= 0 || s.start < 0 || s.start > s.limit || (!unbounded && s.limit > size)) {
      return r.Error("slice range [" + std::to_string(s.start) + ":" + std::to_string(s.limit) +
                     ":" + std::to_string(s.stride) + "] of dimension " + std::to_string(i) +
                     " does not fit size " + std::to_string(size) +
                     " (needs 0 <= start <= limit <= size and stride > 0)");
    }
    // ceil((limit - start) / stride), written so a huge stride cannot overflow.
    out.mutable_dimensions()[i] = s.limit == s.start ? 0 : (s.limit - s.start - 1) / s.stride + 1;
  }
  return out;
}

/// dynamic-slice and dynamic-update-slice indices: one integer scalar per
/// operand dimension starting at operand `first`, or XLA's older single
/// index vector.
Status CheckStartIndices(const Rule& r, int64_t first, int64_t rank) {
  const int64_t n = r.count() - first;
  if (n == 1 && rank != 1 && r.shape(first).IsArray() && r.shape(first).rank() == 1) {
    if (r.shape(first).dimensions(0) == rank && IsInteger(r.shape(first).element_type())) {
      return Status::Ok();
    }
    return r.Error("index vector operand of " + r.name() + " has shape " + Str(r.shape(first)) +
                   " but the operand has rank " + std::to_string(rank));
  }
  if (n != rank) {
    return r.Error(r.name() + " needs one start index per operand dimension (" +
                   std::to_string(rank) + "), found " + std::to_string(n));
  }
  for (int64_t i = first; i < r.count(); ++i) {
    const Shape& s = r.shape(i);
    if (!s.IsArray() || s.rank() != 0 || !IsInteger(s.element_type())) {
      return r.Error("start index operand " + std::to_string(i) + " of " + r.name() +
                     " must be an integer scalar, found " + Str(s));
    }
  }
  return Status::Ok();
}

StatusOr<Shape> InferDynamicSlice(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  const Shape& operand = r.shape(0);
  TPUSIM_RETURN_IF_ERROR(CheckStartIndices(r, 1, operand.rank()));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* sizes, r.IntList(AttrId::kDynamicSliceSizes));
  if (static_cast<int64_t>(sizes->size()) != operand.rank()) {
    return r.Error("dynamic_slice_sizes=" + Str(*sizes) + " has " + std::to_string(sizes->size()) +
                   " entries but the operand " + Str(operand) + " has rank " +
                   std::to_string(operand.rank()));
  }
  Shape out(operand.element_type(), *sizes);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const int64_t size = (*sizes)[i];
    if (size < 0 ||
        !(operand.dimensions(i) == Shape::kUnboundedSize || size <= operand.dimensions(i))) {
      return r.Error("dynamic_slice_sizes=" + Str(*sizes) + " does not fit in operand " +
                     Str(operand));
    }
  }
  return out;
}

StatusOr<Shape> InferDynamicUpdateSlice(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(2));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(1));
  const Shape& operand = r.shape(0);
  const Shape& update = r.shape(1);
  TPUSIM_RETURN_IF_ERROR(r.ExpectSameType(1, 0));
  if (update.rank() != operand.rank()) {
    return r.Error("update " + Str(update) +
                   " of dynamic-update-slice must have the rank of operand " + Str(operand));
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (operand.dimensions(i) != Shape::kUnboundedSize &&
        update.dimensions(i) > operand.dimensions(i)) {
      return r.Error("update " + Str(update) + " of dynamic-update-slice does not fit in operand " +
                     Str(operand));
    }
  }
  TPUSIM_RETURN_IF_ERROR(CheckStartIndices(r, 2, operand.rank()));
  return WithoutLayout(operand);
}

StatusOr<Shape> InferPad(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_RETURN_IF_ERROR(r.ExpectScalar(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectSameType(1, 0));
  const auto* padding = r.in().GetAttr<std::vector<PaddingDimension>>(AttrId::kPadding);
  if (padding == nullptr) return r.Error("pad needs padding=low_high[_interior]x...");
  const Shape& operand = r.shape(0);
  if (static_cast<int64_t>(padding->size()) != operand.rank()) {
    return r.Error("padding of pad has " + std::to_string(padding->size()) +
                   " dimensions but the operand " + Str(operand) + " has rank " +
                   std::to_string(operand.rank()));
  }
  Shape out = WithoutLayout(operand);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = (*padding)[i];
    const int64_t size = operand.dimensions(i);
    if (size == Shape::kUnboundedSize) continue;
    if (p.interior < 0) {
      return r.Error("padding of pad has negative interior padding in dimension " +
                     std::to_string(i));
    }
    // Negative low/high padding removes elements; the result may not be negative.
    std::optional<int64_t> padded = CheckedMul(std::max<int64_t>(size - 1, 0), p.interior);
    if (padded) padded = CheckedAdd(*padded, size);
    if (padded) padded = CheckedAdd(*padded, p.low);
    if (padded) padded = CheckedAdd(*padded, p.high);
    if (!padded) return r.Error("padding of pad overflows int64 in dimension " + std::to_string(i));
    if (*padded < 0) {
      return r.Error("padding of pad makes dimension " + std::to_string(i) + " of " + Str(operand) +
                     " negative (" + std::to_string(*padded) + ")");
    }
    out.mutable_dimensions()[i] = *padded;
  }
  return out;
}

StatusOr<Shape> InferConcatenate(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(1));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* dims, r.IntList(AttrId::kDimensions));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  const Shape& first = r.shape(0);
  if (dims->size() != 1) {
    return r.Error("concatenate needs exactly one dimension, found dimensions=" + Str(*dims));
  }
  const int64_t d = (*dims)[0];
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(*dims, first.rank(), "dimensions", "operand 0"));
  Shape out = WithoutLayout(first);
  for (int64_t i = 1; i < r.count(); ++i) {
    TPUSIM_RETURN_IF_ERROR(r.ExpectArray(i));
    TPUSIM_RETURN_IF_ERROR(r.ExpectSameType(i, 0));
    const Shape& s = r.shape(i);
    bool fits = s.rank() == first.rank();
    for (int64_t k = 0; fits && k < s.rank(); ++k) {
      fits = k == d || SizesAgree(s.dimensions(k), first.dimensions(k));
    }
    if (!fits) {
      return r.Error("operand " + std::to_string(i) + " has shape " + Str(s) +
                     " but concatenate along dimension " + std::to_string(d) +
                     " expects the other dimensions of operand 0 " + Str(first));
    }
    int64_t& total = out.mutable_dimensions()[d];
    if (total == Shape::kUnboundedSize || s.dimensions(d) == Shape::kUnboundedSize) {
      total = Shape::kUnboundedSize;
    } else {
      std::optional<int64_t> sum = CheckedAdd(total, s.dimensions(d));
      if (!sum) return r.Error("concatenate of these operands overflows int64 sizes");
      total = *sum;
    }
    if (s.is_dynamic_dimension(d)) out.set_dynamic_dimension(d, true);
  }
  return out;
}

StatusOr<Shape> InferReverse(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectArray(0));
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<int64_t>* dims, r.IntList(AttrId::kDimensions));
  TPUSIM_RETURN_IF_ERROR(r.CheckDimensions(*dims, r.shape(0).rank(), "dimensions", "the operand"));
  return WithoutLayout(r.shape(0));
}

StatusOr<Shape> InferGetTupleElement(const Rule& r) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  TPUSIM_RETURN_IF_ERROR(r.ExpectTuple(0));
  TPUSIM_ASSIGN_OR_RETURN(int64_t index, r.Int(AttrId::kIndex));
  const Shape& tuple = r.shape(0);
  if (index < 0 || index >= tuple.tuple_size()) {
    return r.Error("index=" + std::to_string(index) + " is out of range for operand " + Str(tuple) +
                   " with " + std::to_string(tuple.tuple_size()) + " elements");
  }
  return WithoutLayout(tuple.tuple_shapes(index));
}

/// The element `index` of a start op's tuple (what its done op returns).
StatusOr<Shape> InferTupleElementOfStart(const Rule& r, int64_t index) {
  TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
  const Shape& start = r.shape(0);
  if (!start.IsTuple() || start.tuple_size() <= index) {
    return r.Error("operand of " + r.name() + " must be the tuple of its start op (at least " +
                   CountOf(index + 1, "element") + "), found " + Str(start));
  }
  return WithoutLayout(start.tuple_shapes(index));
}

StatusOr<Shape> Infer(const Rule& r) {
  const HloOpcode op = r.opcode();
  switch (op) {
    // Elementwise ops whose result has the shape of their operands.
    case HloOpcode::kAbs:
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtan:
    case HloOpcode::kAtanh:
    case HloOpcode::kCbrt:
    case HloOpcode::kCeil:
    case HloOpcode::kClz:
    case HloOpcode::kCopy:
    case HloOpcode::kCos:
    case HloOpcode::kCosh:
    case HloOpcode::kErf:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kFloor:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kNegate:
    case HloOpcode::kNot:
    case HloOpcode::kPopulationCount:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kRsqrt:
    case HloOpcode::kSign:
    case HloOpcode::kSin:
    case HloOpcode::kSinh:
    case HloOpcode::kSqrt:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kIsFinite:
    case HloOpcode::kDomain:
      return InferUnary(r);
    case HloOpcode::kAdd:
    case HloOpcode::kAnd:
    case HloOpcode::kAtan2:
    case HloOpcode::kDivide:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kMulhi:
    case HloOpcode::kMultiply:
    case HloOpcode::kOr:
    case HloOpcode::kPower:
    case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft:
    case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical:
    case HloOpcode::kSubtract:
    case HloOpcode::kXor:
      return InferBinary(r);
    case HloOpcode::kCompare:
      return InferCompare(r);
    case HloOpcode::kSelect:
      return InferSelect(r);
    case HloOpcode::kClamp:
      return InferClamp(r);
    case HloOpcode::kComplex:
      return InferComplex(r);
    case HloOpcode::kTranspose:
      return InferTranspose(r);
    case HloOpcode::kSlice:
      return InferSlice(r);
    case HloOpcode::kDynamicSlice:
      return InferDynamicSlice(r);
    case HloOpcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(r);
    case HloOpcode::kPad:
      return InferPad(r);
    case HloOpcode::kConcatenate:
      return InferConcatenate(r);
    case HloOpcode::kReverse:
      return InferReverse(r);
    case HloOpcode::kGetTupleElement:
      return InferGetTupleElement(r);
    case HloOpcode::kTuple:
      return Shape::Tuple(r.OperandShapes(0, r.count()));

    // Values whose type or dimensions are written in the text only.
    case HloOpcode::kParameter:
      return NotInferable(r, "parameters are declared");
    case HloOpcode::kConstant:
      return NotInferable(r, "the literal does not carry its type");
    case HloOpcode::kIota:
      return NotInferable(r, "iota has no operand");
    case HloOpcode::kBroadcast:
      return NotInferable(r, "dimensions= gives only the operand's place in the result");
    case HloOpcode::kReshape:
      return NotInferable(r, "only the element count is fixed");
    case HloOpcode::kDynamicReshape:
      return NotInferable(r, "the sizes are run-time values");
    case HloOpcode::kBitcast:
      return NotInferable(r, "bitcast reinterprets the layout");
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kStochasticConvert:
      return NotInferable(r, "the result type is not an operand's");
    case HloOpcode::kCustomCall:
      return NotInferable(r, "custom calls are opaque");
    case HloOpcode::kRng:
      return NotInferable(r, "the operands are only the distribution parameters");
    case HloOpcode::kRngBitGenerator:
      return NotInferable(r, "the output size is not an operand's");
    case HloOpcode::kRngGetAndUpdateState:
      return NotInferable(r, "the state is backend-defined");
    case HloOpcode::kInfeed:
      return NotInferable(r, "the data comes from the host");
    case HloOpcode::kRecv:
      return NotInferable(r, "the data comes from another device");
    case HloOpcode::kAsyncStart:
      return NotInferable(r, "the context elements are backend-defined");
    case HloOpcode::kScan:
      return NotInferable(r, "scan is not modelled yet");

    case HloOpcode::kPartitionId:
    case HloOpcode::kReplicaId:
      TPUSIM_RETURN_IF_ERROR(r.ExpectCount(0));
      return Shape(PrimitiveType::kU32, {});
    case HloOpcode::kAfterAll:
      // Any operands: XLA's verifier takes values too (an ordering edge to
      // them, as the scheduler writes), and only checks the token result.
      return Shape::Token();
    case HloOpcode::kAddDependency:
      TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
      return WithoutLayout(r.shape(0));
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kWhile:
      TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
      return WithoutLayout(r.shape(0));
    case HloOpcode::kCopyDone:
      // copy-start gives (destination, source, context); the destination is the copy.
      return InferTupleElementOfStart(r, 0);
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
      // Start tuples are (operands, results, context...).
      return InferTupleElementOfStart(r, 1);
    case HloOpcode::kCopyStart:
      TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
      return Shape::Tuple(
          {WithoutLayout(r.shape(0)), WithoutLayout(r.shape(0)), Shape(PrimitiveType::kU32, {})});
    case HloOpcode::kSend:
      TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
      if (!r.shape(1).IsToken()) {
        return r.Error("operand 1 of send must be a token, found " + Str(r.shape(1)));
      }
      return Shape::Tuple(
          {WithoutLayout(r.shape(0)), Shape(PrimitiveType::kU32, {}), Shape::Token()});
    case HloOpcode::kSendDone:
      TPUSIM_RETURN_IF_ERROR(r.ExpectCount(1));
      return Shape::Token();
    case HloOpcode::kRecvDone: {
      TPUSIM_ASSIGN_OR_RETURN(Shape data, InferTupleElementOfStart(r, 0));
      return Shape::Tuple({std::move(data), Shape::Token()});
    }
    case HloOpcode::kOutfeed:
      TPUSIM_RETURN_IF_ERROR(r.ExpectCount(2));
      if (!r.shape(1).IsToken()) {
        return r.Error("operand 1 of outfeed must be a token, found " + Str(r.shape(1)));
      }
      return Shape::Token();

    case HloOpcode::kDot:
      return InferDot(r);
    case HloOpcode::kRaggedDot:
      return InferRaggedDot(r);
    case HloOpcode::kConvolution:
      return InferConvolution(r);
    case HloOpcode::kReduce:
      return InferReduce(r);
    case HloOpcode::kReduceWindow:
      return InferReduceWindow(r);
    case HloOpcode::kSelectAndScatter:
      return InferSelectAndScatter(r);
    case HloOpcode::kSort:
      return InferSort(r);
    case HloOpcode::kMap:
      return InferMap(r);
    case HloOpcode::kGather:
      return InferGather(r);
    case HloOpcode::kScatter:
      return InferScatter(r);

    case HloOpcode::kConditional:
      return InferConditional(r);
    case HloOpcode::kCall:
      return InferCalledRoot(r, AttrId::kToApply);
    case HloOpcode::kFusion:
      return InferCalledRoot(r, AttrId::kCalls);

    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kCollectiveBroadcast:
      TPUSIM_RETURN_IF_ERROR(r.ExpectAtLeast(1));
      return OneOrTuple(r.OperandShapes(0, r.count()));
    case HloOpcode::kAllGather:
      return InferResizingCollective(r, /*gather=*/true);
    case HloOpcode::kAllGatherStart: {
      // (inputs, gathered): each side one array or a tuple of several.
      TPUSIM_ASSIGN_OR_RETURN(Shape gathered, InferResizingCollective(r, /*gather=*/true));
      return Shape::Tuple({OneOrTuple(r.OperandShapes(0, r.count())), std::move(gathered)});
    }
    case HloOpcode::kReduceScatter:
      return InferResizingCollective(r, /*gather=*/false);
    case HloOpcode::kAllToAll:
      return InferAllToAll(r);
    case HloOpcode::kRaggedAllToAll:
      // (input, output, offsets and sizes): the result is the output buffer.
      TPUSIM_RETURN_IF_ERROR(r.ExpectCount(6));
      return WithoutLayout(r.shape(1));
    case HloOpcode::kCollectivePermute:
      return InferCollectivePermute(r, /*start=*/false);
    case HloOpcode::kCollectivePermuteStart:
      return InferCollectivePermute(r, /*start=*/true);

    case HloOpcode::kGetDimensionSize:
      return InferGetDimensionSize(r);
    case HloOpcode::kSetDimensionSize:
      return InferSetDimensionSize(r);
    case HloOpcode::kTopK:
      return InferTopK(r);
    case HloOpcode::kTriangularSolve:
      return InferTriangularSolve(r);
    case HloOpcode::kCholesky:
      return InferCholesky(r);
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return InferBatchNorm(r);
    case HloOpcode::kFft:
      return InferFft(r);
  }
  return NotInferable(r, "no inference rule");  // unreachable: every HloOpcode returns above
}

}  // namespace

StatusOr<Shape> InferShape(const HloInstruction& instruction) {
  return Infer(Rule(instruction, instruction.opcode()));
}

StatusOr<Shape> InferShapeAs(const HloInstruction& instruction, HloOpcode opcode) {
  return Infer(Rule(instruction, opcode));
}

}  // namespace tpusim::hlo
