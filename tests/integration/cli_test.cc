// Integration tests of the `tpusim` binary: command-line contract, exit codes,
// and the acceptance tests over the shared corpus of real HLO modules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;
using ::testing::Not;

/// A small valid module: 1 computation, 4 instructions.
constexpr char kAddOneModule[] = R"(HloModule add_one

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %one = f32[] constant(1)
  %ones = f32[4]{0} broadcast(%one), dimensions={}
  ROOT %sum = f32[4]{0} add(%p, %ones)
}
)";

RunResult Tpusim(const std::vector<std::string>& args) { return RunBinary(TPUSIM_BINARY, args); }

/// "line N" and both lines where two texts first differ, or "" when equal.
std::string FirstDifference(const std::string& a, const std::string& b) {
  if (a == b) return "";
  std::istringstream sa(a);
  std::istringstream sb(b);
  std::string la;
  std::string lb;
  for (int line = 1;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(sa, la));
    const bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) return "texts differ only in the final newline";
    if (!more_a || !more_b || la != lb) {
      return "first difference at line " + std::to_string(line) +
             ":\n  first:  " + (more_a ? la : "<end of text>") +
             "\n  second: " + (more_b ? lb : "<end of text>");
    }
  }
}

/// `tpusim check -v` over all `modules` at once: exit 0 and one ok line each.
void ExpectAllCheck(const std::vector<fs::path>& modules) {
  std::vector<std::string> args = {"check", "--verbose"};
  for (const fs::path& m : modules) args.push_back(m.string());
  RunResult r = Tpusim(args);
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.err, IsEmpty());
  for (const fs::path& m : modules) EXPECT_THAT(r.out, HasSubstr(m.string() + ": ok ("));
}

// --- command line -----------------------------------------------------------

TEST(Cli, VersionPrintsVersionAndExitsZero) {
  RunResult r = Tpusim({"--version"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, MatchesRegex("tpusim " TPUSIM_VERSION
                                  " \\(commit ([0-9a-f]+(-dirty)?|unknown)\\)\n"));
  EXPECT_THAT(r.err, IsEmpty());
}

TEST(Cli, HelpListsSubcommandsAndExitCodes) {
  RunResult r = Tpusim({"--help"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.out, HasSubstr("check"));
  EXPECT_THAT(r.out, HasSubstr("fmt"));
  EXPECT_THAT(r.out, HasSubstr("--version"));
  EXPECT_THAT(r.out, HasSubstr("Exit codes:"));
}

TEST(Cli, SubcommandHelpDescribesEveryOption) {
  RunResult check = Tpusim({"check", "--help"});
  EXPECT_EQ(check.exit_code, 0) << Describe(check);
  EXPECT_THAT(check.out, HasSubstr("--verbose"));
  EXPECT_THAT(check.out, HasSubstr("FILE"));

  RunResult fmt = Tpusim({"fmt", "--help"});
  EXPECT_EQ(fmt.exit_code, 0) << Describe(fmt);
  EXPECT_THAT(fmt.out, HasSubstr("--output"));
  EXPECT_THAT(fmt.out, HasSubstr("--check"));
}

TEST(Cli, HelpStatesEachDefaultAndEveryCollectiveAlgorithm) {
  const RunResult exec = Tpusim({"exec", "--help"});
  EXPECT_EQ(exec.exit_code, 0) << Describe(exec);
  EXPECT_THAT(exec.out, HasSubstr("Rows of the op profile table (default: 20)"));
  const RunResult diff = Tpusim({"diff", "--help"});
  EXPECT_THAT(diff.out, HasSubstr("rtol * |before| (default: 0.001)"));
  // A description that states its default keeps its own words only.
  EXPECT_THAT(diff.out, Not(HasSubstr("Default: device 0 alone (default:")));
  for (const char* command : {"exec", "diff", "collective"}) {
    const RunResult help = Tpusim({command, "--help"});
    for (const char* algorithm : {"auto (", "ring,", "bidirectional-ring,", "torus,",
                                  "hamiltonian-rings,", "tree,", "halving-doubling,", "direct"}) {
      EXPECT_THAT(help.out, HasSubstr(algorithm)) << command;
    }
  }
}

// An empty --topology once read as no topology: exec timed device 0 alone.
TEST(Cli, AnEmptyTopologyIsAUsageError) {
  const std::string hlo = std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/add_f32.hlo";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"exec", hlo, "--chip", "tpu-v5e", "--topology", ""},
        std::vector<std::string>{"diff", hlo, hlo, "--chip", "tpu-v5e", "--topology", ""},
        std::vector<std::string>{"diff", hlo, hlo, "--chip", "tpu-v5e", "--topology", "torus:2x2",
                                 "--topology-after", ""}}) {
    const RunResult r = Tpusim(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("must not be empty")) << args[0];
  }
}

