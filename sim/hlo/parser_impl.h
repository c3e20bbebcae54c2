// The HLO text parser's internals, shared by parser.cc and parse_*.cc.
// Not part of the library's API; include parser.h instead.
#ifndef TPUSIM_SIM_HLO_PARSER_IMPL_H_
#define TPUSIM_SIM_HLO_PARSER_IMPL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/lexer.h"
#include "sim/hlo/module.h"

namespace tpusim::hlo::internal {

/// A name written in the text that is resolved once everything is parsed:
/// operands may be defined after their use (the verifier then reports cycles),
/// and computations may be referenced before their definition.
struct PendingName {
  std::string_view name;
  /// Offset of the name in the text; turned into line:column only for errors.
  size_t location;
};

/// One operand of one instruction, in text order (a flat list, so that parsing
/// an instruction allocates nothing for its operand names).
struct PendingOperand {
  HloInstruction* instruction;
  PendingName name;
  /// Offset of the shape written before the name, or kNoShape: a single
  /// instruction's operands become parameters of that shape.
  size_t shape_location;
  /// The operand itself when it has no name to look up: an instruction
  /// written in its place, or the parameter made for a single instruction's
  /// operand written as a shape alone.
  HloInstruction* defined = nullptr;
};

inline constexpr size_t kNoShape = static_cast<size_t>(-1);

/// Instruction names of one computation: an open-addressing hash table keyed
/// by each instruction's own name (no allocation per entry, unlike
/// std::unordered_map). Clear() is O(1): slots of older generations count as
/// empty.
class NameTable {
 public:
  void Clear() {
    count_ = 0;
    if (++generation_ == 0) {  // wrapped: really empty the slots
      slots_.assign(slots_.size(), Slot{});
      generation_ = 1;
    }
  }
  HloInstruction* Find(std::string_view name) const {
    if (slots_.empty()) return nullptr;
    const uint32_t h = Hash(name);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.generation != generation_) return nullptr;
      if (s.hash == h && s.instruction->name() == name) return s.instruction;
    }
  }
  /// Adds `instruction` under its name; false when the name is taken.
  bool Insert(HloInstruction* instruction) {
    if ((count_ + 1) * 2 > slots_.size()) Grow();
    const std::string_view name = instruction->name();
    const uint32_t h = Hash(name);
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.generation != generation_) {
        s = {instruction, h, generation_};
        ++count_;
        return true;
      }
      if (s.hash == h && s.instruction->name() == name) return false;
    }
  }

 private:
  struct Slot {
    HloInstruction* instruction = nullptr;
    uint32_t hash = 0;
    uint32_t generation = 0;  ///< live only when equal to generation_
  };
  static uint32_t Hash(std::string_view s) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = (h ^ w) * 0xff51afd7ed558ccdULL;
      h ^= h >> 32;
    }
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, s.size() - i);
    // MurmurHash3's finalizer, so that every input bit reaches the low bits.
    h ^= w;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return static_cast<uint32_t>(h);
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    const size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.generation != generation_) continue;
      size_t i = s.hash & mask;
      while (slots_[i].generation == generation_) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t count_ = 0;
  uint32_t generation_ = 1;
};

/// How deep tuple and buffer shapes, and the tuple shardings that follow
/// them, may nest. Every walk over a shape (the printer, comparisons, byte
/// sizes, literals) recurses on this depth, so the input must not choose it
/// freely; XLA's own modules nest a few levels.
inline constexpr int64_t kMaxShapeDepth = 64;

/// How deep computations written inline in attributes may nest: each level
/// recurses through the parser; XLA's tests nest one or two.
inline constexpr int64_t kMaxInlineComputationDepth = 64;

