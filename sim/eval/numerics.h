// How the evaluator computes dot products, on its own so that what only names
// a numerics (the scenario loader, the command line) needs no evaluator.
#ifndef TPUSIM_SIM_EVAL_NUMERICS_H_
#define TPUSIM_SIM_EVAL_NUMERICS_H_

#include <cstdint>

namespace tpusim::eval {

/// How dot products are computed.
enum class Numerics : uint8_t {
  /// As the MXU computes: operands split into bf16 passes per the precision
  /// config, exact products, f32 accumulation in MXU tile order. The default.
  kTpu,
  /// Full-precision reference: exact operand values, products and sums in f64,
  /// rounded once to the result type.
  kIeee,
};

}  // namespace tpusim::eval

#endif  // TPUSIM_SIM_EVAL_NUMERICS_H_
