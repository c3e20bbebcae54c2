// The vector unit (VPU) and the transpose/permute units (XLU) of one TensorCore.
#ifndef TPUSIM_SIM_CHIP_VECTOR_UNIT_H_
#define TPUSIM_SIM_CHIP_VECTOR_UNIT_H_

#include <cstdint>

#include "sim/arch/chip_config.h"
#include "sim/chip/work.h"

namespace tpusim::chip {

/// The VPU issues `alus_per_slot` vreg operations per cycle (every ALU of
/// every (sublane, lane) slot runs the same program [Q SB]). A cheap op takes
/// one issue cycle, a medium one `medium_op_cycles`, a transcendental one
/// `transcendental_op_cycles` (presets, assumption A8).
class Vpu {
 public:
  explicit Vpu(const arch::ChipConfig& chip);
  /// Elements of one vreg: sublanes x lanes (1024 on every TPU so far).
  int64_t vreg_elements() const { return sublanes_ * lanes_; }
  int64_t sublanes() const { return sublanes_; }
  int64_t lanes() const { return lanes_; }
  /// ceil((cheap + medium x medium_cycles + transcendental x transcendental_cycles) / alus).
  int64_t Cycles(const VectorWork& work) const;
  /// vreg ops to widen one vreg of f16 values read from memory to f32.
  int64_t f16_load_ops() const { return f16_load_ops_; }
  /// vreg ops to round one vreg of f32 values to f16 for a store.
  int64_t f16_store_ops() const { return f16_store_ops_; }

 private:
  int64_t sublanes_;               ///< rows of a vreg
  int64_t lanes_;                  ///< columns of a vreg
  int64_t alus_;                   ///< vreg ops issued per cycle
  int64_t medium_cycles_;          ///< issue cycles of a medium op
  int64_t transcendental_cycles_;  ///< issue cycles of a transcendental op
  int64_t f16_load_ops_;
  int64_t f16_store_ops_;
};

/// The XLUs: `count` units each spending `cycles_per_vreg` on a vreg
/// (presets, assumption A9); work is spread evenly over them.
class Xlu {
 public:
  explicit Xlu(const arch::ChipConfig& chip);
  /// ceil(vregs x cycles_per_vreg / count).
  int64_t Cycles(int64_t vregs) const;

 private:
  int64_t count_;            ///< XLUs per TensorCore
  int64_t cycles_per_vreg_;  ///< per XLU
};

}  // namespace tpusim::chip

#endif  // TPUSIM_SIM_CHIP_VECTOR_UNIT_H_
