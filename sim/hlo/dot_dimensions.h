// Which dimensions of a dot operand are which: one definition for shape
// inference (the result's dimensions), the evaluator (the index of each free
// element) and the timing model (the matmul's rows and columns).
#ifndef TPUSIM_SIM_HLO_DOT_DIMENSIONS_H_
#define TPUSIM_SIM_HLO_DOT_DIMENSIONS_H_

#include <cstdint>
#include <span>
#include <vector>

namespace tpusim::hlo {

/// The dimensions of a dot operand of rank `rank` that are neither batch nor
/// contracting (the lhs's rows, the rhs's columns), in increasing order.
/// Entries of `batch` or `contracting` outside [0, rank) are ignored.
std::vector<int64_t> DotFreeDimensions(int64_t rank, std::span<const int64_t> batch,
                                       std::span<const int64_t> contracting);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_DOT_DIMENSIONS_H_
