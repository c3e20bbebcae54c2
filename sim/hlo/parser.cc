// HLO text parser: module header, stack-frame tables, computations,
// instructions and name resolution. Shapes, attributes and literals live in
// parse_shape.cc, parse_attributes.cc and parse_literal.cc.
#include "sim/hlo/parser.h"

#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "sim/hlo/parser_impl.h"
#include "sim/hlo/shape_inference.h"

namespace tpusim::hlo {

StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view filename) {
  // A UTF-8 byte order mark, as some Windows editors save, is no text:
  // positions count from after it.
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  internal::Parser parser(text, filename);
  return parser.ParseModule();
}

StatusOr<Shape> ParseShape(std::string_view text) {
  internal::Parser parser(text, "<shape>");
  return parser.ParseShapeOnly();
}

namespace {

/// `shape` with every dimension static, recursively: a computation's stated
/// result shape is compared with its root's ignoring dynamism, as XLA does.
Shape WithoutDynamism(Shape shape) {
  if (shape.IsArray()) {
    for (int64_t d = 0; d < shape.rank(); ++d) shape.set_dynamic_dimension(d, false);
  }
  for (Shape& element : shape.mutable_tuple_shapes()) element = WithoutDynamism(std::move(element));
  return shape;
}

}  // namespace

namespace internal {

StatusOr<Shape> Parser::ParseShapeOnly() {
  TPUSIM_ASSIGN_OR_RETURN(Shape shape, ParseShape());
  if (!lexer_.AtEnd()) return lexer_.Expected("end of shape");
  return shape;
}

StatusOr<std::unique_ptr<HloModule>> Parser::ParseModule() {
  if (lexer_.PeekIdentifier() == "HloModule") {
    TPUSIM_RETURN_IF_ERROR(ParseHeader());
    TPUSIM_RETURN_IF_ERROR(ParseStackFrameTables());
    TPUSIM_RETURN_IF_ERROR(ParseComputations());
  } else if (!lexer_.AtIdentifier()) {
    return lexer_.Expected("'HloModule', a computation or an instruction at start of text");
  } else if (AtSingleInstruction()) {
    StartModule("_");  // XLA's name for the module of a lone instruction
    TPUSIM_RETURN_IF_ERROR(ParseSingleInstruction());
  } else {
    StartModule("");
    TPUSIM_RETURN_IF_ERROR(ParseComputations());
    // XLA names a module written without a header after its entry.
    module_->set_name("module_" + module_->entry()->name());
  }
  TPUSIM_RETURN_IF_ERROR(ResolveComputationReferences());
  module_->AssignUniqueIds();
  TPUSIM_RETURN_IF_ERROR(InferMissingShapes());
  return std::move(module_);
}

void Parser::StartModule(std::string name) {
  module_ = std::make_unique<HloModule>(std::move(name));
  module_->set_filename(std::string(lexer_.filename()));
}

bool Parser::AtSingleInstruction() {
  const size_t start = lexer_.position();
  bool instruction = false;
  if (AtShape()) {
    // XLA's canonical form, `f32[2] negate(...)`, has no `NAME =`: a whole
    // shape and then an opcode (`b(p: f32[]) -> f32[] {` is a computation
    // named b, not a buffer shape).
    instruction = ParseDiscardedShape().ok() && !lexer_.ReadIdentifier().empty();
  } else {
    const std::string_view word = lexer_.ReadIdentifier();
    instruction = word == "ROOT" || lexer_.Peek() == '=';
  }
  lexer_.Rewind(start);
  return instruction;
}

Status Parser::ParseComputations() {
  while (!lexer_.AtEnd()) TPUSIM_RETURN_IF_ERROR(ParseComputation());
  if (module_->computations().empty()) {
    return lexer_.Expected("a computation after the module header");
  }
  if (module_->entry() == nullptr) module_->set_entry(last_top_level_);
  return Status::Ok();
}

Status Parser::ParseSingleInstruction() {
  auto owned = std::make_unique<HloComputation>(module_->name());
  owned->set_location(lexer_.NextLocation());
  HloComputation& entry = *module_->AddComputation(std::move(owned));
  module_->set_entry(&entry);
  single_instruction_ = true;
  if (AtShape()) {
    // XLA's canonical form, `f32[2] multiply(f32[2], f32[2])`.
    TPUSIM_ASSIGN_OR_RETURN(
        HloInstruction * instruction,
        ParseInstructionRhs(entry, "", lexer_.NextLocation(), /*in_operand_list=*/false));
    // XLA names it after the module, `_`.
    GiveMadeUpName(instruction, "_");
  } else {
    bool saw_root = false;
    TPUSIM_RETURN_IF_ERROR(ParseInstruction(entry, saw_root));
  }
  if (!lexer_.AtEnd()) {
    return lexer_.Expected(
        "end of text after a single instruction (a module starts with 'HloModule')");
  }
  // Instructions written as its operands come before it.
  entry.set_root(entry.instructions().back().get());
  TPUSIM_RETURN_IF_ERROR(AddOperandParameters(entry));
  return ResolveComputation(entry);
}

Status Parser::AddOperandParameters(HloComputation& entry) {
  const size_t end = lexer_.position();
  for (PendingOperand& operand : pending_operands_) {
    const PendingName& name = operand.name;
    if (operand.defined != nullptr) continue;  // an instruction written in place
    // A written name of the instruction itself, or used before.
    if (FindWrittenName(name.name) != nullptr) continue;
    if (operand.shape_location == kNoShape) {
      return lexer_.ErrorAt(name.location, "operand " + Quote(name.name) +
                                               " of a single instruction has no shape; write " +
                                               "it before the name (f32[2] %a) to make the " +
                                               "operand a parameter");
    }
    lexer_.Rewind(operand.shape_location);
    std::unique_ptr<HloInstruction> parameter(
        new HloInstruction(std::string(name.name), HloOpcode::kParameter, Shape()));
    TPUSIM_RETURN_IF_ERROR(ParseShapeInto(parameter->mutable_shape()));
    parameter->set_location(lexer_.LocationOf(name.location));
    const int64_t number = entry.parameter_count();
    parameter->set_parameter_number(number);
    entry.SetParameter(number, parameter.get());
    if (name.name.empty()) {
      // Written as a shape alone: XLA names it `_N` after its number, and
      // each such operand is a parameter of its own.
      GiveMadeUpName(parameter.get(), "_" + std::to_string(number));
      operand.defined = parameter.get();
    } else {
      ClaimName(parameter.get());  // free among written names, checked above
    }
    entry.AddInstruction(std::move(parameter));
  }
  lexer_.Rewind(end);
  // XLA's builder adds each parameter before the instruction that uses it.
  entry.HoistParameters();
  return Status::Ok();
}

Status Parser::ParseHeader() {
  lexer_.ReadIdentifier();  // HloModule
  TPUSIM_ASSIGN_OR_RETURN(std::string_view name, lexer_.ExpectIdentifier("a module name"));
  StartModule(std::string(name));
  lexer_.TryConsume(':');  // old dumps: `HloModule name:`
  while (lexer_.TryConsume(',')) {
    TPUSIM_ASSIGN_OR_RETURN(std::string_view attr, lexer_.ExpectIdentifier("a module attribute name"));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after module attribute name"));
    TPUSIM_RETURN_IF_ERROR(ParseHeaderAttribute(attr));
  }
  return Status::Ok();
}

Status Parser::ParseHeaderAttribute(std::string_view name) {
  ModuleHeader& h = module_->mutable_header();
  const size_t loc = lexer_.Mark();
  auto duplicate = [&]() {
    return lexer_.ErrorAt(loc, "duplicate module attribute " + Quote(name));
  };
  for (const std::string& seen : h.order) {
    if (seen == name) return duplicate();
  }
  h.order.emplace_back(name);
  auto parse_bool = [&]() -> StatusOr<bool> {
    if (lexer_.TryConsumeWord("true")) return true;
    if (lexer_.TryConsumeWord("false")) return false;
    return lexer_.Expected("'true' or 'false'");
  };
  if (name == "is_scheduled") {
    TPUSIM_ASSIGN_OR_RETURN(h.is_scheduled, parse_bool());
  } else if (name == "alias_passthrough_params") {
    TPUSIM_ASSIGN_OR_RETURN(h.alias_passthrough_params, parse_bool());
  } else if (name == "replica_count" || name == "num_partitions") {
    TPUSIM_ASSIGN_OR_RETURN(int64_t n, lexer_.ReadInt("a device count"));
    if (n < 1) return lexer_.ErrorAt(loc, std::string(name) + " must be at least 1");
    (name == "replica_count" ? h.replica_count : h.num_partitions) = n;
  } else if (name == "entry_computation_layout") {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open entry_computation_layout"));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "before the parameter layouts"));
    ComputationLayout layout;
    if (!lexer_.TryConsume(')')) {
      do {
        TPUSIM_ASSIGN_OR_RETURN(Shape s, ParseShape());
        layout.parameters.push_back(std::move(s));
      } while (lexer_.TryConsume(','));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "after the parameter layouts"));
    }
    if (!lexer_.TryConsume("->")) return lexer_.Expected("'->' before the result layout");
    TPUSIM_ASSIGN_OR_RETURN(layout.result, ParseShape());
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close entry_computation_layout"));
    h.entry_computation_layout = std::move(layout);
  } else if (name == "input_output_alias") {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open input_output_alias"));
    std::vector<InputOutputAlias> aliases;
    if (!lexer_.TryConsume('}')) {
      do {
        InputOutputAlias a;
        TPUSIM_ASSIGN_OR_RETURN(a.output_index, ParseShapeIndex());
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(':', "after the output index"));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "before the aliased parameter"));
        TPUSIM_ASSIGN_OR_RETURN(a.parameter_number, lexer_.ReadInt("a parameter number"));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(',', "after the parameter number"));
        TPUSIM_ASSIGN_OR_RETURN(a.parameter_index, ParseShapeIndex());
        if (lexer_.TryConsume(',')) {
          std::string_view kind = lexer_.ReadIdentifier();
          if (kind != "may-alias" && kind != "must-alias") {
            return lexer_.Expected("'may-alias' or 'must-alias'");
          }
          a.kind = std::string(kind);
        }
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "after the alias"));
        aliases.push_back(std::move(a));
      } while (lexer_.TryConsume(','));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close input_output_alias"));
    }
    h.input_output_alias = std::move(aliases);
  } else if (name == "buffer_donor") {
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open buffer_donor"));
    std::vector<BufferDonor> donors;
    if (!lexer_.TryConsume('}')) {
      do {
        BufferDonor d;
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect('(', "before the donor parameter"));
        TPUSIM_ASSIGN_OR_RETURN(d.parameter_number, lexer_.ReadInt("a parameter number"));
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(',', "after the parameter number"));
        TPUSIM_ASSIGN_OR_RETURN(d.parameter_index, ParseShapeIndex());
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "after the donor"));
        donors.push_back(std::move(d));
      } while (lexer_.TryConsume(','));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect('}', "to close buffer_donor"));
    }
    h.buffer_donor = std::move(donors);
  } else if (name == "allow_spmd_sharding_propagation_to_parameters") {
    TPUSIM_ASSIGN_OR_RETURN(h.allow_spmd_sharding_propagation_to_parameters, ParseBoolList());
  } else if (name == "allow_spmd_sharding_propagation_to_output") {
    TPUSIM_ASSIGN_OR_RETURN(h.allow_spmd_sharding_propagation_to_output, ParseBoolList());
  } else if (name == "frontend_attributes") {
    TPUSIM_ASSIGN_OR_RETURN(h.frontend_attributes, ParseKeyValues("frontend attributes"));
  } else {
    TPUSIM_ASSIGN_OR_RETURN(std::string_view raw, lexer_.ReadRawValue());
    h.unknown.emplace(std::string(name), std::string(raw));
  }
  return Status::Ok();
}

