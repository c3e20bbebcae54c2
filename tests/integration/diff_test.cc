// Integration tests of `tpusim diff`: each example regression pair in
// scenarios/ exits 1 and names its cause in the first lines; the equivalent
// rewrite exits 0; bad input exits 2 with a located message; two XLA dump
// directories are compared module by module.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

using ::testing::ElementsAre;
using ::testing::Not;
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
  EXPECT_THAT(keys, ElementsAre("collective_time_us", "cycles", "exposed_collective_time_us",
                                "flops", "hbm_bytes", "ici_bytes", "link_utilisation", "pcie_bytes",
                                "time_us", "utilisation"));
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
  // The network's load and the collectives' exposure are in the headline.
  EXPECT_THAT(Head(r.out, 1), HasSubstr("collective time +87.0%, ICI bytes +150.0% (not gated), "
                                        "busiest link bytes +275.0% (not gated), collectives "
                                        "781.1 us, 781.1 exposed -> 1460.8 us, 1460.8 exposed"));
  // --topology-after alone has nothing to compare with.
  const RunResult alone = RunBinary(TPUSIM_BINARY, {"diff", module, module, "--chip", "tpu-v5e",
                                                    "--topology-after", "torus:4x4"});
  EXPECT_EQ(alone.exit_code, 2) << Describe(alone);
  EXPECT_THAT(alone.err, HasSubstr("--topology-after compares two networks"));
  // A network that cannot be read is named by the option that gave it.
  const RunResult invalid =
      RunBinary(TPUSIM_BINARY, {"diff", module, module, "--chip", "tpu-v5e", "--mode", "timing",
                                "--topology", "torus:4x4", "--topology-after", "ring:4"});
  EXPECT_EQ(invalid.exit_code, 2) << Describe(invalid);
  EXPECT_THAT(invalid.err,
              StartsWith("tpusim diff: error: --topology-after: invalid topology 'ring:4'"));
}

// A schedule moved to a fat tree without oversubscription is no slower, but
// puts 150% more bytes on the links: time alone passes it, an ICI or link
// tolerance gates it.
TEST(DiffCli, IciAndLinkBytesAreGatedOnRequest) {
  const std::string module = kScenarios + "allreduce_topology/allreduce_16.hlo";
  const std::vector<std::string> moved = {"diff", module, module, "--chip", "tpu-v5e",
                                          "--mode", "timing", "--topology", "torus:4x4",
                                          "--topology-after", "fattree:radix=8,levels=2",
                                          "--time-tolerance", "10%", "--collective-tolerance",
                                          "10%"};
  RunResult r = RunBinary(TPUSIM_BINARY, moved);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), HasSubstr("collective time -6.2% (within), ICI bytes +150.0% (not "
                                        "gated), busiest link bytes +275.0% (not gated)"));
  std::vector<std::string> gated = moved;
  gated.insert(gated.end(), {"--ici-tolerance", "50%"});
  r = RunBinary(TPUSIM_BINARY, gated);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), StartsWith("REGRESSION: network torus 4x4"));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("ICI bytes +150.0%, busiest link bytes +275.0% (not gated)"));
  gated = moved;
  gated.insert(gated.end(), {"--ici-tolerance", "200%", "--link-tolerance", "300%"});
  r = RunBinary(TPUSIM_BINARY, gated);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(Head(r.out, 1), HasSubstr("ICI bytes +150.0% (within), busiest link bytes +275.0% (within)"));
  gated.back() = "200%";
  r = RunBinary(TPUSIM_BINARY, gated);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  // Without a network there are no ICI bytes to gate.
  r = RunBinary(TPUSIM_BINARY, {"diff", module, module, "--chip", "tpu-v5e", "--mode", "timing",
                                "--link-tolerance", "5%"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--link-tolerance gates traffic on ICI links: give the network "
                               "with --topology"));
}

