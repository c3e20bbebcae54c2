// Output comparison under each tolerance, metric checks, op checks, and the
// golden store's round trip and integrity checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/run/metrics.h"
#include "harness/suite/checks.h"
#include "harness/suite/golden.h"
#include "harness/suite/scenario.h"
#include "sim/base/file.h"
#include "sim/hlo/parser.h"
#include "tests/hlo/find_instruction.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using value::Literal;

value::ErrorSpec Exact() {
  value::ErrorSpec exact;
  exact.exact = true;
  return exact;
}

TEST(CheckOutput, Exact) {
  const Literal a = Literal::CreateR1<float>({1.0f, 2.0f, 3.0f});
  const Literal b = Literal::CreateR1<float>({1.0f, 2.5f, 3.0f});
  EXPECT_EQ(CheckOutput("out", a, a, Exact()), "");
  EXPECT_EQ(CheckOutput("out", a, b, Exact()),
            "out: 1 of 3 elements differ (exact); first at flat index 1: got 2, golden 2.5");
}

TEST(CheckOutput, AtolAndRtol) {
  const Literal a = Literal::CreateR1<float>({1.0f, 100.5f});
  const Literal g = Literal::CreateR1<float>({1.01f, 100.0f});
  value::ErrorSpec t;
  t.atol = 0.02;
  EXPECT_THAT(CheckOutput("o", a, g, t), HasSubstr("1 of 2 elements differ (atol 0.02)"));
  t.rtol = 0.01;  // 0.02 + 0.01 * 100 covers 0.5
  EXPECT_EQ(CheckOutput("o", a, g, t), "");
}

TEST(CheckOutput, Ulp) {
  const float one = 1.0f;
  const float next = std::nextafter(one, 2.0f);
  const float next2 = std::nextafter(next, 2.0f);
  value::ErrorSpec t;
  t.ulp = 1;
  EXPECT_EQ(
      CheckOutput("o", Literal::CreateR1<float>({next}), Literal::CreateR1<float>({one}), t), "");
  EXPECT_THAT(
      CheckOutput("o", Literal::CreateR1<float>({next2}), Literal::CreateR1<float>({one}), t),
      HasSubstr("1 of 1 elements differ (ulp 1)"));
  // Across zero: -0 and +0 are 0 ulps apart.
  EXPECT_EQ(
      CheckOutput("o", Literal::CreateR1<float>({-0.0f}), Literal::CreateR1<float>({0.0f}), t),
      "");
}

TEST(CheckOutput, NanMustMatchNan) {
  value::ErrorSpec t;
  t.atol = 1e9;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(
      CheckOutput("o", Literal::CreateR1<float>({nan}), Literal::CreateR1<float>({1.0f}), t),
      HasSubstr("1 of 1 elements differ"));
}

TEST(CheckOutput, ShapeMismatch) {
  EXPECT_THAT(CheckOutput("o", Literal::CreateR1<float>({1.0f}),
                          Literal::CreateR1<float>({1.0f, 2.0f}), Exact()),
              HasSubstr("o: shape f32[1]"));
}

TEST(CheckMetrics, BoundsAndGolden) {
  Scenario s;
  s.metrics["cycles"] = MetricCheck{true, 0.02, std::nullopt, 1000.0};
  const std::map<std::string, double> golden = {{"cycles", 900}};
  EXPECT_TRUE(CheckMetrics(s, {{"cycles", 910}}, &golden).empty());
  const auto failures = CheckMetrics(s, {{"cycles", 1100}}, &golden);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0], "cycles: 1100 is above the maximum 1000");
  EXPECT_EQ(failures[1], "cycles: 1100 differs from the golden 900 by 22.2222222% (tolerance 2%)");
}

// A batch-dimension swap inside a fusion, a minor-dimension transpose in the entry.
constexpr char kTransposes[] = R"(HloModule transposes

%fused (p: f32[2,4,8]) -> f32[4,2,8] {
  %p = f32[2,4,8]{2,1,0} parameter(0)
  ROOT %swap = f32[4,2,8]{2,1,0} transpose(%p), dimensions={1,0,2}
}

