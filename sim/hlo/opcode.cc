#include "sim/hlo/opcode.h"

#include <array>

#include "sim/hlo/name_lookup.h"

namespace tpusim::hlo {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
  ElementwiseCost cost;
};

constexpr std::array<OpcodeInfo, kHloOpcodeCount> kOpcodeInfo = {{
#define V(enumerator, name, arity, cost) {name, arity, ElementwiseCost::cost},
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

bool IsElementwiseUnary(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAbs: case HloOpcode::kAcos: case HloOpcode::kAcosh: case HloOpcode::kAsin:
    case HloOpcode::kAsinh: case HloOpcode::kAtan: case HloOpcode::kAtanh: case HloOpcode::kCbrt:
    case HloOpcode::kCeil: case HloOpcode::kClz: case HloOpcode::kCopy: case HloOpcode::kCos:
    case HloOpcode::kCosh: case HloOpcode::kErf: case HloOpcode::kExp: case HloOpcode::kExpm1:
    case HloOpcode::kFloor: case HloOpcode::kLog: case HloOpcode::kLog1p:
    case HloOpcode::kLogistic: case HloOpcode::kNegate: case HloOpcode::kNot:
    case HloOpcode::kPopulationCount: case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven: case HloOpcode::kRsqrt: case HloOpcode::kSign:
    case HloOpcode::kSin: case HloOpcode::kSinh: case HloOpcode::kSqrt: case HloOpcode::kTan:
    case HloOpcode::kTanh: case HloOpcode::kReducePrecision:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAdd: case HloOpcode::kAnd: case HloOpcode::kAtan2: case HloOpcode::kDivide:
    case HloOpcode::kMaximum: case HloOpcode::kMinimum: case HloOpcode::kMultiply:
    case HloOpcode::kOr: case HloOpcode::kPower: case HloOpcode::kRemainder:
    case HloOpcode::kShiftLeft: case HloOpcode::kShiftRightArithmetic:
    case HloOpcode::kShiftRightLogical: case HloOpcode::kSubtract: case HloOpcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsCollective(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart: case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart: case HloOpcode::kAllToAll:
    case HloOpcode::kCollectiveBroadcast: case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart: case HloOpcode::kRaggedAllToAll:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

}  // namespace tpusim::hlo