/// `module` with its root `all-reduce(p)` reducing p + p instead: the
/// same structure but for one add, and every output changed.
std::string WithDoubledAllReduceInput(std::string module) {
  const std::string root = "ROOT r = f32[4096]{0} all-reduce(p)";
  module.replace(module.find(root), root.size(),
                 "twice = f32[4096]{0} add(p, p)\n  ROOT r = f32[4096]{0} all-reduce(twice)");
  return module;
}

// Four devices' values do not fit, device 0's replica group does: the
// outputs of devices 0 and 2 are compared, and the headline says so.
TEST(DiffCli, ValuesOfDeviceZerosGroupWhenAllDoNotFit) {
  const ScratchDir scratch;
  const std::string before = ReadText(kScenarios + "hlo/two_replica_groups.hlo");
  const std::string after = WithDoubledAllReduceInput(before);
  WriteText(scratch / "before.hlo", before);
  WriteText(scratch / "after.hlo", after);
  const std::string json = scratch / "diff.json";
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"diff", scratch / "before.hlo", scratch / "after.hlo", "--mode",
                                "values", "--max-memory", "100KiB", "--json", json});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  // One clause for the output of the two devices compared, then which they are.
  EXPECT_THAT(Head(r.out, 1), HasSubstr("output on 2/2 devices: 8,192 of 8,192 elements beyond "
                                        "tolerance"));
  EXPECT_THAT(Head(r.out, 1), HasSubstr("values on 2 of 4 devices (0, 2)"));
  EXPECT_THAT(r.out, HasSubstr("device_2/output"));
  EXPECT_THAT(r.out, Not(HasSubstr("device_1/output")));
  const nlohmann::ordered_json report = nlohmann::ordered_json::parse(ReadText(json));
  EXPECT_THAT(report["values_subset"].get<std::string>(),
              HasSubstr("device 0 exchanges data only with these"));
}

// One group of all four devices, whose values are alike: device 0 stands for
// all, and the change of its output is still found.
TEST(DiffCli, ValuesOfDeviceZeroAloneWhenEveryDeviceIsAlike) {
  const ScratchDir scratch;
  const std::string before = R"(HloModule alike, num_partitions=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4096]{0} parameter(0), sharding={replicated}
  ROOT r = f32[4096]{0} all-reduce(p), channel_id=1, replica_groups={{0,1,2,3}},
    use_global_device_ids=true, to_apply=add
})";
  const std::string after = WithDoubledAllReduceInput(before);
  WriteText(scratch / "before.hlo", before);
  WriteText(scratch / "after.hlo", after);
  const auto diff = [&](const std::string& b) {
    return RunBinary(TPUSIM_BINARY, {"diff", scratch / "before.hlo", scratch / b, "--mode",
                                     "values", "--max-memory", "100KiB"});
  };
  const RunResult same = diff("before.hlo");
  EXPECT_EQ(same.exit_code, 0) << Describe(same);
  const RunResult changed = diff("after.hlo");
  EXPECT_EQ(changed.exit_code, 1) << Describe(changed);
  EXPECT_THAT(Head(changed.out, 1), HasSubstr("values on device 0 of 4, standing for all"));
  EXPECT_THAT(changed.out, HasSubstr("device_0/output"));
  EXPECT_THAT(changed.out, Not(HasSubstr("device_1/output")));
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

