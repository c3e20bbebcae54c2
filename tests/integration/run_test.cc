// `tpusim run`: malformed scenarios (one mistake each, tests/harness/
// malformed_scenarios/), the example suite in scenarios/, failing, stale and
// timed-out scenarios, JUnit output against tests/harness/junit.xsd, and
// golden integrity when an update is killed midway.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/hlo/varying_programs.h"
#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> MalformedScenarios() {
  return FileNamesEndingWith(TPUSIM_MALFORMED_SCENARIOS_DIR, ".yaml");
}

TEST(MalformedScenarios, AtLeastTwentyFive) { EXPECT_GE(MalformedScenarios().size(), 25u); }

class MalformedScenario : public ::testing::TestWithParam<std::string> {};

// The first line of each file, "# expect: LINE:COL: TEXT", says where the
// error must point and what it must say; the run must exit 2 and run nothing.
TEST_P(MalformedScenario, GivesAPreciseErrorAndExitsTwo) {
  const std::string path = std::string(TPUSIM_MALFORMED_SCENARIOS_DIR) + "/" + GetParam();
  const std::string wanted = ExpectedError(path);
  ASSERT_FALSE(wanted.empty());
  ScratchDir scratch;
  const RunResult r = RunBinary(TPUSIM_BINARY, {"run", path, "--golden-dir", scratch / "golden"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(wanted)) << Describe(r);
  EXPECT_FALSE(fs::exists(scratch / "golden"));
}

INSTANTIATE_TEST_SUITE_P(Files, MalformedScenario, ::testing::ValuesIn(MalformedScenarios()),
                         [](const auto& info) {
                           std::string name = fs::path(info.param).stem().string();
                           return name;
                         });

/// A scenario of `module` (absolute) with the given extra YAML lines.
void WriteScenario(const fs::path& path, const std::string& module, const std::string& body) {
  fs::create_directories(path.parent_path());
  WriteText(path, "module: " + module + "\n" + body);
}

const std::string kAddModule = std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/add_f32.hlo";
const std::string kMlpModule = std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/mlp_bf16.hlo";

TEST(Run, ExampleSuitePassesTwiceWithIdenticalResults) {
  ScratchDir scratch;
  std::string metrics[2];
  for (int i = 0; i < 2; ++i) {
    const std::string json = scratch / ("run" + std::to_string(i) + ".json");
    const RunResult r =
        RunBinary(TPUSIM_BINARY,
                  {"run", std::string(TPUSIM_SOURCE_DIR) + "/scenarios", "-j", "2", "--golden-dir",
                   std::string(TPUSIM_SOURCE_DIR) + "/golden", "--json", json});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_THAT(r.out, HasSubstr("passed, 0 failed, 0 stale, 0 error(s)"));
    // Everything but wall times must repeat exactly.
    std::string text = ReadText(json);
    std::string stable;
    for (size_t pos = 0; pos < text.size();) {
      const size_t end = text.find('\n', pos);
      const std::string line = text.substr(pos, end - pos);
      if (line.find("\"seconds\"") == std::string::npos) stable += line + "\n";
      pos = end == std::string::npos ? text.size() : end + 1;
    }
    metrics[i] = stable;
  }
  EXPECT_EQ(metrics[0], metrics[1]);
  EXPECT_THAT(metrics[0], HasSubstr("\"cycles\""));
}

// The example regressions (issue 6): each negative scenario runs the new
// release's module (or the new network) against the old golden or bound, and
// passes only because its checks catch the regression, for its reason.
TEST(Run, ExampleRegressionsAreCaughtForTheirReasons) {
  ScratchDir scratch;
  const std::string json = scratch / "suite.json";
  const RunResult r = RunBinary(
      TPUSIM_BINARY, {"run", std::string(TPUSIM_SOURCE_DIR) + "/scenarios", "-j", "2",
                      "--golden-dir", std::string(TPUSIM_SOURCE_DIR) + "/golden", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string report = ReadText(json);
  EXPECT_THAT(report, HasSubstr("failed as expected: hbm_bytes: 13451264 differs from the golden "
                                "13058048"));
  // The goldens keep their modules, so each regression names its compiler
  // change, as tpusim diff would, before its effects.
  EXPECT_THAT(report, HasSubstr("\"cause: added: copy bf16[12,128,64]{1,2,0} (relayout {2,1,0} "
                                "-> {1,2,0} of %squeeze.7) at "));
  EXPECT_THAT(report, HasSubstr("new copy (entry), not in the golden module: added: copy "
                                "bf16[12,128,64]{1,2,0}"));
  EXPECT_THAT(report, HasSubstr("failed as expected: output_0: 380 of 1500 elements differ"));
  EXPECT_THAT(report, HasSubstr("\"cause: precision: %dot.36 -> %dot.36 (dot) "
                                "operand_precision={highest,highest} -> (none) at "));
  EXPECT_THAT(report, HasSubstr("failed as expected: time_us: 17.1186667 differs from the golden "
                                "6.20466667"));
  EXPECT_THAT(report, HasSubstr("failed as expected: collective_time_us: 1460.756 is above the "
                                "maximum 796.7"));
  // The network regression says why: the ring on the fat tree crosses the
  // oversubscribed uplinks, 4 hops instead of the torus's 1.
  EXPECT_THAT(report, HasSubstr("why: on fat tree radix 8, 2 levels, oversubscription 2:1"));
  EXPECT_THAT(report, HasSubstr("longest route 4 hops"));
}

// A negative scenario whose checks all pass is a failure of the suite: the
// regression it guards against is no longer caught.
TEST(Run, ANegativeScenarioWhoseChecksPassFails) {
  ScratchDir scratch;
  WriteScenario(
      scratch / "suite/add.yaml", kAddModule,
      "mode: values\ninputs: {seed: 3}\nchecks:\n  outputs: {golden: true, exact: true}\n");
  WriteScenario(scratch / "suite/add_again.yaml", kAddModule,
                "golden: add\nmode: values\ninputs: {seed: 3}\nchecks:\n  outputs: {golden: true, "
                "exact: true}\nexpect: {fail: true, reason: differ}\n");
  const std::string golden = scratch / "golden";
  const RunResult update = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite/add.yaml",
                                                     "--update-golden", "--golden-dir", golden});
  ASSERT_EQ(update.exit_code, 0) << Describe(update);
  const RunResult r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("expected the run or its checks to fail with 'differ', but "
                               "everything passed"));
  // A scenario reading another's golden never writes it.
  EXPECT_FALSE(fs::exists(fs::path(golden) / "add_again"));
  // Nor does a negative scenario pass for want of its golden: a typo in
  // `golden:` is an error (exit 2), which would otherwise pass forever.
  WriteScenario(scratch / "suite/add_again.yaml", kAddModule,
                "golden: ad\nmode: values\ninputs: {seed: 3}\nchecks:\n  outputs: {golden: true, "
                "exact: true}\nexpect: {fail: true}\n");
  const RunResult typo =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite/add_again.yaml", "--golden-dir", golden});
  EXPECT_EQ(typo.exit_code, 2) << Describe(typo);
  EXPECT_THAT(typo.out, HasSubstr("it is the golden of scenario 'ad' (golden:), which "
                                  "--update-golden of that scenario writes"));
}

