// The HLO text parser on small inline modules: every header attribute, the
// stack-frame tables, shapes and layout extras, every attribute kind, constants
// of every type. Each test checks the typed values the parser produced and that
// printing is a faithful round trip: ParseHloModule(PrintModule(m)) equals m,
// and printing that again gives the same bytes.
#include "sim/hlo/parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/hlo/printer.h"
#include "tests/hlo/find_instruction.h"

namespace tpusim::hlo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

/// Parses `text` (failing the test on an error) and checks the round trip.
/// Returns nullptr when parsing failed, so callers ASSERT_NE(m, nullptr).
std::unique_ptr<HloModule> Parse(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return nullptr;
  std::unique_ptr<HloModule> module = std::move(parsed).value();

  const std::string printed = PrintModule(*module);
  StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(printed, "printed.hlo");
  EXPECT_TRUE(again.ok()) << again.status().message() << "\n--- printed ---\n" << printed;
  if (again.ok()) {
    std::string why;
    EXPECT_TRUE(ModulesEqual(*module, **again, &why)) << why << "\n--- printed ---\n" << printed;
    EXPECT_EQ(PrintModule(**again), printed) << "printing is not a fixed point";
  }
  return module;
}

/// The error message of a text that must not parse.
std::string ParseError(std::string_view text) {
  StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(text, "bad.hlo");
  EXPECT_FALSE(parsed.ok()) << "parsed, but should not have:\n" << text;
  return parsed.ok() ? "" : parsed.status().message();
}

uint64_t Bits(double d) { return std::bit_cast<uint64_t>(d); }

/// An int-list attribute (dimensions, lhs_batch_dims, ...); fails the test and
/// returns an empty list when it is absent.
std::vector<int64_t> IntList(const HloInstruction* instruction, AttrId id) {
  const auto* list = instruction->GetAttr<std::vector<int64_t>>(id);
  if (list == nullptr) {
    ADD_FAILURE() << instruction->name() << " has no int-list attribute " << AttrName(id);
    return {};
  }
  return *list;
}

// --- module header ------------------------------------------------------------