Status Parser::ParseStackFrameTables() {
  StackFrameTables& t = module_->mutable_stack_frames();
  struct Section {
    std::string_view keyword;
    std::vector<StackFrameTables::Entry>* entries;
    bool has_string;
  };
  const Section sections[] = {{"FileNames", &t.file_names, true},
                              {"FunctionNames", &t.function_names, true},
                              {"FileLocations", &t.file_locations, false},
                              {"StackFrames", &t.stack_frames, false}};
  for (const Section& section : sections) {
    if (!lexer_.TryConsumeWord(section.keyword)) continue;
    while (lexer_.AtNumber()) {
      StackFrameTables::Entry e;
      TPUSIM_ASSIGN_OR_RETURN(e.id, lexer_.ReadInt("a table entry id"));
      if (section.has_string) {
        TPUSIM_ASSIGN_OR_RETURN(e.text, lexer_.ReadString("a quoted name"));
      } else {
        TPUSIM_ASSIGN_OR_RETURN(e.fields, ParseKeyValues("table entry fields"));
      }
      section.entries->push_back(std::move(e));
    }
  }
  return Status::Ok();
}

Status Parser::ParseComputation() {
  const SourceLocation loc = lexer_.NextLocation();
  bool is_entry = false;
  std::string_view name = lexer_.PeekIdentifier();
  if (name == "ENTRY") {
    lexer_.ReadIdentifier();
    is_entry = true;
  }
  TPUSIM_ASSIGN_OR_RETURN(name, lexer_.ExpectIdentifier("a computation name"));
  if (HloComputation* taken = module_->FindComputation(name)) {
    if (!inline_computations_.contains(taken)) {
      return lexer_.ErrorAt(loc, "duplicate computation name " + Quote(name));
    }
    // An inline computation took the name first: the written name wins.
    module_->RenameComputation(*taken, UnusedComputationName(taken->name()));
  }
  auto owned = std::make_unique<HloComputation>(std::string(name));
  owned->set_location(loc);
  HloComputation* computation = module_->AddComputation(std::move(owned));
  if (is_entry) {
    if (module_->entry_keyword()) {
      return lexer_.ErrorAt(
          loc, "second ENTRY computation " + Quote(name) + "; a module has exactly one");
    }
    module_->set_entry(computation);
    module_->set_entry_keyword(true);
  }
  // Optional signature `(p: shape, ...) -> shape`. As in XLA's parser, the
  // parameter instructions define the parameters, so the list is checked for
  // syntax only, and the result shape must be the root's (layouts and
  // dynamism aside).
  std::optional<Shape> declared_result;
  SourceLocation declared_result_loc;
  if (lexer_.TryConsume('(')) {
    if (!lexer_.TryConsume(')')) {
      do {
        TPUSIM_RETURN_IF_ERROR(lexer_.ExpectIdentifier("a parameter name").status());
        TPUSIM_RETURN_IF_ERROR(lexer_.Expect(':', "after the parameter name"));
        TPUSIM_RETURN_IF_ERROR(ParseDiscardedShape());
      } while (lexer_.TryConsume(','));
      TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "to close the parameter list"));
    }
    if (!lexer_.TryConsume("->")) return lexer_.Expected("'->' before the result shape");
    declared_result_loc = lexer_.NextLocation();
    TPUSIM_ASSIGN_OR_RETURN(declared_result, ParseShape());
  }
  last_top_level_ = computation;
  TPUSIM_RETURN_IF_ERROR(ParseComputationBody(*computation));
  if (declared_result.has_value()) {
    const Shape& root = computation->root()->shape();
    if (!WithoutDynamism(root).Compatible(WithoutDynamism(*declared_result))) {
      return lexer_.ErrorAt(declared_result_loc,
                            "result shape " + declared_result->ToString(false) +
                                " of computation " + Quote(name) +
                                " is not that of its root instruction " +
                                Quote(computation->root()->name()) + ", " + root.ToString(false));
    }
  }
  if (lexer_.Peek() == ',') {
    // `, execution_thread="host"` after the closing brace.
    lexer_.Advance(1);
    if (!lexer_.TryConsumeWord("execution_thread")) return lexer_.Expected("'execution_thread'");
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect('=', "after execution_thread"));
    TPUSIM_ASSIGN_OR_RETURN(std::string thread, lexer_.ReadString("a quoted thread name"));
    computation->set_execution_thread(std::move(thread));
  }
  return Status::Ok();
}

