// The structural matcher of `tpusim diff`: equivalent rewrites give no
// change; each kind of real change is reported, named and located.
#include "harness/diff/module_diff.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>

#include "sim/hlo/parser.h"
#include "sim/hlo/printer.h"
#include "tests/hlo/find_instruction.h"

namespace tpusim::harness {
namespace {

std::unique_ptr<hlo::HloModule> Parse(const std::string& text, const std::string& filename) {
  auto module = hlo::ParseHloModule(text, filename);
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(*module) : nullptr;
}

/// Every change, one per line, for failure messages and substring checks.
std::string Describe(const ModuleDiff& diff) {
  std::string text;
  for (const StructuralChange& c : diff.changes) text += c.description + "\n";
  return text;
}

/// Both modules and their diff, which points into them.
struct Compared {
  std::unique_ptr<hlo::HloModule> before;
  std::unique_ptr<hlo::HloModule> after;
  ModuleDiff diff;
};

Compared Diff(const std::string& before, const std::string& after) {
  Compared c{Parse(before, "before.hlo"), Parse(after, "after.hlo"), {}};
  if (c.before && c.after) c.diff = DiffModules(*c.before, *c.after);
  return c;
}

/// `compared` found exactly one change, of this kind and description.
void ExpectOneChange(const Compared& compared, ChangeKind kind, std::string_view description) {
  ASSERT_EQ(compared.diff.changes.size(), 1u) << Describe(compared.diff);
  EXPECT_EQ(compared.diff.changes[0].kind, kind);
  EXPECT_EQ(compared.diff.changes[0].description, description);
}

/// The name of the instruction of `compared.after` matched with `before`'s
/// instruction `name`; empty when it has no match.
std::string MatchOf(const Compared& compared, std::string_view name) {
  const auto match = compared.diff.matched.find(test::FindInstruction(*compared.before, name));
  return match != compared.diff.matched.end() ? match->second->name() : std::string();
}

/// `text` with `from` replaced by `to`.
std::string Replaced(std::string text, std::string_view from, std::string_view to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

constexpr char kBase[] = R"(HloModule m

ENTRY %main (p0: f32[8,16], p1: f32[16,4]) -> f32[8,4] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %p1 = f32[16,4]{1,0} parameter(1)
  %neg = f32[8,16]{1,0} negate(%p0), metadata={op_name="jit(f)/neg" source_file="f.py" source_line=3}
  %exp = f32[16,4]{1,0} exponential(%p1), metadata={op_name="jit(f)/exp" source_file="f.py" source_line=4}
  ROOT %dot = f32[8,4]{1,0} dot(%neg, %exp), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot" source_file="f.py" source_line=5}
}
)";

TEST(ModuleDiff, RenamedReorderedAndMetadataOnlyRewriteHasNoChange) {
  // Names changed, the two independent instructions swapped, metadata and
  // channel-free bookkeeping (backend_config) changed.
  const std::string after = R"(HloModule renamed

ENTRY %entry.7 (a: f32[8,16], b: f32[16,4]) -> f32[8,4] {
  %b = f32[16,4]{1,0} parameter(1)
  %a = f32[8,16]{1,0} parameter(0)
  %exponential.2 = f32[16,4]{1,0} exponential(%b), metadata={op_name="other/exp" source_line=40}
  %negate.9 = f32[8,16]{1,0} negate(%a)
  ROOT %dot.1 = f32[8,4]{1,0} dot(%negate.9, %exponential.2), rhs_contracting_dims={0}, lhs_contracting_dims={1}, backend_config={"flag":1}
}
)";
  const Compared compared = Diff(kBase, after);
  const ModuleDiff& diff = compared.diff;
  EXPECT_TRUE(diff.changes.empty()) << Describe(diff);
  EXPECT_EQ(diff.matched.size(), 5u);
  EXPECT_EQ(MatchOf(compared, "dot"), "dot.1");
  EXPECT_EQ(MatchOf(compared, "neg"), "negate.9");
}

