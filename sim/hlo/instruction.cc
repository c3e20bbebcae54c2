#include "sim/hlo/instruction.h"

#include <algorithm>
#include <bit>

#include "sim/base/printable.h"
#include "sim/hlo/computation.h"

namespace tpusim::hlo {

std::string FormatError(std::string_view filename, SourceLocation loc, std::string_view message) {
  std::string out = Printable(filename);  // a file name may hold any byte
  out += ':';
  out += std::to_string(loc.line);
  out += ':';
  out += std::to_string(loc.column);
  out += ": error: ";
  out += message;
  return out;
}
namespace {

/// Bitwise, so that a NaN equals itself and 0.0 differs from -0.0: IR equality
/// means "prints the same", not numeric equality.
bool SameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](double x, double y) {
    return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
  });
}

}  // namespace

bool operator==(const ConstantLiteral& a, const ConstantLiteral& b) {
  return a.elided == b.elided && a.ints == b.ints && SameBits(a.reals, b.reals) &&
         SameBits(a.imags, b.imags) && a.elements == b.elements;
}

std::string HloInstruction::OpcodeSpelling() const {
  const std::string_view base = HloOpcodeName(opcode_);
  if (!async_wrapped_opcode_) return std::string(base);
  std::string_view suffix;
  switch (OpRoleOf(opcode_)) {
    case OpRole::kAsyncStart:
      suffix = "-start";
      break;
    case OpRole::kAsyncUpdate:
      suffix = "-update";
      break;
    case OpRole::kAsyncDone:
      suffix = "-done";
      break;
    case OpRole::kCompute:
    case OpRole::kBookkeeping:
    case OpRole::kControlFlow:
    case OpRole::kHostTransfer:
      return std::string(base);
  }
  std::string spelling(HloOpcodeName(*async_wrapped_opcode_));
  spelling += suffix;
  return spelling;
}

void HloInstruction::AppendOperand(HloInstruction* operand) {
  // This instruction is already among the operand's users exactly when it
  // already has it as an operand; scanning our own (short) operand list avoids
  // scanning the operand's possibly long user list.
  const bool already_user =
      std::find(operands_.begin(), operands_.end(), operand) != operands_.end();
  operands_.push_back(operand);
  if (already_user) return;
  // The smallest heap block holds three pointers anyway: start there rather
  // than reallocating at the second and third user.
  if (operand->users_.capacity() == 0) operand->users_.reserve(3);
  operand->users_.push_back(this);
}

bool HloInstruction::IsRoot() const { return parent_ != nullptr && parent_->root() == this; }

const Attribute* HloInstruction::FindAttribute(AttrId id) const {
  for (const Attribute& a : attributes_) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

const Attribute* HloInstruction::FindUnknownAttribute(std::string_view name) const {
  for (const Attribute& a : attributes_) {
    if (a.id == AttrId::kUnknown && a.unknown_name == name) return &a;
  }
  return nullptr;
}

std::span<const int64_t> HloInstruction::dimensions() const {
  const auto* dims = GetAttr<std::vector<int64_t>>(AttrId::kDimensions);
  return dims ? std::span<const int64_t>(*dims) : std::span<const int64_t>();
}

std::optional<int64_t> HloInstruction::int_attr(AttrId id) const {
  const auto* v = GetAttr<int64_t>(id);
  return v ? std::optional<int64_t>(*v) : std::nullopt;
}

bool HloInstruction::bool_attr(AttrId id, bool fallback) const {
  const auto* v = GetAttr<bool>(id);
  return v ? *v : fallback;
}

std::string_view HloInstruction::string_attr(AttrId id) const {
  const auto* v = GetAttr<std::string>(id);
  return v ? std::string_view(*v) : std::string_view();
}

SourceLocation HloInstruction::AttributeLocation(AttrId id) const {
  const Attribute* a = FindAttribute(id);
  return a != nullptr && a->location.line != 0 ? a->location : location_;
}

HloComputation* HloInstruction::to_apply() const { return called_computation(AttrId::kToApply); }

HloComputation* HloInstruction::called_computation(AttrId id) const {
  if (const auto* c = GetAttr<HloComputation*>(id)) return *c;
  if (const auto* list = GetAttr<ComputationList>(id)) {
    if (!list->computations.empty()) return list->computations.front();
  }
  return nullptr;
}

std::vector<HloComputation*> HloInstruction::called_computations() const {
  std::vector<HloComputation*> called;
  for (const Attribute& a : attributes_) {
    if (const auto* c = std::get_if<HloComputation*>(&a.value)) {
      called.push_back(*c);
    } else if (const auto* list = std::get_if<ComputationList>(&a.value)) {
      called.insert(called.end(), list->computations.begin(), list->computations.end());
    }
  }
  return called;
}

const Window* HloInstruction::window() const {
  const auto* v = GetAttr<Box<Window>>(AttrId::kWindow);
  return v ? &**v : nullptr;
}

const ConvolutionDimensionNumbers* HloInstruction::convolution_dimension_numbers() const {
  const auto* v = GetAttr<Box<ConvolutionDimensionNumbers>>(AttrId::kDimLabels);
  return v ? &**v : nullptr;
}

const ReplicaGroups* HloInstruction::replica_groups() const {
  const auto* v = GetAttr<Box<ReplicaGroups>>(AttrId::kReplicaGroups);
  return v ? &**v : nullptr;
}

const Sharding* HloInstruction::sharding() const {
  const auto* v = GetAttr<Box<Sharding>>(AttrId::kSharding);
  return v ? &**v : nullptr;
}

std::span<const KeyValue> HloInstruction::metadata() const {
  const auto* v = GetAttr<std::vector<KeyValue>>(AttrId::kMetadata);
  return v ? std::span<const KeyValue>(*v) : std::span<const KeyValue>();
}

std::string_view HloInstruction::metadata_field(std::string_view key) const {
  for (const KeyValue& kv : metadata()) {
    if (kv.key == key) return kv.value;
  }
  return {};
}

}  // namespace tpusim::hlo