Status Parser::ParseComputationBody(HloComputation& computation) {
  TPUSIM_RETURN_IF_ERROR(lexer_.Expect('{', "to open the computation body"));
  names_.Clear();
  made_up_names_.clear();
  pending_operands_.clear();
  pending_control_.clear();
  bool saw_root = false;
  while (!lexer_.TryConsume('}')) {
    if (lexer_.AtEnd()) {
      return lexer_.ErrorAt(lexer_.Location(), "unexpected end of file in computation " +
                                                   Quote(computation.name()) + ", expected '}'");
    }
    TPUSIM_RETURN_IF_ERROR(ParseInstruction(computation, saw_root));
  }
  if (computation.instructions().empty()) {
    return lexer_.ErrorAt(computation.location(),
                          "computation " + Quote(computation.name()) + " has no instructions");
  }
  if (!saw_root) computation.set_root(computation.instructions().back().get());
  return ResolveComputation(computation);
}

std::string Parser::UnusedComputationName(const std::string& base) const {
  std::string name = base;
  for (int64_t n = 1; module_->FindComputation(name) != nullptr; ++n) {
    name = base + "." + std::to_string(n);
  }
  return name;
}

bool Parser::AtInlineComputation() {
  const size_t start = lexer_.position();
  bool inline_body = false;
  if (lexer_.TryConsume('{')) {
    if (lexer_.PeekIdentifier() == "ROOT") {
      inline_body = true;
    } else if (!lexer_.ReadIdentifier().empty()) {
      inline_body = lexer_.Peek() == '=';
    }
  }
  lexer_.Rewind(start);
  return inline_body;
}

