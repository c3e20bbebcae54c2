// Parsing HLO text (as XLA dumps it) into an HloModule.
#ifndef TPUSIM_SIM_HLO_PARSER_H_
#define TPUSIM_SIM_HLO_PARSER_H_

#include <memory>
#include <string_view>

#include "sim/base/status.h"
#include "sim/hlo/module.h"

namespace tpusim::hlo {

/// Parses one module. `filename` is used only in error messages, which read
/// "FILENAME:LINE:COL: error: WHAT, expected WHAT" followed by the source line
/// and a caret. Does not run the verifier (see VerifyModule); it only checks
/// what the grammar and name resolution need (operands and computations exist,
/// names are unique, counts of literal elements match shapes).
StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view filename = "<input>");

/// Parses a shape such as `bf16[8,128]{1,0:T(8,128)(2,1)}` (for tests and tools).
StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_PARSER_H_