// A compiler release that starts offloading an activation: the diff shows the
// bytes it moves over PCIe, and the time its reload costs.
TEST(DiffCli, AnAddedOffloadShowsItsPcieBytes) {
  const ScratchDir scratch;
  WriteText(scratch / "before.hlo", R"(HloModule step
ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  n = f32[1024,1024]{1,0} negate(p)
  ROOT x = f32[1024,1024]{1,0} exponential(n)
})");
  WriteText(scratch / "after.hlo", R"(HloModule step
ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  n = f32[1024,1024]{1,0} negate(p)
  h = f32[1024,1024]{1,0} custom-call(n), custom_call_target="MoveToHost"
  d = f32[1024,1024]{1,0} custom-call(h), custom_call_target="MoveToDevice"
  ROOT x = f32[1024,1024]{1,0} exponential(d)
})");
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"diff", scratch / "before.hlo", scratch / "after.hlo", "--chip",
                                "tpu-v5e", "--json", scratch / "diff.json"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  // 4 MiB out and 4 MiB back.
  EXPECT_THAT(r.out, HasSubstr("  PCIe bytes                        0          8388608"));
  // The headline names the annotations by their targets.
  EXPECT_THAT(r.out,
              StartsWith("REGRESSION: +1 custom-call f32[1024,1024]{1,0} (MoveToHost of %n)"));
  EXPECT_THAT(r.out, HasSubstr("added: custom-call f32[1024,1024]{1,0} (MoveToDevice of %h)"));
  EXPECT_THAT(r.out, HasSubstr("(added) %d (custom-call)"));
  const nlohmann::json report = nlohmann::json::parse(ReadText(scratch / "diff.json"));
  EXPECT_EQ(report["performance"]["before"]["pcie_bytes"], 0);
  EXPECT_EQ(report["performance"]["after"]["pcie_bytes"], 8388608);
  // Nothing moves to the host in the relayout pair: no PCIe row.
  EXPECT_THAT(Diff("relayout_copy").out, Not(HasSubstr("PCIe bytes")));
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