StatusOr<HloComputation*> Parser::ParseInlineComputation(const HloInstruction& caller,
                                                         std::string_view attribute) {
  const SourceLocation loc = lexer_.NextLocation();
  if (inline_depth_ >= kMaxInlineComputationDepth) {
    return lexer_.ErrorAt(loc, "computations written inline nest more than " +
                                   std::to_string(kMaxInlineComputationDepth) + " deep");
  }
  auto owned = std::make_unique<HloComputation>(
      UnusedComputationName(caller.name() + "." + std::string(attribute)));
  owned->set_location(loc);
  HloComputation* computation = module_->AddComputation(std::move(owned));
  inline_computations_.insert(computation);
  // The caller's computation is half parsed: set its names and pending
  // references aside, and the attributes its instruction has so far.
  NameTable outer_names = std::move(names_);
  names_ = NameTable();
  auto outer_made_up_names = std::move(made_up_names_);
  std::vector<PendingOperand> outer_operands = std::move(pending_operands_);
  pending_operands_.clear();
  auto outer_control = std::move(pending_control_);
  pending_control_.clear();
  std::vector<Attribute> outer_attributes = std::move(attribute_scratch_);
  attribute_scratch_.clear();
  ++inline_depth_;
  const Status body = ParseComputationBody(*computation);
  --inline_depth_;
  names_ = std::move(outer_names);
  made_up_names_ = std::move(outer_made_up_names);
  pending_operands_ = std::move(outer_operands);
  pending_control_ = std::move(outer_control);
  attribute_scratch_ = std::move(outer_attributes);
  TPUSIM_RETURN_IF_ERROR(body);
  return computation;
}

