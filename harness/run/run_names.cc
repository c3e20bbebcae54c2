#include "harness/run/run_names.h"

#include <string>

namespace tpusim::harness {

std::string_view RunModeName(RunMode mode) {
  switch (mode) {
    case RunMode::kValues:
      return "values";
    case RunMode::kTiming:
      return "timing";
    case RunMode::kFull:
      return "full";
  }
  return "unknown";
}

StatusOr<RunMode> ParseRunMode(std::string_view text) {
  for (const RunMode mode : {RunMode::kValues, RunMode::kTiming, RunMode::kFull}) {
    if (text == RunModeName(mode)) return mode;
  }
  return InvalidArgument("expected full, timing or values, got " + Quote(text));
}

std::string_view NumericsName(eval::Numerics numerics) {
  switch (numerics) {
    case eval::Numerics::kTpu:
      return "tpu";
    case eval::Numerics::kIeee:
      return "ieee";
  }
  return "unknown";
}

StatusOr<eval::Numerics> ParseNumerics(std::string_view text) {
  for (const eval::Numerics numerics : {eval::Numerics::kTpu, eval::Numerics::kIeee}) {
    if (text == NumericsName(numerics)) return numerics;
  }
  return InvalidArgument("expected tpu or ieee, got " + Quote(text));
}

}  // namespace tpusim::harness