/// Lines of `text`, without their newlines.
std::vector<std::string> Lines(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// A module of one entry parameter f32[64,32], negated; `relayout` puts a
/// layout-changing copy before the negate.
std::string NegateModule(const std::string& name, bool relayout = false) {
  const std::string body = relayout ? "  c = f32[64,32]{0,1} copy(p)\n"
                                      "  ROOT n = f32[64,32]{1,0} negate(c)\n"
                                    : "  ROOT n = f32[64,32]{1,0} negate(p)\n";
  return "HloModule " + name + "\n\nENTRY e {\n  p = f32[64,32]{1,0} parameter(0)\n" + body + "}\n";
}

/// A module adding its parameter f32[N] to itself.
std::string AddModule(const std::string& name, int n = 8) {
  const std::string shape = "f32[" + std::to_string(n) + "]{0}";
  return "HloModule " + name + "\n\nENTRY e {\n  x = " + shape +
         " parameter(0)\n  ROOT s = " + shape + " add(x, x)\n}\n";
}

// Two dumps of one program by two compiler runs: module numbers and platform
// suffixes differ, jit_f is unchanged, jit_g gained a relayout copy, jit_h was
// compiled only before. XLA's other files beside the modules are not modules.
TEST(DiffCli, DumpDirectoriesArePairedByModuleName) {
  const ScratchDir scratch;
  const std::filesystem::path before = scratch.path() / "before";
  const std::filesystem::path after = scratch.path() / "after";
  std::filesystem::create_directories(before);
  std::filesystem::create_directories(after);
  WriteText(before / "module_0001.jit_f.tpu_after_optimizations.txt", AddModule("jit_f"));
  WriteText(before / "module_0001.jit_f.tpu_after_optimizations-buffer-assignment.txt", "junk");
  WriteText(before / "module_0001.jit_f.tpu_before_optimizations.txt", "junk");
  WriteText(before / "module_0002.jit_g.tpu_after_optimizations.txt", NegateModule("jit_g"));
  const std::string only_before = (before / "module_0003.jit_h.tpu_after_optimizations.txt");
  WriteText(only_before, AddModule("jit_h"));
  WriteText(after / "module_0011.jit_f.sm_8.0_gpu_after_optimizations.txt", AddModule("jit_f"));
  WriteText(after / "module_0010.jit_g.after_optimizations.txt", NegateModule("jit_g", true));
  WriteText(after / "module_0010.jit_g.after_optimizations-memory-usage-report.txt", "junk");

  const RunResult r = RunBinary(TPUSIM_BINARY, {"diff", before.string(), after.string(), "--chip",
                                                "tpu-v5e", "--json", scratch / "diff.json"});
  ASSERT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(Lines(r.out),
              ElementsAre(StartsWith("module jit_f: OK: no change beyond the thresholds"),
                          StartsWith("module jit_g: REGRESSION: +1 copy f32[64,32]{0,1} "
                                     "(relayout {1,0} -> {0,1} of %p)"),
                          "module jit_h: only before (" + only_before + ")",
                          "3 modules: 1 ok, 1 regressed, 0 changed, 1 only before, 0 only after, "
                          "0 not compared (error)"))
      << Describe(r);

  // One entry per module: the two-file diff's JSON for a pair.
  const nlohmann::ordered_json report =
      nlohmann::ordered_json::parse(ReadText(scratch / "diff.json"));
  EXPECT_EQ(report["exit_code"], 1);
  std::vector<std::string> names;
  for (const auto& [name, module] : report["modules"].items()) names.push_back(name);
  EXPECT_THAT(names, ElementsAre("jit_f", "jit_g", "jit_h"));
  EXPECT_EQ(report["modules"]["jit_f"]["verdict"], "ok");
  const nlohmann::ordered_json& g = report["modules"]["jit_g"];
  EXPECT_EQ(g["verdict"], "regression");
  EXPECT_EQ(g["exit_code"], 1);
  EXPECT_EQ(g["after"], (after / "module_0010.jit_g.after_optimizations.txt").string());
  ASSERT_EQ(g["structure"].size(), 1u);
  EXPECT_EQ(g["structure"][0]["after"], "c");
  EXPECT_EQ(report["modules"]["jit_h"]["verdict"], "only before");
  EXPECT_EQ(report["modules"]["jit_h"]["before"], only_before);
  EXPECT_TRUE(report["modules"]["jit_h"]["after"].is_null());
}

// Every pair is timed in one SystemC run, but a module that cannot be timed
// (here: longer than --max-executed-instructions) is only its own pair's
// error; the other pair is still compared, time included.
TEST(DiffCli, APairThatCannotBeTimedLeavesTheOtherPairsTimed) {
  const ScratchDir scratch;
  const std::filesystem::path before = scratch.path() / "before";
  const std::filesystem::path after = scratch.path() / "after";
  std::filesystem::create_directories(before);
  std::filesystem::create_directories(after);
  const std::string longer =
      "HloModule jit_g\n\nENTRY e {\n  x = f32[8]{0} parameter(0)\n  a = f32[8]{0} add(x, x)\n"
      "  b = f32[8]{0} multiply(a, a)\n  c = f32[8]{0} negate(b)\n  ROOT s = f32[8]{0} add(c, "
      "x)\n}\n";
  for (const std::filesystem::path& dir : {before, after}) {
    WriteText(dir / "module_0001.jit_f.tpu_after_optimizations.txt", AddModule("jit_f"));
    WriteText(dir / "module_0002.jit_g.tpu_after_optimizations.txt", longer);
  }
  const std::string g = (before / "module_0002.jit_g.tpu_after_optimizations.txt").string();
  const RunResult r = RunBinary(TPUSIM_BINARY, {"diff", before.string(), after.string(), "--chip",
                                                "tpu-v5e", "--max-executed-instructions", "3"});
  ASSERT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(Lines(r.out),
              ElementsAre(StartsWith("module jit_f: OK: no change beyond the thresholds -- time "
                                     "+0.0% (within)"),
                          StartsWith("module jit_g: ERROR: " + g +
                                     ":8:3: error: s: the module's program reaches the limit "
                                     "of 3 instructions here"),
                          "2 modules: 1 ok, 0 regressed, 0 changed, 0 only before, 0 only after, "
                          "1 not compared (error)"))
      << Describe(r);
}

TEST(DiffCli, IdenticalDumpDirectoriesPass) {
  const ScratchDir scratch;
  const std::filesystem::path before = scratch.path() / "before";
  const std::filesystem::path after = scratch.path() / "after";
  std::filesystem::create_directories(before);
  std::filesystem::create_directories(after);
  WriteText(before / "module_0004.jit_f.tpu_after_optimizations.txt", AddModule("jit_f"));
  WriteText(before / "module_0005.jit_g.tpu_after_optimizations.txt", NegateModule("jit_g"));
  WriteText(after / "module_0001.jit_g.cpu_after_optimizations.txt", NegateModule("jit_g"));
  WriteText(after / "module_0002.jit_f.cpu_after_optimizations.txt", AddModule("jit_f"));
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"diff", before.string(), after.string(), "--chip", "tpu-v5e"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(Lines(r.out),
              ElementsAre(StartsWith("module jit_f: OK: "), StartsWith("module jit_g: OK: "),
                          "2 modules: 2 ok, 0 regressed, 0 changed, 0 only before, 0 only after, "
                          "0 not compared (error)"))
      << Describe(r);
}

// A function compiled for two shapes is two modules of one name in each dump:
// they pair in module-number order (paired the other way round, their
// parameters would differ and the diff would stop with exit 2).
TEST(DiffCli, DumpModulesSharingANamePairInNumberOrder) {
  const ScratchDir scratch;
  const std::filesystem::path before = scratch.path() / "before";
  const std::filesystem::path after = scratch.path() / "after";
  std::filesystem::create_directories(before);
  std::filesystem::create_directories(after);
  WriteText(before / "module_0009.jit_f.tpu_after_optimizations.txt", AddModule("jit_f", 8));
  WriteText(before / "module_0010.jit_f.tpu_after_optimizations.txt", AddModule("jit_f", 16));
  WriteText(after / "module_0002.jit_f.tpu_after_optimizations.txt", AddModule("jit_f", 8));
  WriteText(after / "module_0100.jit_f.tpu_after_optimizations.txt", AddModule("jit_f", 16));
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"diff", before.string(), after.string(), "--chip", "tpu-v5e"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(Lines(r.out),
              ElementsAre("note: 2 modules named jit_f before, 2 after: paired in module-number "
                          "order as jit_f#1..jit_f#2",
                          StartsWith("module jit_f#1: OK: "), StartsWith("module jit_f#2: OK: "),
                          StartsWith("2 modules: 2 ok, ")))
      << Describe(r);
}

TEST(DiffCli, DumpDirectoryUsageErrors) {
  const ScratchDir scratch;
  const std::filesystem::path dump = scratch.path() / "dump";
  const std::filesystem::path empty = scratch.path() / "empty";
  std::filesystem::create_directories(dump);
  std::filesystem::create_directories(empty);
  WriteText(dump / "module_0001.jit_f.tpu_after_optimizations.txt", AddModule("jit_f"));
  const std::string file = kScenarios + "relayout_copy/after.hlo";

  const RunResult mixed =
      RunBinary(TPUSIM_BINARY, {"diff", dump.string(), file, "--chip", "tpu-v5e"});
  EXPECT_EQ(mixed.exit_code, 2) << Describe(mixed);
  EXPECT_THAT(mixed.err, HasSubstr(dump.string() + " is a directory but " + file +
                                   " is not: give two HLO modules or two XLA dump directories"));
  EXPECT_TRUE(mixed.out.empty()) << Describe(mixed);

  const RunResult inputs = RunBinary(TPUSIM_BINARY, {"diff", dump.string(), dump.string(), "--chip",
                                                     "tpu-v5e", "--inputs", empty.string()});
  EXPECT_EQ(inputs.exit_code, 2) << Describe(inputs);
  EXPECT_THAT(inputs.err, HasSubstr("--inputs DIR holds one program's parameters"));

  const RunResult none =
      RunBinary(TPUSIM_BINARY, {"diff", dump.string(), empty.string(), "--chip", "tpu-v5e"});
  EXPECT_EQ(none.exit_code, 2) << Describe(none);
  EXPECT_THAT(none.err, HasSubstr(empty.string() + ": error: no module_NNNN.NAME.*"
                                                   "after_optimizations.txt file"));
}

// A module that cannot be compared is its own verdict; the others still are,
// and the exit code is the worst.
TEST(DiffCli, DumpModuleThatFailsToParseExitsTwoAfterTheOthers) {
  const ScratchDir scratch;
  const std::filesystem::path before = scratch.path() / "before";
  const std::filesystem::path after = scratch.path() / "after";
  std::filesystem::create_directories(before);
  std::filesystem::create_directories(after);
  WriteText(before / "module_0001.jit_a.tpu_after_optimizations.txt", AddModule("jit_a"));
  WriteText(before / "module_0002.jit_b.tpu_after_optimizations.txt", NegateModule("jit_b"));
  WriteText(before / "module_0003.jit_c.tpu_after_optimizations.txt", AddModule("jit_c"));
  WriteText(after / "module_0001.jit_a.tpu_after_optimizations.txt", "HloModule jit_a\nENTRY {\n");
  WriteText(after / "module_0002.jit_b.tpu_after_optimizations.txt", NegateModule("jit_b", true));
  WriteText(after / "module_0003.jit_c.tpu_after_optimizations.txt", AddModule("jit_c"));
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"diff", before.string(), after.string(), "--chip", "tpu-v5e"});
  ASSERT_EQ(r.exit_code, 2) << Describe(r);
  const std::vector<std::string> lines = Lines(r.out);
  EXPECT_THAT(
      lines, ElementsAre(StartsWith("module jit_a: ERROR: " + (after / "module_0001").string()),
                         StartsWith("module jit_b: REGRESSION: "), StartsWith("module jit_c: OK: "),
                         "3 modules: 1 ok, 1 regressed, 0 changed, 0 only before, 0 only "
                         "after, 1 not compared (error)"))
      << Describe(r);
  EXPECT_THAT(r.err,
              HasSubstr((after / "module_0001.jit_a.tpu_after_optimizations.txt").string() + ":"));
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