ENTRY %main (x: f32[2,4,8]) -> f32[2,8,4] {
  %x = f32[2,4,8]{2,1,0} parameter(0)
  %f = f32[4,2,8]{2,1,0} fusion(%x), kind=kLoop, calls=%fused
  ROOT %minor = f32[2,8,4]{2,1,0} transpose(%x), dimensions={0,2,1}
}
)";

std::vector<std::string> OpFailures(const std::string& yaml) {
  StatusOr<Scenario> s = ParseScenario("module: m.hlo\nmode: values\nchecks:\n" + yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status().message();
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(kTransposes, "m.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!s.ok() || !module.ok()) return {"setup failed"};
  return CheckOps(*s, **module);
}

TEST(CheckOps, ScopeAndMinorDimensionTransposes) {
  EXPECT_THAT(OpFailures("  forbid_ops: [transpose]\n"),
              ::testing::ElementsAre("forbidden op transpose found: swap at m.hlo:5:3"));
  EXPECT_THAT(OpFailures("  forbid_ops: [{op: transpose, scope: entry}]\n"),
              ::testing::ElementsAre("forbidden op transpose (entry) found: minor at m.hlo:11:3"));
  // The fusion's transpose keeps the minor dimension in place; the entry's moves it.
  EXPECT_THAT(OpFailures("  forbid_ops: [{op: transpose, minor_dims: true}]\n"),
              ::testing::ElementsAre(
                  "forbidden op transpose of the minor dimension found: minor at m.hlo:11:3"));
  EXPECT_THAT(OpFailures("  require_ops: [{op: fusion, scope: entry}, {op: dot}]\n"),
              ::testing::ElementsAre("required op dot not found"));
  EXPECT_THAT(OpFailures("  require_ops: [{op: copy, scope: entry}]\n"),
              ::testing::ElementsAre("required op copy not found in the entry computation"));
}

// TPU modules run collectives as start/done pairs: a check naming the
// collective sees its start (once per pair), whether the start has an opcode
// of its own, is spelled `X-start` over async-start, or is an async-start
// around a computation that runs it. An async copy is no `copy`.
TEST(CheckOps, ACollectiveMatchesItsAsynchronousStart) {
  constexpr char kAsync[] = R"(HloModule async, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
gather {
  q = f32[4]{0} parameter(0)
  ROOT g = f32[8]{0} all-gather(q), replica_groups={{0,1}}, dimensions={0}
}
ENTRY e {
  p = f32[4]{0} parameter(0)
  ars = f32[4]{0} all-reduce-start(p), replica_groups={{0,1}}, to_apply=add
  ard = f32[4]{0} all-reduce-done(ars)
  rss = ((f32[4]{0}), f32[2]{0}) reduce-scatter-start(ard), replica_groups={{0,1}}, dimensions={0}, to_apply=add
  rsd = f32[2]{0} reduce-scatter-done(rss)
  ags = ((f32[4]{0}), f32[8]{0}) async-start(p), calls=gather
  agd = f32[8]{0} async-done(ags), calls=gather
  cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(p)
  cd = f32[4]{0} copy-done(cs)
  ROOT t = (f32[2]{0}, f32[8]{0}, f32[4]{0}) tuple(rsd, agd, cd)
}
)";
  const auto failures = [&](const std::string& yaml) {
    StatusOr<Scenario> s = ParseScenario("module: m.hlo\nmode: values\nchecks:\n" + yaml, "t.yaml");
    StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(kAsync, "m.hlo");
    EXPECT_TRUE(s.ok() && module.ok()) << (module.ok() ? "" : module.status().message());
    return s.ok() && module.ok() ? CheckOps(*s, **module) : std::vector<std::string>{"setup"};
  };
  EXPECT_THAT(failures("  forbid_ops: [all-reduce]\n"),
              ::testing::ElementsAre("forbidden op all-reduce found: ars at m.hlo:13:3"));
  EXPECT_THAT(failures("  forbid_ops: [reduce-scatter]\n"),
              ::testing::ElementsAre("forbidden op reduce-scatter found: rss at m.hlo:15:3"));
  EXPECT_THAT(failures("  forbid_ops: [all-gather]\n"),
              ::testing::ElementsAre("forbidden op all-gather found: g at m.hlo:9:3"));
  EXPECT_THAT(failures("  forbid_ops: [{op: all-gather, scope: entry}]\n"),
              ::testing::ElementsAre("forbidden op all-gather (entry) found: ags at m.hlo:17:3"));
  EXPECT_THAT(failures("  require_ops: [all-reduce, reduce-scatter, all-gather]\n"),
              ::testing::IsEmpty());
  EXPECT_THAT(failures("  forbid_ops: [copy]\n"), ::testing::IsEmpty());
}

TEST(CheckOps, MinorDimsIsForTransposeOnly) {
  StatusOr<Scenario> s = ParseScenario(
      "module: m.hlo\nmode: values\nchecks:\n  forbid_ops: [{op: copy, minor_dims: true}]\n",
      "t.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(),
              HasSubstr("t.yaml:4:39: error: key path `checks.forbid_ops[0].minor_dims`: "
                        "minor_dims applies to transpose only, not copy"));
}

// A release that relayouts its parameter before the add: a copy the golden
// module does not have. The golden already has a copy of its own (renamed
// in the new release), which is not new.
constexpr char kGoldenModule[] = R"(HloModule m
ENTRY %main (x: f32[8,128]) -> f32[8,128] {
  %x = f32[8,128]{1,0} parameter(0)
  %old_copy = f32[8,128]{1,0} copy(%x)
  ROOT %sum = f32[8,128]{1,0} add(%old_copy, %x)
}
)";
constexpr char kReleaseModule[] = R"(HloModule m
ENTRY %main (x: f32[8,128]) -> f32[8,128] {
  %x = f32[8,128]{1,0} parameter(0)
  %renamed_copy = f32[8,128]{1,0} copy(%x)
  %relayout = f32[8,128]{0,1} copy(%x)
  ROOT %sum = f32[8,128]{1,0} add(%renamed_copy, %relayout)
}
)";