TEST(ParseHeader, EveryKnownAttributeGetsItsTypedValue) {
  auto m = Parse(
      R"(HloModule jit_f.1, is_scheduled=true, entry_computation_layout={(f32[2]{0:T(128)S(1)}, (s32[], bf16[8,128]{1,0:T(8,128)(2,1)}))->f32[2]{0}}, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {1}, must-alias) }, buffer_donor={ (0, {}), (1, {0}) }, alias_passthrough_params=true, replica_count=2, num_partitions=4, allow_spmd_sharding_propagation_to_parameters={true,false}, allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={xla.sdy.meshes="{mesh = #sdy.mesh<[\"x\"=4]>}", fingerprint="abc"}

ENTRY main {
  p = f32[2]{0} parameter(0)
  q = (s32[], bf16[8,128]) parameter(1)
  ROOT r = f32[2]{0} negate(p)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "jit_f.1");
  const ModuleHeader& h = m->header();
  EXPECT_EQ(h.is_scheduled, true);
  EXPECT_TRUE(m->is_scheduled());
  ASSERT_TRUE(h.entry_computation_layout.has_value());
  const ComputationLayout& layout = *h.entry_computation_layout;
  ASSERT_EQ(layout.parameters.size(), 2u);
  ASSERT_TRUE(layout.parameters[0].has_layout());
  EXPECT_EQ(layout.parameters[0].layout().memory_space, 1);
  ASSERT_EQ(layout.parameters[0].layout().tiles.size(), 1u);
  EXPECT_THAT(layout.parameters[0].layout().tiles[0].dimensions, ElementsAre(128));
  ASSERT_TRUE(layout.parameters[1].IsTuple());
  const Shape& bf16 = layout.parameters[1].tuple_shapes(1);
  EXPECT_EQ(bf16.element_type(), PrimitiveType::kBF16);
  ASSERT_EQ(bf16.layout().tiles.size(), 2u);
  EXPECT_THAT(bf16.layout().tiles[1].dimensions, ElementsAre(2, 1));
  EXPECT_EQ(layout.result.ToString(), "f32[2]{0}");

  ASSERT_TRUE(h.input_output_alias.has_value());
  ASSERT_EQ(h.input_output_alias->size(), 2u);
  const InputOutputAlias& alias = (*h.input_output_alias)[1];
  EXPECT_THAT(alias.output_index, ElementsAre(1));
  EXPECT_EQ(alias.parameter_number, 1);
  EXPECT_THAT(alias.parameter_index, ElementsAre(1));
  EXPECT_EQ(alias.kind, "must-alias");
  EXPECT_EQ((*h.input_output_alias)[0].kind, "may-alias");

  ASSERT_TRUE(h.buffer_donor.has_value());
  ASSERT_EQ(h.buffer_donor->size(), 2u);
  EXPECT_EQ((*h.buffer_donor)[1].parameter_number, 1);
  EXPECT_THAT((*h.buffer_donor)[1].parameter_index, ElementsAre(0));

  EXPECT_EQ(h.alias_passthrough_params, true);
  EXPECT_EQ(m->replica_count(), 2);
  EXPECT_EQ(m->num_partitions(), 4);
  EXPECT_EQ(h.allow_spmd_sharding_propagation_to_parameters, (std::vector<bool>{true, false}));
  EXPECT_EQ(h.allow_spmd_sharding_propagation_to_output, (std::vector<bool>{true}));
  ASSERT_TRUE(h.frontend_attributes.has_value());
  ASSERT_EQ(h.frontend_attributes->size(), 2u);
  EXPECT_EQ((*h.frontend_attributes)[0].key, "xla.sdy.meshes");
  EXPECT_EQ((*h.frontend_attributes)[0].value, "{mesh = #sdy.mesh<[\"x\"=4]>}");
  EXPECT_TRUE(h.unknown.empty());
  EXPECT_THAT(h.order,
              ElementsAre("is_scheduled", "entry_computation_layout", "input_output_alias",
                          "buffer_donor", "alias_passthrough_params", "replica_count",
                          "num_partitions", "allow_spmd_sharding_propagation_to_parameters",
                          "allow_spmd_sharding_propagation_to_output", "frontend_attributes"));
}

TEST(ParseHeader, AbsentAttributesStayAbsentAndDefaultToOne) {
  auto m = Parse("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->header().replica_count.has_value());
  EXPECT_EQ(m->replica_count(), 1);
  EXPECT_EQ(m->num_partitions(), 1);
  EXPECT_FALSE(m->is_scheduled());
  EXPECT_TRUE(m->header().order.empty());
}

TEST(ParseHeader, ShardingPropagationFlagsMayBeALoneBool) {
  auto m = Parse(
      R"(HloModule m, allow_spmd_sharding_propagation_to_parameters=false, allow_spmd_sharding_propagation_to_output=true

ENTRY e {
  ROOT p = f32[] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->header().allow_spmd_sharding_propagation_to_parameters, (std::vector<bool>{false}));
  EXPECT_EQ(m->header().allow_spmd_sharding_propagation_to_output, (std::vector<bool>{true}));
}

TEST(ParseHeader, UnknownAttributesAreKeptVerbatimInOrder) {
  auto m = Parse(
      R"(HloModule m, origin_recovery_table={ {"a", "b"}, {"c", "d"} }, num_partitions=2, debug_attributes=some_word

ENTRY e {
  ROOT p = f32[] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  const ModuleHeader& h = m->header();
  ASSERT_EQ(h.unknown.size(), 2u);
  EXPECT_EQ(h.unknown.at("origin_recovery_table"), R"({ {"a", "b"}, {"c", "d"} })");
  EXPECT_EQ(h.unknown.at("debug_attributes"), "some_word");
  EXPECT_THAT(h.order, ElementsAre("origin_recovery_table", "num_partitions", "debug_attributes"));
  EXPECT_THAT(
      PrintModule(*m),
      HasSubstr(
          R"(origin_recovery_table={ {"a", "b"}, {"c", "d"} }, num_partitions=2, debug_attributes=some_word)"));

  // A quoted string inside may span lines and hold a whole module, braces and all.
  const std::string table = R"({
  {"k"} : {"k__1"},
  "
    HloModule inner

    ENTRY %r (q: s32[2]) -> s32[2] {
      ROOT %q = s32[2]{0} parameter(0), sharding={maximal device=0}
    }
  "
})";
  auto quoted = Parse("HloModule m, origin_recovery_table=" + table +
                      "\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_NE(quoted, nullptr);
  EXPECT_EQ(quoted->header().unknown.at("origin_recovery_table"), table);
  EXPECT_EQ(quoted->entry()->name(), "e");
}

TEST(ParseHeader, OldStyleColonAfterTheModuleNameIsAccepted) {
  auto m = Parse("HloModule convolution.167:\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "convolution.167");
}

TEST(ParseStackFrames, FourTablesAreReadIntoEntries) {
  auto m = Parse(R"(HloModule m, entry_computation_layout={()->f32[]}

FileNames
1 "/src/model.py"
2 "/src/lib \"x\".py"

FunctionNames
1 "run.<locals>.body"

FileLocations
1 {file_name_id=1 function_name_id=1 line=13 end_line=13 column=25 end_column=33}
2 {file_name_id=2 function_name_id=1 line=7 end_line=8 column=1 end_column=2}

StackFrames
1 {file_location_id=1 parent_frame_id=0}
2 {file_location_id=2 parent_frame_id=1}

ENTRY main {
  ROOT c = f32[] constant(1), metadata={op_name="jit(f)/c" stack_frame_id=2}
}
)");
  ASSERT_NE(m, nullptr);
  const StackFrameTables& t = m->stack_frames();
  ASSERT_EQ(t.file_names.size(), 2u);
  EXPECT_EQ(t.file_names[1].id, 2);
  EXPECT_EQ(t.file_names[1].text, "/src/lib \"x\".py");
  ASSERT_EQ(t.function_names.size(), 1u);
  EXPECT_EQ(t.function_names[0].text, "run.<locals>.body");
  ASSERT_EQ(t.file_locations.size(), 2u);
  ASSERT_EQ(t.file_locations[0].fields.size(), 6u);
  EXPECT_EQ(t.file_locations[0].fields[2].key, "line");
  EXPECT_EQ(t.file_locations[0].fields[2].value, "13");
  ASSERT_EQ(t.stack_frames.size(), 2u);
  EXPECT_EQ(t.stack_frames[1].fields[1].key, "parent_frame_id");
  EXPECT_EQ(t.stack_frames[1].fields[1].value, "1");
  EXPECT_EQ(test::FindInstruction(*m, "c")->metadata_field("stack_frame_id"), "2");
}

// --- computations --------------------------------------------------------------

TEST(ParseComputation, WithoutEntryKeywordTheLastComputationIsTheEntry) {
  auto m = Parse(R"(HloModule m
first {
  ROOT a = f32[] parameter(0)
}
second {
  ROOT b = s32[] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(m->entry_keyword());
  ASSERT_NE(m->entry(), nullptr);
  EXPECT_EQ(m->entry()->name(), "second");
  EXPECT_TRUE(m->entry()->IsEntry());
  EXPECT_FALSE(m->computations()[0]->IsEntry());
}

TEST(ParseComputation, SignatureExecutionThreadAndRootInTheMiddle) {
  auto m = Parse(R"(HloModule m

%host_work (x: f32[4], y: (s32[], f32[4])) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%x)
  %y = (s32[], f32[4]{0}) parameter(1)
}, execution_thread="host"

ENTRY %main () -> f32[] {
  ROOT %c = f32[] constant(0)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->entry_keyword());
  EXPECT_EQ(m->entry()->name(), "main");
  const HloComputation& host = *m->computations()[0];
  EXPECT_EQ(host.execution_thread(), "host");
  EXPECT_EQ(host.root()->name(), "n");
  ASSERT_EQ(host.parameter_count(), 2);
  EXPECT_EQ(host.parameters()[1]->name(), "y");
  EXPECT_EQ(host.parameters()[1]->parameter_number(), 1);
  EXPECT_EQ(m->entry()->execution_thread(), "");
}

TEST(ParseComputation, WithoutRootTheLastInstructionIsTheRoot) {
  auto m = Parse("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  n = f32[] negate(p)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->name(), "n");
}

TEST(ParseComputation, LineCommentsEndAtCrLfAndAtALoneCr) {
  for (const char* eol : {"\r\n", "\r"}) {
    const std::string text = std::string("HloModule m // a") + eol + "ENTRY e {" + eol +
                             "  ROOT c = f32[1] constant({1}) // b" + eol + "}";
    auto m = Parse(text);
    ASSERT_NE(m, nullptr) << "line end " << (eol[1] == '\n' ? "CR-LF" : "CR");
    EXPECT_NE(test::FindInstruction(*m, "c"), nullptr);
  }
}

TEST(ParseComputation, WrappedInstructionsCommentsAndOddNames) {
  auto m = Parse(R"(HloModule SyncTensorsGraph.43 // trailing comment

/* a block
   comment */
ENTRY %main.1-x {
  %get-tuple-element.20 = f32[2]{0} parameter(0)
  %None.4 = f32[2]{0}
      parameter(/*index=1*/1)
  ROOT %t = (f32[2]{0}, f32[2]{0}, f32[2]{0}, f32[2]{0}, f32[2]{0}, /*index=5*/f32[2]{0})
      tuple(%get-tuple-element.20, %None.4, %None.4, %None.4, %None.4,
            /*index=5*/%None.4)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "SyncTensorsGraph.43");
  EXPECT_EQ(m->entry()->name(), "main.1-x");
  const HloInstruction* t = test::FindInstruction(*m, "t");
  EXPECT_EQ(t->operand_count(), 6);
  EXPECT_EQ(t->operand(0)->name(), "get-tuple-element.20");
  EXPECT_EQ(t->shape().tuple_size(), 6);
  // An operand used five times has the tuple as its user once.
  EXPECT_EQ(test::FindInstruction(*m, "None.4")->users().size(), 1u);
  EXPECT_EQ(m->instruction_count(), 3);
}

TEST(ParseComputation, OperandsWithInlineShapesAreResolvedByName) {
  auto m = Parse(R"(HloModule torch

ENTRY %SyncTensorsGraph.8 (p0: f32[2], p1: (f32[], s32[])) -> f32[2] {
  %p0 = f32[2]{0} parameter(0)
  %p1 = (f32[], s32[]) parameter(1)
  %gte = f32[] get-tuple-element((f32[], s32[]) %p1), index=0
  %b = f32[2]{0} broadcast(f32[] %gte), dimensions={}
  ROOT %add = f32[2]{0} add(f32[2]{0} %p0, f32[2]{0} %b)
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* add = test::FindInstruction(*m, "add");
  ASSERT_EQ(add->operand_count(), 2);
  EXPECT_EQ(add->operand(0), test::FindInstruction(*m, "p0"));
  EXPECT_EQ(add->operand(1), test::FindInstruction(*m, "b"));
  EXPECT_EQ(test::FindInstruction(*m, "gte")->operand(0), test::FindInstruction(*m, "p1"));
  // Printing drops the inline shapes.
  EXPECT_THAT(PrintModule(*m), HasSubstr("add(%p0, %b)"));
}

TEST(ParseComputation, MissingShapesAreInferred) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  param = (s32[], f32[2,3]{1,0}) parameter(0)
  count = get-tuple-element(param), index=0
  data = get-tuple-element(param), index=1
  ROOT res = copy(data)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::FindInstruction(*m, "count")->shape().ToString(false), "s32[]");
  EXPECT_EQ(test::FindInstruction(*m, "data")->shape().ToString(false), "f32[2,3]");
  EXPECT_EQ(test::FindInstruction(*m, "res")->shape().ToString(false), "f32[2,3]");
  EXPECT_EQ(test::FindInstruction(*m, "res")->shape().element_type(), PrimitiveType::kF32);

  // Unary, binary, ternary, dot, tuple and conditional results, as XLA's Infer*
  // tests leave them out.
  auto more = Parse(R"(HloModule m
neg {
  x = f32[] parameter(0)
  ROOT n = negate(x)
}
id {
  y = f32[] parameter(0)
  ROOT c = f32[] copy(y)
}
ENTRY e {
  a = f32[2,10]{1,0} parameter(0)
  b = f32[10,2]{1,0} parameter(1)
  ab = abs(a)
  d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = add(d, d)
  p = pred[] constant(true)
  sel = select(p, s, s)
  f = f32[] constant(1)
  cond = conditional(p, f, f), true_computation=neg, false_computation=id
  ROOT t = tuple(ab, sel, cond)
}
)");
  ASSERT_NE(more, nullptr);
  EXPECT_EQ(test::FindInstruction(*more, "ab")->shape().ToString(false), "f32[2,10]");
  EXPECT_EQ(test::FindInstruction(*more, "d")->shape().ToString(false), "f32[2,2]");
  EXPECT_EQ(test::FindInstruction(*more, "s")->shape().ToString(false), "f32[2,2]");
  EXPECT_EQ(test::FindInstruction(*more, "sel")->shape().ToString(false), "f32[2,2]");
  EXPECT_EQ(test::FindInstruction(*more, "cond")->shape().ToString(false), "f32[]");
  EXPECT_EQ(test::FindInstruction(*more, "n")->shape().ToString(false), "f32[]");
  EXPECT_EQ(test::FindInstruction(*more, "t")->shape().ToString(false),
            "(f32[2,10], f32[2,2], f32[])");
}

TEST(ParseComputation, ComputationsMayBeReferencedBeforeTheirDefinition) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->name(), "e");
  ASSERT_NE(test::FindInstruction(*m, "r")->to_apply(), nullptr);
  EXPECT_EQ(test::FindInstruction(*m, "r")->to_apply()->name(), "add");
}

// --- text without a module header ------------------------------------------------

TEST(ParseWithoutHeader, AComputationAloneIsAModuleNamedAfterItsEntry) {
  // XLA's ParseSingleEntryComputation and ParseComputationNameClosingBrace.
  auto entry = Parse(R"(ENTRY test {
  p = f32[2] parameter(0)
  ROOT r = f32[2] negate(p)
}
)");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->name(), "module_test");
  EXPECT_EQ(entry->entry()->name(), "test");
  EXPECT_THAT(PrintModule(*entry), ::testing::StartsWith("HloModule module_test\n"));
  auto bare = Parse("test {\n  ROOT p = f32[1,2] parameter(0)\n}\n");
  ASSERT_NE(bare, nullptr);
  EXPECT_EQ(bare->name(), "module_test");
  EXPECT_EQ(bare->entry()->name(), "test");
  // A computation named `b` written against its signature is not a buffer
  // shape `b(...)` starting an instruction.
  auto named_b = Parse("b(p: f32[]) -> f32[] {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_NE(named_b, nullptr);
  EXPECT_EQ(named_b->entry()->name(), "b");
}

TEST(ParseWithoutHeader, TheEntryIsTheEntryComputationOrElseTheLast) {
  // XLA's ParseMultiComputations and ParseMultiComputationsWithEntry.
  auto last = Parse(R"(comp1 {
  ROOT a = f32[] parameter(0)
}
comp2 {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=comp1
}
)");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->name(), "module_comp2");
  EXPECT_EQ(last->entry()->name(), "comp2");
  auto marked = Parse(R"(ENTRY comp1 {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=comp2
}
comp2 {
  ROOT a = f32[] parameter(0)
}
)");
  ASSERT_NE(marked, nullptr);
  EXPECT_EQ(marked->name(), "module_comp1");
  EXPECT_EQ(marked->entry()->name(), "comp1");
}

TEST(ParseWithoutHeader, ErrorsAreLocated) {
  // XLA's DuplicateParameterNumberIsDetected, written without a header.
  EXPECT_THAT(ParseError("ENTRY e {\n  a = s8[] parameter(0)\n  b = s8[] parameter(0)\n"
                         "  ROOT t = (s8[], s8[]) tuple(a, b)\n}\n"),
              HasSubstr("bad.hlo:3:22: error: duplicate parameter number 0 in computation 'e'"));
  EXPECT_THAT(ParseError("[2]"),
              HasSubstr("bad.hlo:1:1: error: expected 'HloModule', a computation or an "
                        "instruction at start of text, got '['"));
}

TEST(ParseSingleInstruction, OperandsBecomeParametersOfTheirWrittenShape) {
  // XLA's HloParserSingleOpTest.SingleOp.
  auto m = Parse("%multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %x, f32[2,4]{1,0} %y)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "_");
  const HloComputation* entry = m->entry();
  ASSERT_EQ(m->computations().size(), 1u);
  EXPECT_EQ(entry->name(), "_");
  EXPECT_EQ(entry->root()->name(), "multiply");
  ASSERT_EQ(entry->parameter_count(), 2);
  EXPECT_EQ(entry->parameters()[0]->name(), "x");
  EXPECT_EQ(entry->parameters()[1]->name(), "y");
  EXPECT_EQ(entry->parameters()[1]->shape(), entry->root()->shape());
  // Parameters come first, as XLA's builder adds them before their user.
  EXPECT_EQ(entry->instructions().front()->name(), "x");
  EXPECT_EQ(entry->root()->operand(1), entry->parameters()[1]);
  EXPECT_THAT(PrintModule(*m), ::testing::StartsWith("HloModule _\n"));
}

TEST(ParseSingleInstruction, RepeatedOperandsInferredShapesAndInlineComputations) {
  auto repeated = Parse("m = add(f32[2] a, f32[2] a)");
  ASSERT_NE(repeated, nullptr);
  EXPECT_EQ(repeated->entry()->parameter_count(), 1);
  EXPECT_EQ(repeated->entry()->root()->shape(), *ParseShape("f32[2]"));
  auto reduce = Parse(R"(r = f32[] reduce(f32[4] p, f32[] z), dimensions={0}, to_apply={
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
})");
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->entry()->name(), "_");
  EXPECT_EQ(reduce->entry()->parameter_count(), 2);
  const HloComputation* adder = reduce->entry()->root()->called_computation(AttrId::kToApply);
  ASSERT_NE(adder, nullptr);
  EXPECT_EQ(adder->name(), "r.to_apply");
  EXPECT_EQ(adder->root()->opcode(), HloOpcode::kAdd);
}

// XLA's HloParserSingleOpTest.SingleOpNoNames and CanonicalOp: an operand
// written as a shape alone is a parameter of its own, and an instruction
// without `NAME =` is named after its opcode.
TEST(ParseSingleInstruction, OperandsWithoutNamesAndTheCanonicalForm) {
  for (const std::string_view text :
       {"%multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0}, f32[2,4]{1,0})",
        "f32[2,4]{1,0} multiply(f32[2,4]{1,0}, f32[2,4]{1,0})"}) {
    SCOPED_TRACE(text);
    auto m = Parse(text);
    ASSERT_NE(m, nullptr);
    const HloComputation* entry = m->entry();
    ASSERT_EQ(entry->parameter_count(), 2);
    const HloInstruction* root = entry->root();
    EXPECT_EQ(root->opcode(), HloOpcode::kMultiply);
    EXPECT_EQ(root->operand(0), entry->parameters()[0]);
    EXPECT_EQ(root->operand(1), entry->parameters()[1]);
    EXPECT_EQ(entry->parameters()[1]->shape(), root->shape());
  }
  // XLA names an operand written as a shape alone `_N` after its parameter
  // number, and the canonical form's instruction `_` after its module; a
  // written name of the same spelling keeps it.
  auto mixed = Parse("f32[2] add(f32[2] x, f32[2])");
  ASSERT_NE(mixed, nullptr);
  EXPECT_EQ(mixed->entry()->root()->name(), "_");
  EXPECT_EQ(mixed->entry()->parameters()[0]->name(), "x");
  EXPECT_EQ(mixed->entry()->parameters()[1]->name(), "_1");
  auto clash = Parse("f32[2] add(f32[2], f32[2] _0)");
  ASSERT_NE(clash, nullptr);
  EXPECT_EQ(clash->entry()->parameters()[1]->name(), "_0");
  EXPECT_EQ(clash->entry()->parameters()[0]->name(), "_0.1");
  auto self = Parse("f32[2] negate(f32[2] _)");
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->entry()->parameters()[0]->name(), "_");
  EXPECT_EQ(self->entry()->root()->name(), "_.1");
  EXPECT_EQ(self->entry()->root()->operand(0), self->entry()->parameters()[0]);
}

TEST(ParseSingleInstruction, ErrorsAreLocated) {
  EXPECT_THAT(ParseError("m = f32[2] multiply(f32[2] a, b)"),
              HasSubstr("bad.hlo:1:31: error: operand 'b' of a single instruction has no shape"));
  EXPECT_THAT(ParseError("m = f32[2] negate(f32[2] a)\nn = f32[2] negate(m)\n"),
              HasSubstr("bad.hlo:2:1: error: expected end of text after a single instruction"));
}

// XLA's SimpleNesting, AmbiguousNames, MixAnonAndNonAnonOperands and
// TupleShapeInsideAnonymousInstr: an operand may be an instruction written in
// place, named OPCODE.anon (then .1, .2, ...) and placed before its user, as
// XLA's parser prints them back.
TEST(ParseNestedInstructions, OperandsWrittenInPlaceBecomeInstructionsBeforeTheirUser) {
  auto simple = Parse(R"(HloModule test
ENTRY test {
    ROOT root = add(f32[10] parameter(0), multiply(f32[10] parameter(1), f32[10] parameter(2)))
})");
  ASSERT_NE(simple, nullptr);
  EXPECT_EQ(PrintModule(*simple), R"(HloModule test

ENTRY %test (parameter.anon: f32[10], parameter.anon.1: f32[10], parameter.anon.2: f32[10]) -> f32[10] {
  %parameter.anon = f32[10] parameter(0)
  %parameter.anon.1 = f32[10] parameter(1)
  %parameter.anon.2 = f32[10] parameter(2)
  %multiply.anon = f32[10] multiply(%parameter.anon.1, %parameter.anon.2)
  ROOT %root = f32[10] add(%parameter.anon, %multiply.anon)
}
)");
  // `add` is a name before a comma and an opcode before '('.
  auto ambiguous = Parse(R"(HloModule test
ENTRY test {
  add = add(f32[10] parameter(0), f32[10] parameter(1))
  ROOT root = tuple(add, add(add, add), add)
})");
  ASSERT_NE(ambiguous, nullptr);
  const HloInstruction* root = ambiguous->entry()->root();
  ASSERT_EQ(root->operand_count(), 3);
  EXPECT_EQ(root->operand(0)->name(), "add");
  EXPECT_EQ(root->operand(1)->name(), "add.anon");
  EXPECT_EQ(root->operand(1)->operand(0), root->operand(0));
  EXPECT_EQ(root->operand(2), root->operand(0));
  EXPECT_EQ(root->shape(), *ParseShape("(f32[10], f32[10], f32[10])"));
  // A tuple shape on the nested instruction; the attribute after the
  // closing parenthesis is the user's.
  auto tuple = Parse(R"(HloModule test
ENTRY test {
  ROOT root = get-tuple-element(
    (f32[10], f16[10]) tuple(f32[10] parameter(0), f16[10] parameter(1))
  ), index=0
})");
  ASSERT_NE(tuple, nullptr);
  EXPECT_EQ(tuple->entry()->root()->operand(0)->name(), "tuple.anon");
  EXPECT_EQ(tuple->entry()->root()->shape(), *ParseShape("f32[10]"));
}

// A made-up name is not in the text: the text cannot refer to it, and an
// instruction written later under that name takes it.
TEST(ParseNestedInstructions, WrittenNamesWinOverMadeUpOnes) {
  auto m = Parse(R"(HloModule test
ENTRY test {
  x = f32[4] add(f32[4] parameter(0), negate(f32[4] parameter(1)))
  negate.anon = f32[4] negate(x)
  ROOT r = f32[4] add(negate.anon, negate(negate.anon))
})");
  ASSERT_NE(m, nullptr);
  const HloInstruction* root = m->entry()->root();
  const HloInstruction* written = test::FindInstruction(*m, "negate.anon");
  ASSERT_NE(written, nullptr);
  EXPECT_EQ(written->operand(0)->name(), "x");
  EXPECT_EQ(root->operand(0), written);
  EXPECT_EQ(root->operand(1)->name(), "negate.anon.2");
  EXPECT_EQ(test::FindInstruction(*m, "x")->operand(1)->name(), "negate.anon.1");
  // Printed and parsed again, the module is the same.
  auto again = Parse(PrintModule(*m));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(PrintModule(*again), PrintModule(*m));
  EXPECT_THAT(ParseError(R"(HloModule test
ENTRY test {
  x = f32[4] negate(negate(f32[4] parameter(0)))
  ROOT r = f32[4] add(x, negate.anon)
})"),
              HasSubstr("bad.hlo:4:26: error: undefined operand 'negate.anon' in computation "
                        "'test'"));
  EXPECT_THAT(ParseError(R"(HloModule test
ENTRY test {
  ROOT r = f32[4] negate(add(f32[4] parameter(0), q))
  p = f32[4] parameter(1)
  q = negate(p)
})"),
              HasSubstr("bad.hlo:3:26: error: instruction 'add.anon' has no shape and its operand "
                        "'q' has none yet; write its shape before the opcode"));
}

// Inside an operand list, `, name=value` belongs to the nested instruction
// and any other comma starts the next operand.
TEST(ParseNestedInstructions, AttributesOfANestedInstructionStopAtTheNextOperand) {
  auto m = Parse(R"(HloModule test
ENTRY test {
  ROOT root = f32[4,4] add(f32[4,4] broadcast(f32[] parameter(0)), dimensions={}, f32[4,4] parameter(1))
})");
  ASSERT_NE(m, nullptr);
  const HloInstruction* root = m->entry()->root();
  ASSERT_EQ(root->operand_count(), 2);
  EXPECT_EQ(root->operand(0)->opcode(), HloOpcode::kBroadcast);
  EXPECT_EQ(root->operand(1)->opcode(), HloOpcode::kParameter);
  EXPECT_TRUE(root->attributes().empty());
}

// XLA's DeeplyNestedOperandsExceedsRecursionLimit: a located error at the
// limit, not a stack overflow at any depth; an error inside a nested
// instruction is located where it is.
TEST(ParseNestedInstructions, DeepNestingAndNestedMistakesAreLocatedErrors) {
  const auto nested = [](int depth) {
    std::string text = "HloModule m\nENTRY e {\n  ROOT r = ";
    for (int i = 0; i < depth; ++i) text += "negate(";
    text += "f32[4] parameter(0)";
    for (int i = 0; i < depth; ++i) text += ")";
    return text + "\n}\n";
  };
  EXPECT_NE(Parse(nested(60)), nullptr);
  EXPECT_THAT(ParseError(nested(100000)),
              HasSubstr("bad.hlo:3:467: error: instructions written as operands nest more than "
                        "64 deep"));
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT r = add(f32[4] parameter(0), "
                         "multiply(f32[4] parameter(1), f32[4] bogus(2)))\n}\n"),
              HasSubstr("bad.hlo:3:74: error: unknown opcode 'bogus'"));
}

// --- shapes and layouts ------------------------------------------------------

TEST(ParseShapes, EveryElementType) {
  std::string text = "HloModule types\nENTRY e {\n";
  std::vector<std::pair<std::string, PrimitiveType>> types;
#define V(enumerator, name, bits, kind) types.emplace_back(name, PrimitiveType::enumerator);
#include "sim/hlo/primitive_type.def"
#undef V
  int n = 0;
  for (const auto& [name, type] : types) {
    const std::string dims =
        type == PrimitiveType::kToken || type == PrimitiveType::kOpaque ? "[]" : "[3,2]";
    text +=
        "  p" + std::to_string(n) + " = " + name + dims + " parameter(" + std::to_string(n) + ")\n";
    ++n;
  }
  text += "  ROOT t = () tuple()\n}\n";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->entry()->parameter_count(), static_cast<int64_t>(types.size()));
  for (size_t i = 0; i < types.size(); ++i) {
    const Shape& shape = m->entry()->parameters()[i]->shape();
    EXPECT_EQ(shape.element_type(), types[i].second) << types[i].first;
    if (types[i].second == PrimitiveType::kToken) {
      EXPECT_TRUE(shape.IsToken());
    } else if (types[i].second == PrimitiveType::kOpaque) {
      EXPECT_TRUE(shape.IsOpaque());
    } else {
      EXPECT_THAT(shape.dimensions(), ElementsAre(3, 2)) << types[i].first;
    }
  }
}

TEST(ParseShapes, TuplesTokensBuffersAndDynamicDimensions) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = (f32[2]{0}, (s32[], token[]), ()) parameter(0)
  b = b(f32[4]{0}) parameter(1)
  c = s32[<=4,2,?]{2,1,0} parameter(2)
  d = f32[0,3] parameter(3)
  o = (f32[1], (f32[2], token[]), opaque[], f32[3]) parameter(4)
  w = f32[ 1, 2,3]{0, 1,2 } parameter(5)
  ROOT t = () tuple()
}
)");
  ASSERT_NE(m, nullptr);
  const Shape& a = test::FindInstruction(*m, "a")->shape();
  ASSERT_TRUE(a.IsTuple());
  ASSERT_EQ(a.tuple_size(), 3);
  EXPECT_TRUE(a.tuple_shapes(1).tuple_shapes(1).IsToken());
  EXPECT_TRUE(a.tuple_shapes(2).IsTuple());
  EXPECT_EQ(a.tuple_shapes(2).tuple_size(), 0);
  const Shape& b = test::FindInstruction(*m, "b")->shape();
  ASSERT_TRUE(b.IsBuffer());
  EXPECT_EQ(b.tuple_shapes(0).ToString(), "f32[4]{0}");
  const Shape& c = test::FindInstruction(*m, "c")->shape();
  EXPECT_THAT(c.dimensions(), ElementsAre(4, 2, Shape::kUnboundedSize));
  EXPECT_TRUE(c.is_dynamic_dimension(0));
  EXPECT_FALSE(c.is_dynamic_dimension(1));
  EXPECT_TRUE(c.is_dynamic_dimension(2));
  EXPECT_FALSE(c.is_static());
  EXPECT_EQ(test::FindInstruction(*m, "d")->shape().element_count(), 0);
  EXPECT_FALSE(test::FindInstruction(*m, "d")->shape().has_layout());
  const Shape& o = test::FindInstruction(*m, "o")->shape();
  ASSERT_EQ(o.tuple_size(), 4);
  EXPECT_TRUE(o.tuple_shapes(2).IsOpaque());
  EXPECT_EQ(test::FindInstruction(*m, "w")->shape().ToString(), "f32[1,2,3]{0,1,2}");
  // A buffer holds exactly one array.
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT p = b() parameter(0)\n}\n"),
              HasSubstr("bad.hlo:3:14: error: expected a shape, got ')'"));
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT p = b(s32[], f32[]) parameter(0)\n}\n"),
              HasSubstr("bad.hlo:3:19: error: expected ')' to close the buffer shape, got ','"));
}

