// The process pool on small shell commands: exit codes, a child killed by a
// signal, a timeout, and the limit on children alive at once.
#include "harness/suite/process_pool.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;

ProcessJob Shell(const std::string& script, double timeout = 0) {
  static int counter = 0;
  ProcessJob job;
  job.argv = {"/bin/sh", "-c", script};
  job.log_file = (fs::temp_directory_path() / ("tpusim_pool_test_" + std::to_string(getpid()) +
                                               "_" + std::to_string(counter++)))
                     .string();
  job.timeout_seconds = timeout;
  return job;
}

TEST(ProcessPool, ReportsExitCodes) {
  const auto outcomes = RunProcesses({Shell("exit 0"), Shell("exit 3")}, 2, nullptr, nullptr);
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].exit_code, 0);
  EXPECT_EQ(outcomes[1].exit_code, 3);
  EXPECT_EQ(outcomes[1].Describe(0), "exited with code 3");
}

TEST(ProcessPool, ReportsAChildKilledByASignal) {
  const auto outcomes = RunProcesses({Shell("kill -SEGV $$")}, 1, nullptr, nullptr);
  EXPECT_EQ(outcomes[0].signal, 11);
  EXPECT_FALSE(outcomes[0].timed_out);
  EXPECT_EQ(outcomes[0].Describe(0), "killed by signal 11 (SIGSEGV)");
}

TEST(ProcessPool, KillsAChildThatOverrunsItsTimeout) {
  const auto start = std::chrono::steady_clock::now();
  const auto outcomes =
      RunProcesses({Shell("exec sleep 30", 0.2), Shell("exit 0")}, 2, nullptr, nullptr);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(outcomes[0].timed_out);
  EXPECT_EQ(outcomes[0].Describe(0.2), "timed out after 0.2 s");
  EXPECT_EQ(outcomes[1].exit_code, 0);
  EXPECT_LT(seconds, 10);
}

TEST(ProcessPool, ReportsAProgramThatCannotStart) {
  ProcessJob job = Shell("");
  job.argv = {"/nonexistent/program"};
  const auto outcomes = RunProcesses({job}, 1, nullptr, nullptr);
  EXPECT_FALSE(outcomes[0].spawned);
  EXPECT_NE(outcomes[0].Describe(0).find("cannot start /nonexistent/program"), std::string::npos);
}

TEST(ProcessPool, NeverRunsMoreThanTheLimit) {
  std::vector<ProcessJob> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back(Shell("sleep 0.05"));
  int alive = 0, most = 0;
  RunProcesses(
      jobs, 2, [&](size_t) { most = std::max(most, ++alive); },
      [&](size_t, const ProcessOutcome& o) {
        --alive;
        EXPECT_EQ(o.exit_code, 0);
      });
  EXPECT_EQ(most, 2);
  EXPECT_EQ(alive, 0);
}

}  // namespace
}  // namespace tpusim::harness
