// Integration tests of `tpusim exec`: inputs from seeds and .npy files,
// outputs as .npy and a summary table, and every kind of bad input giving a
// message and exit code 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/value/literal.h"
#include "sim/value/npy.h"
#include "tests/hlo/triangular_loop.h"
#include "tests/hlo/varying_programs.h"
#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::Not;
using value::Literal;

RunResult Tpusim(const std::vector<std::string>& args) { return RunBinary(TPUSIM_BINARY, args); }

/// out = a * b + c elementwise, with a tuple result so output naming shows.
constexpr char kMulAddModule[] = R"(HloModule mul_add

ENTRY %main (a: f32[2,3], b: f32[2,3], c: s32[3]) -> (f32[2,3], s32[3]) {
  %a = f32[2,3]{1,0} parameter(0)
  %b = f32[2,3]{1,0} parameter(1)
  %c = s32[3]{0} parameter(2)
  %m = f32[2,3]{1,0} multiply(%a, %b)
  %two = s32[] constant(2)
  %twos = s32[3]{0} broadcast(%two), dimensions={}
  %q = s32[3]{0} divide(%c, %twos)
  ROOT %t = (f32[2,3]{1,0}, s32[3]{0}) tuple(%m, %q)
}
)";

/// A dynamic-slice whose start index is a parameter: seeded inputs must keep
/// it within [0, 6] (8 - 2) — checked through the sliced values of an iota.
constexpr char kDynamicSliceModule[] = R"(HloModule ds

ENTRY %main (i: s32[]) -> s32[3] {
  %i = s32[] parameter(0)
  %iota = s32[8]{0} iota(), iota_dimension=0
  %s = s32[2]{0} dynamic-slice(%iota, %i), dynamic_slice_sizes={2}
  %ii = s32[1]{0} reshape(%i)
  ROOT %r = s32[3]{0} concatenate(%s, %ii), dimensions={0}
}
)";

/// Integer division by zero and INT_MIN / -1, whose results XLA defines.
constexpr char kIntDivideModule[] = R"(HloModule idiv

ENTRY %main (a: s32[3], b: s32[3]) -> s32[3] {
  %a = s32[3]{0} parameter(0)
  %b = s32[3]{0} parameter(1)
  ROOT %q = s32[3]{0} divide(%a, %b)
}
)";

constexpr char kUnknownCustomCallModule[] = R"(HloModule cc

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %k = f32[4]{0} custom-call(%a), custom_call_target="my_secret_kernel"
}
)";

/// A module whose entry all-reduces f32[4] over `groups` (at line 9), with
/// `header` after the module name (e.g. ", replica_count=4").
std::string AllReduceModule(const std::string& header, const std::string& groups) {
  return "HloModule ar" + header + R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[4] parameter(0)
  ROOT ar = f32[4] all-reduce(p), replica_groups=)" +
         groups + ", to_apply=add\n}\n";
}

class ExecTest : public ::testing::Test {
 protected:
  /// Writes `text` as a module file and returns its path.
  std::string Module(const std::string& name, const std::string& text) {
    const std::string path = dir_ / name;
    WriteText(path, text);
    return path;
  }
  void WriteNpy(const std::string& path, const Literal& literal) {
    fs::create_directories(fs::path(path).parent_path());
    ASSERT_TRUE(value::WriteNpy(path, literal).ok()) << path;
  }
  Literal ReadNpy(const std::string& path) {
    StatusOr<Literal> literal = value::ReadNpy(path);
    EXPECT_TRUE(literal.ok()) << literal.status().message();
    return literal.ok() ? *std::move(literal) : Literal();
  }
  static Literal F32Matrix(std::initializer_list<float> values) {
    Literal l(hlo::Shape(hlo::PrimitiveType::kF32, {2, 3}));
    std::copy(values.begin(), values.end(), l.data<float>().begin());
    return l;
  }
  /// Valid inputs for kMulAddModule in `inputs/`.
  std::string MulAddInputs() {
    const std::string inputs = dir_ / "inputs";
    WriteNpy(inputs + "/param_0.npy", F32Matrix({1, 2, 3, 4, 5, 6}));
    WriteNpy(inputs + "/param_1.npy", F32Matrix({0.5, 0.5, 2, 2, -1, 0}));
    WriteNpy(inputs + "/param_2.npy", Literal::CreateR1<int32_t>({7, -7, 1}));
    return inputs;
  }

  ScratchDir dir_;
};

TEST_F(ExecTest, ReadsNpyInputsAndWritesTupleOutputs) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const std::string out = dir_ / "out";
  const RunResult r = Tpusim({"exec", module, "--inputs", MulAddInputs(), "--out", out});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ReadNpy(out + "/output_0.npy"), F32Matrix({0.5, 1, 6, 8, -5, 0}));
  // s32 division truncates toward zero.
  EXPECT_EQ(ReadNpy(out + "/output_1.npy"), Literal::CreateR1<int32_t>({3, -3, 0}));
  // The summary: one row per output with shape, min, max, mean.
  EXPECT_THAT(r.out, HasSubstr("output_0  f32[2,3]"));
  EXPECT_THAT(r.out, HasSubstr("-5"));
  EXPECT_THAT(r.out, HasSubstr("output_1  s32[3]"));
}

/// A TF program with a bounded dynamic dimension: set-dimension-size to 3,
/// add, reduce, get-dimension-size (issue 15: it was not evaluated).
constexpr char kBoundedDynamicModule[] = R"(HloModule tf_dynamic
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY main {
  x = s32[8] parameter(0)
  n = s32[] constant(3)
  d = s32[<=8] set-dimension-size(x, n), dimensions={0}
  e = s32[<=8] add(d, d)
  zero = s32[] constant(0)
  r = s32[] reduce(e, zero), dimensions={0}, to_apply=add
  sz = s32[] get-dimension-size(e), dimensions={0}
  ROOT t = (s32[], s32[]) tuple(r, sz)
}
)";

TEST_F(ExecTest, RunsSetDimensionSizeAndReducesOnlyTheValidElements) {
  const std::string module = Module("dyn.hlo", kBoundedDynamicModule);
  const std::string inputs = dir_ / "inputs";
  WriteNpy(inputs + "/param_0.npy", Literal::CreateR1<int32_t>({1, 2, 3, 100, 100, 100, 100, 100}));
  const std::string out = dir_ / "out";
  const RunResult r = Tpusim({"exec", module, "--inputs", inputs, "--out", out});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ReadNpy(out + "/output_0.npy"), Literal::CreateR0<int32_t>(12));  // 2 * (1 + 2 + 3)
  EXPECT_EQ(ReadNpy(out + "/output_1.npy"), Literal::CreateR0<int32_t>(3));
}

TEST_F(ExecTest, SeededRunsAreIdenticalAndSeedsDiffer) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const RunResult a = Tpusim({"exec", module, "--inputs", "seed:7", "--out", dir_ / "a"});
  const RunResult b = Tpusim({"exec", module, "--inputs", "seed:7", "--out", dir_ / "b"});
  const RunResult c = Tpusim({"exec", module, "--inputs", "seed:8"});
  ASSERT_EQ(a.exit_code, 0) << Describe(a);
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.out, c.out);
  EXPECT_EQ(ReadText(dir_ / "a/output_0.npy"), ReadText(dir_ / "b/output_0.npy"));
  EXPECT_FALSE(ReadText(dir_ / "a/output_0.npy").empty());
}

TEST_F(ExecTest, SeededIndicesStayInBounds) {
  const std::string module = Module("ds.hlo", kDynamicSliceModule);
  for (int seed = 0; seed < 20; ++seed) {
    const std::string out = dir_ / ("s" + std::to_string(seed));
    const RunResult r =
        Tpusim({"exec", module, "--inputs", "seed:" + std::to_string(seed), "--out", out});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    const Literal result = ReadNpy(out + "/output.npy");
    const auto v = result.data<int32_t>();
    // The index itself is in [0, 6], so the slice was not clamped: it starts there.
    EXPECT_GE(v[2], 0);
    EXPECT_LE(v[2], 6);
    EXPECT_EQ(v[0], v[2]);
    EXPECT_EQ(v[1], v[2] + 1);
  }
}