// Without --golden-dir, a suite reads and writes the nearest golden/ in or
// above the path given, whatever the current directory (issue 17: it was
// resolved against the current directory).
TEST(Run, TheGoldenStoreIsFoundFromTheSuitePath) {
  ScratchDir scratch;
  WriteScenario(
      scratch / "project/scenarios/suite/add.yaml", kAddModule,
      "mode: values\ninputs: {seed: 3}\nchecks:\n  outputs: {golden: true, exact: true}\n");
  fs::create_directories(scratch / "project/golden");
  const std::string suite = scratch / "project/scenarios/suite";
  const RunResult update = RunBinary(TPUSIM_BINARY, {"run", suite, "--update-golden"});
  ASSERT_EQ(update.exit_code, 0) << Describe(update);
  EXPECT_TRUE(fs::exists(scratch / "project/golden/add/metrics.json")) << Describe(update);
  const RunResult r = RunBinary(TPUSIM_BINARY, {"run", suite + "/add.yaml"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  // A store given explicitly wins: an empty one has no golden to compare with.
  fs::create_directories(scratch / "elsewhere");
  const RunResult other =
      RunBinary(TPUSIM_BINARY, {"run", suite, "--golden-dir", scratch / "elsewhere"});
  EXPECT_NE(other.exit_code, 0) << Describe(other);
}

TEST(Run, UpdateThenPassThenFailWhenTheGoldenDiffers) {
  ScratchDir scratch;
  WriteScenario(
      scratch / "suite/add.yaml", kAddModule,
      "mode: values\ninputs: {seed: 3}\nchecks:\n  outputs: {golden: true, exact: true}\n");
  const std::string golden = scratch / "golden";
  RunResult r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("no golden in"));

  r = RunBinary(TPUSIM_BINARY,
                {"run", scratch / "suite", "--golden-dir", golden, "--update-golden"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(fs::exists(golden + "/add/output.npy"));
  EXPECT_THAT(ReadText(golden + "/add/metrics.json"),
              HasSubstr("\"tpusim_version\": \"" TPUSIM_VERSION "\""));
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);

  // Other inputs: the outputs differ from the golden, and the JUnit report says how.
  WriteScenario(
      scratch / "suite/add.yaml", kAddModule,
      "mode: values\ninputs: {seed: 4}\nchecks:\n  outputs: {golden: true, exact: true}\n");
  const std::string junit = scratch / "junit.xml";
  r = RunBinary(TPUSIM_BINARY,
                {"run", scratch / "suite", "--golden-dir", golden, "--junit", junit});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("output: 32 of 32 elements differ (exact)"));
  EXPECT_THAT(r.out, HasSubstr("the module is the golden's: the change is in the chip, the "
                               "topology (or the jobs sharing it), the inputs or tpusim"));
  EXPECT_THAT(ReadText(junit), HasSubstr("<failure message=\"output: 32 of 32 elements differ"));

  // The same failure as a GitHub Actions annotation on the scenario file.
  r = RunBinary(TPUSIM_BINARY,
                {"run", scratch / "suite", "--golden-dir", golden, "--github-annotations"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("::error file=" + (scratch / "suite/add.yaml") +
                               ",title=tpusim scenario add%3A FAIL::output: 32 of 32"));

  // A failure that is no comparison with the golden (a forbidden op) does
  // not send the reader to the chip, the topology or the inputs.
  WriteScenario(scratch / "suite/add.yaml", kAddModule,
                "mode: values\ninputs: {seed: 3}\nchecks:\n  outputs: {golden: true, exact: "
                "true}\n  forbid_ops: [add]\n");
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("forbidden op add found"));
  EXPECT_THAT(r.out, Not(HasSubstr("the module is the golden's")));
}

TEST(Run, UpdateGoldenWritesEachGoldenBeforeTheScenariosThatReadIt) {
  // `a_release_2` (first in file order) compares with `add`'s golden: in one
  // --update-golden run of a fresh golden directory it reads what `add` wrote.
  ScratchDir scratch;
  const std::string checks =
      "mode: values\ninputs: {seed: 3}\nchecks:\n"
      "  outputs: {golden: true, exact: true}\n";
  WriteScenario(scratch / "suite/a_release_2.yaml", kAddModule, "golden: add\n" + checks);
  WriteScenario(scratch / "suite/add.yaml", kAddModule, checks);
  const RunResult r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "-j", "1", "--golden-dir",
                                                scratch / "golden", "--update-golden"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("2 scenario(s): 2 passed"));
  EXPECT_FALSE(fs::exists(scratch / "golden/a_release_2"));
}