TEST(ParseShapes, EveryLayoutExtra) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  tiled = bf16[16,256]{0,1:T(8,128)(2,1)} parameter(0)
  combined = s4[4,8,128]{2,1,0:T(2,*,128)(8,1)E(4)S(1)} parameter(1)
  scalar = u32[]{:S(2)} parameter(2)
  sparse = f32[10,10]{1,0:D(D,C+)T(4)L(2)#(u16)*(u32)E(32)S(5)SC(0:2,4)(1:5)P(f32[20]{0})M(8)} parameter(3)
  one_d = f32[1024]{0:T(1024)} parameter(4)
  spaced = f32[8,16,128]{0,1,2:T(2, * , 128)} parameter(5)
  tiled_scalar = u32[]{:T(128)} parameter(6)
  ROOT t = () tuple()
}
)");
  ASSERT_NE(m, nullptr);
  const Layout& tiled = test::FindInstruction(*m, "tiled")->shape().layout();
  EXPECT_THAT(tiled.minor_to_major(), ElementsAre(0, 1));
  ASSERT_EQ(tiled.tiles.size(), 2u);
  EXPECT_THAT(tiled.tiles[0].dimensions, ElementsAre(8, 128));
  EXPECT_THAT(tiled.tiles[1].dimensions, ElementsAre(2, 1));

  const Layout& combined = test::FindInstruction(*m, "combined")->shape().layout();
  EXPECT_THAT(combined.tiles[0].dimensions, ElementsAre(2, Tile::kCombinedDimension, 128));
  EXPECT_EQ(combined.element_size_in_bits, 4);
  EXPECT_EQ(combined.memory_space, 1);

  const Shape& scalar = test::FindInstruction(*m, "scalar")->shape();
  ASSERT_TRUE(scalar.has_layout());
  EXPECT_TRUE(scalar.layout().minor_to_major().empty());
  EXPECT_EQ(scalar.layout().memory_space, 2);

  const Layout& sparse = test::FindInstruction(*m, "sparse")->shape().layout();
  EXPECT_THAT(sparse.dim_level_types, ElementsAre("D", "C+"));
  EXPECT_THAT(sparse.tiles[0].dimensions, ElementsAre(4));
  EXPECT_EQ(sparse.tail_padding_alignment_in_elements, 2);
  EXPECT_EQ(sparse.index_primitive_type, PrimitiveType::kU16);
  EXPECT_EQ(sparse.pointer_primitive_type, PrimitiveType::kU32);
  EXPECT_EQ(sparse.element_size_in_bits, 32);
  EXPECT_EQ(sparse.memory_space, 5);
  ASSERT_EQ(sparse.split_configs.size(), 2u);
  EXPECT_EQ(sparse.split_configs[0].dimension, 0);
  EXPECT_THAT(sparse.split_configs[0].split_indices, ElementsAre(2, 4));
  EXPECT_THAT(sparse.split_configs[1].split_indices, ElementsAre(5));
  ASSERT_NE(sparse.physical_shape, nullptr);
  EXPECT_EQ(sparse.physical_shape->ToString(), "f32[20]{0}");
  EXPECT_EQ(sparse.dynamic_shape_metadata_prefix_bytes, 8);
  EXPECT_TRUE(sparse.HasExtras());

  EXPECT_THAT(test::FindInstruction(*m, "one_d")->shape().layout().tiles[0].dimensions,
              ElementsAre(1024));
  EXPECT_THAT(test::FindInstruction(*m, "spaced")->shape().layout().tiles[0].dimensions,
              ElementsAre(2, Tile::kCombinedDimension, 128));
  const Shape& tiled_scalar = test::FindInstruction(*m, "tiled_scalar")->shape();
  ASSERT_TRUE(tiled_scalar.has_layout());
  ASSERT_EQ(tiled_scalar.layout().tiles.size(), 1u);
  EXPECT_THAT(tiled_scalar.layout().tiles[0].dimensions, ElementsAre(128));
}

TEST(ParseShapes, StandaloneShape) {
  StatusOr<Shape> s = ParseShape("bf16[8,128]{1,0:T(8,128)(2,1)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->element_type(), PrimitiveType::kBF16);
  EXPECT_EQ(s->ToString(), "bf16[8,128]{1,0:T(8,128)(2,1)}");
  EXPECT_FALSE(ParseShape("f32[2] junk").ok());
  EXPECT_FALSE(ParseShape("f32[2]{0,1}").ok());
}

// --- attributes ----------------------------------------------------------------

constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(ParseAttributes, WindowWithEveryField) {
  auto m = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  conv = f32[1,4,8,16] convolution(x, k), window={size=3x3 stride=2x1 pad=0_1x2_-1 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, feature_group_count=1, batch_group_count=1
  v = f32[16] parameter(2)
  z = f32[] constant(0)
  ROOT rw = f32[1] reduce-window(v, z), window={size=16}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  const Window* w = test::FindInstruction(*m, "conv")->window();
  ASSERT_NE(w, nullptr);
  ASSERT_EQ(w->dimensions.size(), 2u);
  const WindowDimension& d0 = w->dimensions[0];
  const WindowDimension& d1 = w->dimensions[1];
  EXPECT_EQ(d0.size, 3);
  EXPECT_EQ(d0.stride, 2);
  EXPECT_EQ(d1.stride, 1);
  EXPECT_EQ(d0.padding_low, 0);
  EXPECT_EQ(d0.padding_high, 1);
  EXPECT_EQ(d1.padding_low, 2);
  EXPECT_EQ(d1.padding_high, -1);
  EXPECT_EQ(d0.base_dilation, 1);
  EXPECT_EQ(d1.base_dilation, 2);
  EXPECT_EQ(d0.window_dilation, 2);
  EXPECT_EQ(d1.window_dilation, 1);
  EXPECT_TRUE(d0.window_reversal);
  EXPECT_FALSE(d1.window_reversal);
  EXPECT_EQ(test::FindInstruction(*m, "conv")->int_attr(AttrId::kFeatureGroupCount), 1);
  EXPECT_EQ(test::FindInstruction(*m, "conv")->int_attr(AttrId::kBatchGroupCount), 1);

  const Window* one = test::FindInstruction(*m, "rw")->window();
  ASSERT_NE(one, nullptr);
  ASSERT_EQ(one->dimensions.size(), 1u);
  EXPECT_EQ(one->dimensions[0].size, 16);
  EXPECT_EQ(one->dimensions[0].stride, 1);
}

TEST(ParseAttributes, DimLabels) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  x = f32[2,5,5,3] parameter(0)
  k = f32[3,3,3,8] parameter(1)
  c = f32[2,3,3,8] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  y = f32[5,3,2] parameter(2)
  k2 = f32[1,3,4] parameter(3)
  c2 = f32[5,4,2] convolution(y, k2), window={size=1}, dim_labels=0fb_0io->0fb
  a = f32[4,8] parameter(4)
  w = f32[8,16] parameter(5)
  ROOT mm = f32[4,16] convolution(a, w), dim_labels=bf_io->bf
}
)");
  ASSERT_NE(m, nullptr);
  const ConvolutionDimensionNumbers* d =
      test::FindInstruction(*m, "c")->convolution_dimension_numbers();
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->input_batch_dimension, 0);
  EXPECT_EQ(d->input_feature_dimension, 3);
  EXPECT_THAT(d->input_spatial_dimensions, ElementsAre(1, 2));
  EXPECT_EQ(d->kernel_input_feature_dimension, 2);
  EXPECT_EQ(d->kernel_output_feature_dimension, 3);
  EXPECT_THAT(d->kernel_spatial_dimensions, ElementsAre(0, 1));
  EXPECT_EQ(d->output_batch_dimension, 0);
  EXPECT_EQ(d->output_feature_dimension, 3);
  EXPECT_THAT(d->output_spatial_dimensions, ElementsAre(1, 2));

  const ConvolutionDimensionNumbers* d2 =
      test::FindInstruction(*m, "c2")->convolution_dimension_numbers();
  ASSERT_NE(d2, nullptr);
  EXPECT_EQ(d2->input_batch_dimension, 2);
  EXPECT_EQ(d2->input_feature_dimension, 1);
  EXPECT_THAT(d2->input_spatial_dimensions, ElementsAre(0));

  const ConvolutionDimensionNumbers* mm =
      test::FindInstruction(*m, "mm")->convolution_dimension_numbers();
  ASSERT_NE(mm, nullptr);
  EXPECT_TRUE(mm->input_spatial_dimensions.empty());
  EXPECT_EQ(mm->kernel_input_feature_dimension, 0);
  EXPECT_EQ(mm->kernel_output_feature_dimension, 1);
}

TEST(ParseAttributes, DimLabelsWithUnknownDims) {
  // XLA's ParseConvolutionDimensionNumbersWithUnknownDims and
  // CustomCallWithUnknownDimLabels: a '?' labels a dimension with no role, so
  // the parts may differ in rank; they print back as written, trailing '?'
  // included.
  auto m = Parse(R"(HloModule m
ENTRY e {
  x = f32[2,5,7,3] parameter(0)
  k = f32[3,3,3,8] parameter(1)
  a = f32[2,3,3,8] custom-call(x, k), window={size=2x2}, dim_labels=?b01f_0?1io->b01?f, custom_call_target="target"
  b = f32[2,3,3,8] custom-call(x, k), dim_labels=b0?f_?0?io->?b?0?f, custom_call_target="target"
  ROOT c = f32[100]{0} custom-call(), dim_labels=b0f?_0io?->b0f??, custom_call_target="t"
}
)");
  ASSERT_NE(m, nullptr);
  const ConvolutionDimensionNumbers* b =
      test::FindInstruction(*m, "b")->convolution_dimension_numbers();
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->HasUnknownDims());
  EXPECT_EQ(b->input_batch_dimension, 0);
  EXPECT_EQ(b->input_feature_dimension, 3);
  EXPECT_THAT(b->input_spatial_dimensions, ElementsAre(1));
  EXPECT_EQ(b->InputRank(), 4);
  EXPECT_THAT(b->kernel_spatial_dimensions, ElementsAre(1));
  EXPECT_EQ(b->kernel_input_feature_dimension, 3);
  EXPECT_EQ(b->kernel_output_feature_dimension, 4);
  EXPECT_EQ(b->KernelRank(), 5);
  EXPECT_EQ(b->output_batch_dimension, 1);
  EXPECT_THAT(b->output_spatial_dimensions, ElementsAre(3));
  EXPECT_EQ(b->output_feature_dimension, 5);
  EXPECT_EQ(b->OutputRank(), 6);
  EXPECT_EQ(DimLabelsText(*b), "b0?f_?0?io->?b?0?f");

  const ConvolutionDimensionNumbers* a =
      test::FindInstruction(*m, "a")->convolution_dimension_numbers();
  ASSERT_NE(a, nullptr);
  EXPECT_THAT(a->input_spatial_dimensions, ElementsAre(2, 3));
  EXPECT_THAT(a->kernel_spatial_dimensions, ElementsAre(0, 2));
  EXPECT_THAT(a->output_spatial_dimensions, ElementsAre(1, 2));
  EXPECT_EQ(a->output_feature_dimension, 4);
  // Each part's rank is its count of labels, '?' included.
  EXPECT_EQ(a->InputRank(), 5);
  EXPECT_EQ(a->KernelRank(), 5);
  EXPECT_EQ(a->OutputRank(), 5);
  const std::string printed = PrintModule(*m);
  EXPECT_THAT(printed, HasSubstr("dim_labels=?b01f_0?1io->b01?f,"));
  EXPECT_THAT(printed, HasSubstr("dim_labels=b0?f_?0?io->?b?0?f,"));
  EXPECT_THAT(printed, HasSubstr("dim_labels=b0f?_0io?->b0f??,"));

  // Without '?' the ranks stay unset, as before.
  auto plain = Parse(
      "HloModule m\nENTRY e {\n  ROOT c = f32[1] custom-call(), "
      "dim_labels=b01f_01io->b01f, custom_call_target=\"t\"\n}\n");
  ASSERT_NE(plain, nullptr);
  const ConvolutionDimensionNumbers* p =
      test::FindInstruction(*plain, "c")->convolution_dimension_numbers();
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->HasUnknownDims());
  EXPECT_EQ(p->InputRank(), 4);
}