TEST(ModuleDiff, InsertedRelayoutCopyIsReportedAsAddedWithItsLocation) {
  const std::string after = R"(HloModule m

ENTRY %main (p0: f32[8,16], p1: f32[16,4]) -> f32[8,4] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %p1 = f32[16,4]{1,0} parameter(1)
  %neg = f32[8,16]{1,0} negate(%p0), metadata={op_name="jit(f)/neg" source_file="f.py" source_line=3}
  %exp = f32[16,4]{1,0} exponential(%p1), metadata={op_name="jit(f)/exp" source_file="f.py" source_line=4}
  %copy.3 = f32[16,4]{0,1} copy(%exp)
  ROOT %dot = f32[8,4]{1,0} dot(%neg, %copy.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot" source_file="f.py" source_line=5}
}
)";
  const Compared compared = Diff(kBase, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
  const StructuralChange& c = diff.changes[0];
  EXPECT_EQ(c.kind, ChangeKind::kAdded);
  EXPECT_EQ(c.before, nullptr);
  ASSERT_NE(c.after, nullptr);
  EXPECT_EQ(c.after->name(), "copy.3");
  EXPECT_EQ(c.description,
            "added: copy f32[16,4]{0,1} (relayout {1,0} -> {0,1} of %exp) at after.hlo:8:3");
  EXPECT_EQ(MatchOf(compared, "dot"), "dot");  // fed by the copy now, still the same dot
}

TEST(ModuleDiff, ChangedPrecisionIsReported) {
  std::string after = kBase;
  after.replace(after.find("rhs_contracting_dims={0},"), 25,
                "rhs_contracting_dims={0}, operand_precision={highest,highest},");
  const Compared compared = Diff(kBase, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
  EXPECT_EQ(diff.changes[0].kind, ChangeKind::kPrecision);
  EXPECT_NE(diff.changes[0].description.find("operand_precision=(none) -> {highest,highest}"),
            std::string::npos)
      << Describe(diff);
}

// A typed-FFI custom call's backend_config is its arguments (here an
// attention's mask): each is compared. Any other backend_config holds the
// compiler's notes, which change between compiles of the same program.
TEST(ModuleDiff, AnFfiCallsArgumentsAreAttributesAndOtherConfigsAreNot) {
  const auto module = [](const std::string& ffi_config, const std::string& json_config) {
    return R"(HloModule m
ENTRY e {
  q = bf16[1,128,2,64]{3,2,1,0} parameter(0)
  a = (bf16[1,128,2,64]{3,2,1,0}, u8[8]{0}) custom-call(q, q, q), custom_call_target="te_fused_attn_forward_ffi", api_version=API_VERSION_TYPED_FFI, backend_config=)" +
           ffi_config + R"(
  o = bf16[1,128,2,64]{3,2,1,0} get-tuple-element(a), index=0
  ROOT n = bf16[1,128,2,64]{3,2,1,0} negate(o), backend_config=)" +
           json_config + "\n}\n";
  };
  const std::string before =
      module("{attn_heads = 2 : i64, mask_type = 2 : i64}", R"({"operation_queue_id":"0"})");
  // Reordered arguments, another queue: nothing.
  const Compared same = Diff(before, module("{mask_type = 2 : i64, attn_heads = 2 : i64}",
                                            R"({"operation_queue_id":"7"})"));
  EXPECT_TRUE(same.diff.changes.empty()) << Describe(same.diff);
  const Compared masked = Diff(before, module("{attn_heads = 2 : i64, mask_type = 0 : i64}",
                                              R"({"operation_queue_id":"0"})"));
  ASSERT_EQ(masked.diff.changes.size(), 1u) << Describe(masked.diff);
  EXPECT_EQ(masked.diff.changes[0].kind, ChangeKind::kAttribute);
  EXPECT_NE(masked.diff.changes[0].description.find(
                "%a -> %a (custom-call te_fused_attn_forward_ffi) backend_config.mask_type=2 -> 0"),
            std::string::npos)
      << Describe(masked.diff);
}

