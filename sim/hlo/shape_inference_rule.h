// Private to shape_inference*.cc: the context and helpers each inference rule
// uses. Not part of the sim/hlo API; include shape_inference.h instead.
#ifndef TPUSIM_SIM_HLO_SHAPE_INFERENCE_RULE_H_
#define TPUSIM_SIM_HLO_SHAPE_INFERENCE_RULE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/instruction.h"

namespace tpusim::hlo::shape_inference_internal {

/// Shape text without layout, as messages show it.
std::string Str(const Shape& shape);
/// `{1,2,3}`.
std::string Str(std::span<const int64_t> values);
/// Inferred shapes carry no layout: layouts are assigned, not inferred.
Shape WithoutLayout(const Shape& shape);
/// `like` (dimensions and dynamism, no layout) with element type `type`.
Shape WithElementType(const Shape& like, PrimitiveType type);
/// a + b, or nullopt when that overflows int64 (sizes come from untrusted text).
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t out;
  return __builtin_add_overflow(a, b, &out) ? std::nullopt : std::optional<int64_t>(out);
}
/// a * b, or nullopt when that overflows int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out;
  return __builtin_mul_overflow(a, b, &out) ? std::nullopt : std::optional<int64_t>(out);
}
/// Equal, or either is `?` (unbounded: known only at run time).
bool SizesAgree(int64_t a, int64_t b);
/// Same rank and agreeing sizes. Dynamism is ignored: a bounded dynamic
/// dimension and a static one of the same size are interchangeable operands.
bool SameDimensions(const Shape& a, const Shape& b);

/// The operation being inferred: the instruction plus the opcode to infer it
/// as, which differs from the instruction's own for `X-start` async wrappers.
/// Every check returns InvalidArgument with a message that names the opcode.
class Rule {
 public:
  Rule(const HloInstruction& instruction, HloOpcode opcode)
      : in_(instruction), opcode_(opcode), name_(HloOpcodeName(opcode)) {}

  const HloInstruction& in() const { return in_; }
  HloOpcode opcode() const { return opcode_; }
  /// Spelling of opcode(), for messages.
  std::string name() const { return std::string(name_); }
  int64_t count() const { return in_.operand_count(); }
  const Shape& shape(int64_t i) const { return in_.operand(i)->shape(); }

  Status Error(std::string message) const { return InvalidArgument(std::move(message)); }

  Status ExpectCount(int64_t n) const;
  Status ExpectAtLeast(int64_t n) const;
  Status ExpectArray(int64_t i) const;
  Status ExpectTuple(int64_t i) const;
  Status ExpectScalar(int64_t i) const;
  /// Operand i has the element type of operand j.
  Status ExpectSameType(int64_t i, int64_t j) const;
  /// Operand i has the dimensions of operand j.
  Status ExpectSameDimensions(int64_t i, int64_t j) const;
  /// Operand i has the dimensions and element type of operand j.
  Status ExpectSameShape(int64_t i, int64_t j) const;

  /// A required int-list attribute.
  StatusOr<const std::vector<int64_t>*> IntList(AttrId id) const;
  /// An int list that XLA leaves unprinted when empty.
  const std::vector<int64_t>& OptionalIntList(AttrId id) const;
  /// A required int attribute.
  StatusOr<int64_t> Int(AttrId id) const;
  /// Each entry of `dims` (attribute `attr`) is a dimension of a rank-`rank`
  /// value (`of_what`, e.g. "operand 0") and appears once.
  Status CheckDimensions(std::span<const int64_t> dims, int64_t rank, std::string_view attr,
                         std::string_view of_what) const;
  /// The root shape (without layout) of a called computation; `attr` names the
  /// attribute for the message when `computation` is missing.
  StatusOr<Shape> RootOf(const HloComputation* computation, std::string_view attr) const;
  /// Operand shapes [begin, end) without layouts.
  std::vector<Shape> OperandShapes(int64_t begin, int64_t end) const;

 private:
  const HloInstruction& in_;
  HloOpcode opcode_;
  std::string_view name_;
};

/// One shape for a single value, a tuple for several (all-reduce, sort, ...).
Shape OneOrTuple(std::vector<Shape> shapes);
/// Unimplemented: the text must give this opcode's shape.
Status NotInferable(const Rule& r, std::string_view why);

// Rules in shape_inference_ops.cc, each named for the op it infers:
// contractions, reductions, indexing, control flow, collectives and the
// remaining special ops. shape_inference.cc's dispatch calls them.
StatusOr<Shape> InferDot(const Rule& r);
StatusOr<Shape> InferRaggedDot(const Rule& r);
StatusOr<Shape> InferConvolution(const Rule& r);
StatusOr<Shape> InferReduce(const Rule& r);
StatusOr<Shape> InferReduceWindow(const Rule& r);
StatusOr<Shape> InferSelectAndScatter(const Rule& r);
StatusOr<Shape> InferSort(const Rule& r);
StatusOr<Shape> InferMap(const Rule& r);
StatusOr<Shape> InferGather(const Rule& r);
StatusOr<Shape> InferScatter(const Rule& r);
StatusOr<Shape> InferConditional(const Rule& r);
/// call (`id` to_apply) and fusion (calls): the root of the called computation.
StatusOr<Shape> InferCalledRoot(const Rule& r, AttrId id);
/// all-gather (`gather`: multiply) and reduce-scatter (divide) along `dimensions={d}`.
StatusOr<Shape> InferResizingCollective(const Rule& r, bool gather);
StatusOr<Shape> InferAllToAll(const Rule& r);
/// collective-permute, and collective-permute-start (`start`).
StatusOr<Shape> InferCollectivePermute(const Rule& r, bool start);
StatusOr<Shape> InferGetDimensionSize(const Rule& r);
StatusOr<Shape> InferSetDimensionSize(const Rule& r);
StatusOr<Shape> InferTopK(const Rule& r);
StatusOr<Shape> InferCholesky(const Rule& r);
StatusOr<Shape> InferTriangularSolve(const Rule& r);
/// batch-norm-training, -inference and -grad.
StatusOr<Shape> InferBatchNorm(const Rule& r);
StatusOr<Shape> InferFft(const Rule& r);

}  // namespace tpusim::hlo::shape_inference_internal

#endif  // TPUSIM_SIM_HLO_SHAPE_INFERENCE_RULE_H_