/// How deep instructions written as operands (`add(f32[] parameter(0),
/// ...)`) may nest: each level recurses through the parser, like inline
/// computations.
inline constexpr int64_t kMaxNestedInstructionDepth = kMaxInlineComputationDepth;

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename) : lexer_(text, filename) {}

  StatusOr<std::unique_ptr<HloModule>> ParseModule();
  StatusOr<Shape> ParseShapeOnly();

 private:
  // parser.cc: module, computations, instructions, name resolution.
  /// module_, empty, named `name`.
  void StartModule(std::string name);
  /// True when the text is one instruction (`name = ...` or `ROOT ...`)
  /// rather than computations; the cursor is at its first identifier.
  bool AtSingleInstruction();
  /// Computations up to the end of the text, and the module's entry.
  Status ParseComputations();
  /// One instruction as the whole text, as XLA's parser accepts it: the
  /// entry computation of a module of its own, whose parameters are the
  /// instruction's operands.
  Status ParseSingleInstruction();
  /// A parameter of `entry` for each operand of its one instruction, of the
  /// shape written before the operand's name, numbered in order of first use.
  Status AddOperandParameters(HloComputation& entry);
  Status ParseHeader();
  Status ParseHeaderAttribute(std::string_view name);
  Status ParseStackFrameTables();
  Status ParseComputation();
  /// `{ instructions }` of `computation` at the cursor, its root, and its
  /// operand and control-predecessor names resolved.
  Status ParseComputationBody(HloComputation& computation);
  /// An anonymous computation written in place of a name in attribute
  /// `attribute` of `caller` (`to_apply={ ... }`), as XLA's parser accepts
  /// it; the cursor is at its `{`. It joins the module named
  /// `CALLER.ATTRIBUTE` (made unique), so that printing and re-parsing the
  /// module gives the same program.
  StatusOr<HloComputation*> ParseInlineComputation(const HloInstruction& caller,
                                                   std::string_view attribute);
  /// True when the `{` at the cursor opens an instruction list rather than a
  /// list of computation names (the next token is ROOT, or a name and `=`).
  bool AtInlineComputation();
  /// `base`, or `base.N` with the least N that no computation has yet.
  std::string UnusedComputationName(const std::string& base) const;
  Status ParseInstruction(HloComputation& computation, bool& saw_root);
  /// After `NAME =` (or, for an instruction written as an operand, with
  /// `name` empty and `in_operand_list`): the shape, opcode, operands and
  /// attributes; the instruction is added to `computation`.
  StatusOr<HloInstruction*> ParseInstructionRhs(HloComputation& computation,
                                                std::string_view name, SourceLocation loc,
                                                bool in_operand_list);
  Status ParseOperands(HloComputation& computation, HloInstruction* instruction);
  /// `base`, or `base.N` for the first N that names no instruction yet.
  std::string UnusedInstructionName(const std::string& base) const;
  /// Names `instruction` `base`, or `base.N` if taken, and records the name
  /// as made up.
  void GiveMadeUpName(HloInstruction* instruction, std::string base);
  /// Enters `instruction` under its written name; an instruction with a
  /// made-up name of that spelling moves to its next one. False when another
  /// written name is the same.
  bool ClaimName(HloInstruction* instruction);
  /// The instruction whose written name is `name`, or null (also for an
  /// empty name).
  HloInstruction* FindWrittenName(std::string_view name) const;
  StatusOr<HloOpcode> ParseOpcode(std::string_view word, size_t loc,
                                  std::optional<HloOpcode>& wrapped);
  Status ResolveComputation(HloComputation& computation);
  Status ResolveComputationReferences();
  Status InferMissingShapes();

  // parse_shape.cc
  StatusOr<Shape> ParseShape();
  /// ParseShape into a default-constructed `out` (saves moving the result).
  Status ParseShapeInto(Shape& out);
  /// ParseShapeInto's body, once the nesting depth is checked.
  Status ParseNestedShapeInto(Shape& out);
  /// ParseShape for a shape that is only checked (computation signatures):
  /// parsed into discarded_shape_, reusing its memory.
  Status ParseDiscardedShape();
  /// True when a shape starts at the cursor (type name followed by '[', '(' or `b(`).
  bool AtShape();
  Status ParseArrayDimensions(Shape& shape);
  Status ParseLayout(Shape& shape);
  StatusOr<std::vector<int64_t>> ParseIntList(char open, char close, std::string_view what);

  // parse_attributes.cc
  /// `, name=value` ... after an instruction's operand list. With
  /// `in_operand_list` (an instruction written as an operand) only while a
  /// comma is followed by `name =`; another comma starts the next operand.
  Status ParseAttributes(HloInstruction& instruction, bool in_operand_list);
  /// Whether `, IDENTIFIER =` comes next.
  bool AtAttribute();
  /// The value of attribute `name` of `instruction`, of `kind`.
  StatusOr<AttrValue> ParseAttributeValue(AttrKind kind, std::string_view name,
                                          HloInstruction* instruction, size_t attribute_index);
  StatusOr<Window> ParseWindow();
  StatusOr<ConvolutionDimensionNumbers> ParseDimLabels();
  StatusOr<std::vector<SliceRange>> ParseSliceRanges();
  StatusOr<std::vector<PaddingDimension>> ParsePadding();
  StatusOr<ReplicaGroups> ParseReplicaGroups();
  StatusOr<ReplicaGroups> ParseMeshReplicaGroups();
  StatusOr<IotaTileAssignment> ParseIotaAfterDims(std::vector<int64_t> dims);
  /// A sharding inside `depth` tuple shardings.
  StatusOr<Sharding> ParseSharding(int64_t depth);
  StatusOr<std::vector<KeyValue>> ParseKeyValues(std::string_view what);
  StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseIntPairs();
  StatusOr<ShapeIndex> ParseShapeIndex();
  /// `{true,false}`, or a lone `true` or `false` as a list of one.
  StatusOr<std::vector<bool>> ParseBoolList();
  /// `x`-separated integers directly at the cursor (`3x3`, `1`).
  StatusOr<std::vector<int64_t>> ParseDxD(std::string_view what);

  // parse_literal.cc
  StatusOr<ConstantLiteral> ParseLiteral(const Shape& shape);
  Status ParseArrayLiteral(const Shape& shape, ConstantLiteral& literal);
  Status ParseLiteralElement(PrimitiveType type, ConstantLiteral& literal);

  Lexer lexer_;
  std::unique_ptr<HloModule> module_;
  /// Operand names of the current computation's instructions, by instruction,
  /// from the first one that names an instruction not defined yet (earlier
  /// ones are linked while parsing).
  std::vector<PendingOperand> pending_operands_;
  /// Scratch space, reused to avoid an allocation per instruction.
  std::vector<HloInstruction*> operand_scratch_;
  std::vector<Attribute> attribute_scratch_;
  std::vector<int64_t> int_scratch_;
  std::vector<KeyValue> key_value_scratch_;
  Shape discarded_shape_;
  /// Tuple and buffer shapes open at the cursor (ParseShapeInto's recursion).
  int64_t shape_depth_ = 0;
  std::vector<std::pair<HloInstruction*, std::vector<PendingName>>> pending_control_;
  /// Computation names inside attributes, resolved after the whole module.
  struct PendingComputationRef {
    HloInstruction* instruction;
    size_t attribute_index;
    /// In the order written: a name to look up, or a computation written
    /// inline (then `name` is unused).
    struct Item {
      PendingName name;
      HloComputation* inline_computation = nullptr;
    };
    std::vector<Item> items;
  };
  std::vector<PendingComputationRef> pending_computations_;
  /// Instructions written without a shape, in text order.
  std::vector<HloInstruction*> missing_shapes_;
  /// Names of the current computation's instructions.
  NameTable names_;
  /// The last computation written at the top level: the entry when none
  /// says ENTRY (inline computations are added after the one holding them).
  HloComputation* last_top_level_ = nullptr;
  /// Inline computations open at the cursor (ParseInlineComputation's recursion).
  int64_t inline_depth_ = 0;
  /// Instructions written as operands being parsed, one inside the other.
  int64_t nested_instruction_depth_ = 0;
  /// The text is one instruction without a computation around it.
  bool single_instruction_ = false;
  /// Instructions of the current computation whose names the parser made
  /// up (written as operands, the lone instruction of XLA's canonical form,
  /// parameters for operands written as a shape alone), with the name each
  /// is based on: the text cannot refer to them, and a written name takes
  /// theirs away.
  std::unordered_map<const HloInstruction*, std::string> made_up_names_;
  /// Computations written inline, whose made-up names yield to written ones.
  std::set<const HloComputation*> inline_computations_;
};

}  // namespace tpusim::hlo::internal

#endif  // TPUSIM_SIM_HLO_PARSER_IMPL_H_