TEST(ModuleDiff, ChangedLayoutIsReported) {
  std::string after = kBase;
  after.replace(after.find("%exp = f32[16,4]{1,0}"), 21, "%exp = f32[16,4]{0,1}");
  const Compared compared = Diff(kBase, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
  EXPECT_EQ(diff.changes[0].kind, ChangeKind::kLayout);
  EXPECT_EQ(diff.changes[0].description,
            "layout: %exp -> %exp (exponential) f32[16,4]{1,0} -> f32[16,4]{0,1} at "
            "after.hlo:7:3");
}

TEST(ModuleDiff, ChangedTilingIsALayoutChange) {
  std::string before = kBase, after = kBase;
  before.replace(before.find("%neg = f32[8,16]{1,0}"), 21, "%neg = f32[8,16]{1,0:T(8,128)}");
  after.replace(after.find("%neg = f32[8,16]{1,0}"), 21, "%neg = f32[8,16]{1,0:T(8,128)(2,1)}");
  const Compared compared = Diff(before, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
  EXPECT_EQ(diff.changes[0].kind, ChangeKind::kLayout);
  EXPECT_NE(diff.changes[0].description.find("f32[8,16]{1,0:T(8,128)} -> f32[8,16]{1,0:T(8,128)(2,1)}"),
            std::string::npos)
      << Describe(diff);
}

constexpr char kAllReduce[] = R"(HloModule ar, replica_count=4

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[64]) -> f32[64] {
  %p = f32[64]{0} parameter(0)
  ROOT %ar = f32[64]{0} all-reduce(%p), channel_id=1, replica_groups={{0,1},{2,3}}, to_apply=%add
}
)";

TEST(ModuleDiff, ChangedReplicaGroupsAreReportedButChannelIdsAreNot) {
  std::string after = kAllReduce;
  after.replace(after.find("channel_id=1, replica_groups={{0,1},{2,3}}"), 42,
                "channel_id=9, replica_groups={{0,2},{1,3}}");
  const Compared compared = Diff(kAllReduce, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
  EXPECT_EQ(diff.changes[0].kind, ChangeKind::kCollective);
  EXPECT_NE(diff.changes[0].description.find("replica_groups={{0,1},{2,3}} -> {{0,2},{1,3}}"),
            std::string::npos)
      << Describe(diff);

  std::string renumbered = kAllReduce;
  renumbered.replace(renumbered.find("channel_id=1"), 12, "channel_id=7");
  EXPECT_TRUE(Diff(kAllReduce, renumbered).diff.changes.empty());
}

// The devices are part of the program: every collective's groups are read
// against them. An absent count means 1.
TEST(ModuleDiff, AChangedDeviceCountIsACollectiveChange) {
  std::string after = kAllReduce;
  after.replace(after.find("replica_count=4"), 15, "replica_count=4, num_partitions=2");
  ExpectOneChange(Diff(kAllReduce, after), ChangeKind::kCollective,
                  "collective: num_partitions=1 -> 2 at after.hlo (module header)");

  std::string one = kAllReduce;
  one.replace(one.find("replica_count=4"), 15, "replica_count=4, num_partitions=1");
  const Compared same = Diff(kAllReduce, one);
  EXPECT_TRUE(same.diff.changes.empty()) << Describe(same.diff);
}

// XLA reads these pairs of spellings alike: a default filled in, replica
// groups in the iota form, a collective-permute's pairs in another order.
TEST(ModuleDiff, SpellingsOfOneMeaningAreNoChange) {
  const std::string convolution = R"(HloModule c

ENTRY %main (x: f32[1,4,4,2], w: f32[1,1,2,3]) -> f32[1,4,4,3] {
  %x = f32[1,4,4,2]{3,2,1,0} parameter(0)
  %w = f32[1,1,2,3]{3,2,1,0} parameter(1)
  ROOT %c = f32[1,4,4,3]{3,2,1,0} convolution(%x, %w), window={size=1x1}, dim_labels=b01f_01io->b01f
}
)";
  const std::string permute = R"(HloModule p, replica_count=2

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0)
  ROOT %cp = f32[8]{0} collective-permute(%p), source_target_pairs={{0,1},{1,0}}
}
)";
  const std::string groups = "replica_groups={{0,1},{2,3}}";
  const struct {
    std::string before, after;
  } same[] = {
      {kBase, Replaced(kBase, "rhs_contracting_dims={0},",
                       "rhs_contracting_dims={0}, operand_precision={default,default},")},
      {convolution, Replaced(convolution, "b01f_01io->b01f",
                             "b01f_01io->b01f, feature_group_count=1, batch_group_count=1")},
      {kAllReduce, Replaced(kAllReduce, groups, "replica_groups=[2,2]<=[4]")},
      {permute, Replaced(permute, "{{0,1},{1,0}}", "{{1,0},{0,1}}")},
  };
  for (const auto& [before, after] : same) {
    const Compared compared = Diff(before, after);
    EXPECT_TRUE(compared.diff.changes.empty()) << after << Describe(compared.diff);
  }
  // The iota form of other groups is still a change.
  ExpectOneChange(
      Diff(kAllReduce, Replaced(kAllReduce, groups, "replica_groups=[2,2]<=[2,2]T(1,0)")),
      ChangeKind::kCollective,
      "collective: %ar -> %ar (all-reduce) replica_groups={{0,1},{2,3}} -> "
      "{{0,2},{1,3}} at after.hlo:11:3");
}

