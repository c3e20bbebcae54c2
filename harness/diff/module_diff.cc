#include "harness/diff/module_diff.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <utility>

#include "sim/hlo/ffi_attributes.h"
#include "sim/hlo/printer.h"
#include "sim/value/literal.h"

namespace tpusim::harness {
namespace {

/// A constant's values as its element type holds them, printed: real numbers
/// written with more digits than the type keeps (1.00000001 for an f32 1)
/// round as the evaluator rounds them, so two spellings of one value are one
/// value. Other constants print as written.
std::string ConstantValues(const hlo::HloInstruction& constant) {
  const hlo::ConstantLiteral& literal = constant.literal();
  const hlo::Shape& shape = constant.shape();
  if (!shape.IsArray() || !hlo::IsFloatingPoint(shape.element_type()) || literal.elided ||
      static_cast<int64_t>(literal.reals.size()) != shape.element_count()) {
    return hlo::PrintConstantLiteral(literal, shape);
  }
  const value::Literal typed = value::Literal::CreateR1(shape.element_type(), literal.reals);
  hlo::ConstantLiteral held = literal;
  for (size_t i = 0; i < held.reals.size(); ++i) {
    held.reals[i] = typed.GetAsDouble(static_cast<int64_t>(i));
  }
  return hlo::PrintConstantLiteral(held, shape);
}

using hlo::AttrId;
using hlo::AttrKind;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloModule;

/// Attributes that say nothing about what an instruction computes: compiler
/// bookkeeping that changes between releases for the same program. Their
/// effect on time, if any, shows in the performance comparison. (A typed-FFI
/// custom call's backend_config is the exception: SignatureTable::Attributes
/// compares its arguments.)
bool IgnoredAttribute(AttrId id) {
  return id == AttrId::kMetadata || id == AttrId::kBackendConfig || id == AttrId::kChannelId ||
         id == AttrId::kFrontendAttributes;
}

/// Attributes naming computations; their signatures stand in for the names.
bool IsComputationAttribute(const hlo::Attribute& attribute) {
  return attribute.kind() == AttrKind::kComputation ||
         attribute.kind() == AttrKind::kComputationList;
}

/// Interns signature strings of both modules into shared dense ids, so equal
/// ids mean equal structure (exactly: no hashing, no collisions).
class SignatureTable {
 public:
  int64_t Intern(std::string key) {
    const auto [it, inserted] = ids_.emplace(std::move(key), static_cast<int64_t>(ids_.size()));
    return it->second;
  }

 private:
  std::map<std::string, int64_t> ids_;
};

/// The signatures of one module's instructions (by unique id) and computations.
class ModuleSignatures {
 public:
  ModuleSignatures(SignatureTable& table, const HloModule& module)
      : table_(table),
        local_(static_cast<size_t>(module.instruction_count()), -1),
        full_(static_cast<size_t>(module.instruction_count()), -1),
        expanded_(static_cast<size_t>(module.instruction_count()), false) {
    for (const auto& computation : module.computations()) Computation(*computation);
  }

  /// The instruction alone: opcode, shape with layout, parameter number,
  /// constant values and attributes (called computations by signature).
  int64_t local(const HloInstruction& inst) const { return local_[inst.unique_id()]; }
  /// The instruction with everything it depends on (operands, recursively).
  int64_t full(const HloInstruction& inst) const { return full_[inst.unique_id()]; }
  int64_t computation(const HloComputation* c) const {
    const auto it = computations_.find(c);
    return it == computations_.end() ? -1 : it->second;
  }

  /// Attribute spelling -> value text (computations as signatures), sorted by
  /// spelling so that attribute order in the text does not matter.
  std::map<std::string, std::string> Attributes(const HloInstruction& inst) {
    std::map<std::string, std::string> attributes;
    for (const hlo::Attribute& attribute : inst.attributes()) {
      if (attribute.id == AttrId::kBackendConfig) AddFfiArguments(inst, attributes);
      if (IgnoredAttribute(attribute.id)) continue;
      std::string value;
      if (IsComputationAttribute(attribute)) {
        for (const HloComputation* callee : CalledBy(attribute)) {
          value += 'c' + std::to_string(Computation(*callee)) + ' ';
        }
      } else {
        std::optional<std::string> meaning = Meaning(attribute);
        if (!meaning) continue;
        value = std::move(*meaning);
      }
      attributes.emplace(std::string(attribute.spelling()), std::move(value));
    }
    return attributes;
  }