TEST_F(ExecTest, IntegerDivisionByZeroHasXlaResult) {
  const std::string module = Module("idiv.hlo", kIntDivideModule);
  const std::string inputs = dir_ / "in";
  WriteNpy(inputs + "/param_0.npy", Literal::CreateR1<int32_t>({5, -5, INT32_MIN}));
  WriteNpy(inputs + "/param_1.npy", Literal::CreateR1<int32_t>({0, 0, -1}));
  const RunResult r = Tpusim({"exec", module, "--inputs", inputs, "--out", dir_ / "out"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // XLA: x / 0 is -1 (all bits set); INT_MIN / -1 is INT_MIN.
  EXPECT_EQ(ReadNpy(dir_ / "out/output.npy"), Literal::CreateR1<int32_t>({-1, -1, INT32_MIN}));
}

// A dot tpusim times but does not evaluate (sub-byte integer result).
constexpr char kUnevaluatedDot[] = R"(HloModule unevaluated
ENTRY e {
  a = s4[64,64]{1,0} parameter(0)
  ROOT d = s4[64,64]{1,0} dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST_F(ExecTest, FullModeTimesWhatItCannotEvaluateAndSaysWhyFirst) {
  const std::string module = Module("unevaluated.hlo", kUnevaluatedDot);
  const std::string json = dir_ / "out.json";
  const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "values: not computed, timed without them (loop trip counts from the program): " +
                module + ":4:3: error: dot d: dot with a sub-byte integer result");
  EXPECT_THAT(r.out, HasSubstr("\nd                                        dot"));
  const auto j = nlohmann::json::parse(ReadText(json));
  EXPECT_THAT(j["values_skipped"].get<std::string>(), HasSubstr("sub-byte integer result"));
  EXPECT_FALSE(j.contains("outputs"));
  EXPECT_GT(j["cycles"].get<int64_t>(), 0);
  // The metrics object a golden stores, from the same totals.
  EXPECT_EQ(j["metrics"]["cycles"].get<double>(), j["cycles"].get<double>());
  EXPECT_EQ(j["metrics"]["hbm_bytes"].get<double>(), j["hbm_bytes"].get<double>());
  EXPECT_TRUE(j["metrics"].contains("exposed_collective_time_us"));

  // Values alone are what was asked for: an error.
  const RunResult values = Tpusim({"exec", module});
  EXPECT_EQ(values.exit_code, 2) << Describe(values);
  EXPECT_THAT(values.err, HasSubstr("sub-byte integer result"));
}

TEST_F(ExecTest, OutNamingAFileSaysItIsNotADirectory) {
  const std::string file = dir_ / "a_file";
  WriteText(file, "");
  const RunResult r = Tpusim(
      {"exec", std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/add_f32.hlo", "--out", file});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err,
              HasSubstr(file + ": error: exists and is not a directory, where the outputs go"));
}

TEST_F(ExecTest, AStringAttributeThatIsNotUtf8ReachesEveryJsonAsAReplacementCharacter) {
  // An HLO string may hold any byte: an escape (`\377`) or the byte itself.
  const std::string module = Module("not_utf8.hlo",
                                    "HloModule m\nENTRY e {\n"
                                    "  a = f32[8]{0} parameter(0)\n"
                                    "  ROOT c = f32[8]{0} negate(a), "
                                    "metadata={op_name=\"bad\\377\" source_file=\"x\xfe\"}\n}\n");
  const std::string json = dir_ / "out.json";
  const std::string trace = dir_ / "trace.json";
  const RunResult r =
      Tpusim({"exec", module, "--chip", "tpu-v5e", "--json", json, "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(ReadText(trace), HasSubstr("bad\xEF\xBF\xBD"));  // U+FFFD in UTF-8
  EXPECT_EQ(nlohmann::json::parse(ReadText(json))["ops"][0]["name"], "c");
}

// Two independent replica groups, {0,2} and {1,3}: device 0's result needs
// only devices 0 and 2.
const std::string kTwoGroups =
    std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/two_replica_groups.hlo";

TEST_F(ExecTest, ValuesTooBigForAllDevicesRunOnDeviceZerosGroupAndSaySo) {
  const std::string& module = kTwoGroups;
  const RunResult all = Tpusim({"exec", module});
  ASSERT_EQ(all.exit_code, 0) << Describe(all);
  // About 48 KiB per device: four do not fit in 100 KiB, device 0's group does.
  const std::string json = dir_ / "subset.json";
  const RunResult some = Tpusim({"exec", module, "--max-memory", "100KiB", "--json", json});
  ASSERT_EQ(some.exit_code, 0) << Describe(some);
  EXPECT_THAT(some.out, StartsWith("values on 2 of 4 devices (0, 2): all of them need about "));
  EXPECT_THAT(some.out, Not(HasSubstr("device_1/")));
  // The same values as in the run of every device: the row's checksum.
  const auto checksum = [](const std::string& out, const std::string& output) {
    const size_t row = out.find(output);
    if (row == std::string::npos) return std::string("missing");
    const size_t end = out.find('\n', row);
    return out.substr(out.rfind(' ', end) + 1, end - out.rfind(' ', end) - 1);
  };
  for (const std::string output : {"device_0/output", "device_2/output"}) {
    EXPECT_EQ(checksum(some.out, output), checksum(all.out, output)) << some.out << all.out;
    EXPECT_NE(checksum(some.out, output), "missing");
  }
  const auto j = nlohmann::json::parse(ReadText(json));
  EXPECT_THAT(j["values_subset"].get<std::string>(), StartsWith("values on 2 of 4 devices"));
  // Too little even for the group: refused, saying so.
  const RunResult none = Tpusim({"exec", module, "--max-memory", "1KiB"});
  EXPECT_EQ(none.exit_code, 2) << Describe(none);
  EXPECT_THAT(none.err, HasSubstr("as would the 2 devices device 0 exchanges data with"));
}

// One group of every device, but every device computes the same values:
// device 0 alone stands for all, and says so.
TEST_F(ExecTest, ValuesTooBigForAllDevicesOfAProgramWhoseDevicesAreAlikeRunOnDeviceZero) {
  const std::string kBody = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4096]{0} parameter(0)SHARDING
  n = f32[4096]{0} negate(p)
  ROOT r = f32[4096]{0} all-reduce(n), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
})";
  const auto module_text = [&](const std::string& sharding) {
    std::string text = "HloModule alike, num_partitions=4\n" + kBody;
    text.replace(text.find("SHARDING"), 8, sharding);
    return text;
  };
  const std::string module = Module("alike.hlo", module_text(", sharding={replicated}"));
  const RunResult all = Tpusim({"exec", module});
  ASSERT_EQ(all.exit_code, 0) << Describe(all);
  const RunResult one = Tpusim({"exec", module, "--max-memory", "100KiB"});
  ASSERT_EQ(one.exit_code, 0) << Describe(one);
  EXPECT_THAT(one.out, StartsWith("values on device 0 of 4, standing for all: all of them need "
                                  "about "));
  EXPECT_THAT(one.out, HasSubstr("every device computes the same values"));
  EXPECT_THAT(one.out, Not(HasSubstr("device_1/")));
  // Device 0's values are those of the run of every device.
  const auto row = [](const std::string& out) {
    const size_t at = out.find("device_0/output");
    if (at == std::string::npos) return std::string("missing");
    return out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(row(one.out), row(all.out));
  EXPECT_NE(row(one.out), "missing");
  // Each device draws its own values of a parameter that is not replicated.
  const std::string sharded = Module("sharded.hlo", module_text(""));
  const RunResult refused = Tpusim({"exec", sharded, "--max-memory", "100KiB"});
  EXPECT_EQ(refused.exit_code, 2) << Describe(refused);
  EXPECT_THAT(refused.err, HasSubstr("device 0 cannot stand for the others: parameter p is not "
                                     "replicated: each device draws its own values"));
}

TEST_F(ExecTest, RaggedAllToAllRunsOnSeededOffsetsAndSizes) {
  // Seeded offsets and sizes used to point outside the arrays, so values
  // were never computed for a ragged-all-to-all program.
  const std::string module = Module("ragged.hlo", R"(HloModule ragged, replica_count=4
ENTRY e {
  input = f32[16,2]{1,0} parameter(0)
  output = f32[20,2]{1,0} parameter(1)
  input_offsets = s32[4]{0} parameter(2)
  send_sizes = s32[4]{0} parameter(3)
  output_offsets = s32[4]{0} parameter(4)
  recv_sizes = s32[4]{0} parameter(5)
  ROOT r = f32[20,2]{1,0} ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), replica_groups={{0,1,2,3}}
})");
  const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, Not(HasSubstr("not computed")));
  EXPECT_THAT(r.out, HasSubstr("device_3/output  f32[20,2]"));
}

TEST_F(ExecTest, FullModeTimesARaggedAllToAllWithTheRowsItsValuesRunSent) {
  // A ragged-all-to-all of 4 devices' f32[16,2] into f32[output_rows,2], with the
  // same constant offsets and sizes on every device.
  const auto ragged_module = [&](const std::string& name, int output_rows,
                                 const std::string& input_offsets, const std::string& sizes,
                                 const std::string& output_offsets) {
    const std::string out = "f32[" + std::to_string(output_rows) + ",2]{1,0}";
    return Module(name + ".hlo",
                  "HloModule " + name +
                      ", replica_count=4\nENTRY e {\n"
                      "  input = f32[16,2]{1,0} parameter(0)\n"
                      "  output = " +
                      out +
                      " parameter(1)\n"
                      "  input_offsets = s32[4]{0} constant({" +
                      input_offsets +
                      "})\n"
                      "  send_sizes = s32[4]{0} constant({" +
                      sizes +
                      "})\n"
                      "  output_offsets = s32[4]{0} constant({" +
                      output_offsets +
                      "})\n"
                      "  recv_sizes = s32[4]{0} constant({" +
                      sizes +
                      "})\n"
                      "  ROOT r = " +
                      out +
                      " ragged-all-to-all(input, output, input_offsets, "
                      "send_sizes, output_offsets, recv_sizes), replica_groups={{0,1,2,3}}\n}\n");
  };
  // Every device sends 1 + 2 of its 16 rows: full mode puts 3 rows of 8
  // bytes on the network, timing alone the whole input.
  const std::string sparse =
      ragged_module("ragged_sent", 20, "0, 4, 8, 12", "1, 0, 2, 0", "0, 5, 10, 15");
  // Rows sent to several peers count for each: 18 rows from a 16-row input.
  const std::string overlapping =
      ragged_module("ragged_overlap", 32, "0, 0, 4, 4", "6, 0, 6, 6", "0, 8, 16, 24");
  const auto collective_of = [&](const std::string& mode, const std::string& module) {
    const std::string json = dir_ / (mode + ".json");
    const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e", "--topology", "torus:2x2",
                                "--mode", mode, "--json", json});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
    return metrics["collectives"].size() == 1 ? metrics["collectives"][0] : nlohmann::json();
  };
  const nlohmann::json full = collective_of("full", sparse);
  const nlohmann::json timing = collective_of("timing", sparse);
  EXPECT_EQ(full["bytes"], 3 * 2 * 4);
  EXPECT_EQ(timing["bytes"], 16 * 2 * 4);
  EXPECT_LT(full["ici_bytes"].get<int64_t>(), timing["ici_bytes"].get<int64_t>());
  EXPECT_EQ(collective_of("full", overlapping)["bytes"], 18 * 2 * 4);
}

