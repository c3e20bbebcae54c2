// A run's mode and numerics and their spellings, and where its devices sit
// on a network, one parser each for the command line (--mode, --numerics,
// --placement) and a scenario (`mode:`, `numerics:`, `placement:`). In
// the scenario loader's library (tpusim_scenario), which the rest of run/
// (RunSpec, in tpusim_harness) builds on, so a scenario holds them typed.
#ifndef TPUSIM_HARNESS_RUN_RUN_NAMES_H_
#define TPUSIM_HARNESS_RUN_RUN_NAMES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

/// The non-negative integer `text` spells in decimal, or -1 (also when it
/// does not fit in 64 bits).
int64_t NonNegativeInteger(std::string_view text);

/// `--placement` and a scenario's `placement`: "0-7", "0,2,4,6", "0-3,8-11":
/// network device numbers, ascending ranges, in the program's device order.
/// `what` starts errors.
StatusOr<std::vector<int64_t>> ParsePlacement(std::string_view text, const std::string& what);
/// A placement as ParsePlacement reads it, runs of consecutive devices as ranges: "0-3,8-11".
std::string PlacementText(const std::vector<int64_t>& placement);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_RUN_NAMES_H_
