#include "sim/chip/core_cost.h"

#include <algorithm>

#include "sim/base/arith.h"

namespace tpusim::chip {

std::string_view UnitName(Unit unit) {
  switch (unit) {
#define V(enumerator, name) \
  case Unit::enumerator:    \
    return name;
#include "sim/chip/unit.def"
#undef V
  }
  return "?";  // unreachable: every Unit returns above
}

CoreCost::CoreCost(const arch::ChipConfig& chip)
    : mxu_(chip),
      vpu_(chip),
      xlu_(chip),
      hbm_(chip),
      vmem_(chip),
      dma_(chip),
      kernel_start_(chip.overhead.kernel_start.value()),
      program_launch_(chip.overhead.program_launch.value()),
      pipeline_block_(chip.vmem.pipeline_block.value()),
      pipeline_step_(chip.overhead.pipeline_step.value()),
      convert_exposed_percent_(chip.mxu.convert_exposed_percent) {}

int64_t CoreCost::PipelineEdgeCycles(const CoreWork& work) const {
  if (pipeline_block_ <= 0 || work.hbm_bytes <= 0) return 0;
  const int64_t written = std::min(work.hbm_write_bytes, work.hbm_bytes);
  const int64_t read = work.hbm_bytes - written;
  return hbm_.Cycles(SatAdd(std::min(read, pipeline_block_), std::min(written, pipeline_block_)));
}

int64_t CoreCost::PipelineStepCycles(const CoreWork& work) const {
  if (pipeline_block_ <= 0 || work.hbm_bytes <= 0) return 0;
  return SatMul(CeilDiv(work.hbm_bytes, pipeline_block_), pipeline_step_);
}

int64_t CoreCost::UnitBusy(Unit unit, const CoreWork& work) const {
  switch (unit) {
    case Unit::kMxu: {
      int64_t total = 0;
      for (const MatmulWork& m : work.matmuls) total = SatAdd(total, mxu_.MatmulCycles(m));
      // The MXUs wait for the share of the kernel's f16 conversions that
      // does not overlap them: operands widened before they are pushed,
      // results rounded after they are popped.
      if (total == 0 || convert_exposed_percent_ == 0) return total;
      VectorWork convert;
      convert.cheap_ops = work.vector.convert_ops;
      return SatAdd(total, MulDivCeil(vpu_.Cycles(convert), convert_exposed_percent_, 100));
    }
    case Unit::kVpu:
      return SatAdd(vpu_.Cycles(work.vector), xlu_.Cycles(work.vector.xlu_waited_vregs));
    case Unit::kXlu:
      return xlu_.Cycles(work.vector.xlu_vregs);
    case Unit::kHbm:
      return hbm_.Cycles(work.hbm_bytes);
    case Unit::kVmem:
      return vmem_.Cycles(work.vmem_bytes);
    case Unit::kDma:
      return dma_.Cycles(work.dma_bytes, work.host_bytes);
  }
  return 0;
}

UnitCycles CoreCost::Busy(const CoreWork& work) const {
  UnitCycles cycles{};
  for (int u = 0; u < kUnitCount; ++u) cycles[u] = UnitBusy(static_cast<Unit>(u), work);
  return cycles;
}

}  // namespace tpusim::chip
