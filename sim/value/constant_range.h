// Whether a module's float constants fit their element types. XLA's parser
// refuses a finite literal that rounds to an infinity or a NaN of its type
// (f16 70000, bf16 1e39); tpusim does too, rather than compute with an
// infinity the program never held.
#ifndef TPUSIM_SIM_VALUE_CONSTANT_RANGE_H_
#define TPUSIM_SIM_VALUE_CONSTANT_RANGE_H_

#include "sim/base/status.h"
#include "sim/hlo/module.h"

namespace tpusim::value {

/// Ok, or "FILE:LINE:COL: error: NAME: f16 constant 70000 is out of range
/// (the largest finite f16 is 65504)" at the first constant, in text order,
/// holding a value that does not fit.
Status VerifyConstantsFit(const hlo::HloModule& module);

}  // namespace tpusim::value

#endif  // TPUSIM_SIM_VALUE_CONSTANT_RANGE_H_