/// CheckNewOps of `yaml`'s checks on kReleaseModule against kGoldenModule.
std::vector<std::string> NewOpFailures(const std::string& yaml) {
  StatusOr<Scenario> s = ParseScenario("module: m.hlo\nmode: values\nchecks:\n" + yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status().message();
  StatusOr<std::unique_ptr<hlo::HloModule>> golden = hlo::ParseHloModule(kGoldenModule, "golden.hlo");
  StatusOr<std::unique_ptr<hlo::HloModule>> release = hlo::ParseHloModule(kReleaseModule, "m.hlo");
  if (!s.ok() || !golden.ok() || !release.ok()) return {"setup failed"};
  return CheckNewOps(*s, **release, DiffModules(**golden, **release));
}

TEST(CheckNewOps, NamesOnlyTheInstructionsTheGoldenModuleLacks) {
  // forbid_ops fails on the copy the golden already had; forbid_new_ops
  // names only the relayout.
  const std::vector<std::string> failures = NewOpFailures("  forbid_new_ops: [copy]\n");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_THAT(failures[0], HasSubstr("new copy, not in the golden module: added: copy "
                                     "f32[8,128]{0,1} (relayout {1,0} -> {0,1} of %x)"));
  EXPECT_THAT(failures[0], HasSubstr("at m.hlo:5:3"));
  EXPECT_THAT(NewOpFailures("  forbid_new_ops: [{op: copy, scope: entry}]\n"),
              ::testing::ElementsAre(HasSubstr("new copy (entry), not in the golden module")));
  EXPECT_THAT(NewOpFailures("  forbid_new_ops: [transpose]\n"), ::testing::IsEmpty());
}

TEST(CauseLines, RankTheChangesSinceTheGoldenModule) {
  StatusOr<std::unique_ptr<hlo::HloModule>> golden = hlo::ParseHloModule(kGoldenModule, "golden.hlo");
  StatusOr<std::unique_ptr<hlo::HloModule>> release = hlo::ParseHloModule(kReleaseModule, "m.hlo");
  ASSERT_TRUE(golden.ok() && release.ok());
  const std::vector<std::string> causes = CauseLines(DiffModules(**golden, **release));
  ASSERT_FALSE(causes.empty());
  EXPECT_THAT(causes[0], ::testing::StartsWith("cause: added: copy f32[8,128]{0,1} (relayout"));
  EXPECT_THAT(CauseLines(DiffModules(**golden, **golden)), ::testing::IsEmpty());
}

TEST(Metrics, CollectiveTimeAndUtilisation) {
  const auto module = hlo::ParseHloModule(R"(HloModule m, replica_count=2
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[8]{0} parameter(0)
  ar = f32[8]{0} all-reduce(p), replica_groups={{0,1}}, to_apply=sum
  ags = (f32[8]{0}, f32[16]{0}) all-gather-start(ar), replica_groups={{0,1}}, dimensions={0}
  agd = f32[16]{0} all-gather-done(ags)
  ROOT add = f32[16]{0} add(agd, agd)
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  timing::TimingResult result;
  result.clock_hz = 1'000'000'000;
  result.cycles = 2000;
  result.time_us = 2;
  result.flops = 1000;
  result.peak_flops = 1e9;
  result.hbm_bytes = 64;
  timing::OpRecord all_reduce;
  all_reduce.instruction = test::FindInstruction(**module, "ar");
  all_reduce.cycles = 500;
  timing::OpRecord start;
  start.instruction = test::FindInstruction(**module, "ags");
  start.cycles = 250;
  timing::OpRecord add;
  add.instruction = test::FindInstruction(**module, "add");
  add.cycles = 1000;
  result.ops = {all_reduce, start, add};
  const std::map<std::string, double> m = NamedMetrics(MetricsOf(result));
  EXPECT_DOUBLE_EQ(m.at("cycles"), 2000);
  EXPECT_DOUBLE_EQ(m.at("time_us"), 2);
  EXPECT_DOUBLE_EQ(m.at("hbm_bytes"), 64);
  EXPECT_DOUBLE_EQ(m.at("collective_time_us"), 0.75);  // 750 cycles at 1 GHz
  EXPECT_DOUBLE_EQ(m.at("exposed_collective_time_us"), 0.75);  // no network: the same records
  EXPECT_DOUBLE_EQ(m.at("utilisation"), 0.5);  // 1000 FLOPs / (1e9 FLOP/s x 2 us)

  // On a network, the collectives' time is their timeline's, and what is
  // exposed is what TensorCore 0 waited: the all-gather's 900 network cycles
  // are hidden by the add but for the 250 its start took and 100 at its done.
  timing::OpRecord done;
  done.instruction = test::FindInstruction(**module, "agd");
  done.cycles = 100;
  result.ops = {all_reduce, start, done, add};
  result.interconnect = "torus 2";
  timing::CollectiveRecord ar_record, ag_record;
  ar_record.instruction = all_reduce.instruction;
  ar_record.cycles = 500;
  ag_record.instruction = start.instruction;
  ag_record.cycles = 900;
  result.collectives = {ar_record, ag_record};
  timing::LinkUse light, busy;
  light.bytes = 10;
  busy.bytes = 30;
  result.links = {light, busy};
  const Metrics networked = MetricsOf(result);
  EXPECT_DOUBLE_EQ(networked.collective_time_us, 1.4);
  EXPECT_DOUBLE_EQ(networked.exposed_collective_time_us, 0.85);
  EXPECT_EQ(networked.busiest_link_bytes, 30);
}

class GoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tpusim_golden_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(GoldenTest, RoundTripsAndDetectsATornOutput) {
  Golden golden;
  golden.stamp = {"0.1.0", "00112233aabbccdd", "torus:2x2"};
  golden.metrics = {{"cycles", 1234}, {"time_us", 1.5}};
  golden.outputs.push_back({"output_0", Literal::CreateR1<float>({1.0f, 2.0f})});
  golden.outputs.push_back({"device_1/output_0", Literal::CreateR1<int32_t>({7})});
  ASSERT_TRUE(WriteGolden(dir_.string(), golden).ok());

  StatusOr<std::optional<Golden>> read = ReadGolden(dir_.string());
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->stamp, golden.stamp);
  EXPECT_EQ((*read)->metrics, golden.metrics);
  ASSERT_EQ((*read)->outputs.size(), 2u);
  EXPECT_EQ((*read)->outputs[1].name, "device_1/output_0");
  EXPECT_TRUE((*read)->outputs[0].value == golden.outputs[0].value);

  // An output file that is not the one the manifest describes is reported.
  Golden other = golden;
  other.outputs[0].value = Literal::CreateR1<float>({5.0f, 6.0f});
  const fs::path elsewhere = dir_ / "other";
  ASSERT_TRUE(WriteGolden(elsewhere.string(), other).ok());
  fs::copy_file(elsewhere / "output_0.npy", dir_ / "output_0.npy",
                fs::copy_options::overwrite_existing);
  StatusOr<std::optional<Golden>> torn = ReadGolden(dir_.string());
  ASSERT_FALSE(torn.ok());
  EXPECT_THAT(torn.status().message(), HasSubstr("output_0.npy: error: checksum"));
}

TEST_F(GoldenTest, MissingGoldenIsNotAnError) {
  StatusOr<std::optional<Golden>> read = ReadGolden((dir_ / "none").string());
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->has_value());
}