 private:
  /// A typed-FFI custom call's backend_config holds its arguments, not the
  /// compiler's notes (an attention's mask and lengths, say): each one is an
  /// attribute `backend_config.NAME`.
  static void AddFfiArguments(const HloInstruction& inst,
                              std::map<std::string, std::string>& attributes) {
    if (inst.opcode() != hlo::HloOpcode::kCustomCall) return;
    const auto* config = inst.GetAttr<hlo::BackendConfig>(AttrId::kBackendConfig);
    if (config == nullptr || config->is_string) return;
    const std::optional<hlo::FfiAttributes> arguments = hlo::ParseFfiAttributes(config->text);
    if (!arguments) return;
    for (const auto& [name, value] : *arguments)
      attributes.emplace("backend_config." + name, value);
  }

  /// `attribute`'s value as it means rather than as it is written: replica
  /// groups as lists (the iota form expanded), source-target pairs as a set
  /// (XLA reads a collective-permute's pairs as one), and nullopt for a
  /// value that means what its absence does: every operand_precision
  /// default, a feature or batch group count of 1, no replica groups (every
  /// replica in one).
  static std::optional<std::string> Meaning(const hlo::Attribute& attribute) {
    if (const auto* precisions = std::get_if<std::vector<std::string>>(&attribute.value);
        precisions && attribute.id == AttrId::kOperandPrecision &&
        std::all_of(precisions->begin(), precisions->end(),
                    [](const std::string& p) { return p == "default"; })) {
      return std::nullopt;
    }
    if (const auto* count = std::get_if<int64_t>(&attribute.value);
        count && *count == 1 &&
        (attribute.id == AttrId::kFeatureGroupCount || attribute.id == AttrId::kBatchGroupCount)) {
      return std::nullopt;
    }
    if (const auto* groups = std::get_if<hlo::Box<hlo::ReplicaGroups>>(&attribute.value)) {
      const hlo::ReplicaGroups& g = **groups;
      if (g.groups.empty() && !g.iota && g.mesh_text.empty()) return std::nullopt;
      // An iota form that did not expand (groups empty) stays as written.
      if (!g.iota || g.groups.empty()) return hlo::PrintAttributeValue(attribute);
      hlo::Attribute listed = attribute;
      (*std::get<hlo::Box<hlo::ReplicaGroups>>(listed.value)).iota.reset();
      return hlo::PrintAttributeValue(listed);
    }
    if (attribute.id == AttrId::kSourceTargetPairs) {
      hlo::Attribute sorted = attribute;
      if (auto* pairs = std::get_if<std::vector<std::pair<int64_t, int64_t>>>(&sorted.value)) {
        std::sort(pairs->begin(), pairs->end());
      }
      return hlo::PrintAttributeValue(sorted);
    }
    return hlo::PrintAttributeValue(attribute);
  }

  static std::vector<const HloComputation*> CalledBy(const hlo::Attribute& attribute) {
    if (const auto* one = std::get_if<HloComputation*>(&attribute.value)) return {*one};
    if (const auto* list = std::get_if<hlo::ComputationList>(&attribute.value)) {
      return {list->computations.begin(), list->computations.end()};
    }
    return {};
  }

  int64_t Computation(const HloComputation& c) {
    const auto it = computations_.find(&c);
    if (it != computations_.end()) return it->second;
    // A call cycle (which the verifier rejects) must still end.
    computations_[&c] = table_.Intern("cycle");
    for (const auto& inst : c.instructions()) {
      std::string key = inst->OpcodeSpelling() + ' ';
      hlo::AppendShape(inst->shape(), /*print_layout=*/true, key);
      if (inst->opcode() == hlo::HloOpcode::kParameter) {
        key += " param=" + std::to_string(inst->parameter_number());
      }
      if (inst->has_literal()) key += " value=" + ConstantValues(*inst);
      for (const auto& [name, value] : Attributes(*inst)) key += ' ' + name + '=' + value;
      local_[inst->unique_id()] = table_.Intern(std::move(key));
    }
    for (const auto& inst : c.instructions()) FullSignatures(*inst);
    std::string key = "computation params=" + std::to_string(c.parameter_count());
    for (const HloInstruction* p : c.parameters()) {
      key += ' ' + std::to_string(p == nullptr ? -1 : local_[p->unique_id()]);
    }
    key += " root=" + std::to_string(c.root() == nullptr ? -1 : full_[c.root()->unique_id()]);
    const int64_t id = table_.Intern(std::move(key));
    computations_[&c] = id;
    return id;
  }

  /// Full signatures of `start` and its operands, depth first without
  /// recursion (chains of thousands of instructions are common).
  void FullSignatures(const HloInstruction& start) {
    std::vector<const HloInstruction*> stack{&start};
    while (!stack.empty()) {
      const HloInstruction* top = stack.back();
      if (full_[top->unique_id()] >= 0) {
        stack.pop_back();
        continue;
      }
      expanded_[top->unique_id()] = true;
      bool pending = false;
      for (const HloInstruction* operand : top->operands()) {
        // Expanded but unfinished means it reaches `top`: a cycle, which the
        // verifier rejects; skip it rather than loop.
        if (full_[operand->unique_id()] < 0 && !expanded_[operand->unique_id()]) {
          stack.push_back(operand);
          pending = true;
        }
      }
      if (pending) continue;
      std::string key = "L" + std::to_string(local_[top->unique_id()]) + '(';
      for (const HloInstruction* operand : top->operands()) {
        key += std::to_string(full_[operand->unique_id()]) + ',';
      }
      key += ')';
      full_[top->unique_id()] = table_.Intern(std::move(key));
      stack.pop_back();
    }
  }

