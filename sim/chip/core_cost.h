// All the unit models of one TensorCore behind one call: the busy cycles each
// unit needs for one instruction's work.
#ifndef TPUSIM_SIM_CHIP_CORE_COST_H_
#define TPUSIM_SIM_CHIP_CORE_COST_H_

#include <cstdint>

#include "sim/arch/chip_config.h"
#include "sim/chip/memory.h"
#include "sim/chip/mxu.h"
#include "sim/chip/vector_unit.h"
#include "sim/chip/work.h"

namespace tpusim::chip {

class CoreCost {
 public:
  explicit CoreCost(const arch::ChipConfig& chip);

  /// Busy cycles of one unit for `work` (matmuls run one after another on the
  /// MXUs, which also wait for `mxu.convert_exposed_percent` of the f16
  /// conversions of a kernel that has matmuls).
  int64_t UnitBusy(Unit unit, const CoreWork& work) const;
  /// UnitBusy for every unit.
  UnitCycles Busy(const CoreWork& work) const;

  const Mxu& mxu() const { return mxu_; }
  const Vpu& vpu() const { return vpu_; }
  const Hbm& hbm() const { return hbm_; }
  const Vmem& vmem() const { return vmem_; }
  const Dma& dma() const { return dma_; }
  /// Fixed start-up cycles added to each kernel (`overhead.kernel_start`).
  int64_t kernel_start() const { return kernel_start_; }
  /// Fixed cycles before a program's first kernel (`overhead.program_launch`).
  int64_t program_launch() const { return program_launch_; }
  /// Cycles of `work`'s HBM stream that no unit's work hides: the first
  /// input block loaded before compute starts and the last output block
  /// stored after it ends (`vmem.pipeline_block` bytes each). 0 when
  /// pipeline_block is 0.
  int64_t PipelineEdgeCycles(const CoreWork& work) const;
  /// `overhead.pipeline_step` per block of `work`'s HBM stream: the
  /// TensorCore's wait on each block's DMA and issue of the next. It delays
  /// the TensorCore's units, not the stream, which the DMA engines keep
  /// going meanwhile. 0 when pipeline_block is 0.
  int64_t PipelineStepCycles(const CoreWork& work) const;

 private:
  Mxu mxu_;
  Vpu vpu_;
  Xlu xlu_;
  Hbm hbm_;
  Vmem vmem_;
  Dma dma_;
  int64_t kernel_start_;
  int64_t program_launch_;
  int64_t pipeline_block_;
  int64_t pipeline_step_;
  int64_t convert_exposed_percent_;
};

}  // namespace tpusim::chip

#endif  // TPUSIM_SIM_CHIP_CORE_COST_H_