/// `layers` identical add + all-reduce layers, chained (each reads the one
/// before) or side by side (each reads %p, the root a tuple of all), numbered
/// from `first`; layer `edited` (1-based; 0 for none) reduces over other
/// replica groups.
std::string Layers(bool chained, int layers, int edited, int first) {
  std::string body, tuple, tuple_shape;
  std::string input = "%p";
  for (int k = 1; k <= layers; ++k) {
    const std::string n = std::to_string(first + k - 1);
    const std::string groups = k == edited ? "{{0,2},{1,3}}" : "{{0,1},{2,3}}";
    body += "  %add." + n + " = f32[64]{0} add(" + input + ", " + input + ")\n";
    body += "  %all-reduce." + n + " = f32[64]{0} all-reduce(%add." + n +
            "), replica_groups=" + groups + ", to_apply=%sum\n";
    if (chained) input = "%all-reduce." + n;
    tuple += (k > 1 ? ", %all-reduce." : "%all-reduce.") + n;
    tuple_shape += (k > 1 ? ", f32[64]{0}" : "f32[64]{0}");
  }
  const std::string result = chained ? "f32[64]{0}" : "(" + tuple_shape + ")";
  body += chained ? "  ROOT %out = f32[64]{0} negate(" + input + ")\n"
                  : "  ROOT %out = " + result + " tuple(" + tuple + ")\n";
  return R"(HloModule layers, replica_count=4

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[64]) -> )" +
         result + " {\n  %p = f32[64]{0} parameter(0)\n" + body + "}\n";
}

// A constant is compared in its element type: digits the type does not keep
// are no change, and a changed value is shown when it is short.
TEST(ModuleDiff, ConstantsAreComparedAsTheirTypeHoldsThem) {
  const std::string module = R"(HloModule c
ENTRY e {
  p = f32[4]{0} parameter(0)
  one = f32[] constant(1)
  eighth = bf16[] constant(0.125)
  wide = bf16[4]{0} convert(p)
  b = bf16[4]{0} broadcast(eighth), dimensions={}
  m = bf16[4]{0} multiply(wide, b)
  o = f32[4]{0} broadcast(one), dimensions={}
  f = f32[4]{0} convert(m)
  ROOT s = f32[4]{0} add(f, o)
}
)";
  const std::string digits = Replaced(Replaced(module, "constant(1)", "constant(1.00000001)"),
                                      "constant(0.125)", "constant(0.1251)");
  EXPECT_TRUE(Diff(module, digits).diff.changes.empty()) << Describe(Diff(module, digits).diff);
  ExpectOneChange(Diff(module, Replaced(module, "constant(0.125)", "constant(0.25)")),
                  ChangeKind::kAttribute,
                  "attribute: %eighth -> %eighth (constant) constant values changed (0.125 -> "
                  "0.25) at after.hlo:5:3");
}