  SignatureTable& table_;
  std::vector<int64_t> local_;  ///< by unique id
  std::vector<int64_t> full_;   ///< by unique id; -1 until computed
  std::vector<bool> expanded_;  ///< by unique id: its operands were pushed
  /// Looked up only, never iterated, so pointer order cannot reach the output.
  std::map<const HloComputation*, int64_t> computations_;
};

/// "op_name@file:line", or "" for an instruction without metadata.
std::string MetadataKey(const HloInstruction& inst) {
  const std::string_view op_name = inst.metadata_field("op_name");
  const std::string_view line = inst.metadata_field("source_line");
  if (op_name.empty() && line.empty()) return "";
  return std::string(op_name) + '@' + std::string(inst.metadata_field("source_file")) + ':' +
         std::string(line);
}

std::string Location(const HloInstruction& inst) {
  const HloModule* module = inst.parent() ? inst.parent()->parent() : nullptr;
  return (module ? module->filename() : std::string("<input>")) + ':' +
         std::to_string(inst.location().line) + ':' + std::to_string(inst.location().column);
}

std::string LayoutText(const hlo::Shape& shape) {
  std::string text;
  if (shape.IsArray() && shape.has_layout()) hlo::AppendLayout(shape.layout(), text);
  return text.empty() ? "{}" : text;
}

/// "(relayout {1,0} -> {0,1} of %p)", "(transpose dimensions={1,0} of %p)",
/// "(MoveToHost of %p)" (a custom call's target), "(of %a, %b)": what an
/// added or removed instruction reads.
std::string OperandNote(const HloInstruction& inst) {
  if (inst.operand_count() == 0) return "";
  const HloInstruction& first = *inst.operand(0);
  if (inst.opcode() == hlo::HloOpcode::kCopy && first.shape().Compatible(inst.shape()) &&
      !(first.shape() == inst.shape())) {
    return " (relayout " + LayoutText(first.shape()) + " -> " + LayoutText(inst.shape()) +
           " of %" + first.name() + ")";
  }
  std::string note = " (";
  if (inst.opcode() == hlo::HloOpcode::kTranspose) {
    std::string dims;
    for (const int64_t d : inst.dimensions()) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    note += "transpose dimensions={" + dims + "} ";
  }
  const std::string_view target = inst.string_attr(hlo::AttrId::kCustomCallTarget);
  if (!target.empty()) note += std::string(target) + ' ';
  note += "of ";
  for (int64_t i = 0; i < inst.operand_count() && i < 3; ++i) {
    note += (i ? ", %" : "%") + inst.operand(i)->name();
  }
  if (inst.operand_count() > 3) note += ", ...";
  return note + ")";
}

/// "copy f32[8,4]{0,1}": opcode and shape.
std::string OpAndShape(const HloInstruction& inst) {
  return inst.OpcodeSpelling() + ' ' + inst.shape().ToString(true);
}

/// "all-reduce|f32[64]": opcode and shape without layout, what a changed
/// layout, precision or collective attribute leaves alone.
std::string OpcodeAndDimensions(const HloInstruction& inst) {
  return inst.OpcodeSpelling() + '|' + inst.shape().ToString(/*print_layout=*/false);
}

/// One computation's instructions as the matcher indexes them.
class Side {
 public:
  explicit Side(const HloComputation& c) {
    std::map<std::string, int64_t> seen;
    for (const auto& inst : c.instructions()) {
      const size_t i = instructions.size();
      instructions.push_back(inst.get());
      index_.emplace(inst.get(), i);
      by_name_.emplace(inst->name(), i);
      const std::string key = OpcodeAndDimensions(*inst);
      position.push_back(key + '#' + std::to_string(seen[key]++));
      by_position_.emplace(position.back(), i);
    }
  }

  size_t Index(const HloInstruction& inst) const { return index_.at(&inst); }
  std::optional<size_t> Named(const std::string& name) const { return Find(by_name_, name); }
  std::optional<size_t> At(const std::string& place) const { return Find(by_position_, place); }

  std::vector<const HloInstruction*> instructions;  ///< in text order
  /// "dot|f32[8,4]#2": the third dot of these dimensions in text order,
  /// which a changed attribute or layout (of it or another) leaves alone.
  std::vector<std::string> position;

