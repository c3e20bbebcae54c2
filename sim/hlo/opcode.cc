#include "sim/hlo/opcode.h"

#include <array>

#include "sim/hlo/attribute.h"
#include "sim/hlo/name_lookup.h"

namespace tpusim::hlo {
namespace {

/// opcode.def's arity column: a number, or a VariadicArity.
struct Arity {
  int fixed;
  VariadicArity variadic;
};
constexpr Arity ArityOf(int n) { return {n, VariadicArity::kFixed}; }
constexpr Arity ArityOf(VariadicArity variadic) { return {kVariadicOperands, variadic}; }

/// opcode.def's required-attributes column.
struct AttrList {
  /// The most any opcode requires (gather's and scatter's five).
  static constexpr size_t kCapacity = 5;
  std::array<AttrId, kCapacity> ids;
  size_t size;
};
template <typename... Ids>
constexpr AttrList AttrsOf(Ids... ids) {
  static_assert(sizeof...(ids) <= AttrList::kCapacity, "raise AttrList::kCapacity");
  return {{ids...}, sizeof...(ids)};
}

struct OpcodeInfo {
  std::string_view name;
  Arity arity;
  ElementwiseCost cost;
  CollectiveKind collective;
  OpRole role;
  OperandTypes types;
  AttrList attrs;
};

// The arity and required-attributes columns name bare enumerators.
using enum VariadicArity;
using enum AttrId;

constexpr std::array<OpcodeInfo, kHloOpcodeCount> kOpcodeInfo = {{
#define V(enumerator, name, arity, cost, collective, role, types, attrs)                   \
  {name, ArityOf(arity), ElementwiseCost::cost, CollectiveKind::collective, OpRole::role, \
   OperandTypes::types, AttrsOf attrs},
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

int HloOpcodeArity(HloOpcode opcode) { return kOpcodeInfo[static_cast<int>(opcode)].arity.fixed; }

VariadicArity VariadicArityOf(HloOpcode opcode) {
  return kOpcodeInfo[static_cast<int>(opcode)].arity.variadic;
}

std::span<const AttrId> RequiredAttributesOf(HloOpcode opcode) {
  const AttrList& attrs = kOpcodeInfo[static_cast<int>(opcode)].attrs;
  return std::span(attrs.ids.data(), attrs.size);
}

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