TEST(ModuleDiff, OneEditedLayerAmongIdenticalOnesIsPairedWithItself) {
  // Four layers share every signature; only the third changed. Text order
  // alone paired the unchanged fourth with the edited third ("%all-reduce.4
  // -> %all-reduce.3"). With the names kept or renumbered (positions then
  // decide), chained or side by side, each layer must pair with itself.
  for (const bool chained : {true, false}) {
    for (const int first : {1, 101}) {
      SCOPED_TRACE(std::string(chained ? "chained" : "side by side") + ", after numbered from " +
                   std::to_string(first));
      const Compared compared = Diff(Layers(chained, 4, 0, 1), Layers(chained, 4, 3, first));
      const ModuleDiff& diff = compared.diff;
      ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
      EXPECT_EQ(diff.changes[0].kind, ChangeKind::kCollective);
      ASSERT_NE(diff.changes[0].before, nullptr);
      ASSERT_NE(diff.changes[0].after, nullptr);
      EXPECT_EQ(diff.changes[0].before->name(), "all-reduce.3");
      EXPECT_EQ(diff.changes[0].after->name(), "all-reduce." + std::to_string(first + 2));
      for (int k = 1; k <= 4; ++k) {
        const std::string n = std::to_string(first + k - 1);
        EXPECT_EQ(MatchOf(compared, "all-reduce." + std::to_string(k)), "all-reduce." + n);
        EXPECT_EQ(MatchOf(compared, "add." + std::to_string(k)), "add." + n);
      }
    }
  }
}

TEST(ModuleDiff, ChangedReductionOfACollectiveIsReported) {
  std::string after = kAllReduce;
  after.replace(after.find("add(%x, %y)"), 11, "maximum(%x, %y)");
  const Compared compared = Diff(kAllReduce, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
  EXPECT_EQ(diff.changes[0].kind, ChangeKind::kCollective);
  EXPECT_NE(diff.changes[0].description.find("reduction add -> maximum"), std::string::npos)
      << Describe(diff);
}

TEST(ModuleDiff, InstructionMovedIntoAFusionIsAFusionBoundaryChange) {
  const std::string before = R"(HloModule f

%fused (a: f32[32,8], b: f32[32,8]) -> f32[32,8] {
  %a = f32[32,8]{1,0} parameter(0)
  %b = f32[32,8]{1,0} parameter(1)
  ROOT %m = f32[32,8]{1,0} multiply(%a, %b)
}

ENTRY %main (p: f32[32,8], q: f32[32,8]) -> f32[32,8] {
  %p = f32[32,8]{1,0} parameter(0)
  %q = f32[32,8]{1,0} parameter(1)
  %e = f32[32,8]{1,0} exponential(%p)
  ROOT %f = f32[32,8]{1,0} fusion(%e, %q), kind=kLoop, calls=%fused
}
)";
  const std::string after = R"(HloModule f

%fused.2 (a: f32[32,8], b: f32[32,8]) -> f32[32,8] {
  %a = f32[32,8]{1,0} parameter(0)
  %b = f32[32,8]{1,0} parameter(1)
  %e.1 = f32[32,8]{1,0} exponential(%a)
  ROOT %m = f32[32,8]{1,0} multiply(%e.1, %b)
}

ENTRY %main (p: f32[32,8], q: f32[32,8]) -> f32[32,8] {
  %p = f32[32,8]{1,0} parameter(0)
  %q = f32[32,8]{1,0} parameter(1)
  ROOT %fusion.5 = f32[32,8]{1,0} fusion(%p, %q), kind=kLoop, calls=%fused.2
}
)";
  const Compared compared = Diff(before, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
  EXPECT_EQ(diff.changes[0].kind, ChangeKind::kMovedIntoFusion);
  EXPECT_EQ(diff.changes[0].description,
            "moved into fusion: exponential f32[32,8]{1,0} %e at before.hlo:12:3 -> %e.1 at "
            "after.hlo:6:3 in fusion %fusion.5");
  // And back out again.
  const Compared reversed = Diff(after, before);
  const ModuleDiff& reverse = reversed.diff;
  ASSERT_EQ(reverse.changes.size(), 1u) << Describe(reverse);
  EXPECT_EQ(reverse.changes[0].kind, ChangeKind::kMovedOutOfFusion);
}

