// Numeric comparison of two runs' outputs for `tpusim diff`, element by
// element by value::CompareLiterals: max absolute and relative error, distance
// in units in the last place, how many elements differ and how many are
// beyond tolerance.
#ifndef TPUSIM_HARNESS_DIFF_OUTPUT_DIFF_H_
#define TPUSIM_HARNESS_DIFF_OUTPUT_DIFF_H_

#include <string>

#include "sim/value/compare.h"
#include "sim/value/literal.h"

namespace tpusim::harness {

/// How one output differs between two runs: value::CompareLiterals's counts
/// and errors, `before` the reference.
struct OutputComparison : value::LiteralComparison {
  std::string name;          ///< "output_0", "device_1/output_0"
  std::string before_shape;  ///< e.g. "f32[8,128]"
  std::string after_shape;
};

/// Compares two array leaves; `compared` is false when their shapes are
/// incompatible (a structural change).
OutputComparison DiffOutput(const std::string& name, const value::Literal& before,
                            const value::Literal& after, const value::ErrorSpec& tolerance);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_DIFF_OUTPUT_DIFF_H_