TEST(Run, ValuesThatCannotBeComputedAreSkippedUnlessRequired) {
  ScratchDir scratch;
  // A dot tpusim times but does not evaluate (sub-byte integer result).
  const std::string module = scratch / "unevaluated.hlo";
  WriteText(module,
            "HloModule unevaluated\nENTRY e {\n  a = s4[64,64]{1,0} parameter(0)\n"
            "  ROOT d = s4[64,64]{1,0} dot(a, a), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}\n}\n");
  const std::string checks = "chip: tpu-v5e\nchecks:\n  time_us: {max: 1000}\n";
  WriteScenario(scratch / "suite/timed.yaml", module, checks);
  WriteScenario(scratch / "suite/strict.yaml", module, "require: [values]\n" + checks);
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", scratch / "golden"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("1 passed, 1 failed"));
  EXPECT_THAT(r.out, HasSubstr("outputs not checked: the values could not be computed: "));
  EXPECT_THAT(r.out, HasSubstr("require: [values]: the values could not be computed: "));
  EXPECT_THAT(r.out, HasSubstr("dot with a sub-byte integer result"));
}

TEST(Run, PerOutputNamingNoOutputIsAnErrorAtItsKey) {
  ScratchDir scratch;
  // The scenario with a tolerance for output `name`, run updating its golden.
  const auto run_with_tolerance_for = [&](const std::string& name) {
    WriteScenario(scratch / "suite/add.yaml", kAddModule,
                  "mode: values\ninputs: {seed: 3}\nchecks:\n  outputs:\n    golden: true\n"
                  "    per_output: {" +
                      name + ": {ulp: 2}}\n");
    return RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", scratch / "golden",
                                     "--update-golden"});
  };
  // kAddModule has one array output, named `output`.
  RunResult r = run_with_tolerance_for("output_1");
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr(scratch / "suite/add.yaml" +
                               ":7:18: error: key path `checks.outputs.per_output.output_1`: the "
                               "program has no output named 'output_1' (its outputs: output)"));
  r = run_with_tolerance_for("output");
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

// An output is held to its element type's tolerance (per_type) when there
// is one: other inputs than the golden's pass for f32 with a loose f32
// tolerance, and fail when the loose one is given for another type.
TEST(Run, PerTypeToleranceAppliesToOutputsOfThatType) {
  ScratchDir scratch;
  const auto run = [&](int seed, const std::string& tolerance, bool update) {
    WriteScenario(scratch / "suite/add.yaml", kAddModule,
                  "mode: values\ninputs: {seed: " + std::to_string(seed) +
                      "}\nchecks:\n  outputs:\n    golden: true\n" + tolerance);
    std::vector<std::string> args = {"run", scratch / "suite", "--golden-dir", scratch / "golden"};
    if (update) args.push_back("--update-golden");
    return RunBinary(TPUSIM_BINARY, args);
  };
  ASSERT_EQ(run(3, "", true).exit_code, 0);
  RunResult r = run(4, "    per_type: {f32: {atol: 1e9}}\n", false);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  r = run(4, "    per_type: {bf16: {atol: 1e9}}\n", false);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("output: 32 of 32"));
}

TEST(Run, StaleGoldenIsReportedAsStale) {
  ScratchDir scratch;
  WriteScenario(scratch / "suite/mlp.yaml", kMlpModule,
                "chip: tpu-v5e\nmode: timing\ntopology: torus:2x2\nchecks:\n"
                "  cycles: {golden: true, tolerance: 1%}\n");
  const std::string golden = scratch / "golden";
  RunResult r = RunBinary(TPUSIM_BINARY,
                          {"run", scratch / "suite", "--golden-dir", golden, "--update-golden"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // The same scenario on another topology: its goldens were made for 2x2.
  WriteScenario(scratch / "suite/mlp.yaml", kMlpModule,
                "chip: tpu-v5e\nmode: timing\ntopology: torus:4x4\nchecks:\n"
                "  cycles: {golden: true, tolerance: 1%}\n");
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("STALE"));
  EXPECT_THAT(r.out, HasSubstr("made with topology 'torus:2x2'; this run has topology "
                               "'torus:4x4'; check and run --update-golden"));
  // And with another chip preset override: a different preset hash.
  WriteScenario(scratch / "suite/mlp.yaml", kMlpModule,
                "chip: {preset: tpu-v5e, overrides: {hbm.bandwidth: 1TB/s}}\nmode: timing\n"
                "topology: torus:2x2\nchecks:\n  cycles: {golden: true, tolerance: 1%}\n");
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("stale golden"));
  EXPECT_THAT(r.out, HasSubstr(": made with chip hash '"));
  EXPECT_THAT(r.out, Not(HasSubstr("topology 'torus:2x2'")));  // the same topology
}

