// Seeded inputs for a program's entry parameters: deterministic on every
// machine, and sensible for what each parameter feeds.
#ifndef TPUSIM_SIM_EVAL_PROGRAM_INPUTS_H_
#define TPUSIM_SIM_EVAL_PROGRAM_INPUTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/collective_groups.h"
#include "sim/hlo/module.h"
#include "sim/value/literal.h"

namespace tpusim::eval {

/// One value per entry parameter of `module`, drawn from value::Random with
/// `seed` as the key and one stream per (device, array leaf), so every device
/// of an SPMD program gets its own data and adding a parameter does not change
/// the others' values. Scalars and leaves whose sharding is replicated (or
/// maximal) are drawn once for all devices: loop bounds and branch selectors
/// must agree across devices, as on a real pod, or collectives could not
/// meet. Per element type:
///   - floats: a standard normal sample rounded once to the type;
///   - complex: real and imaginary parts each a standard normal;
///   - signed integers: uniform over [-8, 8] (clipped to the type's range);
///   - unsigned integers: uniform over [0, 16] (clipped likewise);
///   - pred: a fair coin;
///   - an integer leaf that reaches an index operand (dynamic-slice and
///     dynamic-update-slice start indices, gather and scatter indices),
///     through tuples, get-tuple-element, fusion/call/while/conditional
///     parameters and value-preserving ops: uniform over [0, B], B the
///     largest start that keeps every such slice in bounds;
///   - a ragged-all-to-all's offsets and sizes (one entry per participant of
///     this device's group under `spmd`): consistent across the group by
///     construction, every transfer in bounds, no row written twice, sizes
///     drawn from `seed` (program_inputs.cc, RaggedOperandValue).
/// Errors: kResourceExhausted when the inputs of one device would exceed
/// `max_bytes`; the errors of value::Literal::Create for unmaterialisable
/// parameter shapes.
StatusOr<std::vector<value::Literal>> SeededInputs(const hlo::HloModule& module,
                                                   const hlo::SpmdConfig& spmd, uint64_t seed,
                                                   int64_t device, int64_t max_bytes);

/// Why SeededInputs could give two devices of `module` different values:
/// the first entry parameter with an array leaf that is neither a scalar
/// nor replicated (or maximal) by its sharding; nullopt when every device
/// gets the same inputs.
std::optional<std::string> WhySeededInputsDiffer(const hlo::HloModule& module);

/// Fills every array leaf of `value` by SeededInputs' per-type rules (without
/// index bounds), drawing from value::Random(seed, stream).
void FillSeeded(value::Literal& value, uint64_t seed, uint64_t stream);

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_PROGRAM_INPUTS_H_
