// Fused attention kernels that another backend's library provides: Transformer
// Engine's `te_fused_attn_{forward,backward}_ffi` and XLA's cuDNN calls
// (`__cudnn$fmha...`). A module compiled for GPU holds one custom call per
// attention, whose work its shapes alone do not show (the scores never reach
// memory). tpusim counts that work as TPU's own flash-attention kernel
// (jax.experimental.pallas.ops.tpu.splash_attention) counts it in its
// `pl.CostEstimate`: two products per attended (query, key) pair, one exp
// per pair, and the operands and results read and written once.
#ifndef TPUSIM_SIM_TIMING_FUSED_ATTENTION_H_
#define TPUSIM_SIM_TIMING_FUSED_ATTENTION_H_

#include <cstdint>
#include <optional>

#include "sim/hlo/instruction.h"
#include "sim/timing/kernel_cost.h"

namespace tpusim::timing {

/// One attention call's dimensions and mask.
struct AttentionWork {
  int64_t batch = 0;
  int64_t q_heads = 0;  ///< query heads: with grouped K/V heads, the products are per query head
  int64_t q_len = 0;
  int64_t kv_len = 0;
  int64_t qk_dim = 0;  ///< head dimension of queries and keys
  int64_t v_dim = 0;   ///< head dimension of values
  /// A causal mask: key j is attended by query i when j <= i + diagonal.
  bool causal = false;
  /// Key j = i + diagonal is query i's diagonal: 0 for a mask aligned to the
  /// top left, kv_len - q_len for one aligned to the bottom right.
  int64_t diagonal = 0;
  /// A sliding window: query i attends keys from i + diagonal - window_left to
  /// i + diagonal + window_right; -1 leaves that side open.
  int64_t window_left = -1;
  int64_t window_right = -1;
  /// The gradient: five products per pair (the scores recomputed, dP, dV, dQ
  /// and dK) instead of two.
  bool backward = false;
};

/// The (query, key) pairs one head of one batch element attends, in closed
/// form (lengths up to 2^31). A padding mask's true lengths are values, not
/// shapes: its maximum lengths count, an upper bound.
int64_t AttendedPairs(const AttentionWork& work);

/// FLOPs, exps and bytes of `work`; `bytes` is what the call reads and writes.
KernelCostEstimate AttentionEstimate(const AttentionWork& work, int64_t bytes);

/// The work of a fused attention custom call, from its backend config and
/// operand shapes, or nullopt when `custom_call` is none or its config lacks
/// a dimension.
std::optional<KernelCostEstimate> FusedAttentionEstimate(const hlo::HloInstruction& custom_call);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_FUSED_ATTENTION_H_
