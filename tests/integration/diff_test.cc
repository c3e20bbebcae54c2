// Integration tests of `tpusim diff`: each example regression pair in
// scenarios/ exits 1 and names its cause in the first lines; the equivalent
// rewrite exits 0; bad input exits 2 with a located message.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kScenarios = std::string(TPUSIM_SOURCE_DIR) + "/scenarios/";

RunResult Diff(const std::string& suite, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"diff", kScenarios + suite + "/before.hlo",
                                   kScenarios + suite + "/after.hlo", "--chip", "tpu-v5e"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunBinary(TPUSIM_BINARY, args);
}

/// The first `n` lines of the report.
std::string Head(const std::string& text, int n = 5) {
  std::istringstream in(text);
  std::string line, head;
  for (int i = 0; i < n && std::getline(in, line); ++i) head += line + "\n";
  return head;
}

TEST(DiffCli, RelayoutCopyIsARegressionNamingTheCopy) {
  const RunResult r = Diff("relayout_copy");
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, StartsWith("REGRESSION: +1 copy bf16[12,128,64]{1,2,0} (relayout {2,1,0} -> "
                                "{1,2,0} of %squeeze.7)"))
      << Describe(r);
  EXPECT_THAT(Head(r.out), HasSubstr("added: copy bf16[12,128,64]{1,2,0}"));
  EXPECT_THAT(Head(r.out), HasSubstr("after.hlo:52:3"));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("HBM bytes +"));
  // The copy is the instruction that accounts for the difference.
  EXPECT_THAT(r.out, HasSubstr("(added) %copy.8 (copy)"));
}

// With --topology both modules run on every device of the network and their
// link traffic is compared. A 64 MiB all-reduce over 16 devices on a 4x4 torus
// runs as two Hamiltonian rings of V/2 each (docs/interconnect.md): per ring,
// a reduce-scatter and an all-gather phase in which each of the 16 chips sends
// 8 shards of V/32 one way and 7 the other, so 2 x 2 x 16 x 15 x V/32 = 30 V
// = 2013265920 bytes on the links.
TEST(DiffCli, ModulesWhoseValuesCannotBeComputedAreComparedInStructureAndTime) {
  ScratchDir dir;
  const std::string before = dir / "before.hlo";
  const std::string after = dir / "after.hlo";
  // A dot tpusim times but does not evaluate (sub-byte integer result); after
  // it, a relayout copy.
  const std::string dot = R"(HloModule unevaluated
ENTRY e {
  a = s4[256,256]{1,0} parameter(0)
  d = s4[256,256]{1,0} dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
)";
  WriteText(before, dot + "  ROOT n = s4[256,256]{1,0} negate(d)\n}\n");
  WriteText(after, dot + "  c = s4[256,256]{0,1} copy(d)\n"
                         "  ROOT n = s4[256,256]{1,0} negate(c)\n}\n");
  const RunResult same = RunBinary(TPUSIM_BINARY, {"diff", before, before, "--chip", "tpu-v5e"});
  EXPECT_EQ(same.exit_code, 0) << Describe(same);
  EXPECT_THAT(Head(same.out, 1), HasSubstr("outputs not compared (their values could not be "
                                           "computed)"));
  EXPECT_THAT(same.out, HasSubstr("numerics: not run: " + before +
                                  ":4:3: error: dot d: dot with a sub-byte integer result"));
  const RunResult changed = RunBinary(TPUSIM_BINARY, {"diff", before, after, "--chip", "tpu-v5e"});
  EXPECT_EQ(changed.exit_code, 1) << Describe(changed);
  EXPECT_THAT(changed.out, HasSubstr("copy"));
}

TEST(DiffCli, TopologyComparesIciBytes) {
  const ScratchDir scratch;
  const std::string module = kScenarios + "allreduce_topology/allreduce_16.hlo";
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"diff", module, module, "--chip", "tpu-v5e", "--mode", "timing",
                                "--topology", "torus:4x4", "--json", scratch / "diff.json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("ICI bytes                2013265920       2013265920"));
  // The JSON's before and after are the metrics a golden stores (same keys,
  // same writer); diff's collective bytes sit beside them.
  const nlohmann::ordered_json report =
      nlohmann::ordered_json::parse(ReadText(scratch / "diff.json"));
  const nlohmann::ordered_json& before = report["performance"]["before"];
  std::vector<std::string> keys;
  for (const auto& [key, value] : before.items()) keys.push_back(key);
  EXPECT_THAT(keys, ElementsAre("collective_time_us", "cycles", "flops", "hbm_bytes", "ici_bytes",
                                "link_utilisation", "time_us", "utilisation"));
  EXPECT_EQ(before["ici_bytes"], 2013265920.0);
  EXPECT_GT(before["link_utilisation"].get<double>(), 0);
  EXPECT_EQ(report["performance"]["ici_routed"], true);
  EXPECT_EQ(report["performance"]["collective_bytes_before"], 64 << 20);
  const RunResult alone = RunBinary(
      TPUSIM_BINARY, {"diff", module, module, "--chip", "tpu-v5e", "--mode", "timing"});
  ASSERT_EQ(alone.exit_code, 0) << Describe(alone);
  EXPECT_THAT(alone.out, HasSubstr("ICI bytes          not routed"));
}