TEST(ModuleDiff, RemovedInstructionIsReported) {
  const std::string after = R"(HloModule m

ENTRY %main (p0: f32[8,16], p1: f32[16,4]) -> f32[8,4] {
  %p0 = f32[8,16]{1,0} parameter(0)
  %p1 = f32[16,4]{1,0} parameter(1)
  %exp = f32[16,4]{1,0} exponential(%p1)
  ROOT %dot = f32[8,4]{1,0} dot(%p0, %exp), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  const Compared compared = Diff(kBase, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_EQ(diff.changes.size(), 1u) << Describe(diff);
  EXPECT_EQ(diff.changes[0].kind, ChangeKind::kRemoved);
  EXPECT_EQ(diff.changes[0].description,
            "removed: negate f32[8,16]{1,0} (of %p0) at before.hlo:6:3");
}

// A computation may be renamed: a removal is in BEFORE's, named by BEFORE's
// name, an addition in AFTER's.
TEST(ModuleDiff, ARemovalIsPlacedInBeforesComputation) {
  const auto module = [](const std::string& branch, const std::string& op) {
    return R"(HloModule b

%)" + branch +
           R"( (a: f32[8]) -> f32[8] {
  %a = f32[8]{0} parameter(0)
  ROOT %r = f32[8]{0} )" +
           op + R"((%a)
}

ENTRY %main (c: pred[], p: f32[8]) -> f32[8] {
  %c = pred[] parameter(0)
  %p = f32[8]{0} parameter(1)
  ROOT %k = f32[8]{0} conditional(%c, %p, %p), true_computation=%)" +
           branch + ", false_computation=%" + branch + "\n}\n";
  };
  const Compared compared = Diff(module("tb", "exponential"), module("yes", "negate"));
  EXPECT_EQ(Describe(compared.diff),
            "added: negate f32[8]{0} (of %a) at after.hlo:5:3 in %yes\n"
            "removed: exponential f32[8]{0} (of %a) at before.hlo:5:3 in %tb\n");
}

TEST(ModuleDiff, CollectiveKindChangePairsBySourceOp) {
  const std::string before = R"(HloModule k, replica_count=2

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[64]) -> f32[64] {
  %p = f32[64]{0} parameter(0)
  ROOT %r = f32[64]{0} all-reduce(%p), replica_groups={{0,1}}, to_apply=%add, metadata={op_name="jit(f)/psum" source_line=7}
}
)";
  std::string after = before;
  after.replace(after.find("all-reduce(%p), replica_groups={{0,1}}, to_apply=%add"), 53,
                "all-gather(%p), replica_groups={{0,1}}, dimensions={0}");
  const Compared compared = Diff(before, after);
  const ModuleDiff& diff = compared.diff;
  ASSERT_FALSE(diff.changes.empty());
  EXPECT_EQ(diff.changes[0].kind, ChangeKind::kCollective) << Describe(diff);
  EXPECT_NE(diff.changes[0].description.find("all-reduce -> all-gather"), std::string::npos)
      << Describe(diff);
}

constexpr char kDataFlow[] = R"(HloModule m

ENTRY %main (p0: f32[8], p1: f32[8]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0)
  %p1 = f32[8]{0} parameter(1)
  %e = f32[8]{0} exponential(%p0)
  %n = f32[8]{0} negate(%p1)
  %s = f32[8]{0} subtract(%e, %n)
  ROOT %d = f32[8]{0} divide(%s, %e)
}
)";

// Every instruction keeps its opcode, shape and attributes; only which
// instruction feeds which changed. That changes what is computed.
TEST(ModuleDiff, SwappedOrRewiredOperandsAreADataFlowChange) {
  ExpectOneChange(
      Diff(kDataFlow, Replaced(kDataFlow, "subtract(%e, %n)", "subtract(%n, %e)")),
      ChangeKind::kOperands,
      "operands changed: subtract %s: operand 0 was %e, now %n; operand 1 was %n, now %e "
      "at after.hlo:8:3");

  ExpectOneChange(Diff(kDataFlow, Replaced(kDataFlow, "divide(%s, %e)", "divide(%s, %n)")),
                  ChangeKind::kOperands,
                  "operands changed: divide %d: operand 1 was %e, now %n at after.hlo:9:3");

  // The inputs trade places: each reader now reads the other input.
  const Compared renumbered = Diff(
      kDataFlow, Replaced(kDataFlow, "%p0 = f32[8]{0} parameter(0)\n  %p1 = f32[8]{0} parameter(1)",
                          "%p0 = f32[8]{0} parameter(1)\n  %p1 = f32[8]{0} parameter(0)"));
  ASSERT_EQ(renumbered.diff.changes.size(), 2u) << Describe(renumbered.diff);
  EXPECT_EQ(renumbered.diff.changes[0].description,
            "operands changed: exponential %e: operand 0 was %p0 (parameter 0), now %p0 "
            "(parameter 1) at after.hlo:6:3");
}