TEST(Run, AGoldenOfAnotherScenarioIsComparedAcrossChipAndTopology) {
  // `fat_tree` asks how the torus scenario's time changes on another network:
  // the torus golden is what it compares with, not a stale golden of its own.
  ScratchDir scratch;
  const std::string checks =
      "chip: tpu-v5e\nmode: timing\nchecks:\n"
      "  time_us: {golden: true, tolerance: 50%}\n";
  WriteScenario(scratch / "suite/torus.yaml", kMlpModule, "topology: torus:2x2\n" + checks);
  WriteScenario(scratch / "suite/fat_tree.yaml", kMlpModule,
                "golden: torus\ntopology: fattree:radix=4,levels=2\n" + checks);
  const std::string golden = scratch / "golden";
  RunResult r = RunBinary(TPUSIM_BINARY,
                          {"run", scratch / "suite", "--golden-dir", golden, "--update-golden"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("2 scenario(s): 2 passed"));
  // A golden another tpusim version made is stale for its readers too, and
  // the advice names whose golden it is.
  const std::string manifest = golden + "/torus/metrics.json";
  std::string text = ReadText(manifest);
  const std::string version = "\"tpusim_version\": \"" TPUSIM_VERSION "\"";
  ASSERT_NE(text.find(version), std::string::npos);
  text.replace(text.find(version), version.size(), "\"tpusim_version\": \"0.0.1\"");
  WriteText(manifest, text);
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("this run is tpusim " TPUSIM_VERSION "; it is the golden of "
                               "scenario 'torus': check and run --update-golden, which rewrites "
                               "it"));
}

TEST(Run, ForbidNewOpsComparesWithTheGoldenModule) {
  ScratchDir scratch;
  const std::string module = scratch / "add.hlo";
  const std::string add = ReadText(kAddModule);
  WriteText(module, add);
  WriteScenario(scratch / "suite/add.yaml", module,
                "mode: values\nchecks:\n  forbid_new_ops: [copy, transpose]\n");
  const std::string golden = scratch / "golden";
  RunResult r = RunBinary(TPUSIM_BINARY,
                          {"run", scratch / "suite", "--golden-dir", golden, "--update-golden"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ReadText(golden + "/add/module.hlo").rfind("HloModule add_f32", 0), 0u);

  // The next release copies %a before the add.
  std::string release = add;
  const std::string sum = "  %sum = f32[4,8]{1,0} add(%a, %b)";
  ASSERT_NE(release.find(sum), std::string::npos);
  release.replace(release.find(sum), sum.size(),
                  "  %a.copy = f32[4,8]{0,1} copy(%a)\n  %sum = f32[4,8]{1,0} add(%a.copy, %b)");
  WriteText(module, release);
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("cause: added: copy f32[4,8]{0,1} (relayout {1,0} -> {0,1} of %a)"));
  EXPECT_THAT(r.out, HasSubstr("new copy, not in the golden module: added: copy f32[4,8]{0,1}"));

  // A golden from before tpusim kept modules cannot answer; it says so.
  fs::remove(golden + "/add/module.hlo");
  std::string manifest = ReadText(golden + "/add/metrics.json");
  const size_t module_key = manifest.find(",\n  \"module\"");
  ASSERT_NE(module_key, std::string::npos);
  manifest.replace(module_key, manifest.rfind('}') - module_key, "\n");
  WriteText(golden + "/add/metrics.json", manifest);
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("forbid_new_ops: the golden in " + golden +
                               "/add keeps no module (made before tpusim kept it); run "
                               "--update-golden"));
}

const std::string kGroupsModule =
    std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/two_replica_groups.hlo";
const std::string kGroupsChecks =
    "mode: values\ninputs: {seed: 5}\nchecks:\n  outputs: {golden: true, exact: true}\n";

/// Writes scenario `groups` of kGroupsModule into scratch/suite and its
/// golden into scratch/golden; returns that golden directory.
std::string GroupsGolden(const ScratchDir& scratch) {
  WriteScenario(scratch / "suite/groups.yaml", kGroupsModule, kGroupsChecks);
  const std::string golden = scratch / "golden";
  const RunResult r = RunBinary(
      TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden, "--update-golden"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  return golden;
}

TEST(Run, ValuesOfDeviceZerosGroupAreCheckedAgainstTheGoldensOfTheSameNames) {
  ScratchDir scratch;
  const std::string golden = GroupsGolden(scratch);
  ASSERT_TRUE(fs::exists(golden + "/groups/device_3/output.npy"));
  // With too little memory for four devices, devices 0 and 2 are checked
  // against their goldens, and the report says so first.
  WriteScenario(scratch / "suite/groups.yaml", kGroupsModule,
                "max_memory: 100KiB\n" + kGroupsChecks);
  RunResult r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("PASS"));
  EXPECT_THAT(r.out, HasSubstr("values on 2 of 4 devices (0, 2)"));
  WriteScenario(scratch / "suite/groups.yaml", kGroupsModule,
                "max_memory: 100KiB\n" + kGroupsChecks.substr(0, kGroupsChecks.find("{seed: 5}")) +
                    "{seed: 6}" + kGroupsChecks.substr(kGroupsChecks.find("{seed: 5}") + 9));
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("device_2/output: 4096 of 4096 elements differ"));
  EXPECT_THAT(r.out, Not(HasSubstr("device_1/output")));
}

