// Small questions timing asks of the HLO graph: how an instruction occupies a
// core, how many times a while loop runs when its bounds are constants, and
// what a compiled kernel says it costs.
#ifndef TPUSIM_SIM_TIMING_HLO_HELPERS_H_
#define TPUSIM_SIM_TIMING_HLO_HELPERS_H_

#include <cstdint>
#include <optional>

#include "sim/base/status.h"
#include "sim/hlo/attribute.h"
#include "sim/hlo/computation.h"
#include "sim/hlo/instruction.h"
#include "sim/timing/kernel_cost.h"

namespace tpusim::timing {

/// kFree for instructions that do no work of their own (parameter, constant,
/// tuple, get-tuple-element, bitcast, token and id ops, control flow handled
/// by the caller, host transfers), kAsyncStart / kAsyncDone for the halves of
/// asynchronous pairs (`copy-start`, `*-start`, `send`, `recv`, and their
/// `-done`s), kKernel for everything else.
StepKind StepKindOf(const hlo::HloInstruction& inst);

/// The trip count of a while loop when it can be read off the program:
/// `backend_config` `known_trip_count`, or the usual counted loop — a
/// condition `compare(get-tuple-element(param, i), constant(N))` with
/// direction LT, LE, GT or GE (either operand order) on an integer counter, a
/// constant initial value of element i in the while's tuple operand, and a
/// body whose root tuple element i is `add(get-tuple-element(param, i),
/// constant(step))`. The counter wraps around its type as XLA's add does.
/// nullopt when the loop is not recognised; an error (without location) when
/// it is a counted loop that never ends, counts 2^63 iterations or more, or
/// has a 32- or 64-bit counter that wraps before the loop ends.
StatusOr<std::optional<int64_t>> KnownTripCount(const hlo::HloInstruction& while_inst);

/// The cost estimate of a custom call: a fused attention's work
/// (FusedAttentionEstimate), else what a Pallas kernel's config states; or
/// nullopt when it has neither (or a stated one whose fields are not
/// non-negative integers: a kernel says nothing then, rather than something
/// wrong).
std::optional<KernelCostEstimate> CustomCallCostEstimate(const hlo::HloInstruction& custom_call);

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_HLO_HELPERS_H_
