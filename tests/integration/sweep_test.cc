// `tpusim sweep`: results files that repeat byte for byte whatever -j, MPI
// or interruptions (SIGTERM, SIGKILL, a torn journal line) did; resume
// refusing another study; plots; malformed studies
// (tests/harness/malformed_studies/, one test case each).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModule =
    std::string(TPUSIM_SOURCE_DIR) + "/scenarios/allreduce_topology/allreduce_16.hlo";

// 3 x 2 x 2 = 12 points of a 16-chip all-reduce, a few hundredths of a
// second each (a few tenths under sanitizers): long enough to interrupt,
// short enough for CI, where each test's process runs the reference again.
constexpr int kPoints = 12;

/// Writes the base scenario and the study into `scratch`; returns the study's path.
std::string WriteStudy(const ScratchDir& scratch, const std::string& extra_latency = "") {
  WriteText(scratch / "base.yaml",
            "module: " + kModule + "\nchip: tpu-v5e\ntopology: torus:4x4\nmode: timing\n");
  WriteText(scratch / "t.study.yaml",
            "name: t\nbase: base.yaml\ngrid:\n"
            "  topology:\n"
            "    torus_4x4: torus:4x4\n"
            "    torus_2x8: torus:2x8\n"
            "    fat_tree: \"fattree:radix=8,levels=2,oversubscription=2\"\n"
            "  chip.overrides.ici.hop_latency: [1us, 4us" +
                extra_latency +
                "]\n"
                "  chip.overrides.ici.bandwidth_per_link_per_direction: [45GB/s, 20GB/s]\n"
                "plots:\n"
                "  - {name: by_topology, kind: line, metric: collective_time_us, "
                "x: chip.overrides.ici.bandwidth_per_link_per_direction, series: topology}\n"
                "  - {name: each, kind: bar, metric: time_us}\n"
                "  - {name: heat, kind: heatmap, metric: link_utilisation, x: topology, "
                "y: chip.overrides.ici.hop_latency}\n");
  return scratch / "t.study.yaml";
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t pos = 0, end; (end = text.find('\n', pos)) != std::string::npos; pos = end + 1) {
    lines.push_back(text.substr(pos, end - pos));
  }
  return lines;
}

/// Every point's index once, in order, in the journal.
void ExpectEveryPointOnce(const std::string& journal) {
  const std::vector<std::string> lines = Lines(journal);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kPoints));
  for (int i = 0; i < kPoints; ++i) {
    EXPECT_EQ(lines[static_cast<size_t>(i)].rfind("{\"index\":" + std::to_string(i) + ",", 0), 0u)
        << lines[static_cast<size_t>(i)];
  }
}