 private:
  static std::optional<size_t> Find(const std::map<std::string, size_t>& map,
                                    const std::string& key) {
    const auto it = map.find(key);
    return it == map.end() ? std::nullopt : std::optional<size_t>(it->second);
  }

  /// Looked up only, never iterated, so pointer order cannot reach the output.
  std::map<const HloInstruction*, size_t> index_;
  std::map<std::string, size_t> by_name_;      ///< an instruction's namesake on the other side
  std::map<std::string, size_t> by_position_;  ///< the instruction at a `position`
};

/// Where a computation pair sits, for descriptions: "" for the entries.
struct Context {
  std::string where;         ///< e.g. " in fusion %fusion.2", " in %body.3"; AFTER's names
  std::string where_before;  ///< the same place by BEFORE's names, for removals
  /// The fusions whose bodies these are (nullptr outside fusion bodies): a
  /// body's parameter N reads its fusion's operand N.
  const HloInstruction* fusion_before = nullptr;
  const HloInstruction* fusion_after = nullptr;

  bool fused() const { return fusion_after != nullptr; }
};

class Matcher {
 public:
  Matcher(const HloModule& before, const HloModule& after)
      : before_(before), after_(after), sig_a_(table_, before), sig_b_(table_, after) {}

  ModuleDiff Run() {
    CompareDeviceCounts();
    if (before_.entry() != nullptr && after_.entry() != nullptr) {
      work_.push_back({before_.entry(), after_.entry(), Context{}});
    }
    while (!work_.empty()) {
      const Work w = work_.front();
      work_.pop_front();
      DiffComputations(*w.a, *w.b, w.context);
    }
    MergeFusionMoves();
    return std::move(diff_);
  }

 private:
  struct Work {
    const HloComputation* a;
    const HloComputation* b;
    Context context;
  };