Status Parser::ParseInstruction(HloComputation& computation, bool& saw_root) {
  const SourceLocation loc = lexer_.NextLocation();
  bool is_root = false;
  if (lexer_.PeekIdentifier() == "ROOT") {
    lexer_.ReadIdentifier();
    is_root = true;
  }
  const std::string_view name = lexer_.ReadIdentifier();
  if (name.empty()) return lexer_.Expected("an instruction name");
  if (!lexer_.TryConsume('=')) return lexer_.ExpectFailed('=', "after the instruction name");
  TPUSIM_ASSIGN_OR_RETURN(HloInstruction * inst,
                          ParseInstructionRhs(computation, name, loc, /*in_operand_list=*/false));
  if (is_root) {
    if (saw_root) {
      return lexer_.ErrorAt(loc, "second ROOT instruction " + Quote(name) + " in computation " +
                                     Quote(computation.name()));
    }
    saw_root = true;
    computation.set_root(inst);
  }
  return Status::Ok();
}

StatusOr<HloInstruction*> Parser::ParseInstructionRhs(HloComputation& computation,
                                                      std::string_view name, SourceLocation loc,
                                                      bool in_operand_list) {
  const size_t shape_loc = lexer_.Mark();
  // The instruction is made first so that its shape is parsed in place (a
  // Shape is large to move); the opcode is filled in once it is read. `new`
  // rather than make_unique: the Shape() then initialises the constructor's
  // parameter directly, one move fewer per instruction.
  std::unique_ptr<HloInstruction> owned(
      new HloInstruction(std::string(name), HloOpcode::kParameter, Shape()));
  HloInstruction* inst = owned.get();
  bool has_shape = false;
  if (AtShape()) {
    TPUSIM_RETURN_IF_ERROR(ParseShapeInto(inst->mutable_shape()));
    has_shape = true;
  }
  const size_t opcode_loc = lexer_.Mark();
  std::string_view word = lexer_.ReadIdentifier();
  if (word.empty()) {
    return has_shape ? lexer_.Expected("an opcode") : lexer_.Expected("a shape or an opcode");
  }
  std::optional<HloOpcode> wrapped;
  TPUSIM_ASSIGN_OR_RETURN(HloOpcode opcode, ParseOpcode(word, opcode_loc, wrapped));
  inst->opcode_ = opcode;
  inst->set_location(loc);
  if (wrapped) inst->set_async_wrapped_opcode(*wrapped);
  // An instruction written as an operand has no name: XLA's parser calls it
  // OPCODE.anon, with .1, .2, ... for the next ones of that opcode.
  if (name.empty()) {
    GiveMadeUpName(inst, std::string(word) + ".anon");
  } else if (!ClaimName(inst)) {
    return lexer_.ErrorAt(loc, "duplicate instruction name " + Quote(name) + " in computation " +
                                   Quote(computation.name()));
  }
  if (!has_shape && (opcode == HloOpcode::kParameter || opcode == HloOpcode::kConstant)) {
    return lexer_.ErrorAt(
        shape_loc, "expected a shape before " + Quote(word) + " (its shape cannot be inferred)");
  }

  if (!lexer_.TryConsume('(')) return lexer_.ExpectFailed('(', "after the opcode");
  if (opcode == HloOpcode::kParameter) {
    const size_t nloc = lexer_.Mark();
    TPUSIM_ASSIGN_OR_RETURN(int64_t number, lexer_.ReadInt("a parameter number"));
    if (number < 0) return lexer_.ErrorAt(nloc, "parameter number must be non-negative");
    if (number < computation.parameter_count() && computation.parameters()[number] != nullptr) {
      return lexer_.ErrorAt(nloc, "duplicate parameter number " + std::to_string(number) +
                                      " in computation " + Quote(computation.name()));
    }
    if (number > 1'000'000) return lexer_.ErrorAt(nloc, "parameter number is implausibly large");
    inst->set_parameter_number(number);
    computation.SetParameter(number, inst);
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "after the parameter number"));
  } else if (opcode == HloOpcode::kConstant) {
    TPUSIM_ASSIGN_OR_RETURN(ConstantLiteral literal, ParseLiteral(inst->shape()));
    inst->set_literal(std::move(literal));
    TPUSIM_RETURN_IF_ERROR(lexer_.Expect(')', "after the constant literal"));
  } else {
    TPUSIM_RETURN_IF_ERROR(ParseOperands(computation, inst));
  }
  // Added after its operands, so that instructions written inside its
  // operand list come first, as their users need (and their shapes are
  // inferred first).
  computation.AddInstruction(std::move(owned));
  if (!has_shape) missing_shapes_.push_back(inst);
  TPUSIM_RETURN_IF_ERROR(ParseAttributes(*inst, in_operand_list));
  // As XLA's parser: a window left out is the empty one, which is right for
  // a scalar operand and a located rank mismatch for any other.
  if ((inst->opcode() == HloOpcode::kReduceWindow ||
       inst->opcode() == HloOpcode::kSelectAndScatter) &&
      inst->FindAttribute(AttrId::kWindow) == nullptr) {
    inst->mutable_attributes().push_back(
        Attribute{AttrId::kWindow, "", AttrValue(Box<Window>(Window{})), inst->location()});
  }
  return inst;
}

