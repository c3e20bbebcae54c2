// HloOpcode, generated from opcode.def.
#ifndef TPUSIM_SIM_HLO_OPCODE_H_
#define TPUSIM_SIM_HLO_OPCODE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace tpusim::hlo {

/// HloOpcodeArity of an op without a fixed operand count.
inline constexpr int kVariadicOperands = -1;

/// The operand counts an op without a fixed one accepts (opcode.def's arity
/// column, where it is not a number).
enum class VariadicArity : uint8_t {
  kFixed,                    ///< the column is a number: exactly that many
  kAnyOperands,              ///< any count, none included
  kAtLeastOneOperand,        ///< 1 or more
  kOperandUpdateAndIndices,  ///< an operand, an update, the start indices
  kSelectorAndBranches,      ///< a branch selector, one operand per branch
  kDotOperands,              ///< 2, plus up to 2 sparsity metadata operands
  kInputsAndInits,           ///< N inputs, then N init values
  kScatterOperands,          ///< N operands, the scatter indices, N updates
  kDistributionParameters,   ///< exactly 2 (rng's distribution parameters)
};

/// An instruction attribute (attribute.h).
enum class AttrId : uint8_t;

/// What one element of an elementwise op costs the vector unit (the chip
/// preset's vpu.medium_op_cycles and vpu.transcendental_op_cycles):
/// kCheap one VALU op (add, compare, select, convert), kMedium a short
/// sequence (divide, exp, log, sqrt), kTranscendental a long one (sin, atan).
/// kNone: the opcode is not elementwise.
enum class ElementwiseCost : uint8_t { kNone, kCheap, kMedium, kTranscendental };

/// The collective an op performs, starts or waits for (opcode.def's collective
/// column).
enum class CollectiveKind : uint8_t {
  kNone,
  kAllGather,
  kAllReduce,
  kAllToAll,
  kCollectiveBroadcast,
  kCollectivePermute,
  kRaggedAllToAll,
  kReduceScatter,
  kSendRecv,
};

/// What an op does as a step of a program (opcode.def's role column).
enum class OpRole : uint8_t {
  kCompute,       ///< runs a kernel of its own
  kBookkeeping,   ///< names, regroups or annotates values; emits no code
  kControlFlow,   ///< runs other computations (while, conditional, call)
  kHostTransfer,  ///< infeed, outfeed
  kAsyncStart,    ///< begins an asynchronous op (X-start, send, recv)
  kAsyncUpdate,   ///< between the two (async-update)
  kAsyncDone,     ///< waits for one (X-done, send-done, recv-done)
};

/// The element types an elementwise op's operands must have (opcode.def's
/// operand-types column); kAny when the column sets no constraint.
enum class OperandTypes : uint8_t {
  kAny,
  kFloat,
  kFloatOrComplex,
  kInteger,         ///< signed or unsigned, not pred
  kIntegerOrPred,
};

enum class HloOpcode : uint8_t {
#define V(enumerator, name, arity, cost, collective, role, types, attrs) enumerator,
#include "sim/hlo/opcode.def"
#undef V
};

inline constexpr int kHloOpcodeCount = 0
#define V(enumerator, name, arity, cost, collective, role, types, attrs) +1
#include "sim/hlo/opcode.def"
#undef V
    ;

/// HLO spelling, e.g. "get-tuple-element".
std::string_view HloOpcodeName(HloOpcode opcode);
/// Inverse of HloOpcodeName (exact spellings only; see ParseAsyncSpelling).
std::optional<HloOpcode> HloOpcodeFromName(std::string_view name);
/// Fixed operand count, or kVariadicOperands.
int HloOpcodeArity(HloOpcode opcode);
/// opcode.def's arity column for an op without a fixed operand count (kFixed
/// for the others).
VariadicArity VariadicArityOf(HloOpcode opcode);
/// opcode.def's required-attributes column.
std::span<const AttrId> RequiredAttributesOf(HloOpcode opcode);
/// opcode.def's cost column: kNone unless the op computes each result
/// element from the same element of its operands.
ElementwiseCost ElementwiseCostOf(HloOpcode opcode);
inline bool IsElementwise(HloOpcode opcode) {
  return ElementwiseCostOf(opcode) != ElementwiseCost::kNone;
}

/// opcode.def's collective column: for a -done op, the collective it waits for.
CollectiveKind CollectiveKindOf(HloOpcode opcode);
/// opcode.def's role column.
OpRole OpRoleOf(HloOpcode opcode);
/// Collectives among devices, sync and async (start ops included, done ops
/// and the point-to-point send and recv not).
inline bool IsCollective(HloOpcode opcode) {
  const CollectiveKind kind = CollectiveKindOf(opcode);
  return kind != CollectiveKind::kNone && kind != CollectiveKind::kSendRecv &&
         OpRoleOf(opcode) != OpRole::kAsyncDone;
}
/// The -done ops that wait for a collective among devices (all-reduce-done,
/// all-gather-done, collective-permute-done; not send-done and recv-done).
inline bool IsCollectiveDone(HloOpcode opcode) {
  const CollectiveKind kind = CollectiveKindOf(opcode);
  return kind != CollectiveKind::kNone && kind != CollectiveKind::kSendRecv &&
         OpRoleOf(opcode) == OpRole::kAsyncDone;
}
/// opcode.def's operand-types column.
OperandTypes OperandTypesOf(HloOpcode opcode);

/// Case labels for every elementwise opcode (cost column not kNone), for an
/// exhaustive switch that sends them all to one handler:
///   #define V TPUSIM_HLO_CASE_IF_ELEMENTWISE
///   #include "sim/hlo/opcode.def"
///   #undef V
///     return HandleElementwise(...);
#define TPUSIM_HLO_CASE_IF_ELEMENTWISE(enumerator, name, arity, cost, collective, role, types, \
                                       attrs)                                                  \
  TPUSIM_HLO_CASE_IF_ELEMENTWISE_##cost(enumerator)
#define TPUSIM_HLO_CASE_IF_ELEMENTWISE_kNone(enumerator)
#define TPUSIM_HLO_CASE_IF_ELEMENTWISE_kCheap(enumerator) case ::tpusim::hlo::HloOpcode::enumerator:
#define TPUSIM_HLO_CASE_IF_ELEMENTWISE_kMedium(enumerator) case ::tpusim::hlo::HloOpcode::enumerator:
#define TPUSIM_HLO_CASE_IF_ELEMENTWISE_kTranscendental(enumerator) \
  case ::tpusim::hlo::HloOpcode::enumerator:
/// Case labels for every opcode that is not elementwise, for a switch that
/// lists the elementwise ones itself.
#define TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE(enumerator, name, arity, cost, collective, role, types, \
                                           attrs)                                                  \
  TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE_##cost(enumerator)
#define TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE_kNone(enumerator) \
  case ::tpusim::hlo::HloOpcode::enumerator:
#define TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE_kCheap(enumerator)
#define TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE_kMedium(enumerator)
#define TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE_kTranscendental(enumerator)

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_OPCODE_H_
