// What one instruction asks of the chip: a fusion is one kernel whose
// boundary operands and results cross HBM while its intermediates stay on
// chip; any other instruction is a kernel of its own. Dots and convolutions
// (fused or not) become MXU matmuls, elementwise and data-movement ops vreg
// operations, lane-changing relayouts and lane reductions transpose-unit work.
#ifndef TPUSIM_SIM_TIMING_KERNEL_COST_H_
#define TPUSIM_SIM_TIMING_KERNEL_COST_H_

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/base/status.h"
#include "sim/chip/core_cost.h"
#include "sim/chip/work.h"
#include "sim/hlo/instruction.h"
#include "sim/timing/host_memory.h"
#include "sim/timing/timing.h"

namespace tpusim::timing {

/// How an instruction occupies the TensorCore.
enum class StepKind : uint8_t {
  kFree,        ///< no work: parameter, constant, tuple, get-tuple-element, bitcast, ...
  kKernel,      ///< runs on the core; the next instruction starts when it ends
  kAsyncStart,  ///< `copy-start` and other `*-start`: hands work to the DMA engine
  kAsyncDone,   ///< `copy-done` and other `*-done`: waits for its start's work
};

/// The cost of one instruction, for the whole chip and for each TensorCore.
struct KernelCost {
  StepKind kind = StepKind::kFree;
  chip::CoreWork per_core;  ///< what each TensorCore does (megacore: its share)
  int64_t flops =
      0;  ///< whole instruction: 2 x MACs of its matmuls, plus one per vector element op
  int64_t hbm_bytes = 0;  ///< whole instruction, after granularity rounding and streaming re-reads
  int64_t pcie_bytes = 0;  ///< whole instruction: bytes to or from host memory
  bool pcie_to_host = false;  ///< its PCIe bytes go from HBM to host memory, not back
  /// The ragged-dots the kernel runs, whose group shares its cost depends on.
  std::vector<const hlo::HloInstruction*> ragged_dots;
};

/// What a custom call costs when its shapes do not show it: what a Pallas or
/// Mosaic kernel (a `tpu_custom_call`) says, `custom_call_config.cost_estimate`
/// of its backend config, which Pallas fills from the kernel's
/// `pl.CostEstimate` and XLA's scheduler reads; or a fused attention's work
/// (sim/timing/fused_attention.h), counted the same way.
struct KernelCostEstimate {
  int64_t flops = 0;
  int64_t transcendentals = 0;  ///< elementwise exp, log, tanh, ... evaluations
  int64_t bytes_accessed = 0;   ///< HBM bytes read and written
};

/// What each ragged-dot's groups held in one execution: one entry of each
/// RaggedGroupShares series.
using RaggedGroupSharesOfRun = std::map<const hlo::HloInstruction*, std::vector<int64_t>>;

/// Lowers instructions for one chip. `cores` TensorCores share each kernel:
/// the chip's TensorCores on a megacore chip, else 1.
class KernelCoster {
 public:
  /// `host_memory`: which of the module's values live in host memory.
  /// `ragged_group_shares`: what each ragged-dot's groups held in the
  /// execution costed, known from a functional run (TimingOptions's). Not
  /// owned; both must outlive the coster.
  KernelCoster(const arch::ChipConfig& chip, const HostMemory& host_memory,
               const RaggedGroupSharesOfRun* ragged_group_shares = nullptr);
  int64_t cores() const { return cores_; }
  /// The cost of `inst` as a top-level (scheduled) instruction. Errors carry
  /// no location; the caller adds it.
  StatusOr<KernelCost> Cost(const hlo::HloInstruction& inst) const;

 private:
  /// Adds the on-chip compute of one instruction (fused or not) to `work` and `flops`.
  Status AddCompute(const hlo::HloInstruction& inst, chip::CoreWork& work, int64_t& flops) const;
  /// HBM bytes of reading `operand` of `kernel` (the fusion's parameter users
  /// decide whether only slices of it are read).
  int64_t OperandReadBytes(const hlo::HloInstruction& kernel, int64_t operand_index) const;
  /// HBM bytes of one array or tuple buffer: each leaf rounded to the access
  /// granularity; VMEM leaves count nothing.
  int64_t BufferBytes(const hlo::Shape& shape) const;
  /// The VPU's conversions of f16 values at the kernel's boundary: each f16
  /// operand it reads (`read[i]` > 0) widened to f32, its f16 result(s) in
  /// `written` rounded back (vpu.f16_load_ops / f16_store_ops per vreg).
  void AddF16Conversions(const hlo::HloInstruction& kernel, std::span<const int64_t> read,
                         const hlo::Shape& written, chip::VectorWork& v) const;
  /// The work a kernel's cost estimate states, added to `whole`: its FLOPs as
  /// MXU matmul work at the full bf16 rate, its transcendentals as VPU work.
  void AddEstimatedWork(const KernelCostEstimate& estimate, chip::CoreWork& whole) const;
  /// Splits whole-kernel work over `cores_` TensorCores.
  chip::CoreWork Split(const chip::CoreWork& whole) const;
  /// What `ragged_dot`'s groups held, one entry per lhs batch index and
  /// group, or nullptr when not known (or not that many).
  const std::vector<int64_t>* SharesOf(const hlo::HloInstruction& ragged_dot) const;

  chip::CoreCost cost_;  ///< unit models, for vreg geometry, granularity and VMEM capacity
  int64_t cores_;        ///< TensorCores sharing each kernel
  int64_t mxu_rows_;     ///< contraction depth of an MXU weight tile
  int64_t mxu_columns_;  ///< output columns of one core's MXUs side by side
  const HostMemory& host_memory_;
  const RaggedGroupSharesOfRun* ragged_group_shares_;  ///< may be null
};

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_KERNEL_COST_H_