  void DiffComputations(const HloComputation& a, const HloComputation& b, const Context& context) {
    const Side sa(a), sb(b);
    const std::vector<const HloInstruction*>& as = sa.instructions;
    const std::vector<const HloInstruction*>& bs = sb.instructions;
    std::vector<int64_t> match_a(as.size(), -1), match_b(bs.size(), -1);
    const auto pair = [&](size_t i, size_t j) {
      match_a[i] = static_cast<int64_t>(j);
      match_b[j] = static_cast<int64_t>(i);
    };

    // How sure we are that still-unmatched bs[j] is as[i] when their keys
    // are equal: the same matched operands, then the same name, then the same
    // place among the computation's instructions of its opcode and
    // dimensions. Several identical layers share every signature, and text
    // order alone would pair the unchanged ones with the edited one.
    const auto evidence = [&](size_t i, size_t j) {
      const HloInstruction& x = *as[i];
      const HloInstruction& y = *bs[j];
      bool same_operands = x.operand_count() > 0 && x.operand_count() == y.operand_count();
      for (int64_t k = 0; same_operands && k < x.operand_count(); ++k) {
        same_operands =
            match_a[sa.Index(*x.operand(k))] == static_cast<int64_t>(sb.Index(*y.operand(k)));
      }
      return (same_operands ? 4 : 0) + (x.name() == y.name() ? 2 : 0) +
             (sa.position[i] == sb.position[j] ? 1 : 0);
    };

    // Each pass pairs still-unmatched instructions with equal keys: first
    // those with evidence of being the same (the best candidate each, in
    // text order), then the rest in text order. An instruction without a key
    // (nullopt) sits the pass out.
    const auto pass = [&](auto key_of) {
      std::vector<std::optional<std::string>> key_b(bs.size());
      std::map<std::string, std::deque<size_t>> free_b;
      for (size_t j = 0; j < bs.size(); ++j) {
        if (match_b[j] >= 0) continue;
        key_b[j] = key_of(*bs[j], sig_b_);
        if (key_b[j]) free_b[*key_b[j]].push_back(j);
      }
      std::vector<std::optional<std::string>> key_a(as.size());
      for (size_t i = 0; i < as.size(); ++i) {
        if (match_a[i] < 0) key_a[i] = key_of(*as[i], sig_a_);
      }
      const auto candidate = [&](size_t i, std::optional<size_t> j) {
        return j && match_b[*j] < 0 && key_b[*j] == key_a[i];
      };
      for (size_t i = 0; i < as.size(); ++i) {
        if (!key_a[i]) continue;
        // The candidates with evidence: users of the first operand's match,
        // the namesake, the one in the same place.
        std::vector<size_t> candidates;
        const HloInstruction& x = *as[i];
        const int64_t first_operand = x.operand_count() > 0 ? match_a[sa.Index(*x.operand(0))] : -1;
        if (first_operand >= 0) {
          for (const HloInstruction* user : bs[first_operand]->users()) {
            candidates.push_back(sb.Index(*user));
          }
        }
        for (const std::optional<size_t> j : {sb.Named(x.name()), sb.At(sa.position[i])}) {
          if (j) candidates.push_back(*j);
        }
        std::optional<size_t> best;
        int best_evidence = 0;
        for (const size_t j : candidates) {
          if (!candidate(i, j)) continue;
          const int e = evidence(i, j);
          if (e > best_evidence || (e == best_evidence && best && j < *best)) {
            best = j;
            best_evidence = e;
          }
        }
        if (best) pair(i, *best);
      }
      for (size_t i = 0; i < as.size(); ++i) {
        if (match_a[i] >= 0 || !key_a[i]) continue;
        std::deque<size_t>& free = free_b[*key_a[i]];
        while (!free.empty() && match_b[free.front()] >= 0) free.pop_front();
        if (free.empty()) continue;
        pair(i, free.front());
        free.pop_front();
      }
    };
    using Sig = const ModuleSignatures&;
    using Key = std::optional<std::string>;
    // 1. Identical graphs beneath: nothing changed here or upstream.
    pass([](const HloInstruction& x, Sig s) -> Key { return std::to_string(s.full(x)); });
    // 2-3. The same instruction, fed by changed operands: metadata breaks ties.
    pass([](const HloInstruction& x, Sig s) -> Key {
      return std::to_string(s.local(x)) + '|' + MetadataKey(x);
    });
    pass([](const HloInstruction& x, Sig s) -> Key { return std::to_string(s.local(x)); });
    // 4-7. Changed instructions: same parameter, same source op, same shape.
    pass([](const HloInstruction& x, Sig) -> Key {
      if (x.opcode() != hlo::HloOpcode::kParameter) return std::nullopt;
      return std::to_string(x.parameter_number());
    });
    pass([](const HloInstruction& x, Sig) -> Key {
      const std::string meta = MetadataKey(x);
      if (meta.empty()) return std::nullopt;
      return x.OpcodeSpelling() + '|' + meta;
    });
    pass([](const HloInstruction& x, Sig) -> Key {
      const std::string meta = MetadataKey(x);
      if (meta.empty()) return std::nullopt;
      return meta;
    });
    pass([](const HloInstruction& x, Sig) -> Key { return OpcodeAndDimensions(x); });

    // Parameters of called computations mirror their callers' operands,
    // where any change is reported already.
    const bool report_parameters = a.IsEntry();
    // All pairs first: comparing a pair's operands looks up the pairs of
    // instructions later in the text.
    for (size_t j = 0; j < bs.size(); ++j) {
      if (match_b[j] < 0) continue;
      diff_.matched.emplace(as[match_b[j]], bs[j]);
      matched_after_.emplace(bs[j], as[match_b[j]]);
    }
    for (size_t j = 0; j < bs.size(); ++j) {
      const HloInstruction& y = *bs[j];
      const bool hidden = !report_parameters && y.opcode() == hlo::HloOpcode::kParameter;
      if (match_b[j] < 0) {
        if (!hidden) {
          Add(ChangeKind::kAdded, nullptr, &y,
              "added: " + OpAndShape(y) + OperandNote(y) + " at " + Location(y) + context.where,
              context);
        }
        continue;
      }
      const HloInstruction& x = *as[match_b[j]];
      if (!hidden) ComparePair(x, y, context);
    }
    for (size_t i = 0; i < as.size(); ++i) {
      const HloInstruction& x = *as[i];
      if (match_a[i] >= 0) continue;
      if (!report_parameters && x.opcode() == hlo::HloOpcode::kParameter) continue;
      Add(ChangeKind::kRemoved, &x, nullptr,
          "removed: " + OpAndShape(x) + OperandNote(x) + " at " + Location(x) +
              context.where_before,
          context);
    }
  }

  /// The devices a program runs on are part of what it computes: every
  /// collective's groups are read against them. An absent count is 1.
  void CompareDeviceCounts() {
    const auto compare = [&](std::string_view name, int64_t before, int64_t after) {
      if (before == after) return;
      Add(ChangeKind::kCollective, nullptr, nullptr,
          std::string(ChangeKindName(ChangeKind::kCollective)) + ": " + std::string(name) + "=" +
              std::to_string(before) + " -> " + std::to_string(after) + " at " + after_.filename() +
              " (module header)",
          Context{});
    };
    compare("replica_count", before_.replica_count(), after_.replica_count());
    compare("num_partitions", before_.num_partitions(), after_.num_partitions());
  }