TEST(ParseErrors, DimLabelsWithUnknownDimsStillNameEveryRoleOnce) {
  const auto error = [](std::string_view labels) {
    return ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[1] custom-call(), dim_labels=" +
                      std::string(labels) + ", custom_call_target=\"t\"\n}\n");
  };
  EXPECT_THAT(error("b0?f_?0io->?b1f"),
              HasSubstr("bad.hlo:3:45: error: invalid dim_labels 'b0?f_?0io->?b1f': "
                        "unexpected or repeated label '1' in '?b1f'"));
  EXPECT_THAT(error("?0f_0io->b0f"),
              HasSubstr("bad.hlo:3:45: error: invalid dim_labels '?0f_0io->b0f': '?0f' must label "
                        "one dimension 'b' and one 'f'"));
  EXPECT_THAT(error("b01f_0?io->b0f"),
              HasSubstr("invalid dim_labels 'b01f_0?io->b0f': the input, kernel and output labels "
                        "must name the same spatial dimensions"));
}

TEST(ParseAttributes, DotDimensionNumbersPrecisionAndAlgorithm) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4,2,3] parameter(0)
  b = f32[4,3,5] parameter(1)
  ROOT d = f32[4,2,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,default}, algorithm=dot_bf16_bf16_f32
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* d = test::FindInstruction(*m, "d");
  EXPECT_EQ(IntList(d, AttrId::kLhsBatchDims), std::vector<int64_t>{0});
  EXPECT_EQ(IntList(d, AttrId::kLhsContractingDims), std::vector<int64_t>{2});
  EXPECT_EQ(IntList(d, AttrId::kRhsBatchDims), std::vector<int64_t>{0});
  EXPECT_EQ(IntList(d, AttrId::kRhsContractingDims), std::vector<int64_t>{1});
  EXPECT_THAT(*d->GetAttr<std::vector<std::string>>(AttrId::kOperandPrecision),
              ElementsAre("highest", "default"));
  EXPECT_EQ(d->string_attr(AttrId::kAlgorithm), "dot_bf16_bf16_f32");
}

TEST(ParseAttributes, SliceDimensionsAndPadding) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[8,16] parameter(0)
  s = f32[8,4] slice(p), slice={[0:8], [2:10:2]}
  i = s32[] parameter(1)
  ds = f32[1,16] dynamic-slice(p, i, i), dynamic_slice_sizes={1,16}
  t = f32[16,8] transpose(p), dimensions={1,0}
  z = f32[] constant(0)
  pd = f32[10,33] pad(p, z), padding=1_1x0_-1_2
  ROOT scalar_pad = f32[] pad(z, z), padding=
}
)");
  ASSERT_NE(m, nullptr);
  const auto* ranges =
      test::FindInstruction(*m, "s")->GetAttr<std::vector<SliceRange>>(AttrId::kSlice);
  ASSERT_NE(ranges, nullptr);
  ASSERT_EQ(ranges->size(), 2u);
  EXPECT_EQ((*ranges)[0], (SliceRange{0, 8, 1}));
  EXPECT_EQ((*ranges)[1], (SliceRange{2, 10, 2}));
  EXPECT_THAT(IntList(test::FindInstruction(*m, "ds"), AttrId::kDynamicSliceSizes),
              ElementsAre(1, 16));
  EXPECT_THAT(test::FindInstruction(*m, "t")->dimensions(), ElementsAre(1, 0));
  const auto* padding =
      test::FindInstruction(*m, "pd")->GetAttr<std::vector<PaddingDimension>>(AttrId::kPadding);
  ASSERT_NE(padding, nullptr);
  ASSERT_EQ(padding->size(), 2u);
  EXPECT_EQ((*padding)[0], (PaddingDimension{1, 1, 0}));
  EXPECT_EQ((*padding)[1], (PaddingDimension{0, -1, 2}));
  const auto* empty = test::FindInstruction(*m, "scalar_pad")
                          ->GetAttr<std::vector<PaddingDimension>>(AttrId::kPadding);
  ASSERT_NE(empty, nullptr);
  EXPECT_TRUE(empty->empty());
}

TEST(ParseAttributes, ReplicaGroupsExplicitEmptyIotaAndTransposedIota) {
  auto m = Parse(std::string("HloModule m, replica_count=8\n") + kAdd + R"(
ENTRY e {
  p = f32[4] parameter(0)
  list = f32[4] all-reduce(p), replica_groups={{0,1},{2,3,4,5},{6,7}}, to_apply=add
  all = f32[4] all-reduce(p), replica_groups={}, to_apply=add
  iota = f32[4] all-reduce(p), replica_groups=[2,4]<=[8], to_apply=add
  ROOT tr = f32[4] all-reduce(p), replica_groups=[2,4]<=[4,2]T(1,0), channel_id=3, use_global_device_ids=true, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  const ReplicaGroups* list = test::FindInstruction(*m, "list")->replica_groups();
  ASSERT_NE(list, nullptr);
  EXPECT_FALSE(list->iota.has_value());
  EXPECT_THAT(list->groups,
              ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3, 4, 5), ElementsAre(6, 7)));

  const ReplicaGroups* all = test::FindInstruction(*m, "all")->replica_groups();
  ASSERT_NE(all, nullptr);
  EXPECT_TRUE(all->groups.empty());

  const ReplicaGroups* iota = test::FindInstruction(*m, "iota")->replica_groups();
  ASSERT_NE(iota, nullptr);
  ASSERT_TRUE(iota->iota.has_value());
  EXPECT_THAT(iota->iota->dims, ElementsAre(2, 4));
  EXPECT_THAT(iota->iota->reshape_dims, ElementsAre(8));
  EXPECT_TRUE(iota->iota->transpose_perm.empty());
  EXPECT_THAT(iota->groups, ElementsAre(ElementsAre(0, 1, 2, 3), ElementsAre(4, 5, 6, 7)));

  // iota(8) as [4,2] = {{0,1},{2,3},{4,5},{6,7}}, transposed: {{0,2,4,6},{1,3,5,7}}.
  const HloInstruction* tr = test::FindInstruction(*m, "tr");
  const ReplicaGroups* transposed = tr->replica_groups();
  ASSERT_NE(transposed, nullptr);
  ASSERT_TRUE(transposed->iota.has_value());
  EXPECT_THAT(transposed->iota->transpose_perm, ElementsAre(1, 0));
  EXPECT_THAT(transposed->groups, ElementsAre(ElementsAre(0, 2, 4, 6), ElementsAre(1, 3, 5, 7)));
  EXPECT_EQ(tr->int_attr(AttrId::kChannelId), 3);
  EXPECT_TRUE(tr->bool_attr(AttrId::kUseGlobalDeviceIds));
  // The iota form survives printing.
  EXPECT_THAT(PrintModule(*m), HasSubstr("replica_groups=[2,4]<=[4,2]T(1,0)"));
}

TEST(ParseAttributes, EveryShardingForm) {
  auto m = Parse(R"(HloModule m, num_partitions=8
ENTRY e {
  a = f32[4,4] parameter(0), sharding={replicated}
  b = f32[4,4] parameter(1), sharding={maximal device=3}
  c = f32[4,4] parameter(2), sharding={manual}
  d = f32[4,4] parameter(3), sharding={unknown}
  e = f32[4,4] parameter(4), sharding={devices=[2,1]0,1}
  f = f32[4,4] parameter(5), sharding={devices=[4,2]<=[8]}
  g = f32[4,4,2] parameter(6), sharding={devices=[2,2,2]<=[2,4]T(1,0) last_tile_dim_replicate}
  h = f32[4,4] parameter(7), sharding={devices=[2,2,2]3,2,1,0,7,6,5,4 last_tile_dims={manual, replicated}}
  i = f32[4,4] parameter(8), sharding={replicated shard_as 1}
  j = f32[4,4] parameter(9), sharding={unknown shard_like 2}
  k = f32[4,4] parameter(10), sharding={unreduced}
  l = f32[4,4] parameter(11), sharding={replicated metadata={op_name="a" source_line=3}}
  ROOT t = (f32[4,4], (f32[4,4], f32[4,4])) tuple(a, a, a), sharding={{replicated}, {maximal device=0}, {devices=[2,1]1,0}}
}
)");
  ASSERT_NE(m, nullptr);
  using Type = Sharding::Type;
  auto sharding = [&](std::string_view name) -> const Sharding& {
    const Sharding* s = test::FindInstruction(*m, name)->sharding();
    EXPECT_NE(s, nullptr) << name;
    static const Sharding kNone;
    return s ? *s : kNone;
  };
  EXPECT_EQ(sharding("a").type, Type::kReplicated);
  EXPECT_EQ(sharding("b").type, Type::kMaximal);
  EXPECT_EQ(sharding("b").device, 3);
  EXPECT_EQ(sharding("c").type, Type::kManual);
  EXPECT_EQ(sharding("d").type, Type::kUnknown);
  EXPECT_EQ(sharding("e").type, Type::kTiled);
  EXPECT_THAT(sharding("e").tile_dims, ElementsAre(2, 1));
  EXPECT_THAT(sharding("e").devices, ElementsAre(0, 1));
  EXPECT_FALSE(sharding("e").iota.has_value());
  ASSERT_TRUE(sharding("f").iota.has_value());
  EXPECT_THAT(sharding("f").iota->reshape_dims, ElementsAre(8));
  EXPECT_THAT(sharding("f").iota->Expand(), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  ASSERT_TRUE(sharding("g").iota.has_value());
  EXPECT_THAT(sharding("g").iota->Expand(), ElementsAre(0, 4, 1, 5, 2, 6, 3, 7));
  EXPECT_TRUE(sharding("g").last_tile_dim_replicate);
  EXPECT_THAT(sharding("h").devices, ElementsAre(3, 2, 1, 0, 7, 6, 5, 4));
  EXPECT_THAT(sharding("h").last_tile_dims, ElementsAre("manual", "replicated"));
  EXPECT_EQ(sharding("i").shard_as, 1);
  EXPECT_EQ(sharding("j").shard_like, 2);
  EXPECT_EQ(sharding("k").type, Type::kUnreduced);
  EXPECT_EQ(sharding("l").metadata, R"({op_name="a" source_line=3})");
  const Sharding& t = sharding("t");
  EXPECT_EQ(t.type, Type::kTuple);
  ASSERT_EQ(t.elements.size(), 3u);
  EXPECT_EQ(t.elements[1].type, Type::kMaximal);
  EXPECT_THAT(t.elements[2].devices, ElementsAre(1, 0));
}

// The named (mesh) shardings of XLA's ParseNamedSharding* and
// ParseMixedShardingTuple* tests, and the quoted-name forms newer XLA prints.
constexpr std::string_view kNamedShardings[] = {
    "{mesh[a=2,b=4,c=3,d=8], [{a}, {b}]}",
    "{mesh[a=2,b=4,c=3,d=8], [{a}, {c, b}]}",
    "{mesh[a=2,b=4,c=3,d=8], [{b, a}, {c, d, ?}]}",
    "{mesh[a=2,b=4,c=3,d=8], [{a}, {b:(2)2}]}",
    "{mesh[a=2,b=4,c=3,d=8], [{b:(2)2}, {d:(4)2, c}]}",
    "{mesh[a=2,b=4,c=3,d=8], [{b:(2)2}, {d:(4)2, c, ?}]}",
    "{mesh[a=2,b=4,c=4,d=2], device_ids=([4,16]T(1,0)), [{a}]}",
    "{mesh[x=2,y=2], device_ids=(0,2,1,3), [{x}]}",
    "{mesh[a=2,b=4], replicated}",
    "{mesh[a=2,b=4], [{a}], replicated={b}}",
    "{maximal_mesh[device_id=5]}",
    "{mesh[a=2,b=4], unreduced}",
    "{mesh[a=2,b=4,c=3,d=8], [{}, {b}], unreduced={d:(4)2}}",
    "{mesh[a=2,b=4], manual}",
    "{mesh[a=2,b=4,c=3,d=8], [{a}], manual={d:(4)2}}",
    R"({mesh[a=2,b=4,c=3,d=8], [{a}], replicated={c}, unreduced={d:(4)2}, manual={b:(2)2}, metadata={{op_name="foo"}, {op_name="bar"}}})",
    R"({mesh[a=2,b=4], replicated, metadata={{op_name="foo"}}})",
    R"({{mesh[a=2,b=4,c=3,d=8], [{d, c}, {a, b}]}, {mesh[a=2,b=4,c=3,d=8], replicated}, {mesh[a=2,b=4,c=3,d=8], [{d:(2)2, b}, {a, ?}], unreduced={c}}, {mesh[a=2,b=4,c=3,d=8], [{d, c}, {a, b}], metadata={{op_name="foo"}, {op_name="bar"}}}})",
    "{{replicated}, {mesh[a=2,b=4], replicated}, {maximal device=5}, {maximal_mesh[device_id=5]}}",
    "{{mesh[a=2,b=2], [{a}, {}]}, {devices=[2,2]<=[4] last_tile_dim_replicate}}",
    "{mesh['a'=2,'b'=4,'c'=3,'d'=8], [{'b':(2)2}, {'d':(4)2, 'c', ?}]}",
    "{mesh['a.b'=2,'<axis> def'=4,'z/w'=2], [{'a.b'}, {'<axis> def':(2)2, 'z/w'}]}",
    "{mesh[], replicated}",
    "{mesh['x'=2], [{}], unreduced=max{'x'}}",
    "{mesh['x'=2,'y'=2], unreduced=max{'x', 'y'}}",
};

TEST(ParseAttributes, NamedShardingsPrintBackAsWritten) {
  std::string text = "HloModule m\nENTRY e {\n";
  int64_t n = 0;
  for (std::string_view sharding : kNamedShardings) {
    text += "  p" + std::to_string(n) + " = f32[4,4] parameter(" + std::to_string(n) +
            "), sharding=" + std::string(sharding) + "\n";
    ++n;
  }
  text += "}\n";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  const std::string printed = PrintModule(*m);
  for (std::string_view sharding : kNamedShardings) {
    EXPECT_THAT(printed, HasSubstr("sharding=" + std::string(sharding) + "\n"));
  }
  // A bare name may also refer to an axis by its index, and device_ids that
  // are the plain iota are the default order: both print as XLA prints them.
  auto canonical = Parse(R"(HloModule m
ENTRY e {
  ROOT p = f32[4,4] parameter(0), sharding={mesh[a=2,b=4], device_ids=([2,4]T(0,1)), [{1}, {0}]}
}
)");
  ASSERT_NE(canonical, nullptr);
  EXPECT_THAT(PrintModule(*canonical), HasSubstr("sharding={mesh[a=2,b=4], [{b}, {a}]}\n"));
}

TEST(ParseAttributes, NamedShardingsKeepTheirStructure) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4,4] parameter(0), sharding={mesh[a=2,b=4,c=3,d=8], [{b:(2)2}, {d:(4)2, c, ?}], replicated={a}, unreduced=max{d:(1)2}, manual={b:(1)2}, metadata={op_name="x"}}
  b = f32[4] parameter(1), sharding={mesh['x'=2,'y'=2], device_ids=(0,2,1,3), [{'x'}]}
  c = f32[4] parameter(2), sharding={mesh[a=2,b=4,c=4,d=2], device_ids=([4,16]T(1,0)), [{a}]}
  d = f32[4] parameter(3), sharding={maximal_mesh[device_id=5], metadata={op_name="y"}}
  ROOT e = f32[4] parameter(4), sharding={mesh[a=2,b=4], manual}
}
)");
  ASSERT_NE(m, nullptr);
  const auto named = [&](std::string_view name) -> const NamedSharding& {
    const Sharding* s = test::FindInstruction(*m, name)->sharding();
    static const NamedSharding kNone;
    EXPECT_TRUE(s != nullptr && s->named.has_value()) << name;
    return s != nullptr && s->named ? *s->named : kNone;
  };
  const NamedSharding& a = named("a");
  ASSERT_EQ(a.axes.size(), 4u);
  EXPECT_EQ(a.axes[3].name, "d");
  EXPECT_EQ(a.axes[3].size, 8);
  EXPECT_FALSE(a.axes[3].quoted);
  EXPECT_TRUE(a.dimensions_written);
  ASSERT_EQ(a.dimensions.size(), 2u);
  EXPECT_THAT(a.dimensions[0].axes, ElementsAre(MeshAxisRef{1, 2, 2}));
  EXPECT_FALSE(a.dimensions[0].open);
  EXPECT_THAT(a.dimensions[1].axes, ElementsAre(MeshAxisRef{3, 4, 2}, MeshAxisRef{2, 1, 0}));
  EXPECT_TRUE(a.dimensions[1].open);
  EXPECT_THAT(a.replicated_axes, ElementsAre(MeshAxisRef{0, 1, 0}));
  EXPECT_THAT(a.unreduced_axes, ElementsAre(MeshAxisRef{3, 1, 2}));
  EXPECT_EQ(a.unreduced_kind, "max");
  EXPECT_THAT(a.manual_axes, ElementsAre(MeshAxisRef{1, 1, 2}));
  EXPECT_EQ(a.whole, NamedSharding::Whole::kNone);
  EXPECT_EQ(test::FindInstruction(*m, "a")->sharding()->metadata, R"({op_name="x"})");

  const NamedSharding& b = named("b");
  ASSERT_EQ(b.axes.size(), 2u);
  EXPECT_EQ(b.axes[0].name, "x");
  EXPECT_TRUE(b.axes[0].quoted);
  EXPECT_THAT(b.device_ids, ElementsAre(0, 2, 1, 3));
  EXPECT_THAT(b.MeshDevices(), ElementsAre(0, 2, 1, 3));

  const NamedSharding& c = named("c");
  ASSERT_TRUE(c.device_iota.has_value());
  EXPECT_THAT(c.device_iota->dims, ElementsAre(2, 4, 4, 2));
  EXPECT_THAT(c.device_iota->reshape_dims, ElementsAre(4, 16));
  EXPECT_THAT(c.device_iota->transpose_perm, ElementsAre(1, 0));
  const std::vector<int64_t> mesh = c.MeshDevices();
  ASSERT_EQ(mesh.size(), 64u);
  EXPECT_THAT(std::vector<int64_t>(mesh.begin(), mesh.begin() + 6),
              ElementsAre(0, 16, 32, 48, 1, 17));

  EXPECT_EQ(named("d").maximal_device, 5);
  EXPECT_EQ(test::FindInstruction(*m, "d")->sharding()->metadata, R"({op_name="y"})");
  EXPECT_EQ(named("e").whole, NamedSharding::Whole::kManual);
}

