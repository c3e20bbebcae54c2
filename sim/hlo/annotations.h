// Custom calls that are notes to XLA's own passes rather than work: the
// sharding hints and barriers that sharding propagation and the SPMD
// partitioner read, the layout and dynamic-bound constraints that layout
// assignment and the dynamic padder read. Those passes remove them before
// code generation, so a compiled program runs no kernel for them, and the
// value passes through (the SPMD shape conversions take the partition's view
// of it). Beside them, the calls that the dynamic padder leaves in their
// place at the edges of a dynamic shape, which do run.
#ifndef TPUSIM_SIM_HLO_ANNOTATIONS_H_
#define TPUSIM_SIM_HLO_ANNOTATIONS_H_

#include <string_view>

namespace tpusim::hlo {

/// True for Sharding, SPMDFullToShardShape, SPMDShardToFullShape,
/// ShardBarrierTo, ShardBarrierFrom, LayoutConstraint and SetBound.
bool IsCompilerAnnotation(std::string_view custom_call_target);

/// True for PadToStatic (a dynamic array to the array at its bounds and one
/// s32[] size per dimension) and SliceToDynamic (back): data movement whose
/// meaning XLA defines, timed as any kernel that reads and writes its arrays.
bool IsDynamicPadderEdge(std::string_view custom_call_target);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_ANNOTATIONS_H_