// AFTER alone runs on 4 replicas, where its all-reduce leaves replicas 2
// and 3 in no group: its own mistake, named in its own file. Timed only, the
// changed device count is a structural change.
TEST(DiffCli, AChangedDeviceCountIsAStructuralChangeAndAfterSErrorsNameAfter) {
  const ScratchDir scratch;
  const auto module = [](int replicas) {
    return "HloModule m, replica_count=" + std::to_string(replicas) +
           "\n\nadd {\n  x = u32[] parameter(0)\n  y = u32[] parameter(1)\n"
           "  ROOT s = u32[] add(x, y)\n}\n\nENTRY main {\n  id = u32[] replica-id()\n"
           "  ROOT ar = u32[] all-reduce(id), replica_groups={{0,1}}, to_apply=add\n}\n";
  };
  WriteText(scratch / "before.hlo", module(2));
  WriteText(scratch / "after.hlo", module(4));
  const std::vector<std::string> args = {"diff", scratch / "before.hlo", scratch / "after.hlo",
                                         "--chip", "tpu-v5e"};
  const RunResult full = RunBinary(TPUSIM_BINARY, args);
  EXPECT_EQ(full.exit_code, 2) << Describe(full);
  EXPECT_THAT(full.err, HasSubstr("/after.hlo:11:3: error: all-reduce ar: replica 2 is in no "
                                  "replica group"));
  std::vector<std::string> timed = args;
  timed.insert(timed.end(), {"--mode", "timing"});
  const RunResult timing = RunBinary(TPUSIM_BINARY, timed);
  EXPECT_EQ(timing.exit_code, 1) << Describe(timing);
  // A structural change fails the gate; nothing says it made things worse.
  EXPECT_THAT(Head(timing.out, 1), HasSubstr("CHANGED: collective: replica_count=2 -> 4"));
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

// --type-tolerance holds outputs of one element type to their own
// tolerance, the other keys kept from --rtol/--atol: precision_default's f32
// output passes with a loose f32 one, not with a loose bf16 one.
TEST(DiffCli, TypeToleranceAppliesToOutputsOfThatType) {
  const auto diff = [](const std::string& tolerance) {
    return RunBinary(TPUSIM_BINARY, {"diff", kScenarios + "precision_default/before.hlo",
                                     kScenarios + "precision_default/after.hlo", "--mode",
                                     "values", "--structure", "report", "--type-tolerance",
                                     tolerance});
  };
  const RunResult loose = diff("f32:atol=10");
  EXPECT_EQ(loose.exit_code, 0) << Describe(loose);
  EXPECT_THAT(loose.out, HasSubstr("numerics (rtol 0.001, atol 1e-05; f32: rtol 0.001, atol 10)"));
  const RunResult other = diff("bf16:atol=10");
  EXPECT_EQ(other.exit_code, 1) << Describe(other);
  const RunResult bad = diff("bfloat:atol=10");
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_THAT(bad.err, HasSubstr("--type-tolerance 'bfloat:atol=10': expected an element type"));
}

// The algorithm is parsed with the command line, as exec's is: a misspelt
// one is refused before anything runs, without a network or a chip too.
TEST(DiffCli, AnUnknownAlgorithmIsAnInputErrorBeforeAnythingRuns) {
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"diff", kScenarios + "precision_default/before.hlo",
                                kScenarios + "precision_default/after.hlo", "--mode", "timing",
                                "--chip", "tpu-v5e", "--algorithm", "spiral"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("tpusim diff: error: --algorithm: unknown collective algorithm "
                               "'spiral' (expected auto, ring,"));
  EXPECT_EQ(r.out, "") << Describe(r);
}

