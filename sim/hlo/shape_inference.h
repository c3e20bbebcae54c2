// Shape inference: the result shape an opcode gives for its operands and
// attributes, as XLA's operation semantics define it.
#ifndef TPUSIM_SIM_HLO_SHAPE_INFERENCE_H_
#define TPUSIM_SIM_HLO_SHAPE_INFERENCE_H_

#include <span>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/attribute.h"
#include "sim/hlo/opcode.h"
#include "sim/hlo/shape.h"

namespace tpusim::hlo {

class HloComputation;
class HloInstruction;

/// Infers the result shape (without layout) of `instruction` from its opcode,
/// operand shapes and attributes. Returns Unimplemented for opcodes whose shape
/// cannot be inferred from the text (custom-call, parameter, constant, rng,
/// infeed, ...) and InvalidArgument, with a message saying which operand or
/// attribute is inconsistent, when the operands do not fit the opcode.
/// The message has no location; callers add it.
StatusOr<Shape> InferShape(const HloInstruction& instruction);

/// InferShape as if the instruction's opcode were `opcode`: the shape of the
/// operation an `X-start` async wrapper (e.g. `reduce-scatter-start`, parsed as
/// async-start wrapping reduce-scatter) computes from its operands and attributes.
StatusOr<Shape> InferShapeAs(const HloInstruction& instruction, HloOpcode opcode);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_SHAPE_INFERENCE_H_