/// The dispatch of two devices: device 0 sends nothing, device 1 sends 8
/// rows to device 0 (`sizes_row` and `recv_row`, this device's).
constexpr char kDispatchSizes[] = R"(
  id = u32[] replica-id()
  zero = u32[] constant(0)
  offsets = s32[2]{0} constant({0, 0})
  sizes_of = s32[2,2]{1,0} constant({{0, 0}, {8, 0}})
  recv_of = s32[2,2]{1,0} constant({{0, 8}, {0, 0}})
  sizes_row = s32[1,2]{1,0} dynamic-slice(sizes_of, id, zero), dynamic_slice_sizes={1,2}
  recv_row = s32[1,2]{1,0} dynamic-slice(recv_of, id, zero), dynamic_slice_sizes={1,2}
)";

TEST_F(ExecTest, FullModeMovesTheRowsEachDeviceOfARaggedAllToAllSent) {
  // Two devices on two chips: device 0 sends nothing, device 1 sends 8 of its
  // 16 rows (8 bytes each) to device 0. Full mode puts device 1's 64 bytes on
  // the one link between them; timing alone has each device send half its
  // input to the other.
  const std::string module = Module("dispatch.hlo", std::string(R"(HloModule dispatch, replica_count=2
ENTRY e {
  input = f32[16,2]{1,0} parameter(0)
  output = f32[16,2]{1,0} parameter(1))") + kDispatchSizes + R"(  send_sizes = s32[2]{0} reshape(sizes_row)
  recv_sizes = s32[2]{0} reshape(recv_row)
  ROOT r = f32[16,2]{1,0} ragged-all-to-all(input, output, offsets, send_sizes, offsets, recv_sizes), replica_groups={{0,1}}
})");
  const auto collective_of = [&](const std::string& mode) {
    const std::string json = dir_ / ("dispatch_" + mode + ".json");
    const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e", "--topology", "torus:2",
                                "--mode", mode, "--inputs", "seed:1", "--json", json});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
    return metrics["collectives"].size() == 1 ? metrics["collectives"][0] : nlohmann::json();
  };
  const nlohmann::json full = collective_of("full");
  EXPECT_EQ(full["bytes"], 8 * 2 * 4);  // what the busiest device sends
  EXPECT_EQ(full["ici_bytes"], 8 * 2 * 4);
  const nlohmann::json timing = collective_of("timing");
  EXPECT_EQ(timing["bytes"], 16 * 2 * 4);
  EXPECT_EQ(timing["ici_bytes"], 2 * 8 * 2 * 4);
}

TEST_F(ExecTest, AMixtureOfExpertsRaggedDotRunsOnSeededGroupSizesAndIsTimed) {
  // 256 tokens over 4 experts: seeded group sizes split all the rows, the
  // values are computed, and timing counts a dot's FLOPs.
  const std::string module = Module("moe.hlo", R"(HloModule moe
ENTRY e {
  tokens = bf16[256,128]{1,0} parameter(0)
  experts = bf16[4,128,256]{2,1,0} parameter(1)
  group_sizes = s32[4]{0} parameter(2)
  ROOT r = bf16[256,256]{1,0} ragged-dot(tokens, experts, group_sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})");
  const std::string json = dir_ / "moe.json";
  const RunResult r =
      Tpusim({"exec", module, "--chip", "tpu-v5e", "--inputs", "seed:4", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, Not(HasSubstr("not computed")));
  EXPECT_THAT(r.out, HasSubstr("output  bf16[256,256]"));
  const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
  ASSERT_EQ(metrics["ops"].size(), 1u);
  EXPECT_EQ(metrics["ops"][0]["opcode"], "ragged-dot");
  EXPECT_EQ(metrics["ops"][0]["flops"], 2LL * 256 * 128 * 256);
}

TEST_F(ExecTest, FullModeTimesARaggedDotWithTheGroupSizesItsValuesRunSaw) {
  // The router sent 100 of 256 tokens, all to expert 0: full mode times one
  // matmul of 100 rows reading one expert's weights; timing alone, which
  // cannot see the sizes, shares all 256 rows equally among the 4 experts.
  const std::string module = Module("skewed_moe.hlo", R"(HloModule skewed_moe
ENTRY e {
  tokens = bf16[256,128]{1,0} parameter(0)
  experts = bf16[4,128,256]{2,1,0} parameter(1)
  group_sizes = s32[4]{0} constant({100, 0, 0, 0})
  ROOT r = bf16[256,256]{1,0} ragged-dot(tokens, experts, group_sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})");
  const auto op_of = [&](const std::string& mode) {
    const std::string json = dir_ / (mode + ".json");
    const RunResult r =
        Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", mode, "--json", json});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
    return metrics["ops"].size() == 1 ? metrics["ops"][0] : nlohmann::json();
  };
  const nlohmann::json full = op_of("full");
  const nlohmann::json timing = op_of("timing");
  EXPECT_EQ(full["flops"], 2LL * 100 * 128 * 256);
  EXPECT_EQ(timing["flops"], 2LL * 256 * 128 * 256);
  // Weights, tokens, the sizes' access and the result.
  const int64_t others = 256 * 128 * 2 + 512 + 256 * 256 * 2;
  EXPECT_EQ(full["hbm_bytes"], 1 * 128 * 256 * 2 + others);
  EXPECT_EQ(timing["hbm_bytes"], 4 * 128 * 256 * 2 + others);
}

TEST_F(ExecTest, FullModeTimesEachDeviceWithItsOwnRaggedDotGroups) {
  // Expert parallelism over 2 chips: device 0's router sent 64 tokens to its
  // experts, device 1's all 256. The values run sees both; device 1 is the
  // straggler the all-gather waits for.
  const std::string module = Module("ep_moe.hlo", R"(HloModule ep_moe, num_partitions=2
ENTRY e {
  tokens = bf16[256,128]{1,0} parameter(0)
  experts = bf16[4,128,256]{2,1,0} parameter(1)
  routed = s32[2,4]{1,0} constant({{64, 0, 0, 0}, {64, 64, 64, 64}})
  id = u32[] partition-id()
  zero = u32[] constant(0)
  row = s32[1,4]{1,0} dynamic-slice(routed, id, zero), dynamic_slice_sizes={1,4}
  group_sizes = s32[4]{0} reshape(row)
  moe = bf16[256,256]{1,0} ragged-dot(tokens, experts, group_sizes), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  ROOT ag = bf16[512,256]{1,0} all-gather(moe), channel_id=1, replica_groups={{0,1}}, dimensions={0}, use_global_device_ids=true
})");
  const std::string json = dir_ / "ep_moe.json";
  const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e", "--topology", "torus:2",
                              "--inputs", "seed:1", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out,
              HasSubstr("symmetry: not used: the ragged-dot groups of moe differ on device 1"));
  const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
  ASSERT_EQ(metrics["devices"].size(), 2u);
  int64_t moe_flops = -1;  // device 0's
  for (const nlohmann::json& op : metrics["ops"]) {
    if (op["name"] == "moe") moe_flops = op["flops"].get<int64_t>();
  }
  EXPECT_EQ(moe_flops, 2LL * 64 * 128 * 256);
  // Device 0 is done with its experts first and waits for device 1's.
  EXPECT_GT(metrics["devices"][0]["collective_wait_cycles"].get<int64_t>(), 0);
  EXPECT_EQ(metrics["devices"][1]["collective_wait_cycles"], 0);
}

TEST_F(ExecTest, FullModeTimesEachExecutionOfAnInnerLoopWithItsOwnTripCount) {
  // The inner loop runs 0, 1, 2 and 3 times; timed alone it would run its
  // default trip count (1) every time, and with the first execution's count
  // never.
  const std::string module = Module("triangle.hlo", test::kTriangularLoop);
  const auto squares = [&](const std::string& mode) {
    const std::string json = dir_ / ("triangle_" + mode + ".json");
    const RunResult r =
        Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", mode, "--json", json});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    int64_t runs = 0;
    const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
    for (const nlohmann::json& op : metrics["ops"]) {
      if (op["name"] == "square") runs += op.value("runs", int64_t{1});
    }
    return runs;
  };
  EXPECT_EQ(squares("full"), 6);
  EXPECT_EQ(squares("timing"), 4);
}

TEST_F(ExecTest, FullModeTimesEachExecutionOfAConditionalWithItsOwnBranch) {
  // Branches 0, 1, 0, 1 as the loop goes on; timed alone, the conditional
  // takes its true branch every time.
  const std::string module = Module("alternate.hlo", test::kAlternatingBranch);
  const auto runs = [&](const std::string& mode) {
    const std::string json = dir_ / ("alternate_" + mode + ".json");
    const RunResult r =
        Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", mode, "--json", json});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    std::map<std::string, int64_t> runs;
    const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
    for (const nlohmann::json& op : metrics["ops"]) {
      runs[op["name"].get<std::string>()] += op.value("runs", int64_t{1});
    }
    return runs;
  };
  const std::map<std::string, int64_t> full = runs("full");
  EXPECT_EQ(full.at("square"), 2);
  EXPECT_EQ(full.at("root"), 2);
  const std::map<std::string, int64_t> timing = runs("timing");
  EXPECT_EQ(timing.at("square"), 4);
  EXPECT_EQ(timing.count("root"), 0u);
}

TEST_F(ExecTest, FullModeTimesEachDeviceWithItsOwnBranches) {
  // A pipeline of two stages: device 0 embeds, device 1 passes its input on
  // and waits for device 0 at the all-reduce. Timed alone, both take the
  // true branch, neither waits, and device 0 stands for both.
  const std::string module = Module("stages.hlo", test::kStageBranch);
  const auto waits = [&](const std::string& mode) {
    const std::string json = dir_ / ("stages_" + mode + ".json");
    const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e", "--topology", "torus:2",
                                "--mode", mode, "--inputs", "seed:1", "--json", json});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
    EXPECT_EQ(metrics["symmetry"],
              mode == "full" ? "not used: stage takes other branches on device 1" : "used");
    std::vector<int64_t> waits;
    for (const nlohmann::json& device : metrics["devices"]) {
      waits.push_back(device["collective_wait_cycles"].get<int64_t>());
    }
    return waits;
  };
  const std::vector<int64_t> full = waits("full");
  ASSERT_EQ(full.size(), 2u);
  EXPECT_EQ(full[0], 0);
  EXPECT_GT(full[1], 0);
  EXPECT_EQ(waits("timing"), (std::vector<int64_t>{0}));  // device 0 stands for both
}