// Example 2: the same compiled all-reduce schedule moved from the 4x4 torus it
// was scheduled for to a 2:1 oversubscribed fat tree (--topology-after). The
// program is one file, so there is no structural change: the headline names
// the network change and the time it costs.
TEST(DiffCli, TorusToFatTreeIsARegressionNamingTheNetwork) {
  const std::string module = kScenarios + "allreduce_topology/allreduce_16.hlo";
  const RunResult r = RunBinary(
      TPUSIM_BINARY, {"diff", module, module, "--chip", "tpu-v5e", "--mode", "timing", "--topology",
                      "torus:4x4", "--topology-after", "fattree:radix=8,levels=2,oversubscription=2"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), StartsWith("REGRESSION: network torus 4x4"));
  EXPECT_THAT(Head(r.out, 1), HasSubstr(" -> fat tree"));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("time +"));
  EXPECT_THAT(r.out, HasSubstr("network after:  fat tree"));
  // The same network on both sides is no change.
  const RunResult same = RunBinary(
      TPUSIM_BINARY, {"diff", module, module, "--chip", "tpu-v5e", "--mode", "timing", "--topology",
                      "torus:4x4", "--topology-after", "torus:4x4"});
  EXPECT_EQ(same.exit_code, 0) << Describe(same);
  // --topology-after alone has nothing to compare with.
  const RunResult alone = RunBinary(TPUSIM_BINARY, {"diff", module, module, "--chip", "tpu-v5e",
                                                    "--topology-after", "torus:4x4"});
  EXPECT_EQ(alone.exit_code, 2) << Describe(alone);
  EXPECT_THAT(alone.err, HasSubstr("--topology-after compares two networks"));
}

TEST(DiffCli, PrecisionDefaultIsARegressionInTheOutputs) {
  const RunResult r = Diff("precision_default");
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(Head(r.out, 1),
              HasSubstr("REGRESSION: precision: %dot.36 -> %dot.36 (dot) "
                        "operand_precision={highest,highest} -> (none)"))
      << Describe(r);
  EXPECT_THAT(Head(r.out, 1), HasSubstr("output_0: "));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("elements beyond tolerance"));
}

TEST(DiffCli, PrecisionChangeWithinALooseToleranceOnlyReportsStructure) {
  // The same pair, judged only on values with a tolerance the shift fits in.
  const RunResult r = Diff("precision_default", {"--structure", "report", "--rtol", "0.05",
                                                 "--atol", "0.05", "--time-tolerance", "1000%"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), StartsWith("OK: no change beyond the thresholds"));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("1 structural change(s) reported"));
}

TEST(DiffCli, PaddedDynamicShapeIsARegressionNamingThePad) {
  const RunResult r = Diff("padded_dynamic_shape");
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), StartsWith("REGRESSION: +1 pad f32[1024,512]{1,0} (of %rows, %zero)"))
      << Describe(r);
  EXPECT_THAT(Head(r.out, 1), HasSubstr("output: 256 of 256 elements beyond tolerance"));
  EXPECT_THAT(Head(r.out), HasSubstr("shape: %dense -> %dense (dot) f32[96,256]{1,0} -> "
                                     "f32[1024,256]{1,0}"));
}

// A bounded dynamic dimension made static (issue 15): the static module
// multiplies and reduces the padding rows the dynamic one leaves out. Timing
// pads to the bound as the TPU backend does, so time is unchanged; the values
// and the types of %e name the change. Seeds are drawn for BEFORE, so the size
// %n is drawn within [0, 1024] for its set-dimension-size.
TEST(DiffCli, DynamicDimensionMadeStaticIsARegressionNamingTheShape) {
  ScratchDir dir;
  const std::string head = R"(HloModule dynamic
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[1024,512] parameter(0)
  n = s32[] parameter(1)
  zero = f32[] constant(0)
)";
  const std::string tail = "  ROOT r = f32[512] reduce(e, zero), dimensions={0}, to_apply=add\n}\n";
  const std::string before = dir / "dynamic.hlo";
  const std::string after = dir / "static.hlo";
  WriteText(before, head +
                        "  d = f32[<=1024,512] set-dimension-size(x, n), dimensions={0}\n"
                        "  e = f32[<=1024,512] multiply(d, d)\n" +
                        tail);
  WriteText(after, head + "  e = f32[1024,512] multiply(x, x)\n" + tail);
  const RunResult r = RunBinary(TPUSIM_BINARY, {"diff", before, after, "--chip", "tpu-v4"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), StartsWith("REGRESSION: "));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("output: 512 of 512 elements beyond tolerance"));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("time +0.0% (within)"));
  EXPECT_THAT(r.out, HasSubstr("removed: set-dimension-size f32[<=1024,512] (of %x, %n)"));
  EXPECT_THAT(r.out, HasSubstr("removed: multiply f32[<=1024,512] (of %d, %d)"));
  EXPECT_THAT(r.out, HasSubstr("added: multiply f32[1024,512] (of %x, %x)"));
}