// A file name reaches the terminal in every message about the file: its
// control bytes are escaped, as a YAML key's are.
TEST(Cli, AFileNameCannotDriveTheTerminal) {
  ScratchDir dir;
  const std::string name = dir / "evil\x1b[31m.hlo";
  WriteText(name, "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(\n}\n");
  for (const std::string& file : {name, name + ".missing"}) {
    const RunResult r = Tpusim({"check", file});
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("evil\\x1b[31m.hlo")) << Describe(r);
    EXPECT_THAT(r.err, Not(HasSubstr("\x1b"))) << Describe(r);
  }
}

TEST(Cli, NoSubcommandIsUsageError) {
  RunResult r = Tpusim({});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, Not(IsEmpty()));
}

TEST(Cli, UnknownSubcommandIsUsageError) {
  RunResult r = Tpusim({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("tpusim: error: unknown subcommand 'frobnicate' (known: check, "
                               "fmt, exec, diff, presets, collective, run, sweep, validate)"));
}

TEST(Cli, UnknownFlagIsUsageError) {
  RunResult top = Tpusim({"--frobnicate"});
  EXPECT_EQ(top.exit_code, 2) << Describe(top);
  RunResult sub = Tpusim({"check", "--frobnicate", "x.hlo"});
  EXPECT_EQ(sub.exit_code, 2) << Describe(sub);
  EXPECT_THAT(sub.err, HasSubstr("--frobnicate"));
}

/// A command line that must be refused (exit 2) with `error` on stderr.
struct UsageErrorCase {
  std::vector<std::string> args;
  std::string error;
};

/// Runs `c` and checks its exit code and message; returns its stderr.
std::string ExpectUsageError(const UsageErrorCase& c) {
  const RunResult r = Tpusim(c.args);
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(c.error)) << Describe(r);
  return r.err;
}

// An option the asked mode would not use was once accepted and dropped.
TEST(Cli, ExecRefusesOptionsItsModeWouldIgnore) {
  const std::string hlo = std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/add_f32.hlo";
  const std::string prefix = "tpusim exec: error: ";
  const UsageErrorCase cases[] = {
      {{"exec", hlo, "--mode", "timing", "--chip", "tpu-v5e", "--out", "o"},
       prefix + "--out is about values, which --mode timing does not compute: give --mode full"},
      {{"exec", hlo, "--mode", "timing", "--chip", "tpu-v5e", "--numerics", "ieee"},
       prefix + "--numerics is about values"},
      {{"exec", hlo, "--mode", "timing", "--chip", "tpu-v5e", "--mxu", "rtl"},
       prefix + "--mxu is about values"},
      {{"exec", hlo, "--mode", "values", "--chip", "tpu-v5e"},
       prefix + "--chip times the module, which --mode values does not: give --mode full"},
      {{"exec", hlo, "-p", "hbm.bandwidth=1TB/s"},
       prefix + "-p changes the timing chip: give --chip NAME"},
      {{"exec", hlo, "--mode", "values", "--topology", "torus:2x2"},
       prefix + "--topology times collectives, which --mode values does not"},
  };
  for (const UsageErrorCase& c : cases) ExpectUsageError(c);
}