TEST_F(ExecTest, FullModeTimesEachDeviceWithItsOwnTripCountsUnlessTheUserCountsTheLoop) {
  // Device d's loop squares d + 1 times; device 0 waits for device 1 at the
  // all-reduce. A --trip-count holds on every device.
  const std::string module = Module("own_trips.hlo", test::kDeviceTripCounts);
  const auto run = [&](const std::vector<std::string>& extra) {
    const std::string json = dir_ / "own_trips.json";
    std::vector<std::string> args = {"exec",    module,     "--chip", "tpu-v5e", "--topology",
                                     "torus:2", "--inputs", "seed:1", "--json",  json};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = Tpusim(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return nlohmann::json::parse(ReadText(json));
  };
  const nlohmann::json own = run({});
  EXPECT_EQ(own["symmetry"], "not used: w iterates otherwise on device 1");
  ASSERT_EQ(own["devices"].size(), 2u);
  EXPECT_GT(own["devices"][0]["collective_wait_cycles"].get<int64_t>(), 0);
  EXPECT_EQ(own["devices"][1]["collective_wait_cycles"], 0);
  const nlohmann::json counted = run({"--trip-count", "w=3"});
  EXPECT_EQ(counted["symmetry"], "used");
  int64_t squares = 0;
  for (const nlohmann::json& op : counted["ops"]) {
    if (op["name"] == "square") squares += op.value("runs", int64_t{1});
  }
  EXPECT_EQ(squares, 3);
}

TEST_F(ExecTest, FullModeMovesWhatEachExecutionOfARaggedAllToAllSent) {
  // Two layers of dispatch: device 1 sends 8 rows (8 bytes each) to device 0
  // in the first, half as many in the second.
  const std::string module =
      Module("dispatch_layers.hlo", std::string(R"(HloModule dispatch_layers, replica_count=2
cond {
  p = (s32[], f32[16,2]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(2)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[16,2]{1,0}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  input = f32[16,2]{1,0} get-tuple-element(p), index=1)") + kDispatchSizes + R"(  halvings = s32[2]{0} broadcast(i), dimensions={}
  first_send = s32[2]{0} reshape(sizes_row)
  first_recv = s32[2]{0} reshape(recv_row)
  send_sizes = s32[2]{0} shift-right-logical(first_send, halvings)
  recv_sizes = s32[2]{0} shift-right-logical(first_recv, halvings)
  r = f32[16,2]{1,0} ragged-all-to-all(input, input, offsets, send_sizes, offsets, recv_sizes), replica_groups={{0,1}}
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT t = (s32[], f32[16,2]{1,0}) tuple(next, r)
}
ENTRY e {
  input = f32[16,2]{1,0} parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[16,2]{1,0}) tuple(zero, input)
  ROOT w = (s32[], f32[16,2]{1,0}) while(t), condition=cond, body=body
})");
  const std::string json = dir_ / "dispatch_layers.json";
  const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e", "--topology", "torus:2",
                              "--inputs", "seed:1", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const nlohmann::json collectives = nlohmann::json::parse(ReadText(json))["collectives"];
  ASSERT_EQ(collectives.size(), 2u);
  for (const nlohmann::json& c : collectives) {
    const int64_t rows = c["execution"] == 0 ? 8 : 4;
    EXPECT_EQ(c["bytes"], rows * 2 * 4) << c.dump();
    EXPECT_EQ(c["ici_bytes"], rows * 2 * 4) << c.dump();
  }
}

TEST_F(ExecTest, OverTheMemoryLimitFullModeTimesAndValuesModeSuggestsTiming) {
  const std::string module = Module("big.hlo", R"(HloModule big
ENTRY e {
  p = f32[1024,1024]{1,0} parameter(0)
  ROOT n = f32[1024,1024]{1,0} negate(p)
})");
  const RunResult full = Tpusim({"exec", module, "--chip", "tpu-v5e", "--max-memory", "1MiB"});
  ASSERT_EQ(full.exit_code, 0) << Describe(full);
  EXPECT_THAT(full.out, HasSubstr("values: not computed"));
  EXPECT_THAT(full.out, HasSubstr("more than --max-memory 1.00 MiB"));
  EXPECT_THAT(full.out, HasSubstr("big on tpu-v5e: "));
  const RunResult values = Tpusim({"exec", module, "--max-memory", "1MiB"});
  EXPECT_EQ(values.exit_code, 2) << Describe(values);
  EXPECT_THAT(values.err, HasSubstr("or time it without values (--mode timing)"));
}

TEST_F(ExecTest, MissingInputFileIsAnInputError) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const std::string inputs = MulAddInputs();
  fs::remove(inputs + "/param_1.npy");
  const RunResult r = Tpusim({"exec", module, "--inputs", inputs});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("param_1.npy: error: input file missing: parameter 1 (b)"));
  EXPECT_THAT(r.err, HasSubstr("f32[2,3]"));
}

