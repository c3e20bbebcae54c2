// The scenario loader on inline YAML: every key read into Scenario, and the
// positions and key paths of its errors. (Malformed files run through the
// binary in tests/integration/run_test.cc.)
#include "harness/suite/scenario.h"
#include "harness/suite/yaml_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tpusim::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(Scenario, ReadsEveryKey) {
  const char* text = R"(name: mlp
module: hlo/mlp.hlo
chip:
  preset: tpu-v5e
  overrides: {hbm.bandwidth: 1TB/s}
topology: {kind: torus, dims: [2, 4], wraparound: false}
device_assignment: [3, 1]
algorithm: ring
inputs: {seed: 42, distribution: normal}
mode: full
numerics: ieee
max_while_iterations: 100
max_loop_work: 2000
max_executed_instructions: 300
trip_counts: {decode: 12, prefill: 0}
default_trip_count: 3
branch: 1
branches: {step.7: 0}
timeout: 250ms
checks:
  outputs:
    golden: true
    rtol: 1e-2
    atol: 1e-3
    per_type: {bf16: {rtol: 2e-2, atol: 1e-2}, s32: {exact: true}}
    per_output: {output_1: {ulp: 2}, output_2: {exact: true}}
  cycles: {golden: true, tolerance: 2%}
  hbm_bytes: {max: 1.2e9, min: 10}
  forbid_ops: [transpose, {op: copy, scope: entry}]
  require_ops: [dot]
)";
  StatusOr<Scenario> s = ParseScenario(text, "/suite/a.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "mlp");
  EXPECT_EQ(s->module, "/suite/hlo/mlp.hlo");
  EXPECT_EQ(s->chip, "tpu-v5e");
  ASSERT_EQ(s->overrides.size(), 1u);
  EXPECT_EQ(s->overrides[0], "hbm.bandwidth=1TB/s");
  ASSERT_TRUE(s->topology_config.has_value());
  EXPECT_EQ(s->topology_config->kind, arch::TopologyKind::kTorus);
  EXPECT_EQ(s->topology_config->dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(s->topology_config->wraparound, (std::vector<bool>{false, false}));
  EXPECT_EQ(s->topology_config->device_assignment, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(s->algorithm, ici::Algorithm::kRing);
  EXPECT_EQ(s->seed, 42u);
  EXPECT_EQ(s->mode, RunMode::kFull);
  EXPECT_EQ(s->numerics, eval::Numerics::kIeee);
  EXPECT_EQ(s->max_while_iterations, 100);
  EXPECT_EQ(s->max_loop_work, 2000);
  EXPECT_EQ(s->max_executed_instructions, 300);
  ASSERT_EQ(s->trip_counts.size(), 2u);
  EXPECT_EQ(s->trip_counts.at("decode").count, 12);
  EXPECT_EQ(s->trip_counts.at("decode").given_at,
            "/suite/a.yaml:15:15: error: key path `trip_counts.decode`");
  EXPECT_EQ(s->trip_counts.at("prefill").count, 0);
  EXPECT_EQ(s->default_trip_count, 3);
  EXPECT_EQ(s->branch, 1);
  ASSERT_EQ(s->branches.size(), 1u);
  EXPECT_EQ(s->branches.at("step.7").count, 0);
  EXPECT_EQ(s->branches.at("step.7").given_at,
            "/suite/a.yaml:18:12: error: key path `branches.step.7`");
  EXPECT_DOUBLE_EQ(s->timeout_seconds, 0.25);
  EXPECT_TRUE(s->outputs.golden);
  EXPECT_EQ(s->outputs.tolerance.all.rtol, 1e-2);
  EXPECT_EQ(s->outputs.tolerance.all.atol, 1e-3);
  EXPECT_EQ(s->outputs.tolerance.For(hlo::PrimitiveType::kBF16).rtol, 2e-2);
  EXPECT_EQ(s->outputs.tolerance.For(hlo::PrimitiveType::kBF16).atol, 1e-2);
  EXPECT_TRUE(s->outputs.tolerance.For(hlo::PrimitiveType::kS32).exact);
  EXPECT_EQ(s->outputs.tolerance.For(hlo::PrimitiveType::kF32).rtol, 1e-2);  // the scenario's
  EXPECT_EQ(s->outputs.per_output.at("output_1").ulp, 2);
  EXPECT_TRUE(s->outputs.per_output.at("output_2").exact);
  EXPECT_TRUE(s->metrics.at("cycles").golden);
  EXPECT_DOUBLE_EQ(s->metrics.at("cycles").tolerance, 0.02);
  EXPECT_EQ(s->metrics.at("hbm_bytes").max, 1.2e9);
  EXPECT_EQ(s->metrics.at("hbm_bytes").min, 10);
  ASSERT_EQ(s->forbid_ops.size(), 2u);
  EXPECT_EQ(s->forbid_ops[0].opcode, "transpose");
  EXPECT_FALSE(s->forbid_ops[0].entry_only);
  EXPECT_TRUE(s->forbid_ops[1].entry_only);
  ASSERT_EQ(s->require_ops.size(), 1u);
  EXPECT_EQ(s->require_ops[0].opcode, "dot");
}

TEST(Scenario, Defaults) {
  StatusOr<Scenario> s = ParseScenario("module: m.hlo\nmode: values\n", "dir/b.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "b");
  EXPECT_EQ(s->module, "dir/m.hlo");
  EXPECT_EQ(s->seed, 0u);
  EXPECT_EQ(s->mode, RunMode::kValues);
  EXPECT_EQ(s->numerics, eval::Numerics::kTpu);
  EXPECT_EQ(s->algorithm, ici::Algorithm::kAuto);
  EXPECT_EQ(s->topology, "");
  EXPECT_FALSE(s->max_while_iterations.has_value());
  EXPECT_FALSE(s->max_loop_work.has_value());
  EXPECT_FALSE(s->max_executed_instructions.has_value());
  EXPECT_TRUE(s->trip_counts.empty());
  EXPECT_EQ(s->default_trip_count, 1);
  EXPECT_EQ(s->branch, 0);
  EXPECT_TRUE(s->branches.empty());
  EXPECT_FALSE(s->expect_fail);
}

TEST(Scenario, EveryUnknownKeyIsReportedAtOnceWithTheKeyItMisspells) {
  StatusOr<Scenario> s = ParseScenario(
      "module: m.hlo\nnumeric: tpu\nchip: tpu-v5e\nchecks:\n  time_us: {maxx: 1, golden: true}\n"
      "  zzzzzz: 1\n",
      "u.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "u.yaml:2:1: error: key path `numeric`: unknown key (known: name, module, chip, "
            "topology, device_assignment, algorithm, placement, other_jobs, golden, inputs, mode, "
            "numerics, "
            "max_while_iterations, max_loop_work, max_executed_instructions, trip_counts, "
            "default_trip_count, branch, branches, max_memory, timeout, require, "
            "checks, expect); did you mean 'numerics'?\n"
            "u.yaml:5:13: error: key path `checks.time_us.maxx`: unknown key (known: golden, "
            "tolerance, min, max); did you mean 'max'?\n"
            "u.yaml:6:3: error: key path `checks.zzzzzz`: unknown key (known: outputs, "
            "forbid_ops, forbid_new_ops, require_ops, cycles, time_us, flops, hbm_bytes, "
            "pcie_bytes, collective_time_us, exposed_collective_time_us, utilisation, ici_bytes, "
            "link_utilisation)");
  EXPECT_EQ(YamlReader::ClosestKey("tolerence", {"golden", "tolerance"}), "tolerance");
  EXPECT_EQ(YamlReader::ClosestKey("Golden", {"golden", "tolerance"}), "golden");
  EXPECT_EQ(YamlReader::ClosestKey("gold", {"golden", "tolerance"}), "");  // 2 of 4 differ
  // Two neighbouring letters swapped are one slip.
  EXPECT_EQ(YamlReader::ClosestKey("mdoe", {"mode", "name"}), "mode");
  EXPECT_EQ(YamlReader::EditDistance("mdoe", "mode"), 1u);
  EXPECT_EQ(YamlReader::EditDistance("kitten", "sitting"), 3u);
}

// A misspelt mode leaves the default (full) in force; its need of a chip would
// only echo the misspelling, and stopping there once hid the unknown keys
// further down.
TEST(Scenario, AMisspeltModeIsNamedAlongWithTheUnknownKeysAfterIt) {
  StatusOr<Scenario> s = ParseScenario(
      "module: m.hlo\nmdoe: values\nchecks:\n  outputs: {golden: true, rtoll: 1e-3}\n", "m.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("m.yaml:2:1: error: key path `mdoe`: unknown key"));
  EXPECT_THAT(s.status().message(), HasSubstr("did you mean 'mode'?"));
  EXPECT_THAT(s.status().message(),
              HasSubstr("m.yaml:4:27: error: key path `checks.outputs.rtoll`: unknown key"));
  EXPECT_THAT(s.status().message(), Not(HasSubstr("give chip")));
}

TEST(Scenario, ALoopLimitBelowOneIsAnErrorAtItsKey) {
  for (const char* key : {"max_while_iterations", "max_loop_work", "max_executed_instructions"}) {
    StatusOr<Scenario> s = ParseScenario(
        std::string("module: m.hlo\nmode: values\n") + key + ": 0\n", "l.yaml");
    ASSERT_FALSE(s.ok()) << key;
    EXPECT_EQ(s.status().message(), std::string("l.yaml:3:") +
                                        std::to_string(std::string(key).size() + 3) +
                                        ": error: key path `" + key +
                                        "`: expected an integer of at least 1, got '0'");
  }
}

TEST(Scenario, TopologyShortFormIsParsed) {
  StatusOr<Scenario> s =
      ParseScenario("module: m.hlo\nmode: values\ntopology: torus:4x4x2\n", "c.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_TRUE(s->topology_config.has_value());
  EXPECT_EQ(s->topology_config->dims, (std::vector<int64_t>{4, 4, 2}));
}

TEST(Scenario, ErrorsNamePositionAndKeyPath) {
  StatusOr<Scenario> s = ParseScenario(
      "module: m.hlo\nmode: values\nchecks:\n  outputs: {golden: true, rtol: abc}\n", "e.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "e.yaml:4:33: error: key path `checks.outputs.rtol`: expected a number, got 'abc'");
}

// mode, numerics and algorithm are parsed once, by the loader: a spelling
// their parsers refuse is an error at its value, not later in the run.
TEST(Scenario, AnUnknownModeNumericsOrAlgorithmIsAnErrorAtItsValue) {
  const auto error = [](const std::string& text) {
    const StatusOr<Scenario> s = ParseScenario(text, "p.yaml");
    return s.ok() ? std::string("parsed") : s.status().message();
  };
  EXPECT_EQ(error("module: m.hlo\nchip: tpu-v5e\nmode: fast\n"),
            "p.yaml:3:7: error: key path `mode`: expected full, timing or values, got 'fast'");
  EXPECT_EQ(error("module: m.hlo\nmode: values\nnumerics: exact\n"),
            "p.yaml:3:11: error: key path `numerics`: expected tpu or ieee, got 'exact'");
  EXPECT_THAT(error("module: m.hlo\nmode: values\ntopology: torus:2x2\nalgorithm: rings\n"),
              HasSubstr("p.yaml:4:12: error: key path `algorithm`: unknown collective algorithm "
                        "'rings'"));
}

// per_type names element types: a misspelt one is an error at its key.
TEST(Scenario, PerTypeToleranceNamesAnElementType) {
  const StatusOr<Scenario> s = ParseScenario(
      "module: m.hlo\nmode: values\nchecks:\n  outputs:\n    golden: true\n"
      "    per_type: {bfloat16: {rtol: 0.1}}\n",
      "p.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "p.yaml:6:16: error: key path `checks.outputs.per_type.bfloat16`: expected an element "
            "type such as f32, bf16 or s32, got 'bfloat16'");
}

TEST(Scenario, ExpectFail) {
  StatusOr<Scenario> s = ParseScenario(
      "module: m.hlo\nmode: values\nexpect: {fail: true, reason: out of memory}\n", "f.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->expect_fail);
  EXPECT_EQ(s->expect_reason, "out of memory");
}

TEST(Scenario, ParsesSeconds) {
  EXPECT_DOUBLE_EQ(*ParseSeconds("30s"), 30);
  EXPECT_DOUBLE_EQ(*ParseSeconds("250ms"), 0.25);
  EXPECT_DOUBLE_EQ(*ParseSeconds("2min"), 120);
  EXPECT_FALSE(ParseSeconds("5 minutes").ok());
}

TEST(Scenario, ResolveReportsAMissingModuleAtItsKey) {
  StatusOr<Scenario> s = ParseScenario("mode: values\nmodule: /no/such.hlo\n", "g.yaml");
  ASSERT_TRUE(s.ok());
  const Status resolved = ResolveScenario(*s, "/no/models");
  ASSERT_FALSE(resolved.ok());
  EXPECT_THAT(resolved.message(),
              HasSubstr("g.yaml:2:9: error: key path `module`: /no/such.hlo: no such file"));
}

// `module: DUMP/NAME` names the after-optimizations module NAME (a shell
// pattern) of an XLA dump directory, whatever its module_NNNN number; no
// match, or several, is an error at the key listing what the dump holds.
TEST(Scenario, ModuleNamesAModuleOfAnXlaDumpDirectory) {
  char dir_template[] = "/tmp/tpusim_dump_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dump = dir_template;
  for (const char* file : {"module_0003.jit_f.tpu_after_optimizations.txt",
                           "module_0004.jit_g.tpu_after_optimizations.txt",
                           "module_0004.jit_g.tpu_before_optimizations.txt"}) {
    std::ofstream(dump + "/" + file) << "HloModule m\n";
  }
  const auto resolve = [&](const std::string& module, std::string* resolved) {
    StatusOr<Scenario> s = ParseScenario("mode: values\nmodule: " + module + "\n", "d.yaml");
    EXPECT_TRUE(s.ok()) << s.status().message();
    const Status status = ResolveScenario(*s, "/no/models");
    *resolved = s->module;
    return status;
  };
  std::string resolved;
  ASSERT_TRUE(resolve(dump + "/jit_f", &resolved).ok());
  EXPECT_EQ(resolved, dump + "/module_0003.jit_f.tpu_after_optimizations.txt");
  ASSERT_TRUE(resolve(dump + "/*_g", &resolved).ok());
  EXPECT_EQ(resolved, dump + "/module_0004.jit_g.tpu_after_optimizations.txt");
  const Status several = resolve(dump + "/jit_*", &resolved);
  EXPECT_THAT(several.message(),
              HasSubstr("d.yaml:2:9: error: key path `module`: " + dump +
                        " holds 2 modules named 'jit_*' (module_0003.jit_f."
                        "tpu_after_optimizations.txt, module_0004.jit_g.tpu_after_optimizations."
                        "txt): name one, or give the file"));
  const Status none = resolve(dump + "/jit_h", &resolved);
  EXPECT_THAT(none.message(), HasSubstr(dump + " holds no module named 'jit_h' (it holds "
                                                "module_0003.jit_f.tpu_after_optimizations.txt, "
                                                "module_0004.jit_g.tpu_after_optimizations.txt)"));
  std::filesystem::remove_all(dump);
}

}  // namespace
}  // namespace tpusim::harness