// A loop or conditional given two counts once ran with the last, silently.
TEST(Cli, ANameGivenTwoCountsIsAnError) {
  const std::string hlo = std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/add_f32.hlo";
  RunResult r = Tpusim({"exec", hlo, "--trip-count", "w=5", "--trip-count", "w=7"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err,
              HasSubstr("tpusim exec: error: --trip-count 'w=7': 'w' is given a count twice"));
  r = Tpusim({"exec", hlo, "--branch", "c=0", "--branch", "c=1"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("tpusim exec: error: --branch 'c=1': 'c' is given a count twice"));
}

// CLI11's PositiveNumber and NonNegativeNumber once answered with their range,
// "Value 0 not in range 0.000000 to 17976931348623157...", 309 digits of the
// largest double; every number check says what the value must be instead.
TEST(Cli, NumbersOutOfTheirRangeSayWhatTheyMustBe) {
  const std::string hlo = std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/add_f32.hlo";
  const UsageErrorCase cases[] = {
      {{"collective", "--op", "all-reduce", "--bytes", "1KiB", "--chip", "tpu-v5e", "--topology",
        "torus:4", "-g", "0"},
       "tpusim collective: error: --ngpus: must be positive, got '0'\n"},
      {{"exec", hlo, "--branch", "-1"},
       "tpusim exec: error: --branch '-1': expected N or CONDITIONAL_NAME=N with N a "
       "non-negative integer\n"},
      {{"exec", hlo, "--branch", "c=x"},
       "tpusim exec: error: --branch 'c=x': expected N or CONDITIONAL_NAME=N with N a "
       "non-negative integer\n"},
      {{"exec", hlo, "--default-trip-count", "-1"},
       "--default-trip-count: must be at least 0, got '-1'\n"},
      {{"diff", hlo, hlo, "--rtol", "-0.5"}, "--rtol: must be at least 0, got '-0.5'\n"},
      {{"diff", hlo, hlo, "--atol", "1e999"}, "--atol: '1e999' is out of range\n"},
      {{"diff", hlo, hlo, "--max-ulp", "-1"}, "--max-ulp: must be at least 0, got '-1'\n"},
      {{"validate", "--worst", "-1"}, "--worst: must be at least 0, got '-1'\n"},
      {{"validate", "-j", "0"}, "tpusim validate: error: --jobs: must be positive, got '0'\n"},
      // Text that is no number, or no integer, says so rather than "must be
      // at least 0" or CLI11's "Could not convert: --top = 1.5".
      {{"diff", hlo, hlo, "--rtol", "abc"}, "--rtol: expected a number, got 'abc'\n"},
      {{"exec", hlo, "--top", "1.5"},
       "tpusim exec: error: --top: expected an integer, got '1.5'\n"},
      {{"exec", hlo, "--replicas", "x"}, "--replicas: expected an integer, got 'x'\n"},
  };
  for (const UsageErrorCase& c : cases) {
    EXPECT_THAT(ExpectUsageError(c), Not(HasSubstr("not in range"))) << c.error;
  }
}

// CLI11 read an integer past int64_t as INT64_MAX: `exec --top 99999999999999999999`
// ran as if given 9223372036854775807. Every integer option, of every command,
// refuses it and names itself.
TEST(Cli, IntegersPastInt64AreRefusedNamingTheFlag) {
  const std::string hlo = std::string(TPUSIM_SOURCE_DIR) + "/scenarios/hlo/add_f32.hlo";
  const std::string big = "99999999999999999999";
  const std::vector<std::string> collective = {
      "collective", "--op", "all-reduce", "--chip", "tpu-v5e", "--topology", "torus:4", "-b", "8"};
  const struct {
    std::vector<std::string> command;
    std::string flag;
  } cases[] = {
      {{"exec", hlo}, "--top"},           {{"exec", hlo}, "--default-trip-count"},
      {{"exec", hlo}, "--branch"},        {{"exec", hlo}, "--replicas"},
      {{"exec", hlo}, "--max-loop-work"}, {{"diff", hlo, hlo}, "--max-ulp"},
      {{"diff", hlo, hlo}, "--top"},      {collective, "--ngpus"},
      {collective, "--stepfactor"},       {{"validate"}, "--worst"},
      {{"run", hlo}, "--jobs"},           {{"sweep", hlo, "--out", hlo}, "--jobs"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = c.command;
    args.push_back(c.flag);
    args.push_back(big);
    const RunResult r = Tpusim(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(
        r.err, HasSubstr(c.flag + ": '" + big + "' is out of range: at most 9223372036854775807\n"))
        << Describe(r);
  }
  const RunResult negative = Tpusim({"exec", hlo, "--partitions", "-" + big});
  EXPECT_EQ(negative.exit_code, 2) << Describe(negative);
  EXPECT_THAT(negative.err, HasSubstr("--partitions: '-" + big +
                                      "' is out of range: at least -9223372036854775808\n"))
      << Describe(negative);
  // The largest integer is still read as itself (here refused by what exec allows).
  const RunResult largest = Tpusim({"exec", hlo, "--replicas", "9223372036854775807"});
  EXPECT_EQ(largest.exit_code, 2) << Describe(largest);
  EXPECT_THAT(largest.err, HasSubstr("--replicas and --partitions must be at least 1"));
}

// CLI11 reads integers with strtoll's base 0: `-g 010` was 8 devices (octal)
// and `-g 08` an error. Decimal digits are decimal, leading zeros and all.
TEST(Cli, IntegersWithLeadingZerosAreDecimal) {
  const auto group_of = [](const std::string& ngpus) {
    return Tpusim({"collective", "--op", "all-reduce", "--chip", "tpu-v5e", "--topology",
                   "torus:4x4", "-b", "8", "-g", ngpus});
  };
  for (const auto& [typed, devices] : {std::pair{"010", "10"}, {"08", "8"}, {"+007", "7"}}) {
    const RunResult r = group_of(typed);
    EXPECT_EQ(r.exit_code, 0) << typed << ": " << Describe(r);
    EXPECT_THAT(r.out, HasSubstr(std::string("1 group of ") + devices + " devices")) << typed;
  }
  const RunResult zeros = group_of("000");
  EXPECT_EQ(zeros.exit_code, 2) << Describe(zeros);
  EXPECT_THAT(zeros.err, HasSubstr("--ngpus: must be positive, got '0'"));
  // A hexadecimal value keeps its base.
  EXPECT_THAT(group_of("0x10").out, HasSubstr("1 group of 16 devices"));
}

TEST(Cli, MissingRequiredArgumentIsUsageError) {
  EXPECT_EQ(Tpusim({"check"}).exit_code, 2);
  EXPECT_EQ(Tpusim({"fmt"}).exit_code, 2);
}

TEST(Cli, FmtCheckExcludesOutput) {
  RunResult r = Tpusim({"fmt", "--check", "-o", "out.hlo", "in.hlo"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
}

// --- check ------------------------------------------------------------------

TEST(Check, MissingFileIsInputErrorNamingTheFile) {
  ScratchDir dir;
  const std::string missing = dir / "missing.hlo";
  RunResult r = Tpusim({"check", missing});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_EQ(r.err, missing + ": error: cannot open file: No such file or directory\n");
  EXPECT_THAT(r.out, IsEmpty());
}

// A FIFO no process writes once made `check` wait forever; a pipe that a
// process writes (standard output of another, as /dev/stdin) is still read.
TEST(Check, FifoWithNoWriterIsAnErrorAndAPipedModuleIsRead) {
  ScratchDir dir;
  const std::string fifo = dir / "f.hlo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const RunResult r = Tpusim({"check", fifo});
  // A bound on waiting forever, not a speed: the read ends at once, but an
  // ASan build on a busy CI machine takes a second to start a process.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(fifo + ": error: cannot read file: not a regular file, and no "
                                      "process wrote to the pipe"));
  const std::string module = dir / "add_one.hlo";
  WriteText(module, kAddOneModule);
  const RunResult piped = RunBinary(
      "/bin/sh", {"-c", "cat \"$1\" | \"$0\" check -v /dev/stdin", TPUSIM_BINARY, module});
  EXPECT_EQ(piped.exit_code, 0) << Describe(piped);
  EXPECT_THAT(piped.out, HasSubstr("/dev/stdin: ok (1 computation, 4 instructions)"));
}

// A scenario's module that exists but is no file once read "no such file".
TEST(Check, ScenarioModuleThatIsADeviceOrFifoIsNotARegularFile) {
  ScratchDir dir;
  const std::string fifo = dir / "f.hlo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& module : {std::string("/dev/zero"), fifo}) {
    const std::string scenario = dir / "s.yaml";
    WriteText(scenario, "module: " + module + "\nmode: values\n");
    const RunResult r = Tpusim({"run", scenario});
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("key path `module`: " + module + ": not a regular file"))
        << Describe(r);
  }
}

TEST(Check, DirectoryIsInputError) {
  ScratchDir dir;
  RunResult r = Tpusim({"check", dir.path().string()});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(dir.path().string() + ": error: cannot open file: Is a directory"));
}

TEST(Check, GoodModulePrintsNothingUnlessVerbose) {
  ScratchDir dir;
  const std::string good = dir / "add_one.hlo";
  WriteText(good, kAddOneModule);

  RunResult quiet = Tpusim({"check", good});
  EXPECT_EQ(quiet.exit_code, 0) << Describe(quiet);
  EXPECT_THAT(quiet.out, IsEmpty());
  EXPECT_THAT(quiet.err, IsEmpty());

  RunResult verbose = Tpusim({"check", "-v", good});
  EXPECT_EQ(verbose.exit_code, 0) << Describe(verbose);
  EXPECT_EQ(verbose.out, good + ": ok (1 computation, 4 instructions)\n");
}

TEST(Check, TextWithoutAModuleHeaderIsChecked) {
  ScratchDir dir;
  const std::string computation = dir / "computation.hlo";
  WriteText(computation, "ENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(p)\n}\n");
  const std::string instruction = dir / "instruction.hlo";
  WriteText(instruction, "m = f32[2] multiply(f32[2] a, f32[2] b)\n");
  RunResult r = Tpusim({"check", "-v", computation, instruction});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.out, computation + ": ok (1 computation, 2 instructions)\n" + instruction +
                       ": ok (1 computation, 3 instructions)\n");
  RunResult fmt = Tpusim({"fmt", instruction});
  EXPECT_EQ(fmt.exit_code, 0) << Describe(fmt);
  EXPECT_THAT(fmt.out, HasSubstr("HloModule _\n"));
}