// Two identical constants compute the same value: which of them an
// instruction reads is no change, whichever way the matcher paired them.
TEST(ModuleDiff, ReorderedTwinsAreNoDataFlowChange) {
  const std::string before = R"(HloModule m

ENTRY %main (p: f32[]) -> f32[] {
  %p = f32[] parameter(0)
  %one = f32[] constant(1)
  %one.2 = f32[] constant(1)
  %lo = f32[] maximum(%p, %one)
  ROOT %hi = f32[] minimum(%lo, %one.2)
}
)";
  const std::string after = R"(HloModule m

ENTRY %main (p: f32[]) -> f32[] {
  %p = f32[] parameter(0)
  %c.7 = f32[] constant(1)
  %c.3 = f32[] constant(1)
  %lo = f32[] maximum(%p, %c.3)
  ROOT %hi = f32[] minimum(%lo, %c.7)
}
)";
  const Compared compared = Diff(before, after);
  EXPECT_TRUE(compared.diff.changes.empty()) << Describe(compared.diff);
}

constexpr char kFusedSubtract[] = R"(HloModule m

%fused (a: f32[64], b: f32[64]) -> f32[64] {
  %a = f32[64]{0} parameter(0)
  %b = f32[64]{0} parameter(1)
  ROOT %m = f32[64]{0} subtract(%a, %b)
}

ENTRY %e (p0: f32[64], p1: f32[64]) -> f32[64] {
  %p0 = f32[64]{0} parameter(0)
  %p1 = f32[64]{0} parameter(1)
  %e0 = f32[64]{0} exponential(%p0)
  ROOT %f = f32[64]{0} fusion(%e0, %p1), kind=kLoop, calls=%fused
}
)";

// A fusion's body reads its operands through its parameters: swapped
// operands change what the body computes, unless the parameter numbers were
// swapped alike.
TEST(ModuleDiff, SwappedFusionOperandsAreReportedWhereTheBodyReadsThem) {
  std::string swapped = kFusedSubtract;
  swapped.replace(swapped.find("fusion(%e0, %p1)"), 16, "fusion(%p1, %e0)");
  ExpectOneChange(
      Diff(kFusedSubtract, swapped), ChangeKind::kOperands,
      "operands changed: subtract %m: operand 0 was %a (parameter 0, %e0), now %a "
      "(parameter 0, %p1); operand 1 was %b (parameter 1, %p1), now %b (parameter 1, %e0) "
      "at after.hlo:6:3 in fusion %f");

  std::string renumbered = swapped;
  renumbered.replace(renumbered.find("parameter(0)"), 12, "parameter(1)");
  renumbered.replace(renumbered.find("parameter(1)\n  ROOT %m"), 12, "parameter(0)");
  const Compared same = Diff(kFusedSubtract, renumbered);
  EXPECT_TRUE(same.diff.changes.empty()) << Describe(same.diff);
}

/// `text` with every `%name` (instructions and computations) renamed.
std::string RenameAll(const std::string& text) {
  static const std::regex kName("%([A-Za-z0-9_.\\-]+)");
  return std::regex_replace(text, kName, "%r$1.7");
}

TEST(ModuleDiff, EveryCorpusModuleMatchesItselfRenamed) {
  int modules = 0;
  for (const auto& entry : std::filesystem::directory_iterator(TPUSIM_CORPUS_DIR)) {
    if (entry.path().extension() != ".hlo") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const auto parsed = hlo::ParseHloModule(text.str(), entry.path().string());
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    const std::string canonical = hlo::PrintModule(**parsed);
    const Compared compared = Diff(canonical, RenameAll(canonical));
    ASSERT_TRUE(compared.before && compared.after) << entry.path();
    ++modules;
    EXPECT_TRUE(compared.diff.changes.empty()) << entry.path() << "\n" << Describe(compared.diff);
    EXPECT_GE(static_cast<int64_t>(compared.diff.matched.size()),
              compared.before->entry()->instruction_count())
        << entry.path();
    const std::string root = compared.before->entry()->root()->name();
    EXPECT_EQ(MatchOf(compared, root), "r" + root + ".7") << entry.path();
  }
  EXPECT_GT(modules, 50);
}

}  // namespace
}  // namespace tpusim::harness
