// HloInstruction: one line of an HLO computation.
#ifndef TPUSIM_SIM_HLO_INSTRUCTION_H_
#define TPUSIM_SIM_HLO_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/hlo/attribute.h"
#include "sim/hlo/opcode.h"
#include "sim/hlo/shape.h"

namespace tpusim::hlo {

class HloComputation;
namespace internal {
class Parser;
}  // namespace internal

/// "FILE:LINE:COL: error: MESSAGE", the one format of every located error.
std::string FormatError(std::string_view filename, SourceLocation loc, std::string_view message);

/// The values of a `constant(...)` as written. Integers and pred are exact
/// (unsigned values are stored bit-cast in int64); real numbers are the decimal
/// text parsed to the nearest double (inf and nan included), so the value
/// library can round them to the element type exactly once.
struct ConstantLiteral {
  /// `constant({...})`: the dump left the values out.
  bool elided = false;
  /// Array of an integer or pred type: the values, row-major.
  std::vector<int64_t> ints;
  /// Array of a floating-point type: the values; complex: the real parts.
  std::vector<double> reals;
  /// Complex arrays only: the imaginary parts.
  std::vector<double> imags;
  /// Tuple constant: one literal per element.
  std::vector<ConstantLiteral> elements;
  friend bool operator==(const ConstantLiteral& a, const ConstantLiteral& b);
};

class HloInstruction {
 public:
  HloInstruction(std::string name, HloOpcode opcode, Shape shape)
      : name_(std::move(name)), opcode_(opcode), shape_(std::move(shape)) {}
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  /// Name without the `%` sigil.
  const std::string& name() const { return name_; }
  HloOpcode opcode() const { return opcode_; }
  /// For async-start/-update/-done spelled `X-start` etc. in the text (X has no
  /// async opcode of its own, e.g. `reduce-scatter-start`): X.
  std::optional<HloOpcode> async_wrapped_opcode() const { return async_wrapped_opcode_; }
  void set_async_wrapped_opcode(HloOpcode op) { async_wrapped_opcode_ = op; }
  /// The opcode as spelled in the text, e.g. "reduce-scatter-start".
  std::string OpcodeSpelling() const;

  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }

  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  /// Appends an operand and records this instruction as its user.
  void AppendOperand(HloInstruction* operand);
  void ReserveOperands(size_t n) { operands_.reserve(n); }
  /// Instructions that use this one as an operand, in the order they were added
  /// (an instruction using it twice appears once).
  const std::vector<HloInstruction*>& users() const { return users_; }

  /// Extra ordering edges from `control-predecessors={...}`.
  const std::vector<HloInstruction*>& control_predecessors() const { return control_predecessors_; }
  void AddControlPredecessor(HloInstruction* predecessor) { control_predecessors_.push_back(predecessor); }

  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* parent) { parent_ = parent; }
  /// True when this is its computation's ROOT.
  bool IsRoot() const;

  /// Dense id, unique within the module, in text order; usable as an index.
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  SourceLocation location() const { return location_; }
  void set_location(SourceLocation loc) { location_ = loc; }

  /// kParameter: the parameter number.
  int64_t parameter_number() const { return parameter_number_; }
  void set_parameter_number(int64_t n) { parameter_number_ = n; }

  /// kConstant: the literal.
  const ConstantLiteral& literal() const { return *literal_; }
  bool has_literal() const { return literal_ != nullptr; }
  void set_literal(ConstantLiteral literal) { literal_ = std::make_unique<ConstantLiteral>(std::move(literal)); }

  // --- attributes -----------------------------------------------------------
  /// All attributes in text order.
  const std::vector<Attribute>& attributes() const { return attributes_; }
  std::vector<Attribute>& mutable_attributes() { return attributes_; }
  /// The attribute with this id, or nullptr.
  const Attribute* FindAttribute(AttrId id) const;
  /// An unknown attribute by spelling, or nullptr.
  const Attribute* FindUnknownAttribute(std::string_view name) const;
  /// Typed value of a known attribute, or nullptr when absent.
  template <typename T>
  const T* GetAttr(AttrId id) const {
    const Attribute* a = FindAttribute(id);
    return a ? std::get_if<T>(&a->value) : nullptr;
  }
  /// Where attribute `id` was written; the instruction's location when it is
  /// absent or no text wrote it.
  SourceLocation AttributeLocation(AttrId id) const;

  /// `dimensions={...}`; empty when absent.
  std::span<const int64_t> dimensions() const;
  /// Int attribute or nullopt (channel_id, index, feature_group_count, ...).
  std::optional<int64_t> int_attr(AttrId id) const;
  /// Bool attribute, `fallback` when absent.
  bool bool_attr(AttrId id, bool fallback = false) const;
  /// Ident or string attribute (direction, kind, custom_call_target, ...); "" when absent.
  std::string_view string_attr(AttrId id) const;
  /// `to_apply=` (reduce, map, sort, all-reduce, scatter, ...) or nullptr.
  HloComputation* to_apply() const;
  /// The computation attribute `id` names (`body=`, `condition=`, `calls=`,
  /// ...): a single one or the first of a list; nullptr when absent or empty.
  HloComputation* called_computation(AttrId id) const;
  /// Every computation this instruction calls, in attribute order.
  std::vector<HloComputation*> called_computations() const;
  const Window* window() const;
  const ConvolutionDimensionNumbers* convolution_dimension_numbers() const;
  const ReplicaGroups* replica_groups() const;
  const Sharding* sharding() const;
  /// `metadata={...}` fields; empty when absent.
  std::span<const KeyValue> metadata() const;
  /// One metadata field's value ("" when absent), e.g. "op_name".
  std::string_view metadata_field(std::string_view key) const;

 private:
  /// The parser builds an instruction in place (shape first, then opcode).
  friend class internal::Parser;

  std::string name_;
  HloOpcode opcode_;
  /// Set only for the `X-start` spelling of an async wrapper; see accessor.
  std::optional<HloOpcode> async_wrapped_opcode_;
  Shape shape_;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloInstruction*> control_predecessors_;
  std::vector<Attribute> attributes_;
  HloComputation* parent_ = nullptr;
  int64_t unique_id_ = -1;
  int64_t parameter_number_ = -1;
  std::unique_ptr<ConstantLiteral> literal_;
  SourceLocation location_;
};

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_INSTRUCTION_H_