TEST(Check, ParseErrorIsInputErrorWithFileAndLine) {
  ScratchDir dir;
  const std::string bad = dir / "bad.hlo";
  WriteText(bad,
            "HloModule bad\n\nENTRY %main () -> f32[] {\n  ROOT %x = f32[] not-an-opcode()\n}\n");
  RunResult r = Tpusim({"check", bad});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(bad + ":4:"));
  EXPECT_THAT(r.err, HasSubstr("error:"));
}

TEST(Check, KeepsGoingAfterABadFile) {
  ScratchDir dir;
  const std::string missing = dir / "missing.hlo";
  const std::string good = dir / "add_one.hlo";
  WriteText(good, kAddOneModule);
  RunResult r = Tpusim({"check", "--verbose", missing, good});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(missing + ": error: cannot open file"));
  EXPECT_THAT(r.out, HasSubstr(good + ": ok ("));
}

TEST(Check, SkipsXlasReportsInADumpDirectoryWithANote) {
  // What `tpusim check dump/*after_optimizations*.txt` picks up.
  ScratchDir dir;
  const std::string module = dir / "module_0001.jit_f.tpu_after_optimizations.txt";
  const std::string buffers =
      dir / "module_0001.jit_f.tpu_after_optimizations-buffer-assignment.txt";
  const std::string memory =
      dir / "module_0001.jit_f.tpu_after_optimizations-memory-usage-report.txt";
  WriteText(module, kAddOneModule);
  WriteText(buffers, "BufferAssignment:\nallocation 0: size 4, parameter 0\n");
  WriteText(memory, "Total bytes used: 8 (8B)\n");
  RunResult r = Tpusim({"check", "-v", module, buffers, memory});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.out, module + ": ok (1 computation, 4 instructions)\n");
  EXPECT_EQ(r.err, buffers + ": skipped: XLA's buffer assignment, not an HLO module\n" + memory +
                       ": skipped: XLA's memory usage report, not an HLO module\n");
}