TEST_F(ExecTest, WrongInputShapeIsAnInputError) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const std::string inputs = MulAddInputs();
  WriteNpy(inputs + "/param_2.npy", Literal::CreateR1<int32_t>({1, 2}));
  const RunResult r = Tpusim({"exec", module, "--inputs", inputs});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("param_2.npy: error: holds s32[2], but parameter 2 (c) expects "
                               "s32[3]"));
}

TEST_F(ExecTest, WrongInputDtypeIsAnInputError) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const std::string inputs = MulAddInputs();
  WriteNpy(inputs + "/param_2.npy", Literal::CreateR1<float>({1, 2, 3}));
  const RunResult r = Tpusim({"exec", module, "--inputs", inputs});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("param_2.npy"));
}

TEST_F(ExecTest, MalformedNpyHeaderIsAnInputError) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const std::string inputs = MulAddInputs();
  WriteText(inputs + "/param_0.npy", std::string("\x93NUMPY\x01\x00\x10\x00{'descr': '<f4',", 26));
  const RunResult r = Tpusim({"exec", module, "--inputs", inputs});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("param_0.npy"));
}

TEST_F(ExecTest, UnsupportedCustomCallNamesTargetAndLocation) {
  const std::string module = Module("cc.hlo", kUnknownCustomCallModule);
  const RunResult r = Tpusim({"exec", module});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("cc.hlo:5:3: error:"));
  EXPECT_THAT(r.err, HasSubstr("my_secret_kernel"));
}

TEST_F(ExecTest, AModuleCompiledForGpuIsTimedWithAWarning) {
  const std::string module = Module("gpu.hlo", R"(HloModule gpu
ENTRY e {
  a = f32[128,128] parameter(0)
  ROOT g = f32[128,128] custom-call(a, a), custom_call_target="__cublas$gemm"
})");
  const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("gpu.hlo:4:3: warning: custom call '__cublas$gemm' belongs to "
                               "GPU's backend: this module was compiled for GPU, not TPU"));
}

TEST_F(ExecTest, RunOverMaxMemoryIsRefusedBeforeRunning) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const RunResult r =
      Tpusim({"exec", module, "--max-memory", "64B", "--out", dir_ / "never_written"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("more than --max-memory 64 B"));
  EXPECT_FALSE(fs::exists(dir_ / "never_written"));
  // The same run fits in a few KiB.
  const RunResult ok = Tpusim({"exec", module, "--max-memory", "4KiB"});
  EXPECT_EQ(ok.exit_code, 0) << Describe(ok);
}

TEST_F(ExecTest, LoopLimitsNameTheLoopAndTheFlagThatRaisesThem) {
  const std::string module = Module("loop.hlo", kTenIterationLoopModule);
  const RunResult iterations = Tpusim({"exec", module, "--max-while-iterations", "5"});
  EXPECT_EQ(iterations.exit_code, 2) << Describe(iterations);
  EXPECT_THAT(iterations.err,
              HasSubstr("loop.hlo:24:3: error: while w: loop did not finish within 5 iterations; "
                        "raise the limit with --max-while-iterations (a scenario's "
                        "max_while_iterations)"));
  const RunResult work = Tpusim({"exec", module, "--max-loop-work", "100"});
  EXPECT_EQ(work.exit_code, 2) << Describe(work);
  EXPECT_THAT(work.err, HasSubstr("loop.hlo:24:3: error: while w: loop did not finish within its "
                                  "work budget: "));
  EXPECT_THAT(work.err, HasSubstr("more than the limit of 100; raise it with --max-loop-work"));
  const RunResult timed =
      Tpusim({"exec", module, "--mode", "timing", "--chip", "tpu-v5e",
              "--max-executed-instructions", "3"});
  EXPECT_EQ(timed.exit_code, 2) << Describe(timed);
  // The loop's body is lowered once: the test that ends it is the fourth.
  EXPECT_THAT(timed.err, HasSubstr("loop.hlo:7:3: error: lt: the module's program reaches the "
                                   "limit of 3 instructions here (each loop body counted once); "
                                   "raise the limit with --max-executed-instructions"));
  // diff runs modules with the same limits.
  const RunResult diffed =
      Tpusim({"diff", module, module, "--mode", "values", "--max-while-iterations", "5"});
  EXPECT_EQ(diffed.exit_code, 2) << Describe(diffed);
  EXPECT_THAT(diffed.err, HasSubstr("w: loop did not finish within 5 iterations"));

  // Raised to what the loop needs, the same runs finish.
  for (const std::vector<std::string>& args : {
           std::vector<std::string>{"exec", module, "--max-while-iterations", "10",
                                    "--max-loop-work", "100000"},
           {"exec", module, "--mode", "timing", "--chip", "tpu-v5e",
            "--max-executed-instructions", "1000"},
           {"diff", module, module, "--mode", "values", "--max-while-iterations", "10"}}) {
    const RunResult r = Tpusim(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << "\n" << Describe(r);
  }
}

TEST_F(ExecTest, BadOptionValuesAreUsageErrors) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--inputs", "seed:x"}, {"--inputs", dir_ / "no_such_dir"},
        {"--numerics", "fast"}, {"--max-memory", "lots"}, {"--elided-constants", "maybe"},
        {"--max-while-iterations", "0"}, {"--max-loop-work", "-1"},
        {"--max-executed-instructions", "many"}}) {
    std::vector<std::string> command = {"exec", module};
    command.insert(command.end(), args.begin(), args.end());
    const RunResult r = Tpusim(command);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << "\n" << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("error"));
  }
}

TEST_F(ExecTest, ElidedConstantsAreSeededWithAWarningOrRefused) {
  const std::string module = Module("elided.hlo", R"(HloModule elided

ENTRY %main () -> f32[3] {
  ROOT %c = f32[3]{0} constant({...})
}
)");
  const RunResult seeded = Tpusim({"exec", module});
  EXPECT_EQ(seeded.exit_code, 0) << Describe(seeded);
  EXPECT_THAT(seeded.err, HasSubstr("elided.hlo:4:3: warning: the dump elided the values of 1"));
  const RunResult refused = Tpusim({"exec", module, "--elided-constants", "error"});
  EXPECT_EQ(refused.exit_code, 2) << Describe(refused);
  EXPECT_THAT(refused.err, HasSubstr("elided.hlo:4:3: error: constant c"));
}

TEST_F(ExecTest, RunsEveryDeviceWithPerDeviceInputs) {
  // Two replicas sum their inputs: device_<d>/ files override the shared one.
  const std::string module = Module("ar.hlo", R"(HloModule ar, replica_count=2

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (a: f32[3]) -> f32[3] {
  %a = f32[3]{0} parameter(0)
  ROOT %r = f32[3]{0} all-reduce(%a), replica_groups={}, to_apply=%add
}
)");
  const std::string inputs = dir_ / "in";
  WriteNpy(inputs + "/param_0.npy", Literal::CreateR1<float>({1, 2, 3}));
  WriteNpy(inputs + "/device_1/param_0.npy", Literal::CreateR1<float>({10, 20, 30}));
  const std::string out = dir_ / "out";
  const RunResult r = Tpusim({"exec", module, "--inputs", inputs, "--out", out});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ReadNpy(out + "/device_0/output.npy"), Literal::CreateR1<float>({11, 22, 33}));
  EXPECT_EQ(ReadNpy(out + "/device_1/output.npy"), Literal::CreateR1<float>({11, 22, 33}));
  EXPECT_THAT(r.out, HasSubstr("device_1/output"));
}

