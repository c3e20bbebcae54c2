// Per-opcode tables and the shape agreement rule of the verifier.
#include "sim/hlo/verifier_rules.h"

namespace tpusim::hlo::verifier_internal {
namespace {

/// `(data, context scalars..., token[])`: what send/recv return, and
/// `(data, token[])`, what recv-done returns. Pipelined send/recv loops carry
/// either form in their state and XLA's own tests mix them
/// (p2p_pipelined_send_recv_loop), so the verifier treats them alike.
bool IsTokenBundle(const Shape& s) {
  if (!s.IsTuple() || s.tuple_size() < 2 || !s.tuple_shapes(s.tuple_size() - 1).IsToken()) {
    return false;
  }
  for (int64_t i = 1; i + 1 < s.tuple_size(); ++i) {
    const Shape& context = s.tuple_shapes(i);
    if (!context.IsArray() || context.rank() != 0 || !IsInteger(context.element_type())) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool Agree(const Shape& stated, const Shape& expected, bool compare_types) {
  if (stated.kind() != expected.kind()) return false;
  switch (stated.kind()) {
    case Shape::Kind::kArray:
      if (compare_types && stated.element_type() != expected.element_type()) return false;
      if (stated.rank() != expected.rank()) return false;
      for (int64_t i = 0; i < stated.rank(); ++i) {
        const int64_t a = stated.dimensions(i);
        const int64_t b = expected.dimensions(i);
        if (a != b && a != Shape::kUnboundedSize && b != Shape::kUnboundedSize) return false;
      }
      return true;
    case Shape::Kind::kTuple:
      if (IsTokenBundle(stated) && IsTokenBundle(expected)) {
        return Agree(stated.tuple_shapes(0), expected.tuple_shapes(0), compare_types);
      }
      [[fallthrough]];
    case Shape::Kind::kBuffer:
      if (stated.tuple_size() != expected.tuple_size()) return false;
      for (int64_t i = 0; i < stated.tuple_size(); ++i) {
        if (!Agree(stated.tuple_shapes(i), expected.tuple_shapes(i), compare_types)) return false;
      }
      return true;
    case Shape::Kind::kToken:
    case Shape::Kind::kOpaque:
      return true;
  }
  return false;
}

std::vector<AttrId> RequiredAttributes(HloOpcode op) {
  using A = AttrId;
  switch (op) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kGetDimensionSize:
    case HloOpcode::kSetDimensionSize:
      return {A::kDimensions};
    case HloOpcode::kReduce:
    case HloOpcode::kSort:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kScan:
      return {A::kDimensions, A::kToApply};
    case HloOpcode::kMap:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kCall:
      return {A::kToApply};
    case HloOpcode::kReduceWindow:
      return {A::kWindow, A::kToApply};
    case HloOpcode::kSelectAndScatter:
      return {A::kWindow, A::kSelect, A::kScatter};
    case HloOpcode::kSlice:
      return {A::kSlice};
    case HloOpcode::kGetTupleElement:
      return {A::kIndex};
    case HloOpcode::kFusion:
      return {A::kCalls, A::kFusionKind};
    case HloOpcode::kWhile:
      return {A::kCondition, A::kBody};
    case HloOpcode::kConvolution:
      return {A::kDimLabels};
    case HloOpcode::kCompare:
      return {A::kDirection};
    case HloOpcode::kCustomCall:
      return {A::kCustomCallTarget};
    case HloOpcode::kDynamicSlice:
      return {A::kDynamicSliceSizes};
    case HloOpcode::kPad:
      return {A::kPadding};
    case HloOpcode::kIota:
      return {A::kIotaDimension};
    case HloOpcode::kReducePrecision:
      return {A::kExponentBits, A::kMantissaBits};
    case HloOpcode::kFft:
      return {A::kFftType, A::kFftLength};
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      return {A::kEpsilon, A::kFeatureIndex};
    case HloOpcode::kTopK:
      return {A::kK};
    case HloOpcode::kRng:
      return {A::kDistribution};
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
      return {A::kSourceTargetPairs};
    case HloOpcode::kGather:
      return {A::kOffsetDims, A::kCollapsedSliceDims, A::kStartIndexMap, A::kIndexVectorDim,
              A::kSliceSizes};
    case HloOpcode::kScatter:
      return {A::kUpdateWindowDims, A::kInsertedWindowDims, A::kScatterDimsToOperandDims,
              A::kIndexVectorDim, A::kToApply};
    default:
      return {};
  }
}

std::optional<std::string> VariadicCountProblem(HloOpcode op, int64_t n) {
  switch (op) {
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kConcatenate:
    case HloOpcode::kMap:
    case HloOpcode::kSort:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kScan:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kDynamicSlice:
      if (n < 1) return "at least 1 operand";
      return std::nullopt;
    case HloOpcode::kDynamicUpdateSlice:
      if (n < 2) return "an operand, an update and the start indices";
      return std::nullopt;
    case HloOpcode::kConditional:
      if (n < 2) return "a branch selector and one operand per branch";
      return std::nullopt;
    case HloOpcode::kDot:
      // Sparse dots add one or two metadata operands.
      if (n < 2 || n > 4) return "2 operands (plus up to 2 sparsity metadata operands)";
      return std::nullopt;
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
      if (n < 2 || n % 2 != 0) return "N inputs followed by N init values";
      return std::nullopt;
    case HloOpcode::kScatter:
      if (n < 3 || n % 2 == 0) return "N operands, the scatter indices and N updates";
      return std::nullopt;
    case HloOpcode::kRng:
      if (n != 2) return "2 operands (the distribution parameters)";
      return std::nullopt;
    default:
      return std::nullopt;  // after-all, tuple, call, fusion, custom-call, async-start: any count
  }
}

}  // namespace tpusim::hlo::verifier_internal
