// A run's mode and numerics and their spellings, one parser each for the
// command line (--mode, --numerics) and a scenario (`mode:`, `numerics:`). In
// the scenario loader's library (tpusim_scenario), which the rest of run/
// (RunSpec, in tpusim_harness) builds on, so a scenario holds them typed.
#ifndef TPUSIM_HARNESS_RUN_RUN_NAMES_H_
#define TPUSIM_HARNESS_RUN_RUN_NAMES_H_

#include <cstdint>
#include <string_view>

#include "sim/base/status.h"
#include "sim/eval/numerics.h"

namespace tpusim::harness {

/// What a run computes: the outputs, the time on a chip, or both (the timing
/// then takes loop trip counts and branches from the values run).
enum class RunMode : uint8_t { kValues, kTiming, kFull };

/// "values", "timing" or "full": the spelling of --mode and a scenario's `mode`.
std::string_view RunModeName(RunMode mode);
/// Parses RunModeName's spellings.
StatusOr<RunMode> ParseRunMode(std::string_view text);

/// "tpu" or "ieee": the spelling of --numerics and a scenario's `numerics`.
std::string_view NumericsName(eval::Numerics numerics);
/// Parses NumericsName's spellings.
StatusOr<eval::Numerics> ParseNumerics(std::string_view text);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_RUN_NAMES_H_
