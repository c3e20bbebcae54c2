// HloModule: the computations of one program plus the header attributes.
#ifndef TPUSIM_SIM_HLO_MODULE_H_
#define TPUSIM_SIM_HLO_MODULE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/hlo/computation.h"

namespace tpusim::hlo {

/// Path to a leaf of a tuple-shaped value: `{}` is the whole value, `{1,0}`
/// element 0 of element 1.
using ShapeIndex = std::vector<int64_t>;

/// `entry_computation_layout={(p0, p1)->result}`.
struct ComputationLayout {
  std::vector<Shape> parameters;
  Shape result;
  friend bool operator==(const ComputationLayout&, const ComputationLayout&) = default;
};

/// One entry of `input_output_alias={ {out}: (param, {index}, kind) }`.
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  /// "may-alias", "must-alias", or "" when not printed.
  std::string kind;
  friend bool operator==(const InputOutputAlias&, const InputOutputAlias&) = default;
};

/// One entry of `buffer_donor={ (param, {index}) }`.
struct BufferDonor {
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  friend bool operator==(const BufferDonor&, const BufferDonor&) = default;
};

/// The JAX stack-frame tables printed between the header and the computations.
/// Instructions refer to frames with `metadata={stack_frame_id=N}`.
struct StackFrameTables {
  struct Entry {
    int64_t id = 0;
    /// FileNames/FunctionNames: the string. FileLocations/StackFrames: the
    /// fields, e.g. file_name_id=1 line=13.
    std::string text;
    std::vector<KeyValue> fields;
    friend bool operator==(const Entry&, const Entry&) = default;
  };
  std::vector<Entry> file_names;
  std::vector<Entry> function_names;
  std::vector<Entry> file_locations;
  std::vector<Entry> stack_frames;
  bool empty() const {
    return file_names.empty() && function_names.empty() && file_locations.empty() &&
           stack_frames.empty();
  }
  friend bool operator==(const StackFrameTables&, const StackFrameTables&) = default;
};

/// Header attributes of `HloModule name, a=b, ...`. Every attribute keeps its
/// presence (an absent `replica_count` is not the same text as `replica_count=1`)
/// and `order` keeps the sequence in which they were written.
struct ModuleHeader {
  std::optional<bool> is_scheduled;
  std::optional<ComputationLayout> entry_computation_layout;
  std::optional<std::vector<InputOutputAlias>> input_output_alias;
  std::optional<std::vector<BufferDonor>> buffer_donor;
  std::optional<bool> alias_passthrough_params;
  std::optional<int64_t> replica_count;
  std::optional<int64_t> num_partitions;
  std::optional<std::vector<bool>> allow_spmd_sharding_propagation_to_parameters;
  std::optional<std::vector<bool>> allow_spmd_sharding_propagation_to_output;
  std::optional<std::vector<KeyValue>> frontend_attributes;
  /// Attributes tpusim does not know, by name, with their text verbatim.
  std::map<std::string, std::string> unknown;
  /// Attribute names in the order written.
  std::vector<std::string> order;
  friend bool operator==(const ModuleHeader&, const ModuleHeader&) = default;
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  /// Computations in text order (callees before callers in real dumps).
  const std::vector<std::unique_ptr<HloComputation>>& computations() const { return computations_; }
  HloComputation* AddComputation(std::unique_ptr<HloComputation> computation);
  /// The computation with this name, or nullptr.
  HloComputation* FindComputation(std::string_view name) const;
  /// Gives `computation` (of this module) a name no other computation has.
  void RenameComputation(HloComputation& computation, std::string name);

  /// The ENTRY computation (the last one when no computation says ENTRY).
  HloComputation* entry() const { return entry_; }
  void set_entry(HloComputation* entry) { entry_ = entry; }
  /// True when the text marked the entry with the ENTRY keyword.
  bool entry_keyword() const { return entry_keyword_; }
  void set_entry_keyword(bool b) { entry_keyword_ = b; }

  const ModuleHeader& header() const { return header_; }
  ModuleHeader& mutable_header() { return header_; }
  int64_t replica_count() const { return header_.replica_count.value_or(1); }
  int64_t num_partitions() const { return header_.num_partitions.value_or(1); }
  bool is_scheduled() const { return header_.is_scheduled.value_or(false); }

  const StackFrameTables& stack_frames() const { return stack_frames_; }
  StackFrameTables& mutable_stack_frames() { return stack_frames_; }

  /// File the module was read from, for error messages ("<input>" when none).
  const std::string& filename() const { return filename_; }
  void set_filename(std::string f) { filename_ = std::move(f); }

  /// Total number of instructions over all computations.
  int64_t instruction_count() const { return instruction_count_; }
  /// Assigns dense unique ids in text order; the parser calls it once.
  void AssignUniqueIds();

  /// "FILE:LINE:COL: error: MESSAGE" for a problem at `loc`.
  std::string ErrorAt(SourceLocation loc, std::string_view message) const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> computations_;
  std::map<std::string, HloComputation*, std::less<>> computations_by_name_;
  HloComputation* entry_ = nullptr;
  bool entry_keyword_ = false;
  ModuleHeader header_;
  StackFrameTables stack_frames_;
  std::string filename_ = "<input>";
  int64_t instruction_count_ = 0;
};

/// Structural equality of two modules: names, header, computations,
/// instructions (opcode, shape with layout, operands and control predecessors
/// by name, attributes, literals). Source locations are ignored. On a
/// difference, returns false and describes the first one in `*why` if given.
bool ModulesEqual(const HloModule& a, const HloModule& b, std::string* why = nullptr);

/// How deep computations may call one another (a call in a fusion in a while
/// body is three; a fusion fused into another is one level more). The
/// evaluator and the timing model walk the same programs and refuse deeper
/// nesting with the same located error, rather than overflow their stacks.
inline constexpr int64_t kMaxCallDepth = 64;

/// What follows "FILE:LINE:COL: error: NAME: " for a computation nested
/// deeper than kMaxCallDepth.
std::string CallsNestTooDeeply();

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_MODULE_H_