TEST(ParseAttributes, NamedShardingsStandForTheirTileAssignment) {
  auto m = Parse(R"(HloModule m, num_partitions=8
ENTRY e {
  mesh_order = f32[4,4] parameter(0), sharding={mesh[a=2,b=4], [{a}, {b}]}
  swapped = f32[4,4] parameter(1), sharding={mesh[a=2,b=4], [{b}, {a}]}
  minor_sub_axis = f32[4,4] parameter(2), sharding={mesh[a=2,b=4], [{b:(2)2}, {a}]}
  partial = f32[4] parameter(3), sharding={mesh[x=2,y=2], device_ids=(0,2,1,3), [{x}]}
  manual_axes = f32[4] parameter(4), sharding={mesh[a=2,b=2,c=2], [{a}], manual={c}}
  transposed = f32[4,4] parameter(5), sharding={mesh[a=2,b=4,c=4], [{c}, {a, b}]}
  replicated = f32[4] parameter(6), sharding={mesh[a=2,b=4], replicated}
  no_axes = f32[4,4] parameter(7), sharding={mesh[a=2,b=4], [{}, {?}]}
  all_manual = f32[4] parameter(8), sharding={mesh[a=2,b=4], [{}], manual={a, b}}
  maximal = f32[4] parameter(9), sharding={maximal_mesh[device_id=5]}
  unreduced = f32[4] parameter(10), sharding={mesh[a=2,b=4], unreduced}
  partly_unreduced = f32[4] parameter(11), sharding={mesh[a=2,b=4], [{a}], unreduced={b}}
  ROOT tuple = (f32[4], f32[4]) parameter(12), sharding={{mesh[a=2,b=2], [{b}]}, {maximal device=1}}
}
)");
  ASSERT_NE(m, nullptr);
  using Type = Sharding::Type;
  const auto sharding = [&](std::string_view name) -> const Sharding& {
    const Sharding* s = test::FindInstruction(*m, name)->sharding();
    static const Sharding kNone;
    EXPECT_NE(s, nullptr) << name;
    return s != nullptr ? *s : kNone;
  };
  // Dimension i is split by the product of its axes; the devices are the
  // mesh's, walked with each dimension's axes first, the rest replicated.
  const Sharding& mesh_order = sharding("mesh_order");
  EXPECT_EQ(mesh_order.type, Type::kTiled);
  EXPECT_THAT(mesh_order.tile_dims, ElementsAre(2, 4));
  EXPECT_THAT(mesh_order.devices, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_FALSE(mesh_order.last_tile_dim_replicate);
  const Sharding& swapped = sharding("swapped");
  EXPECT_THAT(swapped.tile_dims, ElementsAre(4, 2));
  EXPECT_THAT(swapped.devices, ElementsAre(0, 4, 1, 5, 2, 6, 3, 7));
  // b:(2)2 is b's minor factor of 2; its major one b:(1)2 is replicated.
  const Sharding& minor = sharding("minor_sub_axis");
  EXPECT_THAT(minor.tile_dims, ElementsAre(2, 2, 2));
  EXPECT_TRUE(minor.last_tile_dim_replicate);
  EXPECT_THAT(minor.devices, ElementsAre(0, 2, 4, 6, 1, 3, 5, 7));
  const Sharding& partial = sharding("partial");
  EXPECT_THAT(partial.tile_dims, ElementsAre(2, 2));
  EXPECT_TRUE(partial.last_tile_dim_replicate);
  EXPECT_THAT(partial.devices, ElementsAre(0, 2, 1, 3));
  const Sharding& manual = sharding("manual_axes");
  EXPECT_THAT(manual.tile_dims, ElementsAre(2, 2, 2));
  EXPECT_THAT(manual.last_tile_dims, ElementsAre("manual", "replicated"));
  EXPECT_THAT(manual.devices, ElementsAre(0, 2, 1, 3, 4, 6, 5, 7));
  // XLA's export writes {mesh[a=2,b=4,c=4], [{c}, {a, b}]} as
  // {devices=[4,8]<=[8,4]T(1,0)}.
  const Sharding& transposed = sharding("transposed");
  EXPECT_THAT(transposed.tile_dims, ElementsAre(4, 8));
  EXPECT_EQ(transposed.devices, (IotaTileAssignment{{4, 8}, {8, 4}, {1, 0}}.Expand()));
  EXPECT_EQ(sharding("replicated").type, Type::kReplicated);
  EXPECT_EQ(sharding("no_axes").type, Type::kReplicated);
  EXPECT_EQ(sharding("all_manual").type, Type::kManual);
  EXPECT_EQ(sharding("maximal").type, Type::kMaximal);
  EXPECT_EQ(sharding("maximal").device, 5);
  EXPECT_EQ(sharding("unreduced").type, Type::kUnreduced);
  // Unreduced axes beside sharded ones have no tile assignment: kNamed, which
  // readers of tile assignments report instead of misreading.
  EXPECT_EQ(sharding("partly_unreduced").type, Type::kNamed);
  EXPECT_TRUE(sharding("partly_unreduced").devices.empty());
  const Sharding& tuple = sharding("tuple");
  ASSERT_EQ(tuple.elements.size(), 2u);
  EXPECT_EQ(tuple.elements[0].type, Type::kTiled);
  EXPECT_THAT(tuple.elements[0].tile_dims, ElementsAre(2, 2));
  EXPECT_THAT(tuple.elements[0].devices, ElementsAre(0, 2, 1, 3));
  EXPECT_FALSE(tuple.elements[1].named.has_value());
}

TEST(ParseErrors, NamedShardingMistakesAreLocated) {
  const auto error = [](std::string_view sharding) {
    return ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[4,4] parameter(0), sharding=" +
                      std::string(sharding) + "\n}\n");
  };
  // The sharding's '{' is at column 44.
  EXPECT_THAT(error("{mesh[a=2,b=4], [{c}]}"),
              HasSubstr("bad.hlo:3:62: error: mesh axis 'c' is not in the mesh"));
  EXPECT_THAT(error("{mesh[a=2,b=4], [{a}, {b, a}]}"),
              HasSubstr("bad.hlo:3:70: error: mesh axis a overlaps a, written before"));
  EXPECT_THAT(
      error("{mesh[a=2,b=4], [{b:(3)2}]}"),
      HasSubstr("bad.hlo:3:62: error: sub-axis b:(3)2 does not fit mesh axis 'b' of size 4"));
  EXPECT_THAT(error("{mesh[a=12], [{a:(1)2}, {a:(3)2}]}"),
              HasSubstr("bad.hlo:3:69: error: sub-axes a:(1)2 and a:(3)2 do not split their mesh "
                        "axis into factors"));
  EXPECT_THAT(error("{mesh[a=2,a=4], replicated}"),
              HasSubstr("bad.hlo:3:54: error: mesh axis 'a' named twice"));
  EXPECT_THAT(error("{mesh[x=2,y=2], device_ids=(0,2,2,3), [{x}]}"),
              HasSubstr("bad.hlo:3:72: error: device_ids must be a permutation of 0..3"));
  EXPECT_THAT(error("{mesh[x=2,y=2], device_ids=(0,1,2), [{x}]}"),
              HasSubstr("device_ids lists 3 devices but the mesh has 4"));
  EXPECT_THAT(error("{mesh[a=2], [{?, a}]}"),
              HasSubstr("bad.hlo:3:61: error: no axis may follow '?' in a dimension sharding"));
  EXPECT_THAT(error("{mesh[a=2], replicated, [{a}]}"),
              HasSubstr("bad.hlo:3:45: error: a fully replicated, unreduced or manual named "
                        "sharding takes no dimension shardings"));
  EXPECT_THAT(error("{mesh[a=2]}"), HasSubstr("bad.hlo:3:45: error: named sharding needs "
                                              "dimension shardings"));
  EXPECT_THAT(error("{maximal_mesh[device_id=1], [{a}]}"),
              HasSubstr("a maximal_mesh sharding takes only metadata="));
  EXPECT_THAT(error("{mesh[a=2], sideways}"),
              HasSubstr("bad.hlo:3:56: error: expected a named sharding's [dimension shardings], "
                        "replicated, unreduced, manual, device_ids= or metadata= but got "
                        "'sideways'"));
  EXPECT_THAT(error("{mesh['a=2], replicated}"),
              HasSubstr("expected a mesh axis name closed by a quote"));
}

TEST(ParseAttributes, MetadataAndFrontendAttributes) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  ROOT c = f32[] constant(1), metadata={op_type="Add" op_name="jit(f)/jit(main)/add \"q\"" source_file="/x/y.py" source_line=12 source_end_line=13 source_column=4 source_end_column=9 stack_frame_id=7 scheduling_name="c.1"}, frontend_attributes={_scheduling_group_id="123:-1",_xla_send_recv_source_target_pairs="{{0,1},{1,2}}",composite.name="my.op"}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* c = test::FindInstruction(*m, "c");
  ASSERT_EQ(c->metadata().size(), 9u);
  EXPECT_EQ(c->metadata_field("op_type"), "Add");
  EXPECT_EQ(c->metadata_field("op_name"), "jit(f)/jit(main)/add \"q\"");
  EXPECT_EQ(c->metadata_field("source_line"), "12");
  EXPECT_TRUE(c->metadata()[0].quoted);
  EXPECT_FALSE(c->metadata()[3].quoted);
  EXPECT_EQ(c->metadata_field("scheduling_name"), "c.1");
  EXPECT_EQ(c->metadata_field("absent"), "");
  const auto* fe = c->GetAttr<std::vector<KeyValue>>(AttrId::kFrontendAttributes);
  ASSERT_NE(fe, nullptr);
  ASSERT_EQ(fe->size(), 3u);
  EXPECT_EQ((*fe)[0].key, "_scheduling_group_id");
  EXPECT_EQ((*fe)[0].value, "123:-1");
  EXPECT_EQ((*fe)[1].value, "{{0,1},{1,2}}");
  EXPECT_EQ((*fe)[2].key, "composite.name");
}

TEST(ParseAttributes, StringsTakeTheEscapesXlasCEscapeWrites) {
  // XLA prints metadata through absl::CEscape: every byte outside printable
  // ASCII as three octal digits, so a source path with "é" reads \303\251.
  auto m = Parse(R"(HloModule m
ENTRY e {
  ROOT c = f32[] constant(1), metadata={op_name="caf\303\251" source_file="\1\12\177\a\b\f\v\?"}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* c = test::FindInstruction(*m, "c");
  EXPECT_EQ(c->metadata_field("op_name"), "caf\xc3\xa9");
  EXPECT_EQ(c->metadata_field("source_file"), std::string("\x01\n\x7f\a\b\f\v?"));
  // (Parse checks that the printed text reads back to the same module.)
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[] constant(1), "
                         "metadata={op_name=\"a\\400\"}\n}\n"),
              HasSubstr("3:51: error: octal escape in string is over \\377"));
}

TEST(ParseAttributes, BackendConfigStringAndJsonAreKeptVerbatim) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  s = f32[8] custom-call(p), custom_call_target="tpu_custom_call", api_version=API_VERSION_STATUS_RETURNING, backend_config="{\"custom_call_config\": {\"body\": \"a\\nb\"}}"
  ROOT j = f32[8] fusion(s), kind=kLoop, calls=fused, backend_config={"flag_configs":[],"window_config":{"kernel_window_bounds":["1","8"]},"note":"has } and { inside"}
}
fused {
  x = f32[8] parameter(0)
  ROOT n = f32[8] negate(x)
}
)");
  ASSERT_NE(m, nullptr);
  const auto* s = test::FindInstruction(*m, "s")->GetAttr<BackendConfig>(AttrId::kBackendConfig);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(s->is_string);
  EXPECT_EQ(s->text, "{\"custom_call_config\": {\"body\": \"a\\nb\"}}");
  EXPECT_EQ(test::FindInstruction(*m, "s")->string_attr(AttrId::kCustomCallTarget),
            "tpu_custom_call");
  EXPECT_EQ(test::FindInstruction(*m, "s")->string_attr(AttrId::kApiVersion),
            "API_VERSION_STATUS_RETURNING");
  const auto* j = test::FindInstruction(*m, "j")->GetAttr<BackendConfig>(AttrId::kBackendConfig);
  ASSERT_NE(j, nullptr);
  EXPECT_FALSE(j->is_string);
  EXPECT_EQ(
      j->text,
      R"({"flag_configs":[],"window_config":{"kernel_window_bounds":["1","8"]},"note":"has } and { inside"})");
  EXPECT_EQ(test::FindInstruction(*m, "j")->string_attr(AttrId::kFusionKind), "kLoop");
  EXPECT_THAT(PrintModule(*m), HasSubstr(j->text));
}