  /// Reports what differs between two matched instructions, and queues the
  /// computations they call.
  void ComparePair(const HloInstruction& x, const HloInstruction& y, const Context& context) {
    const bool collective = hlo::IsCollective(x.opcode()) || hlo::IsCollective(y.opcode());
    if (sig_a_.local(x) != sig_b_.local(y)) {
      const std::string_view target = y.string_attr(hlo::AttrId::kCustomCallTarget);
      const std::string head = "%" + x.name() + " -> %" + y.name() + " (" + y.OpcodeSpelling() +
                               (target.empty() ? "" : " " + std::string(target)) + ") ";
      const std::string at = " at " + Location(y) + context.where;
      if (x.OpcodeSpelling() != y.OpcodeSpelling()) {
        const ChangeKind kind = collective ? ChangeKind::kCollective : ChangeKind::kOpcode;
        Add(kind, &x, &y,
            std::string(ChangeKindName(kind)) + ": %" + x.name() + " -> %" + y.name() + " " +
                x.OpcodeSpelling() + " -> " + y.OpcodeSpelling() + at,
            context);
      }
      if (!(x.shape() == y.shape())) {
        const ChangeKind kind =
            x.shape().Compatible(y.shape()) ? ChangeKind::kLayout : ChangeKind::kShape;
        Add(kind, &x, &y,
            std::string(ChangeKindName(kind)) + ": " + head + x.shape().ToString(true) + " -> " +
                y.shape().ToString(true) + at,
            context);
      }
      // Printed in their type only when the text differs: most constants are
      // equal, and a large one's text is long.
      if (x.has_literal() && y.has_literal() && !(x.literal() == y.literal())) {
        const std::string was = ConstantValues(x);
        const std::string now = ConstantValues(y);
        // Short values are shown; a large array's would drown the report.
        constexpr size_t kShown = 40;
        const std::string values =
            was.size() <= kShown && now.size() <= kShown ? " (" + was + " -> " + now + ")" : "";
        if (was != now) {
          Add(ChangeKind::kAttribute, &x, &y,
              "attribute: " + head + "constant values changed" + values + at, context);
        }
      }
      CompareAttributes(x, y, collective, head, at, context);
    }
    CompareOperands(x, y, context);
    // Bodies of fusions, loops, branches and reductions: paired by position.
    const std::vector<HloComputation*> ca = x.called_computations();
    const std::vector<HloComputation*> cb = y.called_computations();
    if (ca.size() != cb.size() || collective) return;  // collectives: reduction compared above
    for (size_t k = 0; k < ca.size(); ++k) {
      if (!visited_.insert({ca[k], cb[k]}).second) continue;
      Context inner;
      if (x.opcode() == hlo::HloOpcode::kFusion) {
        inner.fusion_before = &x;
        inner.fusion_after = &y;
      }
      const std::string in = inner.fused() ? " in fusion %" : " in %";
      inner.where = in + (inner.fused() ? y.name() : cb[k]->name()) + context.where;
      inner.where_before = in + (inner.fused() ? x.name() : ca[k]->name()) + context.where_before;
      work_.push_back({ca[k], cb[k], inner});
    }
  }

  void CompareAttributes(const HloInstruction& x, const HloInstruction& y, bool collective,
                         const std::string& head, const std::string& at, const Context& context) {
    const std::map<std::string, std::string> ax = sig_a_.Attributes(x);
    const std::map<std::string, std::string> ay = sig_b_.Attributes(y);
    std::set<std::string> names;
    for (const auto& [name, value] : ax) names.insert(name);
    for (const auto& [name, value] : ay) names.insert(name);
    for (const std::string& name : names) {
      const auto ix = ax.find(name);
      const auto iy = ay.find(name);
      const std::string vx = ix == ax.end() ? "(none)" : ix->second;
      const std::string vy = iy == ay.end() ? "(none)" : iy->second;
      if (vx == vy) continue;
      const AttrId id = hlo::AttrIdFromName(name);
      ChangeKind kind = ChangeKind::kAttribute;
      std::string what = name + "=" + vx + " -> " + vy;
      if (id == AttrId::kOperandPrecision || id == AttrId::kAlgorithm) {
        kind = ChangeKind::kPrecision;
      } else if (id == AttrId::kFusionKind && x.opcode() == hlo::HloOpcode::kFusion) {
        kind = ChangeKind::kFusion;
      } else if (collective && (id == AttrId::kReplicaGroups || id == AttrId::kSourceTargetPairs ||
                                id == AttrId::kUseGlobalDeviceIds || id == AttrId::kDimensions)) {
        kind = ChangeKind::kCollective;
      } else if (collective && id == AttrId::kToApply) {
        kind = ChangeKind::kCollective;
        what = "reduction " + RootOpcode(x.to_apply()) + " -> " + RootOpcode(y.to_apply());
      } else if (hlo::AttrKindOf(id) == AttrKind::kComputation ||
                 hlo::AttrKindOf(id) == AttrKind::kComputationList) {
        continue;  // called computations are diffed themselves
      }
      Add(kind, &x, &y, std::string(ChangeKindName(kind)) + ": " + head + what + at, context);
    }
  }

