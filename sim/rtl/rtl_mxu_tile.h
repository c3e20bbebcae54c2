// The RTL array as the evaluator's MXU tile engine (`tpusim exec --mxu rtl`).
#ifndef TPUSIM_SIM_RTL_RTL_MXU_TILE_H_
#define TPUSIM_SIM_RTL_RTL_MXU_TILE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "sim/eval/mxu_tile.h"
#include "sim/rtl/mxu_array.h"

namespace tpusim::rtl {

/// MxuTileEngine on a Verilated `size` x `size` array. A k tile deeper than
/// the array runs as consecutive chunks of `size` rows, each seeded with the
/// previous chunk's sums (the order of additions is unchanged); n runs as
/// back-to-back column blocks. Padding rows get weight +0 and activation -0,
/// whose product -0 leaves every sum unchanged. Calls are serialised, so one
/// engine can serve every device thread.
class RtlMxuTile final : public eval::MxuTileEngine {
 public:
  /// `size` must be one of MxuArraySizes().
  explicit RtlMxuTile(int size);

  void MultiplyBf16(const eval::MxuTileShape& shape, std::span<const float> weights,
                    std::span<const float> activations, bool skip_zero,
                    std::span<float> sums) override;
  void MultiplyInt8(const eval::MxuTileShape& shape, std::span<const int8_t> weights,
                    std::span<const int8_t> activations, std::span<int32_t> sums) override;

  /// Cycles the array has run for this engine's tiles so far.
  int64_t cycles() const;

 private:
  /// One tile of either type, as raw array bits; sums in/out as bits.
  void Multiply(const eval::MxuTileShape& shape, const uint16_t* weights, const uint16_t* activations,
                uint16_t pad_activation, bool skip_zero, bool int8, uint32_t* sums);

  mutable std::mutex mutex_;
  std::unique_ptr<MxuArray> array_;
  int64_t cycles_ = 0;
};

}  // namespace tpusim::rtl

#endif  // TPUSIM_SIM_RTL_RTL_MXU_TILE_H_