// Outputs that do not match the golden's by count or name: all devices are
// paired by position, a subset by name (the golden holds every device's).
TEST(Run, OutputsTheGoldenDoesNotHaveAreNamed) {
  ScratchDir scratch;
  const std::string golden = GroupsGolden(scratch);
  ASSERT_TRUE(fs::exists(golden + "/groups/device_3/output.npy"));
  // The same result in a one-element tuple: its leaves are named output_0.
  std::string tupled = ReadText(kGroupsModule);
  const std::string root = "ROOT r = ";
  tupled.replace(tupled.find(root), root.size(), "r = ");
  tupled.replace(tupled.rfind('}'), 1, "  ROOT t = (f32[4096]{0}) tuple(r)\n}");
  WriteText(scratch / "tupled.hlo", tupled);
  WriteScenario(scratch / "suite/groups.yaml", scratch / "tupled.hlo", kGroupsChecks);
  RunResult r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("output device_0/output_0 is device_0/output in the golden"));
  WriteScenario(scratch / "suite/groups.yaml", scratch / "tupled.hlo",
                "max_memory: 100KiB\n" + kGroupsChecks);
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("output device_2/output_0 is not in the golden"));
  // One more output than the golden's, on every device.
  const std::string one = "(f32[4096]{0}) tuple(r)";
  tupled.replace(tupled.find(one), one.size(), "(f32[4096]{0}, f32[4096]{0}) tuple(r, p)");
  WriteText(scratch / "tupled.hlo", tupled);
  WriteScenario(scratch / "suite/groups.yaml", scratch / "tupled.hlo", kGroupsChecks);
  r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("the run has 8 outputs, the golden 4"));
}

TEST(Run, TimeoutFailsOneScenarioAndTheRestStillRun) {
  ScratchDir scratch;
  WriteScenario(scratch / "suite/a_slow.yaml", kMlpModule,
                "chip: tpu-v5e\nmode: full\ntimeout: 1ms\n");
  WriteScenario(scratch / "suite/b_fine.yaml", kAddModule, "mode: values\n");
  const std::string junit = scratch / "junit.xml";
  const RunResult r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir",
                                                scratch / "golden", "--junit", junit});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("the simulator timed out after 0.001 s"));
  EXPECT_THAT(r.out, HasSubstr("1 passed, 1 failed"));
}

// A loop of a billion iterations: runs until something stops it.
constexpr char kSpinModule[] = R"(HloModule spin

%cond (s: (s32[], f32[])) -> pred[] {
  %s = (s32[], f32[]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(1000000000)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s.1: (s32[], f32[])) -> (s32[], f32[]) {
  %s.1 = (s32[], f32[]) parameter(0)
  %i.1 = s32[] get-tuple-element(%s.1), index=0
  %x = f32[] get-tuple-element(%s.1), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i.1, %one)
  %y = f32[] add(%x, %x)
  ROOT %t = (s32[], f32[]) tuple(%next, %y)
}

ENTRY %main (x0: f32[]) -> (s32[], f32[]) {
  %x0 = f32[] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[]) tuple(%zero, %x0)
  ROOT %w = (s32[], f32[]) while(%init), condition=%cond, body=%body
}
)";

/// The pid of a running `tpusim scenario-exec SCENARIO`, or 0.
pid_t FindScenarioChild(const std::string& scenario) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = ReadText(entry.path() / "cmdline");
    std::vector<std::string> argv;
    for (size_t pos = 0; pos < cmdline.size();) {
      const size_t end = cmdline.find('\0', pos);
      argv.push_back(cmdline.substr(pos, end - pos));
      pos = end == std::string::npos ? cmdline.size() : end + 1;
    }
    if (argv.size() > 2 && argv[1] == "scenario-exec" && argv[2] == scenario) {
      return static_cast<pid_t>(std::stol(pid));
    }
  }
  return 0;
}

// A simulator crash, injected from outside: SIGSEGV to the child running one
// scenario fails that scenario with the signal's name; the other still passes.
TEST(Run, AChildKilledByASignalFailsOnlyItsScenario) {
  // AddressSanitizer would catch the injected SIGSEGV in the child and exit 1
  // ("SEGV in getenv"), which is its report of a crash, not the one under test.
  AddSanitizerOption("handle_segv=0");
  ScratchDir scratch;
  WriteText(scratch / "spin.hlo", kSpinModule);
  const std::string spinning = scratch / "suite/a_spin.yaml";
  WriteScenario(spinning, scratch / "spin.hlo", "mode: values\ntimeout: 60s\n");
  WriteScenario(scratch / "suite/b_fine.yaml", kAddModule, "mode: values\n");
  RunResult r;
  std::thread runner([&] {
    r = RunBinary(TPUSIM_BINARY,
                  {"run", scratch / "suite", "-j", "2", "--golden-dir", scratch / "golden"});
  });
  pid_t child = 0;
  for (int i = 0; i < 400 && child == 0; ++i) {
    child = FindScenarioChild(spinning);
    if (child == 0) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_NE(child, 0) << "the scenario's child process never appeared";
  if (child != 0) kill(child, SIGSEGV);
  runner.join();
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out,
              HasSubstr("the simulator killed by signal 11 (SIGSEGV) before reporting a result"));
  EXPECT_THAT(r.out, HasSubstr("1 passed, 1 failed"));
}

