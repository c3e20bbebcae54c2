// Printing an HloModule back to HLO text.
#ifndef TPUSIM_SIM_HLO_PRINTER_H_
#define TPUSIM_SIM_HLO_PRINTER_H_

#include <string>

#include "sim/hlo/module.h"

namespace tpusim::hlo {

/// Canonical HLO text of a module: `%`-prefixed names, operand names without
/// inline shapes, computation signatures, one instruction per line, attributes
/// in the order they were parsed. ParseHloModule(PrintModule(m)) is equal to m,
/// and printing that again gives the same bytes.
std::string PrintModule(const HloModule& module);

/// One instruction as it appears in PrintModule, without indentation or newline.
std::string PrintInstruction(const HloInstruction& instruction);

/// The value of one attribute as PrintInstruction writes it after `name=`
/// (computations by name), e.g. `{highest,default}` for operand_precision.
std::string PrintAttributeValue(const Attribute& attribute);

/// The values of a constant as PrintInstruction writes them inside
/// `constant(...)`, for an instruction of shape `shape`.
std::string PrintConstantLiteral(const ConstantLiteral& literal, const Shape& shape);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_PRINTER_H_
