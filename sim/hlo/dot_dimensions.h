// Which dimensions of a dot operand are which: one definition for shape
// inference (the result's dimensions), the evaluator (the index of each free
// element) and the timing model (the matmul's rows and columns). The same for
// ragged-dot, whose lhs ragged dimension splits the product into groups.
#ifndef TPUSIM_SIM_HLO_DOT_DIMENSIONS_H_
#define TPUSIM_SIM_HLO_DOT_DIMENSIONS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/instruction.h"
#include "sim/hlo/shape.h"

namespace tpusim::hlo {

/// The dimensions of a dot operand of rank `rank` that are neither batch nor
/// contracting (the lhs's rows, the rhs's columns), in increasing order.
/// Entries of `batch` or `contracting` outside [0, rank) are ignored.
std::vector<int64_t> DotFreeDimensions(int64_t rank, std::span<const int64_t> batch,
                                       std::span<const int64_t> contracting);

/// What kind of lhs dimension a ragged-dot's ragged dimension is, which
/// decides what its groups do (XLA's three modes of ragged-dot):
/// - kNonContracting: a free (row) dimension. Row r of group g (the rows
///   from the sum of the sizes before g, up to that sum plus g's size) is
///   multiplied by group g of the rhs (its rhs_group_dims dimension); rows
///   past the last group are zero. [b,m,k] x [g,b,k,n] -> [b,m,n].
/// - kContracting: a contracting dimension. Result g is the product over
///   group g's range of that dimension only. [b,m,k] x [b,k,n] -> [g,b,m,n].
/// - kBatch: a batch dimension. The groups change nothing: a dot.
enum class RaggedDotMode { kNonContracting, kContracting, kBatch };

/// A ragged-dot's dimensions, resolved against its operand shapes.
struct RaggedDotDimensions {
  RaggedDotMode mode = RaggedDotMode::kBatch;
  int64_t lhs_ragged = 0;  ///< the lhs ragged dimension
  int64_t rhs_group = -1;  ///< the rhs group dimension (kNonContracting), else -1
  int64_t groups = 0;      ///< group_sizes' last dimension
  /// The rhs dimensions that are neither batch, contracting nor the group
  /// dimension, in increasing order: the result's last dimensions.
  std::vector<int64_t> rhs_free;
  /// The lhs dimensions that index group_sizes before its group dimension, in
  /// its order: the batch dimensions, then the free (kNonContracting) or
  /// contracting (kContracting) dimensions before the ragged one; for
  /// kBatch the batch dimensions before it. Empty when group_sizes is [g]:
  /// one set of sizes for every row.
  std::vector<int64_t> group_sizes_lhs_dims;
};

/// Resolves a ragged-dot of `lhs` x `rhs` with `group_sizes` and its
/// dimension numbers (lb, lc, rb, rc: batch and contracting; lhs_ragged,
/// rhs_group). InvalidArgument, saying what is wrong, unless there is exactly
/// one ragged dimension, the rhs has a group dimension exactly in
/// kNonContracting mode (of size g), and group_sizes is an integer array
/// [g] or [lhs sizes of group_sizes_lhs_dims..., g]. The batch and
/// contracting dimensions themselves are checked as a dot's are.
StatusOr<RaggedDotDimensions> ResolveRaggedDot(
    const Shape& lhs, const Shape& rhs, const Shape& group_sizes, std::span<const int64_t> lb,
    std::span<const int64_t> lc, std::span<const int64_t> rb, std::span<const int64_t> rc,
    std::span<const int64_t> lhs_ragged, std::span<const int64_t> rhs_group);
/// The same for a ragged-dot instruction: its operands' shapes and its
/// dimension-number attributes (absent ones empty).
StatusOr<RaggedDotDimensions> ResolveRaggedDot(const HloInstruction& ragged_dot);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_DOT_DIMENSIONS_H_