// The loop limits of `tpusim exec` are scenario keys too: lowered, the
// scenarios fail naming the loop and the key; raised, they pass.
TEST(Run, ScenarioLoopLimitsAreKeys) {
  ScratchDir scratch;
  WriteText(scratch / "loop.hlo", kTenIterationLoopModule);
  const auto write_suite = [&](const std::string& iterations, const std::string& instructions) {
    WriteScenario(scratch / "suite/loop_values.yaml", scratch / "loop.hlo",
                  "mode: values\nmax_while_iterations: " + iterations + "\n");
    WriteScenario(scratch / "suite/loop_timing.yaml", scratch / "loop.hlo",
                  "mode: timing\nchip: tpu-v5e\nmax_executed_instructions: " + instructions + "\n");
  };
  write_suite("5", "3");
  const RunResult lowered =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", scratch / "golden"});
  EXPECT_NE(lowered.exit_code, 0) << Describe(lowered);
  EXPECT_THAT(lowered.out, HasSubstr("loop.hlo:24:3: error: while w: loop did not finish within "
                                     "5 iterations; raise the limit with "
                                     "--max-while-iterations (a scenario's "
                                     "max_while_iterations)"))
      << Describe(lowered);
  EXPECT_THAT(lowered.out, HasSubstr("loop.hlo:7:3: error: lt: the module's program reaches the "
                                     "limit of 3 instructions here"))
      << Describe(lowered);
  write_suite("10", "1000");
  const RunResult raised =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", scratch / "golden"});
  EXPECT_EQ(raised.exit_code, 0) << Describe(raised);
}

// A scenario that bounds the bytes moved to host memory fails on a module that
// starts offloading, naming the bytes.
TEST(Run, APcieBytesCheckCatchesAnOffload) {
  ScratchDir scratch;
  WriteText(scratch / "offload.hlo", R"(HloModule offload
ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  h = f32[1024,1024]{1,0} custom-call(p), custom_call_target="MoveToHost"
  ROOT d = f32[1024,1024]{1,0} custom-call(h), custom_call_target="MoveToDevice"
})");
  WriteScenario(scratch / "suite/offload.yaml", scratch / "offload.hlo",
                "mode: timing\nchip: tpu-v5e\nchecks:\n  pcie_bytes: {max: 0}\n");
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", scratch / "golden"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("pcie_bytes: 8388608 is above the maximum 0")) << Describe(r);
}

TEST(Run, ScenarioTripCountsAndBranchesAreKeys) {
  // Timing alone: the loop runs the count the scenario gives (each iteration
  // 10 FLOPs, and the test that ends the loop one); the conditional, whose
  // predicate only a values run knows, takes the scenario's branch, or the
  // one `branches` gives it by name.
  ScratchDir scratch;
  WriteText(scratch / "loop.hlo", kTenIterationLoopModule);
  WriteText(scratch / "alternate.hlo", test::kAlternatingBranch);
  WriteScenario(scratch / "suite/counted.yaml", scratch / "loop.hlo",
                "mode: timing\nchip: tpu-v5e\ntrip_counts: {w: 4}\n");
  WriteScenario(scratch / "suite/bounded.yaml", scratch / "loop.hlo",
                "mode: timing\nchip: tpu-v5e\n");
  WriteScenario(scratch / "suite/false_branch.yaml", scratch / "alternate.hlo",
                "mode: timing\nchip: tpu-v5e\nbranch: 1\n");
  WriteScenario(scratch / "suite/named_branch.yaml", scratch / "alternate.hlo",
                "mode: timing\nchip: tpu-v5e\nbranch: 1\nbranches: {c: 0}\n");
  const std::string json = scratch / "report.json";
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", scratch / "golden",
                                "--update-golden", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json report = nlohmann::json::parse(ReadText(json));
  std::map<std::string, nlohmann::json> scenarios;
  for (const nlohmann::json& s : report["scenarios"]) {
    scenarios[s["name"].get<std::string>()] = s;
  }
  EXPECT_EQ(scenarios.at("counted")["metrics"]["flops"], 41.0);
  EXPECT_EQ(scenarios.at("bounded")["metrics"]["flops"], 101.0);
  const nlohmann::json& ops = scenarios.at("false_branch")["op_time_us"];
  EXPECT_TRUE(ops.contains("sqrt")) << ops;
  EXPECT_FALSE(ops.contains("multiply")) << ops;
  const nlohmann::json& named_ops = scenarios.at("named_branch")["op_time_us"];
  EXPECT_TRUE(named_ops.contains("multiply")) << named_ops;
  EXPECT_FALSE(named_ops.contains("sqrt")) << named_ops;
  // A name that is no loop of the module is an error at its key.
  WriteScenario(scratch / "suite/counted.yaml", scratch / "loop.hlo",
                "mode: timing\nchip: tpu-v5e\ntrip_counts: {loop: 4}\n");
  const RunResult typo = RunBinary(
      TPUSIM_BINARY, {"run", scratch / "suite/counted.yaml", "--golden-dir", scratch / "golden"});
  EXPECT_EQ(typo.exit_code, 2) << Describe(typo);
  EXPECT_THAT(typo.out,
              HasSubstr(scratch / "suite/counted.yaml" +
                        ":4:15: error: key path `trip_counts.loop`: " + scratch / "loop.hlo" +
                        " has no while loop named 'loop' (its loops: w)"));
}

