// Integration tests of `tpusim exec`: inputs from seeds and .npy files,
// outputs as .npy and a summary table, and every kind of bad input giving a
// message and exit code 2.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/value/literal.h"
#include "sim/value/npy.h"
#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
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

TEST_F(ExecTest, BadOptionValuesAreUsageErrors) {
  const std::string module = Module("mul_add.hlo", kMulAddModule);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--inputs", "seed:x"}, {"--inputs", dir_ / "no_such_dir"},
        {"--numerics", "fast"}, {"--max-memory", "lots"}, {"--elided-constants", "maybe"}}) {
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

TEST_F(ExecTest, HelpDescribesEveryOption) {
  const RunResult r = Tpusim({"exec", "--help"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  for (const char* option : {"--inputs", "--out", "--numerics", "--max-memory",
                             "--elided-constants", "--replicas", "--partitions", "Exit codes"}) {
    EXPECT_THAT(r.out, HasSubstr(option));
  }
}

}  // namespace
}  // namespace tpusim::test
