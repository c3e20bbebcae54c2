// HloOpcode, generated from opcode.def.
#ifndef TPUSIM_SIM_HLO_OPCODE_H_
#define TPUSIM_SIM_HLO_OPCODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace tpusim::hlo {

inline constexpr int kVariadicOperands = -1;

enum class HloOpcode : uint8_t {
#define V(enumerator, name, arity) enumerator,
#include "sim/hlo/opcode.def"
#undef V
};

inline constexpr int kHloOpcodeCount = 0
#define V(enumerator, name, arity) +1
#include "sim/hlo/opcode.def"
#undef V
    ;

/// HLO spelling, e.g. "get-tuple-element".
std::string_view HloOpcodeName(HloOpcode opcode);
/// Inverse of HloOpcodeName (exact spellings only; see ParseAsyncSpelling).
std::optional<HloOpcode> HloOpcodeFromName(std::string_view name);
/// Fixed operand count, or kVariadicOperands.
int HloOpcodeArity(HloOpcode opcode);

/// Elementwise ops whose result has the shape of their operands.
bool IsElementwiseUnary(HloOpcode opcode);
bool IsElementwiseBinary(HloOpcode opcode);
/// Collectives, sync and async (start ops included, done ops not).
bool IsCollective(HloOpcode opcode);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_OPCODE_H_
