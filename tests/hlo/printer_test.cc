// Printing hand-built IR, and the IR graph operations the printer relies on.
// Round trips through the parser are tested with the parser.
#include "sim/hlo/printer.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "sim/hlo/parser.h"
#include "tests/hlo/nested_module.h"

namespace tpusim::hlo {
namespace {

Shape Array(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s(type, std::move(dims));
  auto& m2m = s.mutable_layout().mutable_minor_to_major();
  for (int64_t i = s.rank() - 1; i >= 0; --i) m2m.push_back(i);
  return s;
}

Attribute Attr(AttrId id, AttrValue value) {
  Attribute a;
  a.id = id;
  a.value = std::move(value);
  return a;
}

/// A computation under construction; instructions are added in text order.
struct Builder {
  explicit Builder(std::string name)
      : computation(std::make_unique<HloComputation>(std::move(name))) {}

  HloInstruction* Add(std::string name, HloOpcode opcode, Shape shape,
                      std::vector<HloInstruction*> operands = {}) {
    auto owned = std::make_unique<HloInstruction>(std::move(name), opcode, std::move(shape));
    for (HloInstruction* op : operands) owned->AppendOperand(op);
    return computation->AddInstruction(std::move(owned));
  }
  HloInstruction* Parameter(std::string name, int64_t number, Shape shape) {
    HloInstruction* p = Add(std::move(name), HloOpcode::kParameter, std::move(shape));
    p->set_parameter_number(number);
    computation->SetParameter(number, p);
    return p;
  }