TEST_F(GoldenTest, RewriteRemovesOutputsNoLongerProduced) {
  Golden golden;
  golden.outputs.push_back({"output_0", Literal::CreateR1<float>({1.0f})});
  golden.outputs.push_back({"output_1", Literal::CreateR1<float>({2.0f})});
  ASSERT_TRUE(WriteGolden(dir_.string(), golden).ok());
  golden.outputs.pop_back();
  ASSERT_TRUE(WriteGolden(dir_.string(), golden).ok());
  EXPECT_TRUE(fs::exists(dir_ / "output_0.npy"));
  EXPECT_FALSE(fs::exists(dir_ / "output_1.npy"));
}

TEST_F(GoldenTest, KeepsTheModuleWithItsChecksum) {
  Golden golden;
  golden.outputs.push_back({"output_0", Literal::CreateR1<float>({1.0f})});
  golden.module_text = kGoldenModule;
  ASSERT_TRUE(WriteGolden(dir_.string(), golden).ok());
  EXPECT_EQ(*ReadFile((dir_ / kGoldenModuleFile).string()), kGoldenModule);
  StatusOr<std::optional<Golden>> read = ReadGolden(dir_.string());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ((*read)->module_text, kGoldenModule);

  // A module edited by hand is not the one the golden was made from.
  std::ofstream(dir_ / kGoldenModuleFile, std::ios::app) << "\n";
  StatusOr<std::optional<Golden>> edited = ReadGolden(dir_.string());
  ASSERT_FALSE(edited.ok());
  EXPECT_THAT(edited.status().message(), HasSubstr("module.hlo: error: checksum"));

  // A golden rewritten without a module leaves none behind.
  golden.module_text.clear();
  ASSERT_TRUE(WriteGolden(dir_.string(), golden).ok());
  EXPECT_FALSE(fs::exists(dir_ / kGoldenModuleFile));
  read = ReadGolden(dir_.string());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ((*read)->module_text, "");
}

TEST(Stamp, ChangesWithTopologyAndChip) {
  Scenario a;
  a.topology = "torus:2x2";
  Scenario b = a;
  b.topology = "torus:4x4";
  EXPECT_FALSE(StampOf(a) == StampOf(b));
  EXPECT_EQ(StampOf(a).chip_hash, "");
}

}  // namespace
}  // namespace tpusim::harness