TEST(Run, ExpectedFailureScenarios) {
  ScratchDir scratch;
  WriteScenario(scratch / "suite/good.yaml", kAddModule,
                "mode: values\ninputs: {dir: " + scratch.path().string() +
                    "}\nexpect: {fail: true, reason: param_0.npy}\n");
  WriteScenario(scratch / "suite/wrong_reason.yaml", kAddModule,
                "mode: values\ninputs: {dir: " + scratch.path().string() +
                    "}\nexpect: {fail: true, reason: out of memory}\n");
  WriteScenario(scratch / "suite/unexpected_success.yaml", kAddModule,
                "mode: values\nexpect: {fail: true}\n");
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", scratch / "golden"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("1 passed, 2 failed"));
  EXPECT_THAT(r.out, HasSubstr("expected a failure mentioning 'out of memory', got:"));
  EXPECT_THAT(r.out, HasSubstr("expected the run or its checks to fail, but everything passed"));
}

TEST(Run, ForbiddenAndRequiredOps) {
  ScratchDir scratch;
  WriteScenario(scratch / "suite/ops.yaml", kMlpModule,
                "mode: values\nchecks:\n  forbid_ops: [{op: dot, scope: any}]\n"
                "  require_ops: [{op: dot, scope: entry}]\n");
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", scratch / "golden"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("forbidden op dot found: dot.1 at "));
  EXPECT_THAT(r.out, HasSubstr("required op dot not found in the entry computation"));
}

TEST(Run, FilterAndJUnitValidatesAgainstTheSchema) {
  ScratchDir scratch;
  WriteScenario(scratch / "suite/keep_pass.yaml", kAddModule, "mode: values\n");
  WriteScenario(scratch / "suite/keep_fail.yaml", kAddModule,
                "mode: values\nchecks:\n  require_ops: [dot]\n");
  WriteScenario(scratch / "suite/keep_error.yaml", kAddModule,
                "mode: values\ninputs: {dir: " + scratch.path().string() + "}\n");
  WriteScenario(scratch / "suite/keep_xml.yaml", kAddModule,
                "mode: values\ninputs: {dir: " + scratch.path().string() +
                    "}\nexpect: {fail: true, reason: \"<&>'\\\"\"}\n");
  WriteScenario(scratch / "suite/skip_me.yaml", kAddModule, "mode: values\n");
  WriteScenario(scratch / "suite/skip_bad.yaml", kAddModule, "mode: value\n");
  const std::string junit = scratch / "junit.xml";
  const std::string json = scratch / "report.json";
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--filter", "keep_*", "--golden-dir",
                                scratch / "golden", "--junit", junit, "--json", json});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);  // keep_error is an input error
  const std::string xml = ReadText(junit);
  // skip_bad does not load, so its name is unknown: it is reported whatever
  // the filter, where a filtered gate would have lost it.
  EXPECT_THAT(xml, HasSubstr("tests=\"5\" failures=\"2\" errors=\"2\""));
  EXPECT_THAT(xml, Not(HasSubstr("skip_me")));
  EXPECT_THAT(xml, HasSubstr("skip_bad"));
  EXPECT_THAT(xml, HasSubstr("mentioning &apos;&lt;&amp;&gt;&apos;&quot;&apos;"));
  EXPECT_THAT(xml, HasSubstr("<error message=\""));
  EXPECT_THAT(ReadText(json), HasSubstr("\"errors\": 2"));
  const RunResult lint =
      RunBinary("/bin/sh", {"-c", "xmllint --noout --schema '" + std::string(TPUSIM_JUNIT_XSD) +
                                      "' '" + junit + "' 2>&1"});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

