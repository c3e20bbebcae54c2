// Structural differences between two compilations of the same program, for
// `tpusim diff`: which instructions were added or removed, and which changed
// layout, precision, collective groups, fusion boundaries or operands.
//
// Instruction names change freely between compiler releases, so nothing here
// matches by name. Instructions are matched first by a name-free signature of
// the whole computation graph beneath them (opcode, shape with layout, the
// attributes that change what is computed or how, and recursively the
// signatures of operands and called computations), then by their own local
// signature and metadata (op_name, source_file:source_line), then by opcode
// and shape. Among candidates with equal keys (identical layers), matched
// operands, then the same name, then the same position pick the pair.
// docs/diff.md gives the rules and why.
#ifndef TPUSIM_HARNESS_DIFF_MODULE_DIFF_H_
#define TPUSIM_HARNESS_DIFF_MODULE_DIFF_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/hlo/module.h"

namespace tpusim::harness {

/// What kind of structural change one StructuralChange reports.
enum class ChangeKind : uint8_t {
  kAdded,             ///< only in `after`
  kRemoved,           ///< only in `before`
  kMovedIntoFusion,   ///< an unfused instruction of `before` is inside a fusion in `after`
  kMovedOutOfFusion,  ///< a fused instruction of `before` is unfused in `after`
  kLayout,            ///< same dimensions and type, other layout, tiles or memory space
  kShape,             ///< other dimensions or element type
  kPrecision,         ///< operand_precision or algorithm of a dot or convolution
  kCollective,        ///< collective kind, replica groups, source-target pairs, reduction
  kFusion,            ///< fusion kind, or the instructions inside a fusion
  kOpcode,            ///< a matched instruction with another opcode (not a collective)
  kOperands,          ///< operands that are not the pairs of before's, in order: data flow
  kAttribute,         ///< any other attribute, or a constant's values
};

/// "added", "removed", "moved into fusion", "layout", "precision", ...
std::string_view ChangeKindName(ChangeKind kind);

/// One structural change, described for people.
struct StructuralChange {
  ChangeKind kind = ChangeKind::kAdded;
  /// One line, e.g. "added: copy f32[1024,512]{0,1} (relayout {1,0} -> {0,1} of
  /// %p.1) at after.hlo:12:3" or "precision: %dot.3 operand_precision={default,
  /// default} -> {highest,highest} at after.hlo:9:5".
  std::string description;
  /// The instruction in each module; nullptr on the side where it is absent,
  /// and on both for a change of the module header (its device counts).
  const hlo::HloInstruction* before = nullptr;
  const hlo::HloInstruction* after = nullptr;
};

/// The structural comparison of two modules.
struct ModuleDiff {
  /// In a deterministic order: by computation (entry first, then callees as
  /// reached), within one by `after` text order, removals after the rest.
  std::vector<StructuralChange> changes;
  /// Matched instructions, `before`'s -> `after`'s, over every computation
  /// reached from the entries (for pairing per-instruction costs). Keyed by
  /// address: for lookups only, never iterated into a report.
  std::map<const hlo::HloInstruction*, const hlo::HloInstruction*> matched;
};

/// Compares `before` and `after`. An equivalent rewrite (renamed
/// instructions or computations, independent instructions reordered,
/// metadata, backend_config or channel ids changed) gives no changes.
/// Computations are paired by role: the entries, then the computations that
/// matched instructions call, in attribute order.
ModuleDiff DiffModules(const hlo::HloModule& before, const hlo::HloModule& after);

/// `diff`'s changes, those that best explain a regression first (stable):
/// relayout or padding instructions added or removed, then precision,
/// collectives, shapes, layouts, fusion, other additions, other attributes.
std::vector<const StructuralChange*> ChangesByRelevance(const ModuleDiff& diff);

/// How many of them a report names as causes (tpusim diff's, a scenario's).
inline constexpr size_t kReportedCauses = 3;

/// A change as a headline names it: "+1 copy f32[...] (relayout ...)" for an
/// added instruction, "-1 ..." for a removed one, else its description; no
/// location.
std::string ChangeCause(const StructuralChange& change);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_DIFF_MODULE_DIFF_H_