std::string Parser::UnusedInstructionName(const std::string& base) const {
  std::string name = base;
  for (int64_t n = 1; names_.Find(name) != nullptr; ++n) name = base + "." + std::to_string(n);
  return name;
}

void Parser::GiveMadeUpName(HloInstruction* instruction, std::string base) {
  instruction->name_ = UnusedInstructionName(base);
  names_.Insert(instruction);
  made_up_names_.insert_or_assign(instruction, std::move(base));
}

bool Parser::ClaimName(HloInstruction* instruction) {
  if (names_.Insert(instruction)) return true;
  HloInstruction* holder = names_.Find(instruction->name());
  const auto made_up = made_up_names_.find(holder);
  if (made_up == made_up_names_.end()) return false;
  // The holder moves to its next free name. Its old slot in names_ stays,
  // matching neither name any more, so the written name fits after it.
  GiveMadeUpName(holder, made_up->second);
  return names_.Insert(instruction);
}

HloInstruction* Parser::FindWrittenName(std::string_view name) const {
  if (name.empty()) return nullptr;  // an operand written as a shape alone
  HloInstruction* found = names_.Find(name);
  if (found != nullptr && !made_up_names_.empty() && made_up_names_.contains(found)) {
    return nullptr;
  }
  return found;
}

Status Parser::ParseOperands(HloComputation& computation, HloInstruction* instruction) {
  if (lexer_.TryConsume(')')) return Status::Ok();
  const size_t first = pending_operands_.size();
  do {
    const size_t start = lexer_.Mark();
    // Older dumps print each operand's shape before its name.
    size_t shape_location = kNoShape;
    if (AtShape()) {
      shape_location = start;
      TPUSIM_RETURN_IF_ERROR(ParseShape().status());
    }
    const size_t loc = lexer_.Mark();
    const std::string_view name = lexer_.ReadIdentifier();
    if (name.empty()) {
      // A single instruction's operand written as a shape alone
      // (`multiply(f32[2], f32[2])`) becomes a parameter of its own in
      // AddOperandParameters.
      if (!single_instruction_ || inline_depth_ != 0 || shape_location == kNoShape) {
        return lexer_.Expected("an operand name");
      }
    } else if (lexer_.Peek() == '(') {
      // `add(f32[4] parameter(0), multiply(...))`: an instruction written in
      // place of its name, as XLA's tests write them: read again from its shape.
      // The depth counts through computations written inline in between,
      // so that the two kinds of nesting cannot multiply the recursion.
      if (nested_instruction_depth_ >= kMaxNestedInstructionDepth) {
        return lexer_.ErrorAt(start, "instructions written as operands nest more than " +
                                         std::to_string(kMaxNestedInstructionDepth) + " deep");
      }
      lexer_.Rewind(start);
      ++nested_instruction_depth_;
      StatusOr<HloInstruction*> nested =
          ParseInstructionRhs(computation, "", lexer_.NextLocation(), /*in_operand_list=*/true);
      --nested_instruction_depth_;
      TPUSIM_RETURN_IF_ERROR(nested.status());
      pending_operands_.push_back({instruction, {{}, start}, kNoShape, *nested});
      continue;
    }
    pending_operands_.push_back({instruction, {name, loc}, shape_location});
  } while (lexer_.TryConsume(','));
  if (!lexer_.TryConsume(')')) return lexer_.ExpectFailed(')', "to close the operand list");
  // Usually every operand is already defined: link them now, which gives the
  // same operand and user order as resolving the whole computation at its
  // end. After the first forward reference everything waits for the end, so
  // that users are still added in text order.
  if (first != 0) return Status::Ok();
  const size_t end = pending_operands_.size();
  operand_scratch_.clear();
  for (size_t i = first; i < end; ++i) {
    // Operands of an instruction written as an operand wait too.
    if (pending_operands_[i].instruction != instruction) return Status::Ok();
    const PendingOperand& pending = pending_operands_[i];
    HloInstruction* operand =
        pending.defined != nullptr ? pending.defined : FindWrittenName(pending.name.name);
    if (operand == nullptr) return Status::Ok();
    operand_scratch_.push_back(operand);
  }
  instruction->ReserveOperands(operand_scratch_.size());
  for (HloInstruction* operand : operand_scratch_) instruction->AppendOperand(operand);
  pending_operands_.resize(first);
  return Status::Ok();
}