  /// Reports a data-flow change: an operand of `y` that is not the pair of
  /// `x`'s operand in that place (an edge rewired, operands swapped, a
  /// parameter renumbered under its readers).
  void CompareOperands(const HloInstruction& x, const HloInstruction& y, const Context& context) {
    // A fusion's operands are compared where its body reads them (Source):
    // operands permuted along with the body's parameter numbers are the same
    // computation.
    if (x.opcode() == hlo::HloOpcode::kFusion && y.opcode() == hlo::HloOpcode::kFusion) return;
    std::string what;
    for (int64_t k = 0; k < std::max(x.operand_count(), y.operand_count()); ++k) {
      const HloInstruction* a = k < x.operand_count() ? x.operand(k) : nullptr;
      const HloInstruction* b = k < y.operand_count() ? y.operand(k) : nullptr;
      const HloInstruction* source_a = a ? &Source(*a, context.fusion_before) : nullptr;
      const HloInstruction* source_b = b ? &Source(*b, context.fusion_after) : nullptr;
      if (!Rewired(source_a, source_b)) continue;
      what += (what.empty() ? "operand " : "; operand ") + std::to_string(k) + " was " +
              OperandText(a, source_a) + ", now " + OperandText(b, source_b);
    }
    if (what.empty()) return;
    Add(ChangeKind::kOperands, &x, &y,
        std::string(ChangeKindName(ChangeKind::kOperands)) + ": " + y.OpcodeSpelling() + " %" +
            y.name() + ": " + what + " at " + Location(y) + context.where,
        context);
  }

  /// What `operand` reads: in a fusion body, a parameter stands for the
  /// fusion's operand of its number.
  static const HloInstruction& Source(const HloInstruction& operand, const HloInstruction* fusion) {
    if (fusion == nullptr || operand.opcode() != hlo::HloOpcode::kParameter ||
        operand.parameter_number() >= fusion->operand_count()) {
      return operand;
    }
    return *fusion->operand(operand.parameter_number());
  }

  /// Whether before's operand source `a` and after's `b` (either nullptr
  /// past the end of a shorter operand list) are different values. An
  /// operand added or removed with its instruction is reported as that;
  /// two instructions of one full signature compute the same value, so
  /// the matcher pairing such twins crosswise changes nothing.
  bool Rewired(const HloInstruction* a, const HloInstruction* b) const {
    const auto pair_a = a ? diff_.matched.find(a) : diff_.matched.end();
    const bool kept_a = pair_a != diff_.matched.end();
    const bool kept_b = b != nullptr && matched_after_.count(b) > 0;
    if (a == nullptr || b == nullptr) return kept_a || kept_b;
    if (!kept_a || !kept_b) return false;
    return pair_a->second != b && sig_a_.full(*a) != sig_b_.full(*b);
  }

  /// "%mul.3", "%q.1 (parameter 0)", "%a (parameter 1, %exp.2)" (a fusion
  /// body's, with the operand it reads), or "(none)".
  static std::string OperandText(const HloInstruction* operand, const HloInstruction* source) {
    if (operand == nullptr) return "(none)";
    std::string text = "%" + operand->name();
    if (operand->opcode() != hlo::HloOpcode::kParameter) return text;
    text += " (parameter " + std::to_string(operand->parameter_number());
    if (source != operand) text += ", %" + source->name();
    return text + ")";
  }

  static std::string RootOpcode(const HloComputation* c) {
    return c && c->root() ? c->root()->OpcodeSpelling() : std::string("(none)");
  }

  void Add(ChangeKind kind, const HloInstruction* a, const HloInstruction* b, std::string text,
           const Context& context) {
    diff_.changes.push_back({kind, std::move(text), a, b});
    fused_.push_back(context.fused());
  }

