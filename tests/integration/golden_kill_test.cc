// Golden integrity: `tpusim run --update-golden` killed with SIGKILL (the
// runner and its children together) at various moments must leave every
// golden file byte for byte either the old or the new version, and the next
// update must complete cleanly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;

// Four 1 MiB outputs per scenario, so writing a golden takes a while. The
// module's name is the update's, so its golden module.hlo changes too.
constexpr char kModule[] = R"(

ENTRY %main (p: f32[256,1024]) -> (f32[256,1024], f32[256,1024], f32[256,1024], f32[256,1024]) {
  %p = f32[256,1024]{1,0} parameter(0)
  %sum = f32[256,1024]{1,0} add(%p, %p)
  %square = f32[256,1024]{1,0} multiply(%p, %p)
  %negated = f32[256,1024]{1,0} negate(%p)
  %cubed = f32[256,1024]{1,0} multiply(%square, %p)
  ROOT %t = (f32[256,1024], f32[256,1024], f32[256,1024], f32[256,1024]) tuple(%sum, %square, %negated, %cubed)
}
)";

constexpr int kScenarios = 8;

void WriteSuite(const ScratchDir& scratch, int seed) {
  WriteText(scratch / "big.hlo", "HloModule big_outputs_" + std::to_string(seed) + kModule);
  fs::create_directories(scratch.path() / "suite");
  for (int i = 0; i < kScenarios; ++i) {
    WriteText(scratch / ("suite/s" + std::to_string(i) + ".yaml"),
              "module: ../big.hlo\nmode: values\ninputs: {seed: " + std::to_string(seed * 100 + i) +
                  "}\nchecks:\n  outputs: {golden: true, exact: true}\n");
  }
}

/// Every file under `dir` that is not a temporary ('.' prefix), by relative path.
std::map<std::string, std::string> Files(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().filename().string().starts_with(".")) continue;
    files[fs::relative(entry.path(), dir).string()] = ReadText(entry.path());
  }
  return files;
}

TEST(GoldenKill, EveryFileIsOldOrNewAfterSigkill) {
  ScratchDir scratch;
  const std::vector<std::string> update = {"run", scratch / "suite", "-j",
                                           "2",   "--update-golden", "--golden-dir"};
  const auto args = [&](const std::string& golden) {
    std::vector<std::string> a = update;
    a.push_back(golden);
    return a;
  };
  WriteSuite(scratch, 1);
  RunResult r = RunBinary(TPUSIM_BINARY, args(scratch / "old"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  WriteSuite(scratch, 2);
  r = RunBinary(TPUSIM_BINARY, args(scratch / "new"));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  const auto old_files = Files(scratch / "old");
  const auto new_files = Files(scratch / "new");
  // 4 outputs, the module and the manifest
  ASSERT_EQ(old_files.size(), static_cast<size_t>(kScenarios * 6));
  for (const auto& [name, bytes] : old_files) ASSERT_NE(bytes, new_files.at(name)) << name;

  int interrupted = 0;  // kills that left at least one old file
  for (const int delay_ms : {250, 500, 900}) {
    const fs::path golden = scratch.path() / "golden";
    fs::remove_all(golden);
    fs::copy(scratch.path() / "old", golden, fs::copy_options::recursive);
    const std::vector<std::string> a = args(golden.string());
    // Its own group, so one kill reaches the runner and its children.
    const pid_t pid = StartInOwnGroup(TPUSIM_BINARY, a);
    ASSERT_GE(pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    kill(-pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // children die with the group

    const auto files = Files(golden);
    bool any_old = false;
    int old_count = 0, new_count = 0;
    for (const auto& [name, bytes] : files) {
      ASSERT_TRUE(old_files.count(name)) << "unexpected file " << name;
      const bool is_old = bytes == old_files.at(name);
      const bool is_new = bytes == new_files.at(name);
      EXPECT_TRUE(is_old || is_new) << name << " is torn after a kill at " << delay_ms << " ms";
      any_old = any_old || is_old;
      old_count += is_old ? 1 : 0;
      new_count += is_new ? 1 : 0;
    }
    std::cout << "killed at " << delay_ms << " ms: " << old_count << " old and " << new_count
              << " new golden files\n";
    EXPECT_EQ(files.size(), old_files.size()) << "after a kill at " << delay_ms << " ms";
    interrupted += any_old ? 1 : 0;

    // Whatever the mix, the next update completes and leaves exactly the new goldens.
    r = RunBinary(TPUSIM_BINARY, a);
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(Files(golden), new_files);
    r = RunBinary(TPUSIM_BINARY, {"run", scratch / "suite", "--golden-dir", golden.string()});
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
  }
  EXPECT_GE(interrupted, 1) << "no kill landed before the update finished";
}

// A CI job cancelled sends SIGTERM (or SIGINT) to the runner alone: it must
// stop its scenarios at once, leave no process behind (one would write
// goldens after the job ended), and still write its reports, every scenario
// that did not finish an error that says why; exit 128 + the signal.
TEST(GoldenKill, ASignalToTheRunnerStopsItsScenariosAndStillWritesTheReports) {
  ScratchDir scratch;
  // About 10^8 iterations: minutes, far longer than the test waits.
  WriteText(scratch / "slow.hlo", R"(HloModule slow
cond {
  c = s32[] parameter(0)
  n = s32[] constant(100000000)
  ROOT lt = pred[] compare(c, n), direction=LT
}
body {
  c = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] add(c, one)
}
ENTRY e {
  zero = s32[] constant(0)
  ROOT w = s32[] while(zero), condition=cond, body=body
}
)");
  fs::create_directories(scratch.path() / "suite");
  for (int i = 0; i < 3; ++i) {
    WriteText(scratch / ("suite/slow" + std::to_string(i) + ".yaml"),
              "module: ../slow.hlo\nmode: values\nmax_while_iterations: 1000000000\n"
              "max_loop_work: 1000000000000000\n");
  }
  const std::string json = scratch / "report.json";
  const std::string junit = scratch / "junit.xml";
  const std::vector<std::string> a = {
      "run",          scratch / "suite", "-j", "2", "--json", json, "--junit", junit,
      "--golden-dir", scratch / "golden"};
  // Its own group: the test can see whether any child outlives the runner.
  const pid_t pid = StartInOwnGroup(TPUSIM_BINARY, a);
  ASSERT_GE(pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGTERM);  // the runner only, as a CI cancel does
  int status = 0;
  pid_t done = 0;
  for (int waited = 0; waited < 300 && done == 0; ++waited) {
    done = waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (done == 0) kill(-pid, SIGKILL);
  ASSERT_EQ(done, pid) << "the runner did not stop within 30 s of SIGTERM";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(kill(-pid, 0), -1) << "a scenario process outlived the runner";
  const std::string report = ReadText(json);
  EXPECT_THAT(report, ::testing::HasSubstr("\"errors\": 3"));
  EXPECT_THAT(report, ::testing::HasSubstr("tpusim run was interrupted (SIGTERM)"));
  EXPECT_THAT(ReadText(junit), ::testing::HasSubstr("errors=\"3\""));
}

}  // namespace
}  // namespace tpusim::test