// --- fmt --------------------------------------------------------------------

TEST(Fmt, OutputIsCanonicalAndStable) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  RunResult first = Tpusim({"fmt", input});
  ASSERT_EQ(first.exit_code, 0) << Describe(first);
  EXPECT_THAT(first.err, IsEmpty());

  const std::string canonical = dir / "canonical.hlo";
  WriteText(canonical, first.out);
  RunResult second = Tpusim({"fmt", canonical});
  ASSERT_EQ(second.exit_code, 0) << Describe(second);
  EXPECT_EQ(first.out, second.out) << FirstDifference(first.out, second.out);

  RunResult check = Tpusim({"fmt", "--check", canonical});
  EXPECT_EQ(check.exit_code, 0) << Describe(check);
  EXPECT_THAT(check.out, IsEmpty());
}

TEST(Fmt, CheckFailsOnNonCanonicalText) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  RunResult canonical = Tpusim({"fmt", input});
  ASSERT_EQ(canonical.exit_code, 0) << Describe(canonical);

  // A comment parses away, so the printer never writes it back.
  WriteText(input, "// not canonical\n" + canonical.out);
  RunResult r = Tpusim({"fmt", "--check", input});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, HasSubstr(input + ": not canonically formatted"));
}

TEST(Fmt, OutputFileGetsWhatStdoutWouldAndMayBeTheInput) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  RunResult to_stdout = Tpusim({"fmt", input});
  ASSERT_EQ(to_stdout.exit_code, 0) << Describe(to_stdout);

  const std::string output = dir / "out.hlo";
  RunResult to_file = Tpusim({"fmt", input, "-o", output});
  EXPECT_EQ(to_file.exit_code, 0) << Describe(to_file);
  EXPECT_THAT(to_file.out, IsEmpty());
  EXPECT_EQ(ReadText(output), to_stdout.out);

  RunResult in_place = Tpusim({"fmt", input, "--output", input});
  EXPECT_EQ(in_place.exit_code, 0) << Describe(in_place);
  EXPECT_EQ(ReadText(input), to_stdout.out);
  // Only add_one.hlo and out.hlo remain: no temporary file is left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 2);
}

