// Structural and shape checks on a parsed HloModule.
#ifndef TPUSIM_SIM_HLO_VERIFIER_H_
#define TPUSIM_SIM_HLO_VERIFIER_H_

#include "sim/base/status.h"
#include "sim/hlo/module.h"

namespace tpusim::hlo {

/// Checks what the parser does not: operand counts per opcode, attributes each
/// opcode requires, shapes against shape inference for every opcode with
/// defined inference, called computations' signatures, parameter numbering,
/// that neither data nor control edges form a cycle, and that the device ids
/// collectives name exist when the header states the counts. The first problem is
/// returned as "FILE:LINE:COL: error: ..." at the offending instruction.
Status VerifyModule(const HloModule& module);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_VERIFIER_H_
