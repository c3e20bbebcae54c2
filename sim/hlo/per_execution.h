// A value for each execution of an instruction, by instruction: what a
// functional run saw (a loop's trip counts, a conditional's branches, a
// ragged-dot's groups), which the timing model replays. Keyed by address for
// lookup, not for listing.
#ifndef TPUSIM_SIM_HLO_PER_EXECUTION_H_
#define TPUSIM_SIM_HLO_PER_EXECUTION_H_

#include <map>

#include "sim/base/execution_series.h"
#include "sim/hlo/instruction.h"

namespace tpusim::hlo {

template <typename T>
using PerExecution = std::map<const HloInstruction*, ExecutionSeries<T>>;

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_PER_EXECUTION_H_
