// Private to verifier*.cc: the operand-count rule and the shape agreement
// rule the verifier applies. Not part of the sim/hlo API; use verifier.h.
#ifndef TPUSIM_SIM_HLO_VERIFIER_RULES_H_
#define TPUSIM_SIM_HLO_VERIFIER_RULES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "sim/hlo/opcode.h"
#include "sim/hlo/shape.h"

namespace tpusim::hlo::verifier_internal {

/// The shape a program states agrees with the one it should have: same kind,
/// element type (unless `compare_types` is false) and sizes, recursively.
/// Layouts are ignored (they are assigned, not inferred), and so is dynamism:
/// a bounded dynamic dimension `<=N` agrees with a static N, and an unbounded
/// `?` with any size. Send/recv token bundles agree when their data does.
bool Agree(const Shape& stated, const Shape& expected, bool compare_types = true);

/// For an opcode without a fixed arity (opcode.def's VariadicArity): a
/// description of the operand counts it accepts when `n` is not one of them,
/// else nullopt.
std::optional<std::string> VariadicCountProblem(VariadicArity arity, int64_t n);

}  // namespace tpusim::hlo::verifier_internal

#endif  // TPUSIM_SIM_HLO_VERIFIER_RULES_H_
