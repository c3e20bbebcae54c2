// HloOpcode, generated from opcode.def.
#ifndef TPUSIM_SIM_HLO_OPCODE_H_
#define TPUSIM_SIM_HLO_OPCODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace tpusim::hlo {

inline constexpr int kVariadicOperands = -1;

/// What one element of an elementwise op costs the vector unit (the chip
/// preset's vpu.medium_op_cycles and vpu.transcendental_op_cycles):
/// kCheap one VALU op (add, compare, select, convert), kMedium a short
/// sequence (divide, exp, log, sqrt), kTranscendental a long one (sin, atan).
/// kNone: the opcode is not elementwise.
enum class ElementwiseCost : uint8_t { kNone, kCheap, kMedium, kTranscendental };

enum class HloOpcode : uint8_t {
#define V(enumerator, name, arity, cost) enumerator,
#include "sim/hlo/opcode.def"
#undef V
};

inline constexpr int kHloOpcodeCount = 0
#define V(enumerator, name, arity, cost) +1
#include "sim/hlo/opcode.def"
#undef V
    ;

/// HLO spelling, e.g. "get-tuple-element".
std::string_view HloOpcodeName(HloOpcode opcode);
/// Inverse of HloOpcodeName (exact spellings only; see ParseAsyncSpelling).
std::optional<HloOpcode> HloOpcodeFromName(std::string_view name);
/// Fixed operand count, or kVariadicOperands.
int HloOpcodeArity(HloOpcode opcode);
/// opcode.def's cost column: kNone unless the op computes each result
/// element from the same element of its operands.
ElementwiseCost ElementwiseCostOf(HloOpcode opcode);
inline bool IsElementwise(HloOpcode opcode) {
  return ElementwiseCostOf(opcode) != ElementwiseCost::kNone;
}

/// Elementwise ops whose result has the shape of their operands.
bool IsElementwiseUnary(HloOpcode opcode);
bool IsElementwiseBinary(HloOpcode opcode);
/// Collectives, sync and async (start ops included, done ops not).
bool IsCollective(HloOpcode opcode);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_OPCODE_H_