StatusOr<HloOpcode> Parser::ParseOpcode(std::string_view word, size_t loc,
                                        std::optional<HloOpcode>& wrapped) {
  if (std::optional<HloOpcode> op = HloOpcodeFromName(word)) return *op;
  // `X-start`, `X-update`, `X-done` for an X without async opcodes of its own.
  struct Suffix {
    std::string_view text;
    HloOpcode opcode;
  };
  for (const Suffix& s : {Suffix{"-start", HloOpcode::kAsyncStart},
                          Suffix{"-update", HloOpcode::kAsyncUpdate},
                          Suffix{"-done", HloOpcode::kAsyncDone}}) {
    if (word.size() > s.text.size() && word.substr(word.size() - s.text.size()) == s.text) {
      if (std::optional<HloOpcode> inner =
              HloOpcodeFromName(word.substr(0, word.size() - s.text.size()))) {
        wrapped = *inner;
        return s.opcode;
      }
    }
  }
  return lexer_.ErrorAt(loc, "unknown opcode " + Quote(word));
}

Status Parser::ResolveComputation(HloComputation& computation) {
  auto lookup = [&](const PendingName& p, const char* role) -> StatusOr<HloInstruction*> {
    HloInstruction* found = FindWrittenName(p.name);
    if (found == nullptr) {
      return lexer_.ErrorAt(p.location, std::string("undefined ") + role + " " + Quote(p.name) +
                                            " in computation " + Quote(computation.name()));
    }
    return found;
  };
  for (size_t i = 0; i < pending_operands_.size(); ++i) {
    const PendingOperand& p = pending_operands_[i];
    if (i == 0 || pending_operands_[i - 1].instruction != p.instruction) {
      // Operands of one instruction are contiguous: size its list once.
      size_t run = i;
      while (run < pending_operands_.size() && pending_operands_[run].instruction == p.instruction) {
        ++run;
      }
      p.instruction->ReserveOperands(run - i);
    }
    HloInstruction* operand = p.defined;
    if (operand == nullptr) {
      TPUSIM_ASSIGN_OR_RETURN(operand, lookup(p.name, "operand"));
    }
    p.instruction->AppendOperand(operand);
  }
  for (auto& [inst, names] : pending_control_) {
    for (const PendingName& p : names) {
      TPUSIM_ASSIGN_OR_RETURN(HloInstruction * pred, lookup(p, "control predecessor"));
      inst->AddControlPredecessor(pred);
    }
  }
  for (int64_t i = 0; i < computation.parameter_count(); ++i) {
    if (computation.parameters()[i] == nullptr) {
      return lexer_.ErrorAt(computation.location(), "computation " + Quote(computation.name()) +
                                                        " has no parameter(" + std::to_string(i) +
                                                        ") but has a higher-numbered parameter");
    }
  }
  return Status::Ok();
}