  std::unique_ptr<HloComputation> computation;
};

std::string Constant(const Shape& shape, ConstantLiteral literal) {
  HloInstruction c("c", HloOpcode::kConstant, shape);
  c.set_literal(std::move(literal));
  return PrintInstruction(c);
}

std::string Reals(PrimitiveType type, std::vector<int64_t> dims, std::vector<double> values) {
  ConstantLiteral lit;
  lit.reals = std::move(values);
  return Constant(Shape(type, std::move(dims)), std::move(lit));
}

std::string OneReal(double v, PrimitiveType type = PrimitiveType::kF32) {
  std::string text = Reals(type, {}, {v});
  const size_t open = text.find('(');
  return text.substr(open + 1, text.size() - open - 2);
}

TEST(PrintInstruction, OperandsAttributesAndControlPredecessors) {
  Builder b("main");
  HloInstruction* x = b.Parameter("x", 0, Array(PrimitiveType::kF32, {2, 3}));
  HloInstruction* y = b.Parameter("y", 1, Array(PrimitiveType::kF32, {2, 3}));
  HloInstruction* add = b.Add("add.1", HloOpcode::kAdd, Array(PrimitiveType::kF32, {2, 3}), {x, y});
  add->AddControlPredecessor(y);
  add->AddControlPredecessor(x);
  add->mutable_attributes().push_back(
      Attr(AttrId::kMetadata, std::vector<KeyValue>{{"op_type", "Add", true},
                                                    {"op_name", "jit(f)/\"a\"\\b", true},
                                                    {"source_line", "12", false}}));
  EXPECT_EQ(PrintInstruction(*add),
            "%add.1 = f32[2,3]{1,0} add(%x, %y), metadata={op_type=\"Add\" "
            "op_name=\"jit(f)/\\\"a\\\"\\\\b\" source_line=12}, control-predecessors={%y, %x}");
  EXPECT_EQ(PrintInstruction(*x), "%x = f32[2,3]{1,0} parameter(0)");
  b.computation->set_root(add);
  EXPECT_EQ(PrintInstruction(*add).substr(0, 12), "ROOT %add.1 ");
}

TEST(PrintInstruction, AsyncWrappedOpcodesUseTheirOwnSpelling) {
  HloInstruction start("rs", HloOpcode::kAsyncStart, Shape::Tuple({}));
  start.set_async_wrapped_opcode(HloOpcode::kReduceScatter);
  EXPECT_EQ(start.OpcodeSpelling(), "reduce-scatter-start");
  EXPECT_EQ(PrintInstruction(start), "%rs = () reduce-scatter-start()");
  HloInstruction update("u", HloOpcode::kAsyncUpdate, Shape::Tuple({}));
  update.set_async_wrapped_opcode(HloOpcode::kCall);
  EXPECT_EQ(update.OpcodeSpelling(), "call-update");
  HloInstruction done("d", HloOpcode::kAsyncDone, Shape(PrimitiveType::kF32, {}));
  done.set_async_wrapped_opcode(HloOpcode::kReduceScatter);
  EXPECT_EQ(done.OpcodeSpelling(), "reduce-scatter-done");
  HloInstruction plain("a", HloOpcode::kAsyncStart, Shape::Tuple({}));
  EXPECT_EQ(plain.OpcodeSpelling(), "async-start");
}

TEST(PrintLiteral, ScalarsAndArraysByRank) {
  ConstantLiteral ints;
  ints.ints = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(Constant(Array(PrimitiveType::kS32, {6}), ints),
            "%c = s32[6]{0} constant({1, 2, 3, 4, 5, 6})");
  EXPECT_EQ(Constant(Array(PrimitiveType::kS32, {2, 3}), ints),
            "%c = s32[2,3]{1,0} constant({ {1, 2, 3}, {4, 5, 6} })");
  EXPECT_EQ(Constant(Shape(PrimitiveType::kS32, {3, 1, 2}), ints),
            "%c = s32[3,1,2] constant({ { {1, 2} }, { {3, 4} }, { {5, 6} } })");
  ConstantLiteral one;
  one.ints = {-7};
  EXPECT_EQ(Constant(Shape(PrimitiveType::kS64, {}), one), "%c = s64[] constant(-7)");
  ConstantLiteral none;
  EXPECT_EQ(Constant(Shape(PrimitiveType::kF32, {0}), none), "%c = f32[0] constant({})");
  EXPECT_EQ(Constant(Shape(PrimitiveType::kF32, {0, 3}), none), "%c = f32[0,3] constant({})");
  EXPECT_EQ(Constant(Shape(PrimitiveType::kF32, {2, 0}), none),
            "%c = f32[2,0] constant({ {}, {} })");
}

TEST(PrintLiteral, PredUnsignedComplexTupleAndElided) {
  ConstantLiteral pred;
  pred.ints = {1, 0};
  EXPECT_EQ(Constant(Shape(PrimitiveType::kPred, {2}), pred),
            "%c = pred[2] constant({true, false})");
  ConstantLiteral u64;
  u64.ints = {-1};
  EXPECT_EQ(Constant(Shape(PrimitiveType::kU64, {}), u64),
            "%c = u64[] constant(18446744073709551615)");
  ConstantLiteral complex;
  complex.reals = {std::nan(""), 1.5};
  complex.imags = {0, -2};
  EXPECT_EQ(Constant(Shape(PrimitiveType::kC64, {2}), complex),
            "%c = c64[2] constant({(nan, 0), (1.5, -2)})");
  ConstantLiteral tuple;
  tuple.elements.resize(2);
  tuple.elements[0].reals = {0.5};
  tuple.elements[1].ints = {3};
  EXPECT_EQ(
      Constant(Shape::Tuple({Shape(PrimitiveType::kF32, {}), Shape(PrimitiveType::kS32, {1})}),
               tuple),
      "%c = (f32[], s32[1]) constant((0.5, {3}))");
  ConstantLiteral elided;
  elided.elided = true;
  EXPECT_EQ(Constant(Shape(PrimitiveType::kF32, {1000}), elided), "%c = f32[1000] constant({...})");
}

TEST(PrintLiteral, ValuesThatDoNotFillTheShapePrintFlat) {
  ConstantLiteral short_lit;
  short_lit.ints = {1, 2, 3};
  EXPECT_EQ(Constant(Shape(PrimitiveType::kS32, {2, 2}), short_lit),
            "%c = s32[2,2] constant({1, 2, 3})");
}

TEST(PrintLiteral, RealsUseShortestDigitsPlacedLikeXla) {
  EXPECT_EQ(OneReal(0.1), "0.1");
  EXPECT_EQ(OneReal(1), "1");
  EXPECT_EQ(OneReal(-0.0), "-0");
  EXPECT_EQ(OneReal(100000), "100000");
  EXPECT_EQ(OneReal(1000000), "1e+06");
  EXPECT_EQ(OneReal(12345678), "12345678");
  EXPECT_EQ(OneReal(1e30), "1e+30");
  EXPECT_EQ(OneReal(1e-07), "1e-07");
  EXPECT_EQ(OneReal(0.000244140625), "0.000244140625");
  EXPECT_EQ(OneReal(6.10351562e-05), "6.10351562e-05");
  EXPECT_EQ(OneReal(-3.5233877e-06), "-3.5233877e-06");
  EXPECT_EQ(OneReal(-2.38197633e+38), "-2.38197633e+38");
  EXPECT_EQ(OneReal(0.159154937), "0.159154937");
  EXPECT_EQ(OneReal(1e15, PrimitiveType::kF64), "1e+15");
  EXPECT_EQ(OneReal(123456789012345, PrimitiveType::kF64), "123456789012345");
  EXPECT_EQ(OneReal(0.1 + 0.2, PrimitiveType::kF64), "0.30000000000000004");
}

TEST(PrintLiteral, InfinitiesAndNaNs) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(OneReal(kInf), "inf");
  EXPECT_EQ(OneReal(-kInf), "-inf");
  EXPECT_EQ(OneReal(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(OneReal(-std::numeric_limits<double>::quiet_NaN()), "-nan");
  EXPECT_EQ(OneReal(std::bit_cast<double>(uint64_t{0x7ff0000000000001})), "nan(0x1)");
  EXPECT_EQ(OneReal(std::bit_cast<double>(uint64_t{0xfff8000000000abc})), "-nan(0x8000000000abc)");
}

TEST(PrintAttributes, EveryValueKind) {
  HloComputation add("add");
  HloComputation mul("mul.2");
  HloInstruction i("op", HloOpcode::kCustomCall, Shape(PrimitiveType::kF32, {}));
  auto& attrs = i.mutable_attributes();
  attrs.push_back(Attr(AttrId::kChannelId, int64_t{3}));
  attrs.push_back(Attr(AttrId::kIsStable, true));
  attrs.push_back(Attr(AttrId::kEpsilon, 0.001));
  attrs.push_back(Attr(AttrId::kCustomCallTarget, std::string("it's\ttab\x01\"")));
  attrs.push_back(Attr(AttrId::kDirection, std::string("LT")));
  attrs.push_back(Attr(AttrId::kOperandPrecision, std::vector<std::string>{"highest", "default"}));
  attrs.push_back(Attr(AttrId::kDimensions, std::vector<int64_t>{0, 2}));
  attrs.push_back(
      Attr(AttrId::kSourceTargetPairs, std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}}));
  attrs.push_back(Attr(AttrId::kToApply, &add));
  attrs.push_back(Attr(AttrId::kBranchComputations, ComputationList{{&add, &mul}, true}));
  attrs.push_back(Attr(AttrId::kCalls, ComputationList{{&mul}, false}));
  attrs.push_back(Attr(AttrId::kCalledComputations, ComputationList{{&mul}, true}));
  attrs.push_back(Attr(AttrId::kSlice, std::vector<SliceRange>{{0, 8, 1}, {2, 10, 2}}));
  attrs.push_back(Attr(AttrId::kPadding, std::vector<PaddingDimension>{{0, 0, 0}, {1, -2, 0}}));
  attrs.push_back(Attr(AttrId::kFrontendAttributes,
                       std::vector<KeyValue>{{"_a", "1", true}, {"b", "{x}", false}}));
  attrs.push_back(Attr(AttrId::kOutfeedShape, Box<Shape>(Array(PrimitiveType::kF32, {2}))));
  attrs.push_back(
      Attr(AttrId::kOperandLayoutConstraints,
           std::vector<Shape>{Array(PrimitiveType::kF32, {2}), Shape(PrimitiveType::kS32, {})}));
  attrs.push_back(Attr(AttrId::kBackendConfig, BackendConfig{"{\"k\":1}", false}));
  Attribute raw;
  raw.unknown_name = "output_to_operand_aliasing";
  raw.value = std::string("{{}: (0, {})}");
  attrs.push_back(raw);
  EXPECT_EQ(PrintInstruction(i),
            "%op = f32[] custom-call(), channel_id=3, is_stable=true, epsilon=0.001, "
            "custom_call_target=\"it\\'s\\ttab\\x01\\\"\", direction=LT, "
            "operand_precision={highest,default}, dimensions={0,2}, "
            "source_target_pairs={{0,1},{1,0}}, to_apply=%add, branch_computations={%add, %mul.2}, "
            "calls=%mul.2, called_computations={%mul.2}, slice={[0:8], [2:10:2]}, "
            "padding=0_0x1_-2, frontend_attributes={_a=\"1\",b={x}}, outfeed_shape=f32[2]{0}, "
            "operand_layout_constraints={f32[2]{0}, s32[]}, backend_config={\"k\":1}, "
            "output_to_operand_aliasing={{}: (0, {})}");
  EXPECT_EQ(i.called_computations(), (std::vector<HloComputation*>{&add, &add, &mul, &mul, &mul}));
  EXPECT_EQ(i.to_apply(), &add);
  EXPECT_EQ(i.int_attr(AttrId::kChannelId), 3);
  EXPECT_EQ(i.int_attr(AttrId::kIndex), std::nullopt);
  EXPECT_TRUE(i.bool_attr(AttrId::kIsStable));
  EXPECT_TRUE(i.bool_attr(AttrId::kLargest, true));
  EXPECT_EQ(i.string_attr(AttrId::kDirection), "LT");
  EXPECT_EQ(i.string_attr(AttrId::kFusionKind), "");
  EXPECT_EQ(std::vector<int64_t>(i.dimensions().begin(), i.dimensions().end()),
            (std::vector<int64_t>{0, 2}));
  EXPECT_NE(i.FindUnknownAttribute("output_to_operand_aliasing"), nullptr);
  EXPECT_EQ(i.FindUnknownAttribute("nope"), nullptr);
}

TEST(PrintAttributes, PaddingWithInteriorPrintsItOnEveryDimension) {
  HloInstruction pad("p", HloOpcode::kPad, Shape(PrimitiveType::kF32, {}));
  pad.mutable_attributes().push_back(
      Attr(AttrId::kPadding, std::vector<PaddingDimension>{{0, 0, 0}, {1, 2, 3}}));
  EXPECT_EQ(PrintInstruction(pad), "%p = f32[] pad(), padding=0_0_0x1_2_3");
  HloInstruction s("s", HloOpcode::kCustomCall, Shape(PrimitiveType::kF32, {}));
  s.mutable_attributes().push_back(Attr(AttrId::kBackendConfig, BackendConfig{"a\nb", true}));
  EXPECT_EQ(PrintInstruction(s), "%s = f32[] custom-call(), backend_config=\"a\\nb\"");
}

std::string WindowText(std::vector<WindowDimension> dims) {
  HloInstruction i("w", HloOpcode::kReduceWindow, Shape(PrimitiveType::kF32, {}));
  i.mutable_attributes().push_back(Attr(AttrId::kWindow, Box<Window>(Window{std::move(dims)})));
  const std::string text = PrintInstruction(i);
  return text.substr(text.find("window="));
}

TEST(PrintAttributes, WindowPrintsSizeAndOnlyNonDefaultFields) {
  EXPECT_EQ(WindowText({}), "window={}");
  WindowDimension d;
  d.size = 3;
  EXPECT_EQ(WindowText({d, d}), "window={size=3x3}");
  WindowDimension e = d;
  e.stride = 2;
  e.padding_high = 1;
  e.base_dilation = 4;
  e.window_dilation = 5;
  e.window_reversal = true;
  EXPECT_EQ(WindowText({d, e}),
            "window={size=3x3 stride=1x2 pad=0_0x0_1 lhs_dilate=1x4 rhs_dilate=1x5 "
            "rhs_reversal=0x1}");
  EXPECT_EQ(WindowText({e}),
            "window={size=3 stride=2 pad=0_1 lhs_dilate=4 rhs_dilate=5 rhs_reversal=1}");
}

TEST(PrintAttributes, DimLabelsPlaceEachLabelAtItsDimension) {
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0;
  d.input_feature_dimension = 3;
  d.input_spatial_dimensions = {1, 2};
  d.kernel_input_feature_dimension = 2;
  d.kernel_output_feature_dimension = 3;
  d.kernel_spatial_dimensions = {0, 1};
  d.output_batch_dimension = 3;
  d.output_feature_dimension = 0;
  d.output_spatial_dimensions = {1, 2};
  HloInstruction i("conv", HloOpcode::kConvolution, Shape(PrimitiveType::kF32, {}));
  i.mutable_attributes().push_back(Attr(AttrId::kDimLabels, Box<ConvolutionDimensionNumbers>(d)));
  EXPECT_EQ(PrintInstruction(i), "%conv = f32[] convolution(), dim_labels=b01f_01io->f01b");
  EXPECT_EQ(i.convolution_dimension_numbers()->input_feature_dimension, 3);

  ConvolutionDimensionNumbers m;  // matmul as convolution: bf_io->bf
  m.input_feature_dimension = 1;
  m.kernel_output_feature_dimension = 1;
  m.output_feature_dimension = 1;
  HloInstruction j("mm", HloOpcode::kConvolution, Shape(PrimitiveType::kF32, {}));
  j.mutable_attributes().push_back(Attr(AttrId::kDimLabels, Box<ConvolutionDimensionNumbers>(m)));
  EXPECT_EQ(PrintInstruction(j), "%mm = f32[] convolution(), dim_labels=bf_io->bf");
}

std::string AttrText(AttrId id, AttrValue value) {
  HloInstruction i("i", HloOpcode::kAllReduce, Shape(PrimitiveType::kF32, {}));
  i.mutable_attributes().push_back(Attr(id, std::move(value)));
  const std::string text = PrintInstruction(i);
  return text.substr(text.find(", ") + 2);
}

TEST(PrintAttributes, ReplicaGroupsExplicitOrIota) {
  ReplicaGroups explicit_groups;
  explicit_groups.groups = {{0, 1}, {2, 3}};
  EXPECT_EQ(AttrText(AttrId::kReplicaGroups, Box<ReplicaGroups>(explicit_groups)),
            "replica_groups={{0,1},{2,3}}");
  EXPECT_EQ(AttrText(AttrId::kReplicaGroups, Box<ReplicaGroups>()), "replica_groups={}");
  ReplicaGroups iota;
  iota.iota = IotaTileAssignment{{2, 4}, {4, 2}, {1, 0}};
  iota.groups = {{0, 2, 4, 6}, {1, 3, 5, 7}};
  EXPECT_EQ(AttrText(AttrId::kReplicaGroups, Box<ReplicaGroups>(iota)),
            "replica_groups=[2,4]<=[4,2]T(1,0)");
  iota.iota = IotaTileAssignment{{1, 8}, {8}, {}};
  EXPECT_EQ(AttrText(AttrId::kReplicaGroups, Box<ReplicaGroups>(iota)),
            "replica_groups=[1,8]<=[8]");
}

std::string ShardingText(const Sharding& s) {
  return AttrText(AttrId::kSharding, Box<Sharding>(s)).substr(std::string("sharding=").size());
}

TEST(PrintAttributes, ShardingForms) {
  using Type = Sharding::Type;
  Sharding s;
  EXPECT_EQ(ShardingText(s), "{replicated}");
  s.type = Type::kManual;
  EXPECT_EQ(ShardingText(s), "{manual}");
  s.type = Type::kUnreduced;
  EXPECT_EQ(ShardingText(s), "{unreduced}");
  s.type = Type::kUnknown;
  s.shard_as = 1;
  EXPECT_EQ(ShardingText(s), "{unknown shard_as 1}");
  Sharding maximal;
  maximal.type = Type::kMaximal;
  maximal.device = 0;
  EXPECT_EQ(ShardingText(maximal), "{maximal device=0}");

  Sharding tiled;
  tiled.type = Type::kTiled;
  tiled.tile_dims = {2, 1};
  tiled.devices = {0, 1};
  EXPECT_EQ(ShardingText(tiled), "{devices=[2,1]0,1}");
  Sharding iota;
  iota.type = Type::kTiled;
  iota.iota = IotaTileAssignment{{1, 16, 512}, {8, 16, 64}, {1, 0, 2}};
  iota.last_tile_dim_replicate = true;
  EXPECT_EQ(ShardingText(iota), "{devices=[1,16,512]<=[8,16,64]T(1,0,2) last_tile_dim_replicate}");
  Sharding subgroups;
  subgroups.type = Type::kTiled;
  subgroups.iota = IotaTileAssignment{{2, 2}, {4}, {}};
  subgroups.last_tile_dims = {"manual", "replicated"};
  subgroups.shard_like = 2;
  subgroups.metadata = "{op_name=\"a\"}";
  EXPECT_EQ(ShardingText(subgroups),
            "{devices=[2,2]<=[4] last_tile_dims={manual, replicated} shard_like 2 "
            "metadata={op_name=\"a\"}}");

  Sharding tuple;
  tuple.type = Type::kTuple;
  tuple.elements = {Sharding(), maximal};
  EXPECT_EQ(ShardingText(tuple), "{{replicated}, {maximal device=0}}");
}

/// A small module using most module-level features.
std::unique_ptr<HloModule> MakeModule() {
  auto module = std::make_unique<HloModule>("jit_f");
  ModuleHeader& h = module->mutable_header();
  h.is_scheduled = true;
  h.entry_computation_layout =
      ComputationLayout{{Array(PrimitiveType::kF32, {2}), Array(PrimitiveType::kF32, {2})},
                        Shape::Tuple({Array(PrimitiveType::kF32, {2})})};
  h.input_output_alias =
      std::vector<InputOutputAlias>{{{0}, 0, {}, "may-alias"}, {{1}, 1, {1, 0}, ""}};
  h.replica_count = 2;
  h.unknown["debug_attributes"] = "{x}";
  h.order = {"is_scheduled", "entry_computation_layout", "input_output_alias", "debug_attributes",
             "replica_count"};
  StackFrameTables& t = module->mutable_stack_frames();
  t.file_names.push_back({1, "a.py", {}});
  t.function_names.push_back({1, "<module>", {}});
  t.file_locations.push_back({1, "", {{"file_name_id", "1", false}, {"line", "3", false}}});
  t.stack_frames.push_back(
      {1, "", {{"file_location_id", "1", false}, {"parent_frame_id", "0", false}}});

  Builder sum("add.3");
  HloInstruction* a = sum.Parameter("a", 0, Shape(PrimitiveType::kF32, {}));
  HloInstruction* b = sum.Parameter("b", 1, Shape(PrimitiveType::kF32, {}));
  sum.computation->set_root(sum.Add("s", HloOpcode::kAdd, Shape(PrimitiveType::kF32, {}), {a, b}));
  sum.computation->set_execution_thread("host");
  HloComputation* add = module->AddComputation(std::move(sum.computation));

  Builder entry("main");
  HloInstruction* y = entry.Parameter("y", 1, Array(PrimitiveType::kF32, {2}));
  HloInstruction* x = entry.Parameter("x", 0, Array(PrimitiveType::kF32, {2}));
  HloInstruction* m =
      entry.Add("multiply.2", HloOpcode::kMultiply, Array(PrimitiveType::kF32, {2}), {x, y});
  HloInstruction* r = entry.Add("reduce", HloOpcode::kMap, Array(PrimitiveType::kF32, {2}), {m, m});
  r->mutable_attributes().push_back(Attr(AttrId::kDimensions, std::vector<int64_t>{0}));
  r->mutable_attributes().push_back(Attr(AttrId::kToApply, add));
  HloInstruction* t1 =
      entry.Add("t", HloOpcode::kTuple, Shape::Tuple({Array(PrimitiveType::kF32, {2})}), {r});
  entry.computation->set_root(t1);
  module->set_entry(module->AddComputation(std::move(entry.computation)));
  module->AssignUniqueIds();
  return module;
}

TEST(PrintModule, HeaderStackFramesAndComputations) {
  EXPECT_EQ(PrintModule(*MakeModule()),
            "HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[2]{0}, "
            "f32[2]{0})->(f32[2]{0})}, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, "
            "{1,0}) }, debug_attributes={x}, replica_count=2\n"
            "\n"
            "FileNames\n"
            "1 \"a.py\"\n"
            "\n"
            "FunctionNames\n"
            "1 \"<module>\"\n"
            "\n"
            "FileLocations\n"
            "1 {file_name_id=1 line=3}\n"
            "\n"
            "StackFrames\n"
            "1 {file_location_id=1 parent_frame_id=0}\n"
            "\n"
            "%add.3 (a: f32[], b: f32[]) -> f32[] {\n"
            "  %a = f32[] parameter(0)\n"
            "  %b = f32[] parameter(1)\n"
            "  ROOT %s = f32[] add(%a, %b)\n"
            "}, execution_thread=\"host\"\n"
            "\n"
            "ENTRY %main (x: f32[2], y: f32[2]) -> (f32[2]) {\n"
            "  %y = f32[2]{0} parameter(1)\n"
            "  %x = f32[2]{0} parameter(0)\n"
            "  %multiply.2 = f32[2]{0} multiply(%x, %y)\n"
            "  %reduce = f32[2]{0} map(%multiply.2, %multiply.2), dimensions={0}, to_apply=%add.3\n"
            "  ROOT %t = (f32[2]{0}) tuple(%reduce)\n"
            "}\n");
}

TEST(PrintModule, HeaderAttributesMissingFromOrderAreStillPrinted) {
  HloModule module("m");
  module.mutable_header().num_partitions = 4;
  module.mutable_header().allow_spmd_sharding_propagation_to_output =
      std::vector<bool>{true, false};
  module.mutable_header().frontend_attributes = std::vector<KeyValue>{{"k", "v", true}};
  module.mutable_header().buffer_donor = std::vector<BufferDonor>{{0, {}}, {1, {0}}};
  EXPECT_EQ(PrintModule(module),
            "HloModule m, buffer_donor={ (0, {}), (1, {0}) }, num_partitions=4, "
            "allow_spmd_sharding_propagation_to_output={true,false}, frontend_attributes={k=\"v\"}"
            "\n\n");
}

TEST(HloGraph, OperandsUsersRootsAndParameters) {
  auto module = MakeModule();
  HloComputation* main = module->FindComputation("main");
  ASSERT_NE(main, nullptr);
  EXPECT_TRUE(main->IsEntry());
  EXPECT_FALSE(module->FindComputation("add.3")->IsEntry());
  EXPECT_EQ(module->FindComputation("nope"), nullptr);
  const auto& instrs = main->instructions();
  // map(%multiply.2, %multiply.2) uses multiply.2 twice but is one user.
  EXPECT_EQ(instrs[2]->users(), (std::vector<HloInstruction*>{instrs[3].get()}));
  EXPECT_EQ(instrs[0]->users(), (std::vector<HloInstruction*>{instrs[2].get()}));
  EXPECT_TRUE(instrs[4]->IsRoot());
  EXPECT_FALSE(instrs[3]->IsRoot());
  EXPECT_EQ(main->parameters(), (std::vector<HloInstruction*>{instrs[1].get(), instrs[0].get()}));
  EXPECT_EQ(module->instruction_count(), 8);
  EXPECT_EQ(instrs[0]->unique_id(), 3);

  HloComputation c("c");
  c.SetParameter(2, instrs[0].get());
  EXPECT_EQ(c.parameters(), (std::vector<HloInstruction*>{nullptr, nullptr, instrs[0].get()}));
}

TEST(HloGraph, MetadataFields) {
  HloInstruction i("i", HloOpcode::kAdd, Shape(PrimitiveType::kF32, {}));
  EXPECT_TRUE(i.metadata().empty());
  EXPECT_EQ(i.metadata_field("op_name"), "");
  i.mutable_attributes().push_back(
      Attr(AttrId::kMetadata, std::vector<KeyValue>{{"op_name", "f/add", true}}));
  EXPECT_EQ(i.metadata().size(), 1u);
  EXPECT_EQ(i.metadata_field("op_name"), "f/add");
  EXPECT_EQ(i.metadata_field("op_type"), "");
}

TEST(Module, ErrorAtNamesFileLineAndColumn) {
  HloModule m("m");
  EXPECT_EQ(m.ErrorAt({3, 14}, "bad thing"), "<input>:3:14: error: bad thing");
  m.set_filename("x.hlo");
  EXPECT_EQ(m.ErrorAt({1, 1}, "oops"), "x.hlo:1:1: error: oops");
}

TEST(ModulesEqual, IdenticalModulesAreEqual) {
  std::string why = "unchanged";
  EXPECT_TRUE(ModulesEqual(*MakeModule(), *MakeModule(), &why));
  EXPECT_EQ(why, "unchanged");
}

TEST(ModulesEqual, ReportsTheFirstDifference) {
  auto a = MakeModule();
  auto b = MakeModule();
  HloInstruction* reduce = b->FindComputation("main")->instructions()[3].get();
  std::get<std::vector<int64_t>>(reduce->mutable_attributes()[0].value) = {1};
  std::string why;
  EXPECT_FALSE(ModulesEqual(*a, *b, &why));
  EXPECT_EQ(why,
            "computation \"main\" instruction 3 (\"reduce\"): attribute \"dimensions\" differs");

  auto c = MakeModule();
  c->FindComputation("main")->instructions()[1]->mutable_shape().mutable_layout().memory_space = 1;
  EXPECT_FALSE(ModulesEqual(*a, *c, &why));
  EXPECT_EQ(why, "computation \"main\" instruction 1 (\"x\"): shape f32[2]{0} vs f32[2]{0:S(1)}");

  auto d = MakeModule();
  d->mutable_header().replica_count = 4;
  EXPECT_FALSE(ModulesEqual(*a, *d, &why));
  EXPECT_EQ(why, "header attribute \"replica_count\" differs");

  auto e = MakeModule();
  std::swap(e->mutable_header().order[0], e->mutable_header().order[1]);
  EXPECT_FALSE(ModulesEqual(*a, *e, &why));
  EXPECT_EQ(why, "header attribute order differs");

  auto f = MakeModule();
  f->mutable_stack_frames().file_names[0].text = "b.py";
  EXPECT_FALSE(ModulesEqual(*a, *f, &why));
  EXPECT_EQ(why, "FileNames entry 0 differs");

  auto g = MakeModule();
  g->FindComputation("main")->instructions()[4]->AddControlPredecessor(
      g->FindComputation("main")->instructions()[0].get());
  EXPECT_FALSE(ModulesEqual(*a, *g, &why));
  EXPECT_EQ(why, "computation \"main\" instruction 4 (\"t\"): control predecessor count 0 vs 1");
  EXPECT_FALSE(ModulesEqual(*a, *g));  // why is optional
}

TEST(ModulesEqual, ComputationReferencesCompareByName) {
  auto a = MakeModule();
  auto b = MakeModule();
  // Same name, different object: equal.
  HloComputation other("add.3");
  b->FindComputation("main")->instructions()[3]->mutable_attributes()[1].value = &other;
  EXPECT_TRUE(ModulesEqual(*a, *b));
  HloComputation renamed("add.4");
  b->FindComputation("main")->instructions()[3]->mutable_attributes()[1].value = &renamed;
  std::string why;
  EXPECT_FALSE(ModulesEqual(*a, *b, &why));
  EXPECT_EQ(why, "computation \"main\" instruction 3 (\"reduce\"): attribute \"to_apply\" differs");
}

TEST(ConstantLiteral, EqualityIsBitwiseOnReals) {
  ConstantLiteral a;
  a.reals = {std::numeric_limits<double>::quiet_NaN(), 1.0};
  ConstantLiteral b = a;
  EXPECT_TRUE(a == b);
  b.reals[1] = 2.0;
  EXPECT_FALSE(a == b);
  ConstantLiteral zero;
  zero.reals = {0.0};
  ConstantLiteral negative_zero;
  negative_zero.reals = {-0.0};
  EXPECT_FALSE(zero == negative_zero);
  ConstantLiteral elided;
  elided.elided = true;
  EXPECT_FALSE(elided == ConstantLiteral());
}

TEST(PrintAttributeValue, PrintsOneAttributeAsInTheInstruction) {
  const auto module = ParseHloModule(R"(HloModule m

ENTRY %main (a: f32[2,2], b: f32[2,2]) -> f32[2,2] {
  %a = f32[2,2]{1,0} parameter(0)
  %b = f32[2,2]{1,0} parameter(1)
  %c = f32[2]{0} constant({1.5, -2})
  ROOT %d = f32[2,2]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,default}
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const HloComputation& entry = *(*module)->entry();
  const HloInstruction& dot = *entry.root();
  const Attribute* precision = dot.FindAttribute(AttrId::kOperandPrecision);
  ASSERT_NE(precision, nullptr);
  EXPECT_EQ(PrintAttributeValue(*precision), "{highest,default}");
  EXPECT_EQ(PrintAttributeValue(*dot.FindAttribute(AttrId::kLhsContractingDims)), "{1}");
  const HloInstruction& constant = *entry.instructions()[2];
  EXPECT_EQ(PrintConstantLiteral(constant.literal(), constant.shape()), "{1.5, -2}");
}

TEST(PrintModule, ComputationsNested100000DeepPrintAndParseBack) {
  for (const std::string how : {"call", "fusion", "while"}) {
    StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(test::NestedModule(100'000, how));
    ASSERT_TRUE(module.ok()) << how << ": " << module.status().message();
    const std::string printed = PrintModule(**module);
    StatusOr<std::unique_ptr<HloModule>> again = ParseHloModule(printed);
    ASSERT_TRUE(again.ok()) << how << ": " << again.status().message();
    EXPECT_EQ(PrintModule(**again), printed) << how;
    EXPECT_EQ((*again)->computations().size(), 100'002u) << how;  // c0..c99999, cond, ENTRY
  }
}

}  // namespace
}  // namespace tpusim::hlo