TEST_F(ExecTest, TimesOnAChipAndWritesJsonAndTrace) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const std::string json = dir_ / "metrics.json";
  const std::string trace = dir_ / "trace.json";
  const RunResult r =
      Tpusim({"exec", module, "--chip", "tpu-v5e", "--json", json, "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // Full mode: the value summary, then the op profile.
  EXPECT_THAT(r.out, HasSubstr("output_0  f32[2,3]"));
  EXPECT_THAT(r.out, HasSubstr("mul_add on tpu-v5e:"));
  EXPECT_THAT(r.out, HasSubstr("bound by"));
  const std::string metrics = ReadText(json);
  for (const char* key : {"\"chip\": \"tpu-v5e\"", "\"cycles\":", "\"time_us\":", "\"flops\":",
                          "\"hbm_bytes\":", "\"ops\":", "\"start_cycle\":", "\"bound_by\":",
                          "\"outputs\":", "\"checksum\":"}) {
    EXPECT_THAT(metrics, HasSubstr(key));
  }
  EXPECT_THAT(ReadText(trace), HasSubstr("\"traceEvents\""));
}

TEST_F(ExecTest, FullModeTimesTheLoopsAndBranchesTheValuesRunTook) {
  // The loop bound and the branch come from parameters, so only the values
  // run knows them: 5 iterations, and the false branch.
  const std::string module = Module("flow.hlo", R"(HloModule flow

%cond (s: (s32[], s32[], f32[1024])) -> pred[] {
  %s = (s32[], s32[], f32[1024]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s: (s32[], s32[], f32[1024])) -> (s32[], s32[], f32[1024]) {
  %s = (s32[], s32[], f32[1024]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] get-tuple-element(%s), index=1
  %x = f32[1024] get-tuple-element(%s), index=2
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  %loop_exp = f32[1024] exponential(%x)
  ROOT %t = (s32[], s32[], f32[1024]) tuple(%next, %n, %loop_exp)
}

%on_true (x: f32[1024]) -> f32[1024] {
  %x = f32[1024] parameter(0)
  ROOT %true_negate = f32[1024] negate(%x)
}

%on_false (x: f32[1024]) -> f32[1024] {
  %x = f32[1024] parameter(0)
  ROOT %false_sqrt = f32[1024] sqrt(%x)
}

ENTRY %main (n: s32[], p: pred[], x: f32[1024]) -> f32[1024] {
  %n = s32[] parameter(0)
  %p = pred[] parameter(1)
  %x = f32[1024] parameter(2)
  %zero = s32[] constant(0)
  %init = (s32[], s32[], f32[1024]) tuple(%zero, %n, %x)
  %loop = (s32[], s32[], f32[1024]) while(%init), condition=%cond, body=%body
  %y = f32[1024] get-tuple-element(%loop), index=2
  ROOT %c = f32[1024] conditional(%p, %y, %y), true_computation=%on_true, false_computation=%on_false
}
)");
  const std::string inputs = dir_ / "in";
  WriteNpy(inputs + "/param_0.npy", Literal::CreateR0<int32_t>(5));
  WriteNpy(inputs + "/param_1.npy", Literal::CreateR0<bool>(false));
  Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {1024}));
  WriteNpy(inputs + "/param_2.npy", x);
  const RunResult full = Tpusim(
      {"exec", module, "--inputs", inputs, "--chip", "tpu-v5e", "--json", dir_ / "full.json"});
  ASSERT_EQ(full.exit_code, 0) << Describe(full);
  const RunResult timing = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing",
                                   "--json", dir_ / "timing.json"});
  ASSERT_EQ(timing.exit_code, 0) << Describe(timing);
  // Runs of the instruction: a fast-forwarded loop's record stands for several.
  const auto count = [](const std::string& json, const std::string& name) {
    int64_t n = 0;
    const nlohmann::json parsed = nlohmann::json::parse(json);
    for (const auto& op : parsed.at("ops")) {
      if (op.at("name") == name) n += op.value("runs", int64_t{1});
    }
    return n;
  };
  const std::string full_json = ReadText(dir_ / "full.json");
  const std::string timing_json = ReadText(dir_ / "timing.json");
  EXPECT_EQ(count(full_json, "loop_exp"), 5) << full_json;
  EXPECT_EQ(count(full_json, "false_sqrt"), 1);
  EXPECT_EQ(count(full_json, "true_negate"), 0);
  // Timing alone cannot know: one iteration (--default-trip-count), branch 0.
  EXPECT_EQ(count(timing_json, "loop_exp"), 1) << timing_json;
  EXPECT_EQ(count(timing_json, "true_negate"), 1);
  EXPECT_EQ(count(timing_json, "false_sqrt"), 0);
  // --trip-count names the loop; a name that is no loop is an error naming
  // the loops there are, not a loop silently timed once.
  const RunResult told = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing",
                                 "--trip-count", "loop=3", "--json", dir_ / "told.json"});
  ASSERT_EQ(told.exit_code, 0) << Describe(told);
  EXPECT_EQ(count(ReadText(dir_ / "told.json"), "loop_exp"), 3);
  const RunResult typo = Tpusim(
      {"exec", module, "--chip", "tpu-v5e", "--mode", "timing", "--trip-count", "lopo=3"});
  EXPECT_EQ(typo.exit_code, 2) << Describe(typo);
  EXPECT_THAT(typo.err, HasSubstr("--trip-count 'lopo=3': " + module +
                                  " has no while loop named 'lopo' (its loops: loop)"));
  // --branch names the conditional, over --branch N for the others; the
  // values run's branch wins over both.
  for (const std::string mode : {"timing", "full"}) {
    const std::string json = dir_ / ("named_" + mode + ".json");
    const RunResult named = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", mode, "--inputs",
                                    inputs, "--branch", "1", "--branch", "c=0", "--json", json});
    ASSERT_EQ(named.exit_code, 0) << Describe(named);
    EXPECT_EQ(count(ReadText(json), "true_negate"), mode == "timing" ? 1 : 0) << mode;
    EXPECT_EQ(count(ReadText(json), "false_sqrt"), mode == "timing" ? 0 : 1) << mode;
  }
  const RunResult named = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing",
                                  "--branch", "c=1", "--json", dir_ / "named.json"});
  ASSERT_EQ(named.exit_code, 0) << Describe(named);
  EXPECT_EQ(count(ReadText(dir_ / "named.json"), "false_sqrt"), 1);
  const RunResult no_such =
      Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing", "--branch", "cond=1"});
  EXPECT_EQ(no_such.exit_code, 2) << Describe(no_such);
  EXPECT_THAT(no_such.err, HasSubstr("--branch 'cond=1': " + module +
                                     " has no conditional named 'cond' (its conditionals: c)"));
}

TEST_F(ExecTest, TimingModeComputesNoValuesAndIsDeterministic) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const RunResult a = Tpusim({"exec", module, "--chip", "tpu-v4", "--mode", "timing",
                              "--json", dir_ / "a.json"});
  const RunResult b = Tpusim({"exec", module, "--chip", "tpu-v4", "--mode", "timing",
                              "--json", dir_ / "b.json"});
  ASSERT_EQ(a.exit_code, 0) << Describe(a);
  EXPECT_THAT(a.out, Not(HasSubstr("checksum")));
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(ReadText(dir_ / "a.json"), ReadText(dir_ / "b.json"));
  EXPECT_THAT(ReadText(dir_ / "a.json"), Not(HasSubstr("\"outputs\"")));
}

TEST_F(ExecTest, PresetOverridesChangeTheTiming) {
  // A copy of 64 MiB is bound by HBM: halving the bandwidth doubles its time
  // (the pipeline's per-step cost, which does not scale with it, switched off).
  const std::string module = Module("copy.hlo", R"(HloModule copy

ENTRY %main (a: f32[4096,4096]) -> f32[4096,4096] {
  %a = f32[4096,4096]{1,0} parameter(0)
  ROOT %c = f32[4096,4096]{1,0} copy(%a)
}
)");
  const RunResult fast = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing",
                                 "-p", "hbm.bandwidth=800GB/s", "-p", "overhead.pipeline_step=0"});
  const RunResult slow = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing",
                                 "-p", "hbm.bandwidth=400GB/s", "-p", "overhead.pipeline_step=0"});
  ASSERT_EQ(fast.exit_code, 0) << Describe(fast);
  ASSERT_EQ(slow.exit_code, 0) << Describe(slow);
  const auto cycles = [](const std::string& out) {
    const size_t at = out.find(" cycles,");
    const size_t start = out.rfind(' ', at - 1) + 1;
    return std::stoll(out.substr(start, at - start));
  };
  const double ratio = static_cast<double>(cycles(slow.out)) / cycles(fast.out);
  EXPECT_NEAR(ratio, 2.0, 0.05) << fast.out << slow.out;
}