// --json naming one of the modules would replace it with the report: refused
// before anything runs, the module left as it was.
TEST(DiffCli, JsonNamingAModuleIsRefused) {
  ScratchDir scratch;
  const std::string before = scratch / "before.hlo";
  const std::string text = ReadText(kScenarios + "precision_default/before.hlo");
  WriteText(before, text);
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"diff", before, kScenarios + "precision_default/after.hlo",
                                "--mode", "values", "--json", before});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--json '" + before + "' is '" + before +
                               "', which it compares; name another file"));
  EXPECT_EQ(ReadText(before), text);
}

// An option the mode would not use is refused, not dropped: a gate that
// gives --time-tolerance in values mode would seem to check time.
TEST(DiffCli, OptionsTheModeWouldNotUseAreUsageErrors) {
  const std::string before = kScenarios + "precision_default/before.hlo";
  const std::string after = kScenarios + "precision_default/after.hlo";
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--mode", "values", "--time-tolerance", "5%"},
       "--time-tolerance is about timing, which --mode values does not do: give --mode full"},
      {{"--mode", "values", "--chip", "tpu-v5e"}, "--chip is about timing"},
      {{"--mode", "values", "-p", "clock=1GHz"}, "-p is about timing"},
      {{"--mode", "timing", "--chip", "tpu-v5e", "--numerics", "ieee"},
       "--numerics is about values, which --mode timing does not compute: give --mode full"},
      {{"--mode", "timing", "--chip", "tpu-v5e", "--rtol", "0.5"}, "--rtol is about values"},
      {{"--mode", "timing", "--chip", "tpu-v5e", "--type-tolerance", "bf16:rtol=0.1"},
       "--type-tolerance is about values"}};
  for (const auto& [flags, message] : refused) {
    std::vector<std::string> args = {"diff", before, after};
    args.insert(args.end(), flags.begin(), flags.end());
    const RunResult r = RunBinary(TPUSIM_BINARY, args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("tpusim diff: error: " + message));
  }
  // At their defaults they are not refused.
  const RunResult values =
      RunBinary(TPUSIM_BINARY, {"diff", before, before, "--mode", "values", "--algorithm", "auto"});
  EXPECT_EQ(values.exit_code, 0) << Describe(values);
}

}  // namespace
}  // namespace tpusim::test
