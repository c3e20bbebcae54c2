#include "sim/chip/vector_unit.h"

#include "sim/base/arith.h"

namespace tpusim::chip {

Vpu::Vpu(const arch::ChipConfig& chip)
    : sublanes_(chip.vpu.sublanes),
      lanes_(chip.vpu.lanes),
      alus_(chip.vpu.alus_per_slot),
      medium_cycles_(chip.vpu.medium_op_cycles),
      transcendental_cycles_(chip.vpu.transcendental_op_cycles),
      f16_load_ops_(chip.vpu.f16_load_ops),
      f16_store_ops_(chip.vpu.f16_store_ops) {}

int64_t Vpu::Cycles(const VectorWork& work) const {
  const int64_t issue = SatAdd(SatAdd(work.cheap_ops, SatMul(work.medium_ops, medium_cycles_)),
                               SatMul(work.transcendental_ops, transcendental_cycles_));
  return CeilDiv(issue, alus_);
}

Xlu::Xlu(const arch::ChipConfig& chip)
    : count_(chip.xlu.count), cycles_per_vreg_(chip.xlu.cycles_per_vreg) {}

int64_t Xlu::Cycles(int64_t vregs) const { return MulDivCeil(vregs, cycles_per_vreg_, count_); }

}  // namespace tpusim::chip
