#include "sim/hlo/dot_precision.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace tpusim::hlo {

StatusOr<int> MxuPassCount(const HloInstruction& inst) {
  const std::string_view algorithm = inst.string_attr(AttrId::kAlgorithm);
  if (!algorithm.empty()) {
    if (algorithm == "dot_bf16_bf16_f32") return 1;
    if (algorithm == "dot_bf16_bf16_f32_x3") return 3;
    // f32 x f32 -> f32 on the MXU is its 6-pass emulation.
    if (algorithm == "dot_bf16_bf16_f32_x6" || algorithm == "dot_f32_f32_f32") return 6;
    return Unimplemented("dot algorithm " + std::string(algorithm) + " is not supported yet");
  }
  int passes = 1;
  if (const auto* precisions = inst.GetAttr<std::vector<std::string>>(AttrId::kOperandPrecision)) {
    for (const std::string& p : *precisions) {
      if (p == "high" || p == "HIGH") {
        passes = std::max(passes, 3);
      } else if (p == "highest" || p == "HIGHEST") {
        passes = 6;
      } else if (p != "default" && p != "DEFAULT") {
        return InvalidArgument("unknown operand precision " + Quote(p));
      }
    }
  }
  return passes;
}

std::span<const std::pair<int, int>> MxuPasses(int count) {
  static constexpr std::array<std::pair<int, int>, 1> kOne = {{{0, 0}}};
  static constexpr std::array<std::pair<int, int>, 3> kThree = {{{0, 1}, {1, 0}, {0, 0}}};
  static constexpr std::array<std::pair<int, int>, 6> kSix = {
      {{0, 2}, {2, 0}, {1, 1}, {0, 1}, {1, 0}, {0, 0}}};
  if (count == 1) return kOne;
  if (count == 3) return kThree;
  return kSix;
}

int MxuPieces(int count) { return count == 1 ? 1 : count == 3 ? 2 : 3; }

bool IsExactlyBf16(PrimitiveType t) {
  return t == PrimitiveType::kBF16 || t == PrimitiveType::kF8E5M2 ||
         t == PrimitiveType::kF8E4M3FN || t == PrimitiveType::kF8E4M3 ||
         t == PrimitiveType::kF8E5M2FNUZ || t == PrimitiveType::kF8E4M3FNUZ ||
         t == PrimitiveType::kF8E4M3B11FNUZ || t == PrimitiveType::kF8E3M4 ||
         t == PrimitiveType::kF4E2M1FN;
}

}  // namespace tpusim::hlo