TEST(ParseAttributes, SourceTargetPairsAndControlPredecessors) {
  auto m = Parse(R"(HloModule m, replica_count=4
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] negate(p)
  b = f32[4] negate(p), control-predecessors={a}
  cp = f32[4] collective-permute(b), channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  ROOT r = f32[4] add(cp, a), control-predecessors={b, %cp}
}
)");
  ASSERT_NE(m, nullptr);
  const auto* pairs =
      test::FindInstruction(*m, "cp")->GetAttr<std::vector<std::pair<int64_t, int64_t>>>(
          AttrId::kSourceTargetPairs);
  ASSERT_NE(pairs, nullptr);
  EXPECT_THAT(*pairs,
              ElementsAre(std::pair<int64_t, int64_t>{0, 1}, std::pair<int64_t, int64_t>{1, 2},
                          std::pair<int64_t, int64_t>{2, 3}, std::pair<int64_t, int64_t>{3, 0}));
  EXPECT_THAT(test::FindInstruction(*m, "b")->control_predecessors(),
              ElementsAre(test::FindInstruction(*m, "a")));
  EXPECT_THAT(test::FindInstruction(*m, "r")->control_predecessors(),
              ElementsAre(test::FindInstruction(*m, "b"), test::FindInstruction(*m, "cp")));
  // control-predecessors are not attributes and not operands.
  EXPECT_TRUE(test::FindInstruction(*m, "b")->attributes().empty());
  EXPECT_EQ(test::FindInstruction(*m, "b")->operand_count(), 1);

  // The in-place form: output buffer, offsets and one slice size per pair of offsets.
  auto in_place = Parse(R"(HloModule m, replica_count=4
ENTRY e {
  in = f32[16,8]{0,1} parameter(0)
  out = f32[16,16]{0,1} parameter(1)
  z = s32[] constant(0)
  h = s32[] constant(8)
  from = (s32[], s32[]) tuple(z, z)
  to = (s32[], s32[]) tuple(z, h)
  ROOT r = f32[16,16]{0,1} collective-permute(in, out, from, to), source_target_pairs={{0,1},{1,2},{2,3}}, slice_sizes={{16,8}}
}
)");
  ASSERT_NE(in_place, nullptr);
  const HloInstruction* r = test::FindInstruction(*in_place, "r");
  EXPECT_EQ(r->operand_count(), 4);
  using Pairs = std::vector<std::pair<int64_t, int64_t>>;
  ASSERT_NE(r->GetAttr<Pairs>(AttrId::kSourceTargetPairs), nullptr);
  const Attribute* slice_sizes = r->FindUnknownAttribute("slice_sizes");
  ASSERT_NE(slice_sizes, nullptr);
  EXPECT_EQ(std::get<std::string>(slice_sizes->value), "{{16,8}}");
}

TEST(ParseAttributes, AsyncSpellings) {
  auto m = Parse(std::string("HloModule m, replica_count=2\n") + kAdd + R"(
async_comp {
  x = f32[8] parameter(0)
  ROOT ag = f32[16] all-gather(x), dimensions={0}, replica_groups={{0,1}}
}, execution_thread="main"

ENTRY e {
  p = f32[8] parameter(0)
  rss = ((f32[8]), f32[4]) reduce-scatter-start(p), dimensions={0}, replica_groups={{0,1}}, to_apply=add
  rsd = f32[4] reduce-scatter-done(rss)
  ars = f32[8] all-reduce-start(p), replica_groups={{0,1}}, to_apply=add
  ard = f32[8] all-reduce-done(ars)
  cs = (f32[8], f32[8], u32[]) copy-start(p), cross_program_prefetch_index=0
  cd = f32[8] copy-done(cs)
  as = ((f32[8]), f32[16], s32[]) async-start(p), calls=async_comp, async_execution_thread="main"
  au = ((f32[8]), f32[16], s32[]) async-update(as)
  ad = f32[16] async-done(au)
  ROOT t = (f32[4], f32[8], f32[8], f32[16]) tuple(rsd, ard, cd, ad)
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* rss = test::FindInstruction(*m, "rss");
  EXPECT_EQ(rss->opcode(), HloOpcode::kAsyncStart);
  EXPECT_EQ(rss->async_wrapped_opcode(), HloOpcode::kReduceScatter);
  EXPECT_EQ(rss->OpcodeSpelling(), "reduce-scatter-start");
  EXPECT_EQ(test::FindInstruction(*m, "rsd")->opcode(), HloOpcode::kAsyncDone);
  EXPECT_EQ(test::FindInstruction(*m, "rsd")->OpcodeSpelling(), "reduce-scatter-done");
  EXPECT_EQ(test::FindInstruction(*m, "ars")->opcode(), HloOpcode::kAllReduceStart);
  EXPECT_FALSE(test::FindInstruction(*m, "ars")->async_wrapped_opcode().has_value());
  EXPECT_EQ(test::FindInstruction(*m, "cs")->opcode(), HloOpcode::kCopyStart);
  EXPECT_EQ(test::FindInstruction(*m, "cs")->int_attr(AttrId::kCrossProgramPrefetchIndex), 0);
  const HloInstruction* as = test::FindInstruction(*m, "as");
  EXPECT_EQ(as->opcode(), HloOpcode::kAsyncStart);
  EXPECT_FALSE(as->async_wrapped_opcode().has_value());
  ASSERT_EQ(as->called_computations().size(), 1u);
  EXPECT_EQ(as->called_computations()[0]->name(), "async_comp");
  EXPECT_EQ(as->string_attr(AttrId::kAsyncExecutionThread), "main");
  EXPECT_EQ(test::FindInstruction(*m, "au")->opcode(), HloOpcode::kAsyncUpdate);
  EXPECT_EQ(test::FindInstruction(*m, "ad")->opcode(), HloOpcode::kAsyncDone);
  const std::string printed = PrintModule(*m);
  EXPECT_THAT(printed, HasSubstr("reduce-scatter-start(%p)"));
  EXPECT_THAT(printed, HasSubstr("reduce-scatter-done(%rss)"));

  // Any opcode may be wrapped with -start, -update and -done; async-done may
  // name the wrapped computation again.
  auto sugar = Parse(R"(HloModule m
wrapped {
  x = s32[8]{0} parameter(0)
  ROOT c = s32[8]{0} copy(x)
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  cs = ((f32[4]{0}), f32[8]{0}, s32[]) custom-call-start(p), async_execution_thread="side", custom_call_target="foo"
  cu = ((f32[4]{0}), f32[8]{0}, s32[]) custom-call-update(cs)
  cd = f32[8]{0} custom-call-done(cu)
  a = s32[] parameter(1)
  as = ((s32[], s32[]), s32[], s32[]) add-start(a, a), frontend_attributes={k="v"}
  ad = s32[] add-done(as)
  q = s32[8]{0} parameter(2)
  ws = ((s32[8]{0}), s32[8]{0}, u32[]) async-start(q), calls=wrapped
  wd = s32[8]{0} async-done(ws), calls=wrapped
  ROOT t = (f32[8]{0}, s32[], s32[8]{0}) tuple(cd, ad, wd)
}
)");
  ASSERT_NE(sugar, nullptr);
  const HloInstruction* cs = test::FindInstruction(*sugar, "cs");
  EXPECT_EQ(cs->opcode(), HloOpcode::kAsyncStart);
  EXPECT_EQ(cs->async_wrapped_opcode(), HloOpcode::kCustomCall);
  EXPECT_EQ(test::FindInstruction(*sugar, "cu")->opcode(), HloOpcode::kAsyncUpdate);
  EXPECT_EQ(test::FindInstruction(*sugar, "cd")->opcode(), HloOpcode::kAsyncDone);
  EXPECT_EQ(test::FindInstruction(*sugar, "as")->async_wrapped_opcode(), HloOpcode::kAdd);
  EXPECT_EQ(test::FindInstruction(*sugar, "ad")->opcode(), HloOpcode::kAsyncDone);
  const HloInstruction* wd = test::FindInstruction(*sugar, "wd");
  EXPECT_EQ(wd->opcode(), HloOpcode::kAsyncDone);
  ASSERT_EQ(wd->called_computations().size(), 1u);
  EXPECT_EQ(wd->called_computations()[0]->name(), "wrapped");
}

TEST(ParseAttributes, UnknownAttributesAreKeptVerbatim) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(p), custom_call_target="foo", output_to_operand_aliasing={{}: (0, {})}, my_new_attr=some{weird, "stuff}"}[1](x), custom_call_has_side_effect=true, original_value={[0] "p"}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* c = test::FindInstruction(*m, "c");
  const Attribute* alias = c->FindUnknownAttribute("output_to_operand_aliasing");
  ASSERT_NE(alias, nullptr);
  EXPECT_EQ(alias->kind(), AttrKind::kRaw);
  EXPECT_EQ(std::get<std::string>(alias->value), "{{}: (0, {})}");
  const Attribute* weird = c->FindUnknownAttribute("my_new_attr");
  ASSERT_NE(weird, nullptr);
  EXPECT_EQ(std::get<std::string>(weird->value), R"(some{weird, "stuff}"}[1](x))");
  EXPECT_TRUE(c->bool_attr(AttrId::kCustomCallHasSideEffect));
  ASSERT_NE(c->FindUnknownAttribute("original_value"), nullptr);
  // Attribute order is kept, unknown ones included.
  ASSERT_EQ(c->attributes().size(), 5u);
  EXPECT_EQ(c->attributes()[2].spelling(), "my_new_attr");
  EXPECT_THAT(
      PrintModule(*m),
      HasSubstr(
          R"(output_to_operand_aliasing={{}: (0, {})}, my_new_attr=some{weird, "stuff}"}[1](x), custom_call_has_side_effect=true, original_value={[0] "p"})"));

  // Attributes of XLA's tests that tpusim does not model, each kept as written.
  const std::vector<std::pair<std::string, std::string>> raw = {
      {"origin", R"({{"p"}})"},
      {"parameter_replication", "{true}"},
      {"statistics", "{visualizing_index=1,stat-1=33,stat-2=44}"},
      {"result_accuracy", "{tolerance={rtol=0.5, atol=1.0, ulps=2}}"},
      {"literal", "s32[2]{0} {1, 2}"},
      {"schedule", "SCHEDULE_EARLIEST"},
      {"domain", "{kind=\"sharding\", entry={maximal device=0}, exit={maximal device=1}}"},
      {"mode", "cross_replica"},
      {"conv_kind", "fprop"},
  };
  auto kept = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  p = f32[2] parameter(0), origin={{"p"}}, parameter_replication={true}
  c = s32[] constant(-4), statistics={visualizing_index=1,stat-1=33,stat-2=44}
  x = f32[2] exponential(p), result_accuracy={tolerance={rtol=0.5, atol=1.0, ulps=2}}
  y = f32[2] exponential(p), result_accuracy={mode=highest}, origin={[synthetic_call]}
  k1 = f32[2] custom-call(p), custom_call_target="a", literal=s32[2]{0} {1, 2}, schedule=SCHEDULE_EARLIEST
  k2 = f32[2] custom-call(p), custom_call_target="a", literal=( s32[2]{0} {4, 3}, pred[2]{0} {1, 0} )
  k3 = f32[2] custom-call(p), custom_call_target="a", literal=f32[] 0.1
  dm = f32[2] domain(p), domain={kind="sharding", entry={maximal device=0}, exit={maximal device=1}}
  ar = f32[2] all-reduce(p), mode=cross_replica, replica_groups={}, to_apply=add
  in = f32[1,2,1] parameter(1)
  ker = f32[1,1,1] parameter(2)
  cv = f32[1,2,1] convolution(in, ker), window={size=1}, dim_labels=b0f_0io->b0f, conv_kind=fprop
  ROOT t = () tuple()
}
)");
  ASSERT_NE(kept, nullptr);
  const std::vector<std::string> owners = {"p", "p", "c", "x", "k1", "k1", "dm", "ar", "cv"};
  for (size_t i = 0; i < raw.size(); ++i) {
    const Attribute* a =
        test::FindInstruction(*kept, owners[i])->FindUnknownAttribute(raw[i].first);
    ASSERT_NE(a, nullptr) << raw[i].first;
    EXPECT_EQ(std::get<std::string>(a->value), raw[i].second) << raw[i].first;
  }
  EXPECT_EQ(std::get<std::string>(
                test::FindInstruction(*kept, "k2")->FindUnknownAttribute("literal")->value),
            "( s32[2]{0} {4, 3}, pred[2]{0} {1, 0} )");
  EXPECT_EQ(std::get<std::string>(
                test::FindInstruction(*kept, "k3")->FindUnknownAttribute("literal")->value),
            "f32[] 0.1");
  EXPECT_EQ(test::FindInstruction(*kept, "k3")->attributes().size(), 2u);
}