TEST_F(ExecTest, AModuleNamingTooManyDevicesSaysSoWithoutBlamingFlags) {
  const std::string module = Module("far.hlo", AllReduceModule("", "{{0,5000}}"));
  const RunResult r = Tpusim({"exec", module, "--inputs", "seed:1"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(module + ":9:3: error: all-reduce ar: names device id 5000: the "
                                        "module needs 5001 replicas x 1 partitions"));
  EXPECT_THAT(r.err, Not(HasSubstr("--replicas"))) << Describe(r);
}

// replica_count=4 with groups naming replica 5: check, exec, diff and run all
// refuse it at the replica_groups attribute, naming the id and the count
// (exec used to run 6 devices, or blame a replica left out of every group).
TEST_F(ExecTest, ReplicaIdsPastTheReplicaCountAreLocatedErrorsInEveryCommand) {
  for (const std::string groups : {"{{0,1,2},{3,4,5}}", "{{0,5},{2,3}}"}) {
    const std::string module = Module("past.hlo", AllReduceModule(", replica_count=4", groups));
    const std::string expected = module + ":9:35: error: all-reduce ar: replica_groups name "
                                          "replica 5, but the program has 4 replicas\n";
    const std::string scenario = dir_ / "past.yaml";
    WriteText(scenario, "module: " + module + "\nchip: tpu-v5e\n");
    const std::vector<std::vector<std::string>> commands = {
        {"check", module},
        {"exec", module, "--inputs", "seed:1"},
        {"exec", module, "--chip", "tpu-v5e", "--mode", "timing"},
        {"diff", module, module, "--chip", "tpu-v5e"},
    };
    for (const std::vector<std::string>& command : commands) {
      const RunResult r = Tpusim(command);
      EXPECT_EQ(r.exit_code, 2) << groups << " " << command[0] << "\n" << Describe(r);
      EXPECT_EQ(r.err, expected) << groups << " " << command[0];
    }
    const RunResult run = Tpusim({"run", scenario, "--golden-dir", dir_ / "golden"});
    EXPECT_EQ(run.exit_code, 2) << Describe(run);
    EXPECT_THAT(run.out, HasSubstr(expected.substr(0, expected.size() - 1))) << Describe(run);
  }
  // --replicas replaces the header's count: the same check.
  const std::string unstated = Module("unstated.hlo", R"(HloModule unstated
ENTRY main {
  p = f32[4] parameter(0)
  ROOT cp = f32[4] collective-permute(p), source_target_pairs={{0,5}}
}
)");
  const RunResult flags = Tpusim({"exec", unstated, "--inputs", "seed:1", "--replicas", "4"});
  EXPECT_EQ(flags.exit_code, 2) << Describe(flags);
  EXPECT_EQ(flags.err, unstated + ":4:43: error: collective-permute cp: source_target_pairs name "
                                  "replica 5, but the program has 4 replicas\n");
}

TEST_F(ExecTest, TimingInputErrorsExitTwo) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const RunResult no_chip = Tpusim({"exec", module, "--mode", "timing"});
  EXPECT_EQ(no_chip.exit_code, 2) << Describe(no_chip);
  EXPECT_THAT(no_chip.err, HasSubstr("give --chip NAME"));
  const RunResult unknown = Tpusim({"exec", module, "--chip", "tpu-v99"});
  EXPECT_EQ(unknown.exit_code, 2) << Describe(unknown);
  EXPECT_THAT(unknown.err, HasSubstr("tpu-v99"));
  const RunResult bad_key = Tpusim({"exec", module, "--chip", "tpu-v5e", "-p", "mxu.colour=3"});
  EXPECT_EQ(bad_key.exit_code, 2) << Describe(bad_key);
  EXPECT_THAT(bad_key.err, HasSubstr("mxu.colour"));
  const RunResult bad_trip =
      Tpusim({"exec", module, "--chip", "tpu-v5e", "--trip-count", "loop=many"});
  EXPECT_EQ(bad_trip.exit_code, 2) << Describe(bad_trip);
  EXPECT_THAT(bad_trip.err, HasSubstr("--trip-count 'loop=many'"));
}

TEST_F(ExecTest, TopologyTimesEveryDeviceWithCollectivesOnTheNetwork) {
  const std::string module = Module("ar.hlo", R"(HloModule ar, replica_count=4
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4096] parameter(0)
  ar = f32[4096] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
  ROOT cp = f32[4096] collective-permute(ar), source_target_pairs={{0,1},{1,0}}
})");
  const std::string json = dir_ / "spmd.json";
  const std::string trace = dir_ / "spmd_trace.json";
  const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing",
                              "--topology", "torus:2x2", "--algorithm", "ring", "--json", json,
                              "--trace", trace});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  // The permute leaves replicas 2 and 3 out: every device is simulated.
  EXPECT_THAT(r.out, HasSubstr("4 devices (symmetry: not used: cp leaves device 2 out)"));
  EXPECT_THAT(r.out, HasSubstr("{0,1},{2,3}"));
  const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
  EXPECT_EQ(metrics["device_count"], 4);
  ASSERT_EQ(metrics["collectives"].size(), 2u);
  EXPECT_EQ(metrics["collectives"][0]["name"], "ar");
  EXPECT_EQ(metrics["collectives"][0]["participants"], nlohmann::json::parse("[[0,1],[2,3]]"));
  EXPECT_EQ(metrics["collectives"][0]["algorithm"], "ring");
  EXPECT_EQ(metrics["collectives"][0]["bytes"], 4 * 4096);
  EXPECT_EQ(metrics["devices"].size(), 4u);
  EXPECT_FALSE(metrics["links"].empty());
  EXPECT_GT(metrics["links"][0]["utilisation"].get<double>(), 0);
  const std::string events = ReadText(trace);
  EXPECT_THAT(events, HasSubstr("\"device 3\""));
  EXPECT_THAT(events, HasSubstr("\"link "));
}

