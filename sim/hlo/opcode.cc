#include "sim/hlo/opcode.h"

#include <array>

#include "sim/hlo/name_lookup.h"

namespace tpusim::hlo {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
  ElementwiseCost cost;
  CollectiveKind collective;
  OpRole role;
  OperandTypes types;
};

constexpr std::array<OpcodeInfo, kHloOpcodeCount> kOpcodeInfo = {{
#define V(enumerator, name, arity, cost, collective, role, types)                   \
  {name, arity, ElementwiseCost::cost, CollectiveKind::collective, OpRole::role, \
   OperandTypes::types},
#include "sim/hlo/opcode.def"
#undef V
}};

constexpr std::array<std::string_view, kHloOpcodeCount> kOpcodeNames = [] {
  std::array<std::string_view, kHloOpcodeCount> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kOpcodeInfo[i].name;
  return names;
}();

/// Spelling -> opcode, built at compile time: the parser looks up every opcode.
constexpr auto kOpcodeTable = internal::SpellingTable<512>::Build(kOpcodeNames);

}  // namespace

std::string_view HloOpcodeName(HloOpcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].name;
}

std::optional<HloOpcode> HloOpcodeFromName(std::string_view name) {
  const int i = kOpcodeTable.Find(kOpcodeNames, name);
  if (i < 0) return std::nullopt;
  return static_cast<HloOpcode>(i);
}

int HloOpcodeArity(HloOpcode opcode) { return kOpcodeInfo[static_cast<int>(opcode)].arity; }

ElementwiseCost ElementwiseCostOf(HloOpcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].cost;
}

CollectiveKind CollectiveKindOf(HloOpcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].collective;
}

OpRole OpRoleOf(HloOpcode opcode) { return kOpcodeInfo[static_cast<int>(opcode)].role; }

OperandTypes OperandTypesOf(HloOpcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].types;
}

}  // namespace tpusim::hlo