TEST(Fmt, UnwritableOutputIsInputError) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  const std::string output = dir / "no_such_dir/out.hlo";
  RunResult r = Tpusim({"fmt", input, "-o", output});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(output + ": error: cannot write file"));
}

bool IsCharacterDevice(const std::string& path) {
  return fs::is_character_file(fs::symlink_status(path));
}

TEST(Fmt, OutputToADeviceWritesTheDeviceAndReportsItsErrors) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  RunResult to_null = Tpusim({"fmt", input, "-o", "/dev/null"});
  EXPECT_EQ(to_null.exit_code, 0) << Describe(to_null);
  EXPECT_TRUE(IsCharacterDevice("/dev/null")) << "/dev/null was replaced by a file";
  if (!IsCharacterDevice("/dev/full")) GTEST_SKIP() << "no /dev/full";
  RunResult to_full = Tpusim({"fmt", input, "-o", "/dev/full"});
  EXPECT_EQ(to_full.exit_code, 2) << Describe(to_full);
  EXPECT_THAT(to_full.err, HasSubstr("/dev/full: error: cannot write file: No space left on device"));
  EXPECT_TRUE(IsCharacterDevice("/dev/full")) << "/dev/full was replaced by a file";
}

// exec's --json and --trace go through the same writer as fmt -o: a device
// is written, not replaced by a regular file, and its write errors exit 2.
TEST(Exec, OutputsToADeviceWriteTheDeviceAndReportItsErrors) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  const std::vector<std::string> exec = {"exec", input, "--chip", "tpu-v5e", "--inputs", "seed:1"};
  std::vector<std::string> to_null = exec;
  for (const std::string arg : {"--json", "/dev/null", "--trace", "/dev/null"}) {
    to_null.push_back(arg);
  }
  const RunResult nulled = Tpusim(to_null);
  EXPECT_EQ(nulled.exit_code, 0) << Describe(nulled);
  EXPECT_TRUE(IsCharacterDevice("/dev/null")) << "/dev/null was replaced by a file";
  if (!IsCharacterDevice("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const std::string flag : {"--json", "--trace"}) {
    std::vector<std::string> to_full = exec;
    to_full.push_back(flag);
    to_full.push_back("/dev/full");
    const RunResult full = Tpusim(to_full);
    EXPECT_EQ(full.exit_code, 2) << flag << ": " << Describe(full);
    EXPECT_THAT(full.err,
                HasSubstr("/dev/full: error: cannot write file: No space left on device"))
        << flag;
    EXPECT_TRUE(IsCharacterDevice("/dev/full")) << flag << ": /dev/full was replaced by a file";
  }
}

// Standard output is a pipe here: /dev/stdout and /dev/fd/1 name it through
// links whose text ("pipe:[N]") is no file, and once failed with ENOENT.
TEST(Fmt, OutputToStandardOutputByNameWritesThePipe) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  const RunResult plain = Tpusim({"fmt", input});
  ASSERT_EQ(plain.exit_code, 0) << Describe(plain);
  for (const std::string out : {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}) {
    const RunResult r = Tpusim({"fmt", input, "-o", out});
    EXPECT_EQ(r.exit_code, 0) << out << ": " << Describe(r);
    EXPECT_EQ(r.out, plain.out) << out;
  }
}

