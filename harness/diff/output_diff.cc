#include "harness/diff/output_diff.h"

namespace tpusim::harness {

OutputComparison DiffOutput(const std::string& name, const value::Literal& before,
                            const value::Literal& after, const value::ErrorSpec& tolerance) {
  OutputComparison result;
  static_cast<value::LiteralComparison&>(result) = value::CompareLiterals(before, after, tolerance);
  result.name = name;
  result.before_shape = before.ShapeString();
  result.after_shape = after.ShapeString();
  return result;
}

}  // namespace tpusim::harness