// TPU7x through the binary: 8 devices on a 2x2x1 slice of 2-device chips
// (the chip's devices_per_chip, unless the topology states it).
// The two groups of the all-gather leave from the same chips and share their
// links; the permute between the two devices of chip 0 crosses no link.
TEST_F(ExecTest, DevicesPerChipShareTheChipsLinks) {
  const std::string module = Module("tc.hlo", R"(HloModule tc, replica_count=8
ENTRY e {
  p = f32[65536] parameter(0)
  g = f32[262144] all-gather(p), replica_groups={{0,2,4,6},{1,3,5,7}}, dimensions={0}
  ROOT cp = f32[65536] collective-permute(p), source_target_pairs={{0,1},{1,0}}
})");
  const std::string json = dir_ / "tc.json";
  const RunResult r = Tpusim({"exec", module, "--chip", "tpu-v7x", "--mode", "timing", "--topology",
                              "torus:2x2x1,wraparound=tpu", "--json", json});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("4 chips, 2 devices per chip"));
  const nlohmann::json metrics = nlohmann::json::parse(ReadText(json));
  EXPECT_EQ(metrics["device_count"], 8);
  ASSERT_EQ(metrics["collectives"].size(), 2u);
  EXPECT_EQ(metrics["collectives"][0]["name"], "g");
  EXPECT_GT(metrics["collectives"][0]["ici_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(metrics["collectives"][1]["name"], "cp");
  EXPECT_EQ(metrics["collectives"][1]["ici_bytes"], 0);
  const RunResult odd = Tpusim({"exec", module, "--chip", "tpu-v7x", "--mode", "timing",
                                "--topology", "torus:2x2x1,devices_per_chip=3"});
  EXPECT_EQ(odd.exit_code, 2) << Describe(odd);
  EXPECT_THAT(odd.err, HasSubstr("8 devices do not fill whole chips of 3 devices"));
  // A stated devices_per_chip overrides the chip's.
  const RunResult one = Tpusim({"exec", module, "--chip", "tpu-v7x", "--mode", "timing",
                                "--topology", "torus:2x2x1,devices_per_chip=1"});
  EXPECT_EQ(one.exit_code, 2) << Describe(one);
  EXPECT_THAT(one.err, HasSubstr("the module's 8 devices need 8 chips; the topology has 4"));
  // Too few chips: refused before any values are computed, at the scenario's
  // `topology:`; too many: a warning names the idle chips.
  const std::string scenario = dir_ / "small.yaml";
  WriteText(scenario, "module: " + module + "\nchip: tpu-v7x\nmode: full\ntopology: torus:2\n");
  const RunResult small = Tpusim({"run", scenario, "--golden-dir", dir_ / "golden"});
  EXPECT_EQ(small.exit_code, 2) << Describe(small);
  EXPECT_THAT(small.out, HasSubstr("small.yaml:4:11: error: topology: the module's 8 devices need "
                                   "4 chips; the topology has 2"));
  const RunResult idle =
      Tpusim({"exec", module, "--chip", "tpu-v7x", "--mode", "timing", "--topology", "torus:4x4"});
  EXPECT_EQ(idle.exit_code, 0) << Describe(idle);
  EXPECT_THAT(idle.err,
              HasSubstr("warning: the module's 8 devices use 4 of "
                        "torus:4x4,devices_per_chip=2's 16 chips; the other 12 stay idle"));
}

// Two 8-device jobs on a 4x4 torus, each an all-reduce of 16 MB (a ring).
// Interleaved on the network (this one on even devices, the other on odd
// ones) each ring's hops cross the other's links: both take about twice
// their time alone. Side by side (0-7 and 8-15, the other job's default) they
// share no link and each takes its time alone. In a scenario, the same
// sharing fails a bound on the exposed collective time that the module
// alone meets, and the golden stamp names the other job.
TEST_F(ExecTest, OtherJobsShareTheNetworkWhereTheirRoutesMeet) {
  const std::string module = Module("ar8.hlo", R"(HloModule ar8, replica_count=8
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[4194304]{0} parameter(0)
  ROOT r = f32[4194304]{0} all-reduce(p), replica_groups={{0,1,2,3,4,5,6,7}}, to_apply=add
})");
  const std::vector<std::string> timed = {"exec",   module,   "--chip",     "tpu-v5e",
                                          "--mode", "timing", "--topology", "torus:4x4"};
  const auto run = [&](const std::vector<std::string>& more, const std::string& name) {
    std::vector<std::string> args = timed;
    args.insert(args.end(), more.begin(), more.end());
    const std::string json = dir_ / (name + ".json");
    args.insert(args.end(), {"--json", json});
    const RunResult r = Tpusim(args);
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    return r.exit_code == 0 ? nlohmann::json::parse(ReadText(json)) : nlohmann::json();
  };
  const nlohmann::json alone = run({}, "alone");
  const nlohmann::json interleaved =
      run({"--placement", "0,2,4,6,8,10,12,14", "--other-job", module + "@1,3,5,7,9,11,13,15"},
          "interleaved");
  const nlohmann::json apart = run({"--other-job", module}, "apart");
  ASSERT_FALSE(alone.is_null() || interleaved.is_null() || apart.is_null());
  EXPECT_FALSE(alone.contains("other_jobs"));
  const double t = alone["time_us"].get<double>();
  EXPECT_GT(interleaved["time_us"].get<double>(), 1.9 * t);
  EXPECT_EQ(interleaved["placement"], "0,2,4,6,8,10,12,14");
  EXPECT_GT(interleaved["collective_time_lost_us"].get<double>(), 0.45 * t);
  ASSERT_EQ(interleaved["other_jobs"].size(), 1u);
  EXPECT_EQ(interleaved["other_jobs"][0]["placement"], "1,3,5,7,9,11,13,15");
  EXPECT_GT(interleaved["other_jobs"][0]["time_us"].get<double>(), 1.9 * t);
  EXPECT_EQ(apart["time_us"], alone["time_us"]);
  EXPECT_EQ(apart["collective_time_lost_us"], 0);
  EXPECT_EQ(apart["other_jobs"][0]["placement"], "8-15");

  const RunResult table = Tpusim({"exec", module, "--chip", "tpu-v5e", "--mode", "timing",
                                  "--topology", "torus:4x4", "--other-job", module});
  EXPECT_THAT(table.out, HasSubstr("Jobs sharing the network"));
  EXPECT_THAT(table.out, HasSubstr("this module"));
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"--other-job", module + "@7-14"},
       "--other-job '" + module +
           "@7-14': its device 0 would run on network device 7, which the "
           "module runs on"},
      {{"--placement", "0-3"},
       "--placement '0-3': the placement names 4 network devices for the "
       "module's 8"},
      {{"--placement", "9-16"},
       "the placement puts device 7 on network device 16; the network's devices are numbered "
       "from 0 to 15"},
      {{"--other-job", module + "@8-15", "--other-job", module},
       "its 8 devices do not fit in the 0 devices that the jobs before it left free"}};
  for (const auto& [more, message] : refused) {
    std::vector<std::string> args = timed;
    args.insert(args.end(), more.begin(), more.end());
    const RunResult r = Tpusim(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr(message));
  }
  const RunResult values = Tpusim({"exec", module, "--placement", "0-7"});
  EXPECT_EQ(values.exit_code, 2) << Describe(values);
  EXPECT_THAT(values.err, HasSubstr("--placement needs timing"));

  const std::string scenario = dir_ / "shared.yaml";
  const std::string bound = std::to_string(1.5 * t);
  const std::string base = "module: " + module +
                           "\nchip: tpu-v5e\nmode: timing\ntopology: torus:4x4\n"
                           "checks: {exposed_collective_time_us: {max: " +
                           bound + "}}\n";
  WriteText(scenario, base);
  const RunResult fits = Tpusim({"run", scenario, "--golden-dir", dir_ / "golden"});
  EXPECT_EQ(fits.exit_code, 0) << Describe(fits);
  WriteText(scenario, base +
                          "placement: [0, 2, 4, 6, 8, 10, 12, 14]\n"
                          "other_jobs:\n  - {module: " +
                          module + ", placement: 1-15}\n");
  const RunResult odd = Tpusim({"run", scenario, "--golden-dir", dir_ / "golden"});
  EXPECT_EQ(odd.exit_code, 2) << Describe(odd);
  EXPECT_THAT(odd.out, HasSubstr("shared.yaml:8:5: error: key path `other_jobs[0]`: the "
                                 "placement names 15 network devices for the module's 8"));
  const std::string sharing =
      "placement: [0, 2, 4, 6, 8, 10, 12, 14]\n"
      "other_jobs:\n  - {module: " +
      module + ", placement: '1,3,5,7,9,11,13,15'}\n";
  WriteText(scenario, base + sharing);
  const RunResult slowed = Tpusim({"run", scenario, "--golden-dir", dir_ / "golden"});
  EXPECT_EQ(slowed.exit_code, 1) << Describe(slowed);
  EXPECT_THAT(slowed.out, HasSubstr("exposed_collective_time_us"));
  WriteText(scenario, "module: " + module +
                          "\nchip: tpu-v5e\nmode: timing\ntopology: torus:4x4\n"
                          "checks: {time_us: {golden: true, tolerance: 1%}}\n" +
                          sharing);
  const RunResult written =
      Tpusim({"run", scenario, "--golden-dir", dir_ / "golden", "--update-golden"});
  EXPECT_EQ(written.exit_code, 0) << Describe(written);
  const std::string manifest =
      ReadText((fs::path(dir_ / "golden") / "shared" / "metrics.json").string());
  EXPECT_THAT(manifest, HasSubstr("torus:4x4 placement 0,2,4,6,8,10,12,14, other job ar8.hlo on "
                                  "1,3,5,7,9,11,13,15"));
}

TEST_F(ExecTest, TopologyErrorsExitTwo) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  const RunResult no_chip = Tpusim({"exec", module, "--topology", "torus:2x2"});
  EXPECT_EQ(no_chip.exit_code, 2) << Describe(no_chip);
  EXPECT_THAT(no_chip.err, HasSubstr("give --chip NAME and --topology"));
  const RunResult bad = Tpusim({"exec", module, "--chip", "tpu-v5e", "--topology", "donut:3"});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_THAT(bad.err, HasSubstr("--topology"));
  const RunResult algorithm =
      Tpusim({"exec", module, "--chip", "tpu-v5e", "--topology", "torus:2x2", "--algorithm", "x"});
  EXPECT_EQ(algorithm.exit_code, 2) << Describe(algorithm);
}

// models/tpu-v3.yaml inherits tpu-v4's numbers; `wraparound=tpu` must not
// take v4's pod rule with them (docs/interconnect.md: v3 has none).
TEST_F(ExecTest, TpuV3HasNoTpuWraparoundRuleInExecRunAndCollective) {
  const std::string module =
      Module("ar4.hlo", AllReduceModule(", replica_count=4", "{{0,1,2,3}}"));
  const std::string no_rule = "tpu has no rule for chip 'tpu-v3'";
  const RunResult exec = Tpusim({"exec", module, "--chip", "tpu-v3", "--mode", "timing",
                                 "--topology", "torus:2x2,wraparound=tpu"});
  EXPECT_EQ(exec.exit_code, 2) << Describe(exec);
  // Begun like every other --topology error of a short form.
  EXPECT_THAT(exec.err, StartsWith("tpusim exec: error: --topology: 'torus:2x2,wraparound=tpu': "
                                   "wraparound: " + no_rule))
      << Describe(exec);
  const RunResult collective =
      Tpusim({"collective", "--op", "all-reduce", "--bytes", "1MiB", "--chip", "tpu-v3",
              "--topology", "torus:4x4,wraparound=tpu"});
  EXPECT_EQ(collective.exit_code, 2) << Describe(collective);
  EXPECT_THAT(collective.err, StartsWith("tpusim collective: error: --topology: "
                                         "'torus:4x4,wraparound=tpu': wraparound: " + no_rule))
      << Describe(collective);
  const std::string scenario = dir_ / "v3.yaml";
  WriteText(scenario,
            "module: " + module + "\nchip: tpu-v3\ntopology: torus:2x2,wraparound=tpu\n");
  const RunResult run = Tpusim({"run", scenario, "--golden-dir", dir_ / "golden"});
  EXPECT_EQ(run.exit_code, 2) << Describe(run);
  EXPECT_THAT(run.out, HasSubstr("v3.yaml:3:11: error: topology.wraparound: " + no_rule))
      << Describe(run);
}

TEST_F(ExecTest, HelpDescribesEveryOption) {
  const RunResult r = Tpusim({"exec", "--help"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* option :
       {"--inputs", "--out", "--numerics", "--max-memory", "--elided-constants", "--replicas",
        "--partitions", "--mode", "--chip", "--param", "--models-dir", "--json", "--trace", "--top",
        "--trip-count", "--default-trip-count", "--branch", "--topology", "--algorithm",
        "Exit codes"}) {
    EXPECT_THAT(r.out, HasSubstr(option));
  }
}

}  // namespace
}  // namespace tpusim::test