TEST(Run, HtmlReportIsWellFormedWithChartsAndTraces) {
  ScratchDir scratch;
  WriteScenario(scratch / "suite/timed.yaml", kMlpModule, "chip: tpu-v5e\nmode: timing\n");
  WriteScenario(scratch / "suite/values.yaml", kAddModule,
                "mode: values\nchecks:\n  require_ops: [dot]\n");
  const std::string report = scratch / "report";
  const RunResult r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir",
                                                scratch / "golden", "--report", report});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  const std::string html = ReadText(report + "/index.html");
  EXPECT_THAT(html, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(
      html, HasSubstr("<title>Simulated time against golden (each row to its own scale)</title>"));
  EXPECT_THAT(html,
              HasSubstr("<title>Simulated time by opcode (each row to its own scale)</title>"));
  EXPECT_THAT(html,
              HasSubstr("<title>HBM bytes against golden (each row to its own scale)</title>"));
  EXPECT_THAT(html, HasSubstr("fill=\"#e53935\""));  // a failed scenario's bar
  // Single-chip scenarios only: no network charts.
  EXPECT_THAT(html, Not(HasSubstr("ICI bytes")));
  EXPECT_THAT(html, Not(HasSubstr("Link utilisation")));
  EXPECT_THAT(html, HasSubstr("<a href=\"traces/timed.json\""));
  EXPECT_THAT(html, Not(HasSubstr("traces/values.json")));
  EXPECT_THAT(html, HasSubstr("required op dot not found"));
  EXPECT_THAT(ReadText(report + "/traces/timed.json"), HasSubstr("\"traceEvents\""));
  EXPECT_FALSE(fs::exists(report + "/traces/values.json"));
  // Well-formed XML: a parser reads the whole page.
  const RunResult lint =
      RunBinary("/bin/sh", {"-c", "xmllint --noout '" + report + "/index.html' 2>&1"});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

// The multi-chip example suite: the report draws each run against its golden,
// the time by opcode, ICI bytes, and a link heatmap per network whose cells
// are the links that carried bytes, named by their nodes.
TEST(Run, HtmlReportOfMultiChipScenariosHasLinkHeatmaps) {
  ScratchDir scratch;
  const std::string report = scratch / "report";
  const RunResult r =
      RunBinary(TPUSIM_BINARY,
                {"run", std::string(TPUSIM_SOURCE_DIR) + "/scenarios/allreduce_topology",
                 "--golden-dir", std::string(TPUSIM_SOURCE_DIR) + "/golden", "--report", report});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const std::string html = ReadText(report + "/index.html");
  EXPECT_THAT(html, HasSubstr(">golden</text>"));
  EXPECT_THAT(html, HasSubstr(">all-reduce-done</text>"));
  EXPECT_THAT(html, HasSubstr("<title>ICI bytes against golden (multi-chip scenarios) (each row to "
                              "its own scale)</title>"));
  EXPECT_THAT(html, HasSubstr("<title>Link utilisation: allreduce-torus-4x4</title>"));
  EXPECT_THAT(html, HasSubstr("<title>Link utilisation: allreduce-fattree-2to1</title>"));
  // A torus link between neighbours, and a fat-tree uplink from a chip to its
  // leaf switch, each a cell with its utilisation.
  EXPECT_THAT(html, HasSubstr("<title>(0,0) → (1,0): "));
  EXPECT_THAT(html, HasSubstr("<title>chip 0 → switch 0: "));
  const RunResult lint =
      RunBinary("/bin/sh", {"-c", "xmllint --noout '" + report + "/index.html' 2>&1"});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

TEST(Run, UsageErrors) {
  RunResult r = RunBinary(TPUSIM_BINARY, {"run", "/no/such/dir"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("/no/such/dir: error: no such file or directory"));
  r = RunBinary(TPUSIM_BINARY, {"run"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  // A count of zero says so in words, not with the largest double in 300 digits.
  r = RunBinary(TPUSIM_BINARY, {"run", "-j", "0", TPUSIM_SOURCE_DIR "/scenarios/smoke"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("tpusim run: error: --jobs: must be positive, got '0'\n"));
  // --timeout reads a duration as a scenario's `timeout` does.
  r = RunBinary(TPUSIM_BINARY, {"run", "--timeout", "abc", TPUSIM_SOURCE_DIR "/scenarios/smoke"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--timeout: expected a duration like 30s, 500ms or 2min, got "
                               "'abc'"));
  r = RunBinary(TPUSIM_BINARY, {"run", "--timeout", "0s", TPUSIM_SOURCE_DIR "/scenarios/smoke"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--timeout: must be positive, got '0'"));
  r = RunBinary(TPUSIM_BINARY, {"run", "--timeout", "2min", "--golden-dir",
                                TPUSIM_SOURCE_DIR "/golden", TPUSIM_SOURCE_DIR "/scenarios/smoke"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

TEST(Run, AScenarioReachedTwiceRunsOnce) {
  // The same directory twice, and a file inside it: each scenario once, not
  // two scenarios of one name that conflict.
  const std::string smoke = TPUSIM_SOURCE_DIR "/scenarios/smoke";
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"run", smoke, smoke, smoke + "/add_f32_values.yaml"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("4 scenario(s): 4 passed"));
}

TEST(Run, AModuleThatIsADirectoryIsNamedAsOne) {
  ScratchDir dir;
  fs::create_directories(dir / "sub");
  WriteText(dir / "d.yaml", "module: sub\nmode: values\n");
  const RunResult r = RunBinary(TPUSIM_BINARY, {"run", dir / "d.yaml"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("d.yaml:1:9: error: key path `module`: "));
  EXPECT_THAT(r.err, HasSubstr("sub: a directory, not an HLO file (or DUMP_DIR/NAME)"));
}

TEST(Run, NoScenarioToRunIsAnErrorNotAPass) {
  ScratchDir empty;
  RunResult r = RunBinary(TPUSIM_BINARY, {"run", empty.path().string()});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("tpusim run: error: no scenario to run: no *.yaml file found"));
  // Beside a suite that runs, an empty directory (a misspelled or moved
  // suite) is an error, not a silent pass.
  r = RunBinary(TPUSIM_BINARY,
                {"run", empty.path().string(), TPUSIM_SOURCE_DIR "/scenarios/smoke"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(empty.path().string() +
                               ": error: no scenario (*.yaml) file in this directory"));
  r = RunBinary(TPUSIM_BINARY,
                {"run", TPUSIM_SOURCE_DIR "/scenarios/smoke", "--filter", "no_such_scenario*"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("--filter 'no_such_scenario*' matches none of the "));
}

}  // namespace
}  // namespace tpusim::test
