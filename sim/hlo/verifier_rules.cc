// The operand-count rule and the shape agreement rule of the verifier.
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

std::optional<std::string> VariadicCountProblem(VariadicArity arity, int64_t n) {
  switch (arity) {
    case VariadicArity::kFixed:
    case VariadicArity::kAnyOperands:
      return std::nullopt;
    case VariadicArity::kAtLeastOneOperand:
      if (n < 1) return "at least 1 operand";
      return std::nullopt;
    case VariadicArity::kOperandUpdateAndIndices:
      if (n < 2) return "an operand, an update and the start indices";
      return std::nullopt;
    case VariadicArity::kSelectorAndBranches:
      if (n < 2) return "a branch selector and one operand per branch";
      return std::nullopt;
    case VariadicArity::kDotOperands:
      // Sparse dots add one or two metadata operands.
      if (n < 2 || n > 4) return "2 operands (plus up to 2 sparsity metadata operands)";
      return std::nullopt;
    case VariadicArity::kInputsAndInits:
      if (n < 2 || n % 2 != 0) return "N inputs followed by N init values";
      return std::nullopt;
    case VariadicArity::kScatterOperands:
      if (n < 3 || n % 2 == 0) return "N operands, the scatter indices and N updates";
      return std::nullopt;
    case VariadicArity::kDistributionParameters:
      if (n != 2) return "2 operands (the distribution parameters)";
      return std::nullopt;
  }
  return std::nullopt;  // unreachable: every VariadicArity returns above
}

}  // namespace tpusim::hlo::verifier_internal