TEST(DiffCli, EquivalentRewriteOfATransformerBlockPasses) {
  const ScratchDir scratch;
  const RunResult r = Diff("healthy_transformer", {"--json", scratch / "diff.json"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), StartsWith("OK: no change beyond the thresholds -- time +0.0%"));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("no structural change"));
  EXPECT_THAT(r.out, HasSubstr("(none: every instruction costs the same)"));
  const nlohmann::json report = nlohmann::json::parse(ReadText(scratch / "diff.json"));
  EXPECT_EQ(report["verdict"], "ok");
  EXPECT_EQ(report["exit_code"], 0);
  EXPECT_TRUE(report["structure"].empty());
  ASSERT_EQ(report["numerics"].size(), 1u);
  EXPECT_EQ(report["numerics"][0]["differing"], 0);
  EXPECT_EQ(report["performance"]["before"]["cycles"], report["performance"]["after"]["cycles"]);
  EXPECT_EQ(report["performance"]["before"]["ici_bytes"], 0);
  EXPECT_EQ(report["performance"]["ici_routed"], false);
  EXPECT_EQ(report["performance"]["collective_bytes_before"], 0);
}

TEST(DiffCli, JsonCarriesTheRegression) {
  const ScratchDir scratch;
  const RunResult r = Diff("relayout_copy", {"--json", scratch / "diff.json"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  const nlohmann::json report = nlohmann::json::parse(ReadText(scratch / "diff.json"));
  EXPECT_EQ(report["verdict"], "regression");
  ASSERT_EQ(report["structure"].size(), 1u);
  EXPECT_EQ(report["structure"][0]["kind"], "added");
  EXPECT_EQ(report["structure"][0]["after"], "copy.8");
  EXPECT_GT(report["performance"]["after"]["hbm_bytes"].get<int64_t>(),
            report["performance"]["before"]["hbm_bytes"].get<int64_t>());
  EXPECT_EQ(report["performance"]["top_instructions"][0]["after"], "copy.8");
}

TEST(DiffCli, TimingModeJudgesPerformanceWithoutValues) {
  const RunResult r = Diff("relayout_copy", {"--mode", "timing"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), HasSubstr("outputs not compared (--mode timing)"));
  EXPECT_THAT(r.out, HasSubstr("numerics: not run (--mode timing)"));
  EXPECT_THAT(r.out, HasSubstr("(added) %copy.8 (copy)"));
}

TEST(DiffCli, ValuesModeNeedsNoChip) {
  const RunResult r = RunBinary(TPUSIM_BINARY, {"diff", kScenarios + "precision_default/before.hlo",
                                                kScenarios + "precision_default/after.hlo",
                                                "--mode", "values", "--structure", "report"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), HasSubstr("output_0: "));
  EXPECT_THAT(r.out, HasSubstr("performance: not run (--mode values)"));
}

TEST(DiffCli, MissingFileIsAnInputError) {
  const RunResult r = RunBinary(TPUSIM_BINARY, {"diff", kScenarios + "nope/before.hlo",
                                                kScenarios + "relayout_copy/after.hlo", "--chip",
                                                "tpu-v5e"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("nope/before.hlo"));
}

TEST(DiffCli, MalformedModuleIsAnInputErrorWithItsLocation) {
  const ScratchDir scratch;
  WriteText(scratch / "bad.hlo", "HloModule bad\n\nENTRY %main {\n  %p = f32[2] parameter(0)\n"
                                 "  ROOT %n = f32[2] negate(%q)\n}\n");
  const RunResult r = RunBinary(TPUSIM_BINARY, {"diff", kScenarios + "precision_default/before.hlo",
                                                scratch / "bad.hlo", "--chip", "tpu-v5e"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("bad.hlo:5:"));
}

TEST(DiffCli, MismatchedParameterCountsAreAnInputError) {
  const RunResult r = RunBinary(TPUSIM_BINARY, {"diff", kScenarios + "relayout_copy/before.hlo",
                                                kScenarios + "precision_default/after.hlo",
                                                "--chip", "tpu-v5e"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("the entry computation takes 2 parameter(s) but"));
  EXPECT_THAT(r.err, HasSubstr("takes 3; diff runs both modules on the same inputs"));
}

TEST(DiffCli, ChipIsRequiredForTimingAndTolerancesAreChecked) {
  const RunResult no_chip = RunBinary(TPUSIM_BINARY, {"diff", kScenarios + "relayout_copy/before.hlo",
                                                      kScenarios + "relayout_copy/after.hlo"});
  EXPECT_EQ(no_chip.exit_code, 2) << Describe(no_chip);
  EXPECT_THAT(no_chip.err, HasSubstr("--mode full times both modules: give --chip NAME"));
  const RunResult bad = Diff("relayout_copy", {"--time-tolerance", "fast"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_THAT(bad.err, HasSubstr("--time-tolerance 'fast'"));
}

}  // namespace
}  // namespace tpusim::test
