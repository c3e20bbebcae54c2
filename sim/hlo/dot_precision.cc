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
    // XLA's PrecisionConfig::Algorithm names the types the operands are
    // rounded to and how many products of them a tile takes. The MXU takes
    // bf16 (and the 8-bit floats, exact in bf16) only, so an algorithm runs
    // as the fewest bf16 passes whose pieces hold its operand type: one for
    // bf16 and f8; the hi/lo split of three for tf32 and f16 (16 bits of
    // mantissa for their 11); the split in three pieces of six passes for
    // f32, and for tf32 x3, which XLA defines as f32-accurate.
    static constexpr std::array<std::pair<std::string_view, int>, 13> kPasses = {{
        {"dot_bf16_bf16_f32", 1},
        {"dot_bf16_bf16_bf16", 1},
        {"dot_any_f8_any_f8_f32", 1},
        {"dot_any_f8_any_f8_f32_fast_accum", 1},
        {"dot_any_f8_any_f8_any", 1},
        {"dot_bf16_bf16_f32_x3", 3},
        {"dot_tf32_tf32_f32", 3},
        {"dot_f16_f16_f32", 3},
        {"dot_f16_f16_f16", 3},
        {"dot_bf16_bf16_f32_x6", 6},
        {"dot_tf32_tf32_f32_x3", 6},
        {"dot_f32_f32_f32", 6},
        {"dot_bf16_bf16_f32_x9", 9},
    }};
    for (const auto& [name, passes] : kPasses) {
      if (algorithm == name) return passes;
    }
    // dot_f64_f64_f64: no bf16 split of a double is modelled.
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
  static constexpr std::array<std::pair<int, int>, 9> kNine = {
      {{2, 2}, {1, 2}, {2, 1}, {0, 2}, {2, 0}, {1, 1}, {0, 1}, {1, 0}, {0, 0}}};
  if (count == 1) return kOne;
  if (count == 3) return kThree;
  if (count == 6) return kSix;
  return kNine;
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