// "-" is standard output for no option of tpusim's (inputs included): each
// output option refuses it rather than writing a file named "-".
TEST(Cli, OutputOptionsRefuseDashRatherThanWriteAFileNamedDash) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  const std::vector<std::string> collective = {"collective", "--op",       "all-reduce",
                                               "--bytes",    "1KiB",       "--chip",
                                               "tpu-v5e",    "--topology", "torus:4"};
  const struct {
    std::vector<std::string> command;
    std::string flag;
  } cases[] = {
      {{"fmt", input}, "--output"},
      {{"fmt", input}, "-o"},
      {{"exec", input, "--chip", "tpu-v5e"}, "--json"},
      {{"exec", input, "--chip", "tpu-v5e"}, "--trace"},
      {{"diff", input, input, "--mode", "values"}, "--json"},
      {collective, "--json"},
      {{"validate"}, "--json"},
      {{"run", input}, "--junit"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = c.command;
    args.push_back(c.flag);
    args.push_back("-");
    const RunResult r = Tpusim(args);
    EXPECT_EQ(r.exit_code, 2) << Describe(r);
    EXPECT_THAT(r.err, HasSubstr(": '-' is not standard output here: give /dev/stdout"))
        << Describe(r);
  }
}

TEST(Fmt, OutputThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  WriteText(dir / "target.hlo", "old");
  fs::create_symlink("target.hlo", dir / "link.hlo");
  RunResult r = Tpusim({"fmt", input, "-o", dir / "link.hlo"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(fs::is_symlink(dir / "link.hlo"));
  EXPECT_THAT(ReadText(dir / "target.hlo"), HasSubstr("HloModule add_one"));
}

TEST(Cli, AFailedWriteToStdoutExitsTwo) {
  if (!IsCharacterDevice("/dev/full")) GTEST_SKIP() << "no /dev/full";
  ScratchDir dir;
  const std::string input = dir / "add_one.hlo";
  WriteText(input, kAddOneModule);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"check", "-v", input}, {"fmt", input},
        {"exec", input, "--inputs", "seed:1"}, {"--help"}, {"--version"}, {"exec", "--help"}}) {
    std::vector<std::string> shell = {"-c", "exec \"$0\" \"$@\" >/dev/full", TPUSIM_BINARY};
    shell.insert(shell.end(), args.begin(), args.end());
    RunResult r = RunBinary("/bin/sh", shell);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("tpusim: error: cannot write standard output")) << args.front();
    // One report of the failed write (fmt once printed a second of its own).
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args.front() << ": " << r.err;
  }
}

TEST(Fmt, MissingFileIsInputError) {
  ScratchDir dir;
  const std::string missing = dir / "missing.hlo";
  RunResult r = Tpusim({"fmt", missing});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(missing + ": error: cannot open file"));
  EXPECT_THAT(r.out, IsEmpty());
}

// --- acceptance: the shared corpus and the bundled examples -----------------

TEST(CorpusCheck, EveryCorpusModuleParsesAndVerifies) {
  std::vector<fs::path> modules;
  ASSERT_TRUE(ListModules(TPUSIM_CORPUS_DIR, modules));
  ExpectAllCheck(modules);
}

TEST(CorpusFmt, FormattingEveryCorpusModuleIsAFixedPoint) {
  std::vector<fs::path> modules;
  ASSERT_TRUE(ListModules(TPUSIM_CORPUS_DIR, modules));
  ScratchDir dir;
  for (const fs::path& module : modules) {
    SCOPED_TRACE(module.string());
    RunResult a = Tpusim({"fmt", module.string()});
    if (a.exit_code != 0) {
      ADD_FAILURE() << "fmt failed: " << Describe(a);
      continue;
    }
    const std::string formatted = dir / module.filename().string();
    WriteText(formatted, a.out);
    RunResult b = Tpusim({"fmt", formatted});
    if (b.exit_code != 0) {
      ADD_FAILURE() << "formatted text does not parse and verify: " << Describe(b);
      continue;
    }
    EXPECT_TRUE(a.out == b.out) << "fmt(fmt(x)) != fmt(x); " << FirstDifference(a.out, b.out);
  }
}

TEST(BundledModules, EveryScenarioModuleParsesAndVerifies) {
  std::vector<fs::path> modules;
  ASSERT_TRUE(ListModules(fs::path(TPUSIM_SOURCE_DIR) / "scenarios" / "hlo", modules));
  ExpectAllCheck(modules);
}

}  // namespace
}  // namespace tpusim::test