TEST(ParseAttributes, ScalarKindsOnTheirOpcodes) {
  auto m = Parse(std::string("HloModule m\n") + kAdd + R"(
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}

ENTRY e {
  x = f32[8] parameter(0)
  gte_src = (f32[8], s32[]) parameter(1)
  g = s32[] get-tuple-element(gte_src), index=1
  rp = f32[8] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  srt = f32[8] sort(x), dimensions={0}, is_stable=true, to_apply=lt
  tk = (f32[2], s32[2]) topk(x), k=2, largest=true
  io = s32[8] iota(), iota_dimension=0
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[8] rng(lo, hi), distribution=rng_uniform
  bn = (f32[2,8], f32[8], f32[8]) parameter(2)
  sc = f32[8] parameter(3)
  bnt = (f32[2,8], f32[8], f32[8]) batch-norm-training(f32[2,8] bnx, sc, sc), epsilon=0.001, feature_index=1
  bnx = f32[2,8] parameter(4)
  cx = c64[8] parameter(5)
  f = c64[8] fft(cx), fft_type=FFT, fft_length={8}
  cu = f32[8] custom-call(x), custom_call_target="Sharding", custom_call_schedule=SCHEDULE_LATEST, operand_layout_constraints={f32[8]{0}}
  tok = token[] after-all()
  of = token[] outfeed(x, tok), outfeed_shape=f32[8]{0}, outfeed_config="cfg"
  ROOT t = () tuple()
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(test::FindInstruction(*m, "c")->string_attr(AttrId::kDirection), "LT");
  EXPECT_EQ(test::FindInstruction(*m, "c")->string_attr(AttrId::kComparisonType), "TOTALORDER");
  EXPECT_EQ(test::FindInstruction(*m, "g")->int_attr(AttrId::kIndex), 1);
  EXPECT_EQ(test::FindInstruction(*m, "rp")->int_attr(AttrId::kExponentBits), 5);
  EXPECT_EQ(test::FindInstruction(*m, "rp")->int_attr(AttrId::kMantissaBits), 10);
  EXPECT_TRUE(test::FindInstruction(*m, "srt")->bool_attr(AttrId::kIsStable));
  EXPECT_EQ(test::FindInstruction(*m, "srt")->to_apply()->name(), "lt");
  EXPECT_EQ(test::FindInstruction(*m, "tk")->int_attr(AttrId::kK), 2);
  EXPECT_TRUE(test::FindInstruction(*m, "tk")->bool_attr(AttrId::kLargest));
  EXPECT_EQ(test::FindInstruction(*m, "io")->int_attr(AttrId::kIotaDimension), 0);
  EXPECT_EQ(test::FindInstruction(*m, "r")->string_attr(AttrId::kDistribution), "rng_uniform");
  const double* eps = test::FindInstruction(*m, "bnt")->GetAttr<double>(AttrId::kEpsilon);
  ASSERT_NE(eps, nullptr);
  EXPECT_EQ(*eps, 0.001);
  EXPECT_EQ(test::FindInstruction(*m, "bnt")->int_attr(AttrId::kFeatureIndex), 1);
  EXPECT_EQ(test::FindInstruction(*m, "bnt")->operand(0),
            test::FindInstruction(*m, "bnx"));  // defined after its use
  EXPECT_EQ(test::FindInstruction(*m, "f")->string_attr(AttrId::kFftType), "FFT");
  EXPECT_THAT(IntList(test::FindInstruction(*m, "f"), AttrId::kFftLength), ElementsAre(8));
  const auto* constraints = test::FindInstruction(*m, "cu")->GetAttr<std::vector<Shape>>(
      AttrId::kOperandLayoutConstraints);
  ASSERT_NE(constraints, nullptr);
  ASSERT_EQ(constraints->size(), 1u);
  EXPECT_EQ((*constraints)[0].ToString(), "f32[8]{0}");
  EXPECT_EQ(test::FindInstruction(*m, "cu")->string_attr(AttrId::kCustomCallSchedule),
            "SCHEDULE_LATEST");
  const auto* outfeed_shape =
      test::FindInstruction(*m, "of")->GetAttr<Box<Shape>>(AttrId::kOutfeedShape);
  ASSERT_NE(outfeed_shape, nullptr);
  EXPECT_EQ((*outfeed_shape)->ToString(), "f32[8]{0}");
  EXPECT_EQ(test::FindInstruction(*m, "of")->string_attr(AttrId::kOutfeedConfig), "cfg");
  EXPECT_EQ(test::FindInstruction(*m, "tok")->operand_count(), 0);

  auto linalg = Parse(R"(HloModule m
ENTRY e {
  a = f32[4,4]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  ch = f32[4,4] cholesky(a), lower=true
  ts = f32[3,4]{1,0} triangular-solve(ch, b), lower=true, transpose_a=NO_TRANSPOSE
  st = u64[2]{0} rng-get-and-update-state(), delta=4096
  bits = (u64[2]{0}, u32[3,5]{1,0}) rng-bit-generator(st), algorithm=rng_three_fry
  tok = token[] after-all()
  rv = (f32[], u32[], token[]) recv(tok), channel_id=15, is_host_transfer=true
  ROOT t = () tuple()
}
)");
  ASSERT_NE(linalg, nullptr);
  EXPECT_TRUE(test::FindInstruction(*linalg, "ch")->bool_attr(AttrId::kLower));
  EXPECT_TRUE(test::FindInstruction(*linalg, "ts")->bool_attr(AttrId::kLower));
  EXPECT_EQ(test::FindInstruction(*linalg, "ts")->string_attr(AttrId::kTransposeA), "NO_TRANSPOSE");
  EXPECT_EQ(std::get<std::string>(
                test::FindInstruction(*linalg, "st")->FindUnknownAttribute("delta")->value),
            "4096");
  EXPECT_EQ(test::FindInstruction(*linalg, "bits")->string_attr(AttrId::kAlgorithm),
            "rng_three_fry");
  EXPECT_TRUE(test::FindInstruction(*linalg, "rv")->bool_attr(AttrId::kIsHostTransfer));
  EXPECT_EQ(test::FindInstruction(*linalg, "rv")->int_attr(AttrId::kChannelId), 15);
}

TEST(ParseAttributes, GatherAndScatterDimensionNumbers) {
  auto m = Parse(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  op = f32[3,4] parameter(0)
  idx = s32[2,1] parameter(1)
  g = f32[2,4] gather(op, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, operand_batching_dims={}, start_indices_batching_dims={}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true
  upd = f32[2,4] parameter(2)
  ROOT sc = f32[3,4] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, input_batching_dims={}, scatter_indices_batching_dims={}, index_vector_dim=1, indices_are_sorted=false, unique_indices=true, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* g = test::FindInstruction(*m, "g");
  EXPECT_THAT(IntList(g, AttrId::kOffsetDims), ElementsAre(1));
  EXPECT_THAT(IntList(g, AttrId::kCollapsedSliceDims), ElementsAre(0));
  EXPECT_THAT(IntList(g, AttrId::kStartIndexMap), ElementsAre(0));
  EXPECT_TRUE(IntList(g, AttrId::kOperandBatchingDims).empty());
  EXPECT_EQ(g->int_attr(AttrId::kIndexVectorDim), 1);
  EXPECT_THAT(IntList(g, AttrId::kSliceSizes), ElementsAre(1, 4));
  EXPECT_TRUE(g->bool_attr(AttrId::kIndicesAreSorted));
  const HloInstruction* s = test::FindInstruction(*m, "sc");
  EXPECT_THAT(IntList(s, AttrId::kUpdateWindowDims), ElementsAre(1));
  EXPECT_THAT(IntList(s, AttrId::kInsertedWindowDims), ElementsAre(0));
  EXPECT_THAT(IntList(s, AttrId::kScatterDimsToOperandDims), ElementsAre(0));
  EXPECT_FALSE(s->bool_attr(AttrId::kIndicesAreSorted, true));
  EXPECT_TRUE(s->bool_attr(AttrId::kUniqueIndices));
  EXPECT_EQ(s->to_apply()->name(), "add");
}

TEST(ParseAttributes, ComputationReferences) {
  auto m = Parse(R"(HloModule m
cond {
  c = (s32[]) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  b = (s32[]) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[]) tuple(next)
}
id {
  ROOT x = (s32[]) parameter(0)
}
ENTRY e {
  p = (s32[]) parameter(0)
  w = (s32[]) while(p), condition=cond, body=body
  k = pred[] parameter(1)
  c1 = (s32[]) conditional(k, w, w), true_computation=body, false_computation=id
  j = s32[] parameter(2)
  c2 = (s32[]) conditional(j, p, p, p), branch_computations={body, id, %body}
  cl = (s32[]) call(c2), to_apply=id
  ROOT cc = (s32[]) custom-call(cl), custom_call_target="x", called_computations={id}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* w = test::FindInstruction(*m, "w");
  ASSERT_NE(w->GetAttr<HloComputation*>(AttrId::kCondition), nullptr);
  EXPECT_EQ((*w->GetAttr<HloComputation*>(AttrId::kCondition))->name(), "cond");
  EXPECT_EQ((*w->GetAttr<HloComputation*>(AttrId::kBody))->name(), "body");
  ASSERT_EQ(w->called_computations().size(), 2u);
  EXPECT_EQ((*test::FindInstruction(*m, "c1")->GetAttr<HloComputation*>(AttrId::kTrueComputation))
                ->name(),
            "body");
  EXPECT_EQ((*test::FindInstruction(*m, "c1")->GetAttr<HloComputation*>(AttrId::kFalseComputation))
                ->name(),
            "id");
  const auto* branches =
      test::FindInstruction(*m, "c2")->GetAttr<ComputationList>(AttrId::kBranchComputations);
  ASSERT_NE(branches, nullptr);
  ASSERT_EQ(branches->computations.size(), 3u);
  EXPECT_EQ(branches->computations[1]->name(), "id");
  EXPECT_EQ(branches->computations[2]->name(), "body");
  EXPECT_TRUE(branches->braced);
  EXPECT_EQ(test::FindInstruction(*m, "cl")->to_apply()->name(), "id");
  const auto* called =
      test::FindInstruction(*m, "cc")->GetAttr<ComputationList>(AttrId::kCalledComputations);
  ASSERT_NE(called, nullptr);
  EXPECT_EQ(called->computations[0]->name(), "id");

  auto sas = Parse(std::string("HloModule m\n") + kAdd + R"(
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
ENTRY e {
  op = f32[4,4] parameter(0)
  src = f32[2,2] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4,4] select-and-scatter(op, src, z), window={size=2x2 stride=2x2}, select=ge, scatter=add
}
)");
  ASSERT_NE(sas, nullptr);
  const HloInstruction* r = test::FindInstruction(*sas, "r");
  ASSERT_NE(r->called_computation(AttrId::kSelect), nullptr);
  ASSERT_NE(r->called_computation(AttrId::kScatter), nullptr);
  EXPECT_EQ(r->called_computation(AttrId::kSelect)->name(), "ge");
  EXPECT_EQ(r->called_computation(AttrId::kScatter)->name(), "add");
}

TEST(ParseAttributes, CalledComputationIsTheOneNamedOrTheFirstOfAList) {
  auto m = Parse(R"(HloModule m
cond {
  c = (s32[]) parameter(0)
  ROOT f = pred[] constant(false)
}
id {
  ROOT x = (s32[]) parameter(0)
}
ENTRY e {
  p = (s32[]) parameter(0)
  w = (s32[]) while(p), condition=cond, body=id
  j = s32[] parameter(1)
  ROOT branch = (s32[]) conditional(j, w, w), branch_computations={id, cond}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* w = test::FindInstruction(*m, "w");
  const HloComputation* condition = w->called_computation(AttrId::kCondition);
  const HloComputation* body = w->called_computation(AttrId::kBody);
  const HloComputation* first_branch =
      test::FindInstruction(*m, "branch")->called_computation(AttrId::kBranchComputations);
  ASSERT_NE(condition, nullptr);
  ASSERT_NE(body, nullptr);
  ASSERT_NE(first_branch, nullptr);
  EXPECT_EQ(condition->name(), "cond");
  EXPECT_EQ(body->name(), "id");
  EXPECT_EQ(first_branch->name(), "id");
  EXPECT_EQ(w->called_computation(AttrId::kToApply), nullptr);
}

TEST(ParseAttributes, FusionCallsMayBeBareOrBraced) {
  auto m = Parse(R"(HloModule m
f1 {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
ENTRY e {
  p = f32[2] parameter(0)
  a = f32[2] fusion(p), kind=kLoop, calls=f1
  ROOT b = f32[2] fusion(a), kind=kOutput, calls={f1}
}
)");
  ASSERT_NE(m, nullptr);
  const auto* bare = test::FindInstruction(*m, "a")->GetAttr<ComputationList>(AttrId::kCalls);
  const auto* braced = test::FindInstruction(*m, "b")->GetAttr<ComputationList>(AttrId::kCalls);
  ASSERT_NE(bare, nullptr);
  ASSERT_NE(braced, nullptr);
  EXPECT_FALSE(bare->braced);
  EXPECT_TRUE(braced->braced);
  EXPECT_EQ(bare->computations[0]->name(), "f1");
  EXPECT_THAT(PrintModule(*m), HasSubstr("calls=%f1\n"));
  EXPECT_THAT(PrintModule(*m), HasSubstr("calls={%f1}\n"));
}

TEST(ParseAttributes, ComputationsWrittenInline) {
  // As XLA's parser tests write them: a computation in place of a name, in a
  // single-computation attribute, in a list beside a name, nested in another,
  // and in the last computation (which stays the entry).
  auto m = Parse(R"(HloModule m
named {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
main {
  p = f32[4] parameter(0)
  zero = f32[] constant(0)
  r = f32[] reduce(p, zero), dimensions={0}, to_apply={
    a = f32[] parameter(0)
    b = f32[] parameter(1)
    s = f32[] add(a, b)
    ROOT c = f32[] call(s), to_apply={
      q = f32[] parameter(0)
      ROOT n = f32[] negate(q)
    }
  }
  i = s32[] constant(1)
  ROOT k = f32[] conditional(i, r, r), branch_computations={named, {
    y = f32[] parameter(0)
    ROOT e = f32[] exponential(y)
  }}
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->name(), "main");
  const HloComputation* reducer =
      test::FindInstruction(*m, "r")->called_computation(AttrId::kToApply);
  ASSERT_NE(reducer, nullptr);
  EXPECT_EQ(reducer->name(), "r.to_apply");
  EXPECT_EQ(reducer->root()->opcode(), HloOpcode::kCall);
  // Names are per computation: the inline `n` does not clash with named's `n`.
  const HloComputation* negate = reducer->root()->called_computation(AttrId::kToApply);
  ASSERT_NE(negate, nullptr);
  EXPECT_EQ(negate->name(), "c.to_apply");
  EXPECT_EQ(negate->root()->name(), "n");
  const auto* branches =
      test::FindInstruction(*m, "k")->GetAttr<ComputationList>(AttrId::kBranchComputations);
  ASSERT_NE(branches, nullptr);
  ASSERT_EQ(branches->computations.size(), 2u);
  EXPECT_EQ(branches->computations[0]->name(), "named");
  EXPECT_EQ(branches->computations[1]->name(), "k.branch_computations");
  EXPECT_EQ(branches->computations[1]->root()->opcode(), HloOpcode::kExp);
  // A name written later wins over an inline computation's made-up one.
  auto later = Parse(R"(HloModule m
ENTRY e {
  p = f32[] parameter(0)
  ROOT k = f32[] call(p), to_apply={
    x = f32[] parameter(0)
    ROOT c = f32[] call(x), to_apply={
      y = f32[] parameter(0)
      ROOT n = f32[] negate(y)
    }
  }
}
c.to_apply {
  ROOT q = f32[] parameter(0)
}
)");
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->FindComputation("c.to_apply")->root()->name(), "q");
  const HloComputation* inner =
      test::FindInstruction(*later, "c")->called_computation(AttrId::kToApply);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->name(), "c.to_apply.1");
  EXPECT_EQ(inner->root()->opcode(), HloOpcode::kNegate);
}

TEST(ParseErrors, InlineComputationsNestedDeeperThanTheLimitAreLocatedErrors) {
  std::string text = "HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] ";
  constexpr int kDepth = 100'000;
  for (int i = 0; i < kDepth; ++i)
    text += "call(p), to_apply={p = f32[] parameter(0) ROOT r = f32[] ";
  text += "negate(p)";
  for (int i = 0; i < kDepth; ++i) text += "}";
  text += "\n}\n";
  // The attribute is named once, however deep (the first line used to grow
  // by " in attribute 'to_apply'" at every level).
  const std::string error = ParseError(text);
  EXPECT_THAT(error, HasSubstr("error: computations written inline nest more than 64 deep in "
                               "attribute 'to_apply'\n"));
  EXPECT_LT(error.size(), 400u) << error;
  // An inline computation's own errors are located in it.
  EXPECT_THAT(
      ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                 "  ROOT r = f32[] call(p), to_apply={\n    ROOT q = f32[] negate(zz)\n  }\n}\n"),
      HasSubstr("bad.hlo:5:27: error: undefined operand 'zz' in computation 'r.to_apply'"));
}

// --- constants -------------------------------------------------------------------

TEST(ParseConstants, IntegersOfEveryWidthAtTheirLimits) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  b = pred[3] constant({true, false, 1})
  s1 = s1[2] constant({-1, 0})
  s2 = s2[2] constant({-2, 1})
  s4 = s4[2] constant({-8, 7})
  s8 = s8[2] constant({-128, 127})
  s16 = s16[] constant(-32768)
  s32 = s32[] constant(2147483647)
  s64 = s64[2] constant({-9223372036854775808, 9223372036854775807})
  u1 = u1[] constant(1)
  u2 = u2[] constant(3)
  u4 = u4[] constant(15)
  u8 = u8[] constant(255)
  u16 = u16[] constant(65535)
  u32 = u32[] constant(4294967295)
  u64 = u64[] constant(18446744073709551615)
  ROOT t = () tuple()
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(test::FindInstruction(*m, "b")->literal().ints, ElementsAre(1, 0, 1));
  EXPECT_THAT(test::FindInstruction(*m, "s1")->literal().ints, ElementsAre(-1, 0));
  EXPECT_THAT(test::FindInstruction(*m, "s2")->literal().ints, ElementsAre(-2, 1));
  EXPECT_THAT(test::FindInstruction(*m, "s4")->literal().ints, ElementsAre(-8, 7));
  EXPECT_THAT(test::FindInstruction(*m, "s8")->literal().ints, ElementsAre(-128, 127));
  EXPECT_THAT(test::FindInstruction(*m, "s16")->literal().ints, ElementsAre(-32768));
  EXPECT_THAT(test::FindInstruction(*m, "s32")->literal().ints, ElementsAre(2147483647));
  EXPECT_THAT(
      test::FindInstruction(*m, "s64")->literal().ints,
      ElementsAre(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
  EXPECT_THAT(test::FindInstruction(*m, "u1")->literal().ints, ElementsAre(1));
  EXPECT_THAT(test::FindInstruction(*m, "u2")->literal().ints, ElementsAre(3));
  EXPECT_THAT(test::FindInstruction(*m, "u4")->literal().ints, ElementsAre(15));
  EXPECT_THAT(test::FindInstruction(*m, "u8")->literal().ints, ElementsAre(255));
  EXPECT_THAT(test::FindInstruction(*m, "u16")->literal().ints, ElementsAre(65535));
  EXPECT_THAT(test::FindInstruction(*m, "u32")->literal().ints, ElementsAre(4294967295));
  // Unsigned 64-bit values are stored bit-cast.
  EXPECT_EQ(static_cast<uint64_t>(test::FindInstruction(*m, "u64")->literal().ints.at(0)),
            std::numeric_limits<uint64_t>::max());
  // One past either end is an error.
  for (const char* constant : {"s4[] constant(8)", "s4[] constant(-9)", "u4[] constant(16)",
                               "u4[] constant(-1)", "u32[] constant(4294967296)"}) {
    EXPECT_THAT(ParseError(std::string("HloModule m\nENTRY e {\n  ROOT c = ") + constant + "\n}\n"),
                HasSubstr("error:"))
        << constant;
  }
}

TEST(ParseConstants, RealsOfEveryFloatTypeIncludingSpecialValues) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  f16 = f16[2] constant({0.5, -65504})
  bf16 = bf16[] constant(-2.38197633e+38)
  f32 = f32[6] constant({0.01001, -3.5233877e-06, inf, -inf, nan, -0})
  f64 = f64[] constant(0.1)
  payload = f32[] constant(nan(0x1))
  negnan = f32[] constant(-nan)
  e4m3fn = f8e4m3fn[] constant(448)
  e5m2 = f8e5m2[] constant(-57344)
  e4m3 = f8e4m3[] constant(0.25)
  e3m4 = f8e3m4[] constant(1.5)
  fnuz = f8e4m3fnuz[] constant(-1)
  e5m2fnuz = f8e5m2fnuz[] constant(2)
  b11 = f8e4m3b11fnuz[] constant(0.125)
  e8m0 = f8e8m0fnu[] constant(1024)
  e2m1 = f4e2m1fn[2] constant({6, -0.5})
  ROOT t = () tuple()
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(test::FindInstruction(*m, "f16")->literal().reals, ElementsAre(0.5, -65504.0));
  EXPECT_EQ(test::FindInstruction(*m, "bf16")->literal().reals.at(0), -2.38197633e+38);
  const std::vector<double>& f32 = test::FindInstruction(*m, "f32")->literal().reals;
  ASSERT_EQ(f32.size(), 6u);
  EXPECT_EQ(f32[0], 0.01001);
  EXPECT_EQ(f32[1], -3.5233877e-06);
  EXPECT_EQ(f32[2], std::numeric_limits<double>::infinity());
  EXPECT_EQ(f32[3], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(Bits(f32[4]), 0x7ff8000000000000u);  // the default quiet NaN
  EXPECT_EQ(Bits(f32[5]), 0x8000000000000000u);  // -0 keeps its sign
  EXPECT_EQ(test::FindInstruction(*m, "f64")->literal().reals.at(0), 0.1);
  EXPECT_EQ(Bits(test::FindInstruction(*m, "payload")->literal().reals.at(0)), 0x7ff0000000000001u);
  EXPECT_EQ(Bits(test::FindInstruction(*m, "negnan")->literal().reals.at(0)), 0xfff8000000000000u);
  EXPECT_EQ(test::FindInstruction(*m, "e4m3fn")->literal().reals.at(0), 448.0);
  EXPECT_EQ(test::FindInstruction(*m, "e5m2")->literal().reals.at(0), -57344.0);
  EXPECT_EQ(test::FindInstruction(*m, "e8m0")->literal().reals.at(0), 1024.0);
  EXPECT_THAT(test::FindInstruction(*m, "e2m1")->literal().reals, ElementsAre(6.0, -0.5));
  EXPECT_TRUE(test::FindInstruction(*m, "f32")->literal().ints.empty());
}

TEST(ParseConstants, ComplexNestedElidedTupleAndEmpty) {
  auto m = Parse(R"(HloModule m
ENTRY e {
  c = c64[] constant((nan, 0))
  c2 = c128[2] constant({(1.5, -2), (0, inf)})
  nested = s32[2,3] constant({ { 1, 2, 3 }, {4,5,/*index=5*/6} })
  cube = f32[2,1,2] constant({{{1, 2}}, {{3, 4}}})
  elided = f32[1000,1000] constant({...})
  tup = (s32[], (f32[2], pred[])) constant((7, ({0.5, 1}, true)))
  empty = f32[0] constant({})
  empty2 = f32[2,0] constant({{}, {}})
  ROOT t = () tuple()
}
)");
  ASSERT_NE(m, nullptr);
  const ConstantLiteral& c = test::FindInstruction(*m, "c")->literal();
  ASSERT_EQ(c.reals.size(), 1u);
  EXPECT_TRUE(std::isnan(c.reals[0]));
  EXPECT_THAT(c.imags, ElementsAre(0.0));
  const ConstantLiteral& c2 = test::FindInstruction(*m, "c2")->literal();
  EXPECT_THAT(c2.reals, ElementsAre(1.5, 0.0));
  EXPECT_THAT(c2.imags, ElementsAre(-2.0, std::numeric_limits<double>::infinity()));
  EXPECT_THAT(test::FindInstruction(*m, "nested")->literal().ints, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(test::FindInstruction(*m, "cube")->literal().reals, ElementsAre(1, 2, 3, 4));
  const ConstantLiteral& elided = test::FindInstruction(*m, "elided")->literal();
  EXPECT_TRUE(elided.elided);
  EXPECT_TRUE(elided.reals.empty());
  const ConstantLiteral& tup = test::FindInstruction(*m, "tup")->literal();
  ASSERT_EQ(tup.elements.size(), 2u);
  EXPECT_THAT(tup.elements[0].ints, ElementsAre(7));
  ASSERT_EQ(tup.elements[1].elements.size(), 2u);
  EXPECT_THAT(tup.elements[1].elements[0].reals, ElementsAre(0.5, 1.0));
  EXPECT_THAT(tup.elements[1].elements[1].ints, ElementsAre(1));
  EXPECT_TRUE(test::FindInstruction(*m, "empty")->literal().reals.empty());
  EXPECT_FALSE(test::FindInstruction(*m, "empty")->literal().elided);
  EXPECT_TRUE(test::FindInstruction(*m, "empty2")->literal().reals.empty());
  EXPECT_THAT(PrintModule(*m), HasSubstr("constant({...})"));
}

TEST(ParseConstants, RealsKeepTheirDecimalValueThroughPrinting) {
  // More digits than f32 holds: the IR keeps the nearest double, and printing
  // must not round it to f32, or the round trip would change the value.
  auto m = Parse(R"(HloModule m
ENTRY e {
  ROOT c = f32[3] constant({0.1234567890123, 1e-40, 3.4028235677973366e+38})
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_THAT(test::FindInstruction(*m, "c")->literal().reals,
              ElementsAre(0.1234567890123, 1e-40, 3.4028235677973366e+38));
}

// --- errors ------------------------------------------------------------------------

TEST(ParseErrors, MessageNamesFileLineColumnAndShowsACaret) {
  const std::string error = ParseError("HloModule m\nENTRY e {\n  p = f32[2 parameter(0)\n}\n");
  EXPECT_THAT(
      error,
      HasSubstr("bad.hlo:3:13: error: expected ']' to close the dimensions, got 'parameter'"));
  EXPECT_THAT(error, HasSubstr("\n  p = f32[2 parameter(0)\n            ^"));
}

// A line with bytes outside printable ASCII once lost its excerpt; each such
// byte shows as '?', one column per byte, so the caret still points.
TEST(ParseErrors, ALineWithUnprintableBytesIsShownWithThemAsQuestionMarks) {
  const std::string error =
      ParseError("HloModule m\nENTRY e {\n  %a\xff\xfe = f32[] constant(1) \x1b[31m\n}\n");
  EXPECT_THAT(error, HasSubstr("bad.hlo:3:5: error: expected '=' after the instruction name, got "
                               "byte 0xff\n  %a?? = f32[] constant(1) ?[31m\n    ^"));
}

TEST(ParseErrors, AComputationsStatedResultMustBeItsRoots) {
  EXPECT_THAT(ParseError("HloModule m\nENTRY %main (a: f32[4]) -> s32[4] {\n"
                         "  %a = f32[4]{0} parameter(0)\n  ROOT %r = f32[4]{0} negate(%a)\n}\n"),
              HasSubstr("bad.hlo:2:28: error: result shape s32[4] of computation 'main' is not "
                        "that of its root instruction 'r', f32[4]"));
  // As in XLA's parser: layouts and dynamism aside, and the parameter list
  // (which the parameter instructions define) read for its syntax only.
  auto m = Parse(
      "HloModule m\nENTRY %main (a: f32[4], b: s32[9]) -> (f32[<=4]{0}) {\n"
      "  %a = f32[4] parameter(0)\n  ROOT %t = (f32[4]) tuple(%a)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->name(), "t");
}

TEST(ParseErrors, UnknownElementTypeIsNamedAsSuch) {
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT p = f33[2] parameter(0)\n}\n"),
              HasSubstr("bad.hlo:3:12: error: unknown element type 'f33'"));
}

TEST(Parse, AUtf8ByteOrderMarkIsSkippedAndPositionsCountAfterIt) {
  const std::string text = "HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n";
  auto module = ParseHloModule("\xEF\xBB\xBF" + text, "bom.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  EXPECT_TRUE(ModulesEqual(**module, **ParseHloModule(text, "plain.hlo")));
  // `HloModul m` reads as a computation named HloModul; its `m` is column 10.
  EXPECT_THAT(ParseError("\xEF\xBB\xBFHloModul m\n"),
              HasSubstr("bad.hlo:1:10: error: expected '{' to open the computation body"));
}

TEST(ParseErrors, HugeNamesAreQuotedAsAnExcerptNotWhole) {
  const std::string huge(1 << 20, 'x');
  for (const std::string& text : {
           "HloModule m\nENTRY e {\n  ROOT r = f32[] " + huge + "(f32[] parameter(0))\n}\n",
           "HloModule m\nENTRY e {\n  ROOT r = f32[] negate(" + huge + ")\n}\n",
           "HloModule m\nENTRY e {\n  ROOT r = " + huge + "[2] parameter(0)\n}\n",
           "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] fusion(p), "
           "kind=kLoop, calls=" + huge + "\n}\n",
           "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = pred[2] compare(p, p), "
           "direction=" + huge + "\n}\n",
           "HloModule m\nENTRY e {\n  ROOT r = f32[2] parameter(0), " + huge + "=1, " + huge +
               "=2\n}\n",
       }) {
    const std::string error = ParseError(text);
    EXPECT_THAT(error, HasSubstr("'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' (1048576 characters)"));
    EXPECT_LT(error.size(), 1000u) << error.substr(0, 200);
  }
}

TEST(ParseErrors, OperandsMustBeDefinedInTheSameComputation) {
  EXPECT_THAT(ParseError(std::string("HloModule m\n") + kAdd +
                         "ENTRY e {\n  ROOT r = f32[] negate(a)\n}\n"),
              HasSubstr("undefined operand 'a' in computation 'e'"));
}

/// `element` inside `depth` one-element tuples: "((f32[]))" for depth 2.
std::string NestedTupleShape(int64_t depth, std::string_view element) {
  return std::string(depth, '(') + std::string(element) + std::string(depth, ')');
}

TEST(ParseErrors, TupleShapesNestedDeeperThanTheLimitAreLocatedErrorsNotStackOverflows) {
  const std::string deep = NestedTupleShape(100'000, "f32[]");
  // In an instruction's type.
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT p = " + deep + " parameter(0)\n}\n"),
              HasSubstr("bad.hlo:3:76: error: shapes nested more than 64 deep"));
  // In a constant's type.
  EXPECT_THAT(ParseError("HloModule m\nENTRY e {\n  ROOT c = " + deep + " constant(1)\n}\n"),
              HasSubstr("bad.hlo:3:76: error: shapes nested more than 64 deep"));
  // In a computation's signature and in buffer shapes.
  EXPECT_THAT(ParseError("HloModule m\nENTRY e (p: " + deep + ") -> f32[] {\n}\n"),
              HasSubstr("bad.hlo:2:77: error: shapes nested more than 64 deep"));
  std::string buffers;
  for (int i = 0; i < 100'000; ++i) buffers += "b(";
  EXPECT_THAT(
      ParseError("HloModule m\nENTRY e {\n  ROOT p = " + buffers + "f32[] parameter(0)\n}\n"),
      HasSubstr("error: shapes nested more than 64 deep"));
  EXPECT_THAT(ParseShape(deep).status().message(), HasSubstr("shapes nested more than 64 deep"));
}

// A tuple sharding's elements may be tuple shardings; 100,000 of them once
// overflowed the stack (SIGSEGV in `tpusim check`).
TEST(ParseErrors, ShardingsNestedDeeperThanTheLimitAreLocatedErrorsNotStackOverflows) {
  const auto module = [](int64_t depth) {
    return "HloModule m\nENTRY e {\n  ROOT p = f32[8] parameter(0), sharding=" +
           std::string(depth, '{') + "replicated" + std::string(depth, '}') + "\n}\n";
  };
  EXPECT_THAT(ParseError(module(100'000)),
              HasSubstr("bad.hlo:3:106: error: shardings nested more than 64 deep (tuple "
                        "shardings follow tuple shapes)"));
  // 64 tuple shardings around the leaf's own braces parse, and print back.
  StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(module(65));
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_THAT(PrintModule(**parsed),
              HasSubstr(std::string(65, '{') + "replicated" + std::string(65, '}')));
}

TEST(ParseShapes, TuplesNestedUpToTheLimitParse) {
  StatusOr<Shape> shape = ParseShape(NestedTupleShape(64, "f32[2]"));
  ASSERT_TRUE(shape.ok()) << shape.status().message();
  EXPECT_EQ(shape->ToString(false), NestedTupleShape(64, "f32[2]"));
}

}  // namespace
}  // namespace tpusim::hlo