/// Waits until the journal holds at least one complete line (or 60 s pass).
void WaitForFirstResult(const std::string& journal) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (ReadText(journal).find('\n') == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

int Wait(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class Sweep : public ::testing::Test {
 protected:
  /// The results of one uninterrupted single-process run, the reference.
  static void SetUpTestSuite() {
    reference_ = new ScratchDir;
    const RunResult r =
        RunBinary(TPUSIM_BINARY, {"sweep", WriteStudy(*reference_), "--out", *reference_ / "out"});
    ASSERT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_THAT(r.out, HasSubstr("12 point(s), 12 ok, 0 failed"));
  }
  static void TearDownTestSuite() {
    delete reference_;
    reference_ = nullptr;
  }
  static std::string Csv() { return ReadText(*reference_ / "out/results.csv"); }
  static std::string Journal() { return ReadText(*reference_ / "out/results.jsonl"); }

  static ScratchDir* reference_;
};
ScratchDir* Sweep::reference_ = nullptr;

TEST_F(Sweep, WritesEveryPointInOrderWithParametersAndMetrics) {
  ExpectEveryPointOnce(Journal());
  const std::vector<std::string> rows = Lines(Csv());
  ASSERT_EQ(rows.size(), static_cast<size_t>(kPoints) + 1);
  EXPECT_EQ(rows[0],
            "index,point,topology,chip.overrides.ici.hop_latency,"
            "chip.overrides.ici.bandwidth_per_link_per_direction,status,cycles,time_us,flops,"
            "hbm_bytes,pcie_bytes,collective_time_us,exposed_collective_time_us,utilisation,"
            "ici_bytes,"
            "link_utilisation,message");
  // The first axis varies slowest; labels are the user's (torus_4x4) or the value.
  EXPECT_THAT(rows[1], HasSubstr(",torus_4x4,1us,45GB/s,ok,"));
  EXPECT_THAT(rows[12], HasSubstr(",fat_tree,4us,20GB/s,ok,"));
  // Nothing that varies between runs: no wall time, no host, no scratch path.
  EXPECT_THAT(Journal(), Not(HasSubstr("seconds")));
  EXPECT_THAT(Journal(), Not(HasSubstr(reference_->path().string())));
}

TEST_F(Sweep, MetricsFollowTheVariedParameters) {
  // collective_time_us is the 12th CSV column: slower links and the
  // oversubscribed fat tree must take longer than the 4x4 torus at 45 GB/s.
  const std::vector<std::string> rows = Lines(Csv());
  const auto collective = [&](size_t row) {
    std::vector<std::string> fields;
    std::string field;
    for (const char c : rows[row]) {
      if (c == ',') {
        fields.push_back(field);
        field.clear();
      } else {
        field += c;
      }
    }
    return std::stod(fields.at(11));
  };
  const double torus_fast = collective(1);  // torus_4x4, 1us, 45GB/s
  const double torus_slow = collective(2);  // torus_4x4, 1us, 20GB/s
  const double fat_tree = collective(9);    // fat_tree, 1us, 45GB/s
  EXPECT_GT(torus_slow, torus_fast * 1.5);
  EXPECT_GT(fat_tree, torus_fast);
}

TEST_F(Sweep, DrawsThePlotsAndAnIndexPage) {
  const std::string html = ReadText(*reference_ / "out/index.html");
  EXPECT_THAT(html, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(html, HasSubstr("<polyline"));
  const std::string line = ReadText(*reference_ / "out/plots/by_topology.svg");
  for (const char* series : {"torus_4x4", "torus_2x8", "fat_tree"}) {
    EXPECT_THAT(line, HasSubstr(std::string(">") + series + "</text>"));
  }
  EXPECT_EQ(Lines(ReadText(*reference_ / "out/plots/each.svg")).size(), 3u + 3 * kPoints + 1);
  EXPECT_THAT(ReadText(*reference_ / "out/plots/heat.svg"), HasSubstr("<rect"));
  const RunResult lint =
      RunBinary("/bin/sh", {"-c", "xmllint --noout '" + (*reference_ / "out/index.html") + "' '" +
                                      (*reference_ / "out/plots/by_topology.svg") + "' 2>&1"});
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err;
}

TEST_F(Sweep, TwoJobsGiveTheSameFiles) {
  ScratchDir scratch;
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"sweep", WriteStudy(scratch), "--out", scratch / "out", "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ReadText(scratch / "out/results.csv"), Csv());
  EXPECT_EQ(ReadText(scratch / "out/results.jsonl"), Journal());
  EXPECT_EQ(ReadText(scratch / "out/index.html"), ReadText(*reference_ / "out/index.html"));
}

TEST_F(Sweep, SigtermStopsCleanlyAndResumeCompletesTheSameFiles) {
  ScratchDir scratch;
  const std::string study = WriteStudy(scratch);
  const pid_t pid = StartInOwnGroup(TPUSIM_BINARY, {"sweep", study, "--out", scratch / "out"});
  ASSERT_GT(pid, 0);
  WaitForFirstResult(scratch / "out/results.jsonl");
  kill(pid, SIGTERM);
  EXPECT_EQ(Wait(pid), 128 + SIGTERM);
  const size_t done = Lines(ReadText(scratch / "out/results.jsonl")).size();
  std::cout << "SIGTERM left " << done << " of " << kPoints << " points\n";
  EXPECT_GE(done, 1u);
  EXPECT_LT(done, static_cast<size_t>(kPoints)) << "the signal landed after the sweep ended";
  // The CSV holds the same points as the journal: a header and a row each.
  EXPECT_EQ(Lines(ReadText(scratch / "out/results.csv")).size(), done + 1);

  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"sweep", study, "--out", scratch / "out", "--resume"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.err, Not(HasSubstr("[1/12]")));  // the points done are not run again
  ExpectEveryPointOnce(ReadText(scratch / "out/results.jsonl"));
  EXPECT_EQ(ReadText(scratch / "out/results.jsonl"), Journal());
  EXPECT_EQ(ReadText(scratch / "out/results.csv"), Csv());
}

TEST_F(Sweep, SigkillAndATornLineResumeToTheSameFiles) {
  ScratchDir scratch;
  const std::string study = WriteStudy(scratch);
  const pid_t pid =
      StartInOwnGroup(TPUSIM_BINARY, {"sweep", study, "--out", scratch / "out", "-j", "2"});
  ASSERT_GT(pid, 0);
  WaitForFirstResult(scratch / "out/results.jsonl");
  kill(-pid, SIGKILL);  // the sweep and its children, as a preempted machine
  Wait(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::string journal = ReadText(scratch / "out/results.jsonl");
  const size_t done = Lines(journal).size();
  std::cout << "SIGKILL left " << done << " of " << kPoints << " points\n";
  EXPECT_LT(done, static_cast<size_t>(kPoints)) << "the kill landed after the sweep ended";
  // A kill in the middle of a write leaves a line without its end: that point
  // must run again, not be lost or read as garbage. Cut the last line in half
  // if there is one, else add half of a line.
  if (done > 0) {
    const size_t last = journal.rfind('\n', journal.size() - 2);
    const size_t start = last == std::string::npos ? 0 : last + 1;
    journal.resize(start + (journal.size() - start) / 2);
  } else {
    journal = "{\"index\":7,\"poi";
  }
  WriteText(scratch / "out/results.jsonl", journal);

  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"sweep", study, "--out", scratch / "out", "--resume"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  ExpectEveryPointOnce(ReadText(scratch / "out/results.jsonl"));
  EXPECT_EQ(ReadText(scratch / "out/results.jsonl"), Journal());
  EXPECT_EQ(ReadText(scratch / "out/results.csv"), Csv());
}

TEST_F(Sweep, RefusesAnotherStudysDirectory) {
  ScratchDir scratch;
  const std::string study = WriteStudy(scratch);
  fs::copy(reference_->path() / "out", scratch.path() / "out", fs::copy_options::recursive);
  // Without --resume a directory holding a sweep is not overwritten.
  RunResult r = RunBinary(TPUSIM_BINARY, {"sweep", study, "--out", scratch / "out"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("holds a sweep already"));
  // Resuming a finished sweep runs nothing and keeps its files.
  r = RunBinary(TPUSIM_BINARY, {"sweep", study, "--out", scratch / "out", "--resume"});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ReadText(scratch / "out/results.csv"), Csv());
  // A study that changed since is not mixed into the old results.
  WriteStudy(scratch, ", 16us");
  r = RunBinary(TPUSIM_BINARY, {"sweep", study, "--out", scratch / "out", "--resume"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("the results here are of another study"));
  EXPECT_EQ(ReadText(scratch / "out/results.csv"), Csv());
}

TEST_F(Sweep, ResumeRefusesAJournalWithATamperedStatus) {
  ScratchDir scratch;
  const std::string study = WriteStudy(scratch);
  fs::copy(reference_->path() / "out", scratch.path() / "out", fs::copy_options::recursive);
  std::string journal = ReadText(scratch / "out/results.jsonl");
  const size_t status = journal.find("\"status\":\"ok\"");
  ASSERT_NE(status, std::string::npos) << journal;
  journal.replace(status, 13, "\"status\":\"great\"");
  WriteText(scratch / "out/results.jsonl", journal);
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"sweep", study, "--out", scratch / "out", "--resume"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(scratch / "out/results.jsonl:1: error: point 0 has status 'great', "
                                         "expected ok, error, crashed or timeout"));
  EXPECT_EQ(ReadText(scratch / "out/results.csv"), Csv());
}

TEST_F(Sweep, MpiRanksGiveTheSameFilesAsOneProcess) {
  ScratchDir scratch;
  std::vector<std::string> args = {"-n", "2", "--oversubscribe"};
  if (geteuid() == 0) args.push_back("--allow-run-as-root");
  for (const std::string& a : {std::string(TPUSIM_BINARY), std::string("sweep"),
                               WriteStudy(scratch), std::string("--out"), scratch / "out"}) {
    args.push_back(a);
  }
  // OpenMPI keeps allocations until exit by design; under LeakSanitizer
  // (the ASan build) that would fail every rank.
  AddSanitizerOption("detect_leaks=0");
  const RunResult r = RunBinary(TPUSIM_MPIEXEC, args);
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(ReadText(scratch / "out/results.csv"), Csv());
  EXPECT_EQ(ReadText(scratch / "out/results.jsonl"), Journal());
}

std::vector<std::string> MalformedStudies() {
  return FileNamesEndingWith(TPUSIM_MALFORMED_STUDIES_DIR, ".study.yaml");
}

// A study varies the loop limits like any other scenario key: the point
// under the limit the loop needs fails naming the loop, the other runs.
TEST(SweepLoopLimits, APointsLimitOverridesTheBase) {
  const ScratchDir scratch;
  WriteText(scratch / "loop.hlo", kTenIterationLoopModule);
  WriteText(scratch / "base.yaml",
            "module: loop.hlo\nchip: tpu-v5e\nmode: full\nmax_executed_instructions: 3\n");
  WriteText(scratch / "l.study.yaml",
            "base: base.yaml\ngrid:\n  max_executed_instructions: [3, 1000]\n");
  const RunResult r =
      RunBinary(TPUSIM_BINARY, {"sweep", scratch / "l.study.yaml", "--out", scratch / "out"});
  EXPECT_THAT(r.out, HasSubstr("2 point(s), 1 ok, 1 failed")) << Describe(r);
  const std::vector<std::string> rows = Lines(ReadText(scratch / "out/results.csv"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_THAT(rows[1], HasSubstr(",3,error,"));
  EXPECT_THAT(rows[1], HasSubstr("lt: the module's program reaches the limit of 3 instructions"));
  EXPECT_THAT(rows[2], HasSubstr(",1000,ok,"));
}

// A base that is one long YAML scalar (prose, or a system file a path
// escaping the suite names) was once quoted whole in the error: 133 KB of
// it. The error stays a located line, and nothing from deep in the file,
// whether the file is a study's base or a scenario run on its own.
TEST(MalformedStudyBase, AScalarFileIsNotQuotedInTheError) {
  ScratchDir scratch;
  std::string prose;
  for (int line = 0; line < 100; ++line) {
    prose += "line " + std::to_string(line) + " of a prose file that is not a scenario at all\n";
  }
  ASSERT_GT(prose.size(), 4000u);
  WriteText(scratch / "base.yaml", prose);
  WriteText(scratch / "t.study.yaml", "name: t\nbase: base.yaml\ngrid:\n  seed: [1, 2]\n");
  // The study's base, and the same file run as a scenario.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"sweep", scratch / "t.study.yaml", "--out", scratch / "out"},
        {"run", scratch / "base.yaml", "--golden-dir", scratch / "golden"}}) {
    const RunResult r = RunBinary(TPUSIM_BINARY, args);
    EXPECT_EQ(r.exit_code, 2) << args.front() << ": " << Describe(r);
    EXPECT_THAT(r.err, HasSubstr("a scenario must be a mapping of keys, got a scalar"))
        << args.front();
    EXPECT_LT(r.err.size(), 400u) << args.front() << ": " << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("line 57 of a prose file"))) << args.front() << ": " << r.err;
  }
}

TEST(MalformedStudies, AtLeastTen) { EXPECT_GE(MalformedStudies().size(), 10u); }

class MalformedStudy : public ::testing::TestWithParam<std::string> {};

// The first line of each file, "# expect: LINE:COL: TEXT", says where the
// error must point and what it must say; the sweep must exit 2, run nothing.
TEST_P(MalformedStudy, GivesAPreciseErrorAndExitsTwo) {
  const std::string path = std::string(TPUSIM_MALFORMED_STUDIES_DIR) + "/" + GetParam();
  const std::string wanted = ExpectedError(path);
  ASSERT_FALSE(wanted.empty());
  ScratchDir scratch;
  const RunResult r = RunBinary(TPUSIM_BINARY, {"sweep", path, "--out", scratch / "out"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(wanted)) << Describe(r);
  EXPECT_FALSE(fs::exists(scratch / "out"));
}

INSTANTIATE_TEST_SUITE_P(Files, MalformedStudy, ::testing::ValuesIn(MalformedStudies()),
                         [](const auto& info) {
                           const std::string& name = info.param;
                           return name.substr(0, name.size() - std::string(".study.yaml").size());
                         });

}  // namespace
}  // namespace tpusim::test