Status Parser::ResolveComputationReferences() {
  for (PendingComputationRef& ref : pending_computations_) {
    Attribute& attr = ref.instruction->mutable_attributes()[ref.attribute_index];
    std::vector<HloComputation*> resolved;
    resolved.reserve(ref.items.size());
    for (const PendingComputationRef::Item& item : ref.items) {
      if (item.inline_computation != nullptr) {
        resolved.push_back(item.inline_computation);
        continue;
      }
      const PendingName& p = item.name;
      HloComputation* c = module_->FindComputation(p.name);
      if (c == nullptr) {
        return lexer_.ErrorAt(p.location, "undefined computation " + Quote(p.name) +
                                              " in attribute " + Quote(attr.spelling()));
      }
      resolved.push_back(c);
    }
    if (auto* single = std::get_if<HloComputation*>(&attr.value)) {
      *single = resolved.front();
    } else {
      std::get<ComputationList>(attr.value).computations = std::move(resolved);
    }
  }
  return Status::Ok();
}

Status Parser::InferMissingShapes() {
  // Shapes are inferred in text order; an operand written later without a
  // shape of its own has none yet, and inference must not read its placeholder.
  std::unordered_set<const HloInstruction*> unknown(missing_shapes_.begin(), missing_shapes_.end());
  for (HloInstruction* inst : missing_shapes_) {
    for (const HloInstruction* operand : inst->operands()) {
      if (unknown.count(operand)) {
        return lexer_.ErrorAt(inst->location(), "instruction '" + inst->name() +
                                                    "' has no shape and its operand '" +
                                                    operand->name() +
                                                    "' has none yet; write its shape before the "
                                                    "opcode");
      }
    }
    StatusOr<Shape> shape = InferShape(*inst);
    if (!shape.ok()) {
      return lexer_.ErrorAt(inst->location(),
                            "instruction '" + inst->name() + "' has no shape and its shape " +
                                "cannot be inferred: " + shape.status().message() +
                                "; write its shape before the opcode");
    }
    inst->mutable_shape() = std::move(shape).value();
    unknown.erase(inst);
  }
  return Status::Ok();
}

}  // namespace internal
}  // namespace tpusim::hlo