  /// An instruction removed outside fusions and added inside one (or the
  /// reverse) moved across a fusion boundary: one change, not two.
  void MergeFusionMoves() {
    std::vector<StructuralChange>& changes = diff_.changes;
    // Removals by (fused, opcode, shape without layout), in order: a lookup
    // per addition rather than a scan of every change.
    const auto key = [](bool fused, const HloInstruction& inst) {
      return std::string(fused ? "F " : "U ") + inst.OpcodeSpelling() + ' ' +
             inst.shape().ToString(/*print_layout=*/false);
    };
    std::map<std::string, std::deque<size_t>> removals;
    for (size_t j = 0; j < changes.size(); ++j) {
      if (changes[j].kind == ChangeKind::kRemoved) {
        removals[key(fused_[j], *changes[j].before)].push_back(j);
      }
    }
    std::vector<bool> drop(changes.size(), false);
    for (size_t i = 0; i < changes.size(); ++i) {
      if (changes[i].kind != ChangeKind::kAdded) continue;
      const HloInstruction& added = *changes[i].after;
      const auto it = removals.find(key(!fused_[i], added));
      if (it == removals.end() || it->second.empty()) continue;
      const size_t j = it->second.front();
      it->second.pop_front();
      const HloInstruction& removed = *changes[j].before;
      const bool into = fused_[i];
      const std::string suffix =
          FusionSuffix(into ? changes[i].description : changes[j].description);
      changes[i].kind = into ? ChangeKind::kMovedIntoFusion : ChangeKind::kMovedOutOfFusion;
      changes[i].before = &removed;
      changes[i].description = std::string(ChangeKindName(changes[i].kind)) + ": " +
                               OpAndShape(added) + " %" + removed.name() + " at " +
                               Location(removed) + " -> %" + added.name() + " at " +
                               Location(added) + suffix;
      drop[j] = true;
    }
    std::vector<StructuralChange> kept;
    for (size_t i = 0; i < changes.size(); ++i) {
      if (!drop[i]) kept.push_back(std::move(changes[i]));
    }
    changes = std::move(kept);
  }

  /// The " in fusion %f ..." tail of a description, or "".
  static std::string FusionSuffix(const std::string& description) {
    const size_t at = description.find(" in fusion %");
    return at == std::string::npos ? "" : description.substr(at);
  }

  const HloModule& before_;
  const HloModule& after_;
  SignatureTable table_;
  ModuleSignatures sig_a_;
  ModuleSignatures sig_b_;
  std::deque<Work> work_;
  /// Computation pairs already queued; membership only, never iterated.
  std::set<std::pair<const HloComputation*, const HloComputation*>> visited_;
  ModuleDiff diff_;
  /// diff_.matched reversed, after's -> before's; looked up only, never iterated.
  std::map<const HloInstruction*, const HloInstruction*> matched_after_;
  std::vector<bool> fused_;  ///< per change: found inside a fusion body
};

/// How much a structural change explains a regression: lower ranks first.
int Rank(const StructuralChange& c) {
  const hlo::HloInstruction* inst = c.after ? c.after : c.before;
  // Data movement a release inserts or drops: relayouts and padding.
  const bool relayout = inst != nullptr && (inst->opcode() == hlo::HloOpcode::kCopy ||
                                            inst->opcode() == hlo::HloOpcode::kTranspose ||
                                            inst->opcode() == hlo::HloOpcode::kPad);
  switch (c.kind) {
    case ChangeKind::kAdded:
    case ChangeKind::kRemoved:
      return relayout ? 0 : 6;
    case ChangeKind::kPrecision:
      return 1;
    case ChangeKind::kCollective:
      return 2;
    case ChangeKind::kShape:
      return 3;
    case ChangeKind::kLayout:
      return 4;
    case ChangeKind::kMovedIntoFusion:
    case ChangeKind::kMovedOutOfFusion:
    case ChangeKind::kFusion:
      return 5;
    case ChangeKind::kOpcode:
    case ChangeKind::kOperands:
    case ChangeKind::kAttribute:
      return 7;
  }
  return 8;
}

}  // namespace

std::string_view ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdded: return "added";
    case ChangeKind::kRemoved: return "removed";
    case ChangeKind::kMovedIntoFusion: return "moved into fusion";
    case ChangeKind::kMovedOutOfFusion: return "moved out of fusion";
    case ChangeKind::kLayout: return "layout";
    case ChangeKind::kShape: return "shape";
    case ChangeKind::kPrecision: return "precision";
    case ChangeKind::kCollective: return "collective";
    case ChangeKind::kFusion: return "fusion";
    case ChangeKind::kOpcode: return "opcode";
    case ChangeKind::kOperands:
      return "operands changed";
    case ChangeKind::kAttribute: return "attribute";
  }
  return "change";
}

ModuleDiff DiffModules(const hlo::HloModule& before, const hlo::HloModule& after) {
  return Matcher(before, after).Run();
}

std::vector<const StructuralChange*> ChangesByRelevance(const ModuleDiff& diff) {
  std::vector<const StructuralChange*> ranked;
  for (const StructuralChange& c : diff.changes) ranked.push_back(&c);
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const StructuralChange* a, const StructuralChange* b) { return Rank(*a) < Rank(*b); });
  return ranked;
}

std::string ChangeCause(const StructuralChange& c) {
  std::string text = c.description;
  const size_t at = text.find(" at ");
  if (at != std::string::npos) text.resize(at);
  if (c.kind == ChangeKind::kAdded) return "+1 " + text.substr(sizeof("added: ") - 1);
  if (c.kind == ChangeKind::kRemoved) return "-1 " + text.substr(sizeof("removed: ") - 1);
  return text;
}

}  // namespace tpusim::harness
