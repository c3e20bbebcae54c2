// The study loader (expansion, labels, keys, point scenarios), the results
// directory (journal, CSV, torn lines, stamps) and the plots, without running
// any point.
#include "harness/sweep/study.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/sweep/plots.h"
#include "harness/sweep/results.h"
#include "sim/base/file.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModels = std::string(TPUSIM_SOURCE_DIR) + "/models";

/// A scratch directory holding a base scenario (the 16-chip all-reduce).
class StudyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tpusim_study_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    Write("base.yaml", "module: " + std::string(TPUSIM_SOURCE_DIR) +
                           "/scenarios/allreduce_topology/allreduce_16.hlo\n"
                           "chip: tpu-v5e\ntopology: torus:4x4\nmode: timing\n"
                           "checks:\n  time_us: {max: 1}\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteFileAtomically(path, text).ok());
    return path;
  }
  Study Load(const std::string& body) {
    StatusOr<Study> study = LoadStudy(Write("s.study.yaml", "base: base.yaml\n" + body), kModels);
    EXPECT_TRUE(study.ok()) << study.status().message();
    return study.ok() ? *study : Study{};
  }
  fs::path dir_;
};

TEST_F(StudyTest, GridIsTheProductWithTheFirstAxisSlowest) {
  const Study study = Load(
      "grid:\n  topology: {square: torus:4x4, long: torus:2x8}\n"
      "  chip.overrides.ici.hop_latency: [1us, 2us, 3us]\n");
  EXPECT_EQ(study.name, "s");
  ASSERT_EQ(study.points.size(), 6u);
  EXPECT_EQ(study.axes, (std::vector<std::string>{"topology", "chip.overrides.ici.hop_latency"}));
  EXPECT_EQ(study.points[0].labels, (std::vector<std::string>{"square", "1us"}));
  EXPECT_EQ(study.points[2].labels, (std::vector<std::string>{"square", "3us"}));
  EXPECT_EQ(study.points[3].labels, (std::vector<std::string>{"long", "1us"}));
  // The point's scenario: the value applied, the base's checks gone, paths absolute.
  const std::string& text = study.points[4].scenario_text;
  EXPECT_THAT(text, HasSubstr("topology: torus:2x8"));
  EXPECT_THAT(text, HasSubstr("ici.hop_latency: 2us"));
  EXPECT_THAT(text, HasSubstr("preset: tpu-v5e"));
  EXPECT_THAT(text, Not(HasSubstr("checks")));
  EXPECT_THAT(text, HasSubstr("module: /"));
  EXPECT_EQ(study.points[4].key.size(), 16u);
  EXPECT_NE(study.points[4].key, study.points[5].key);
}

TEST_F(StudyTest, KeysDependOnValuesNotOnOrder) {
  const Study forward = Load("grid:\n  topology: [torus:4x4, torus:2x8]\n");
  const Study backward = Load("grid:\n  topology: [torus:2x8, torus:4x4]\n");
  ASSERT_EQ(forward.points.size(), 2u);
  ASSERT_EQ(backward.points.size(), 2u);
  EXPECT_EQ(forward.points[0].key, backward.points[1].key);
  EXPECT_EQ(forward.points[1].key, backward.points[0].key);
  EXPECT_NE(forward.stamp, backward.stamp);  // another order is another study
}

TEST_F(StudyTest, ExplicitPointsLeaveUnsetAxesAtTheBase) {
  const Study study = Load(
      "points:\n  - {topology: torus:2x8}\n"
      "  - {topology: {kind: torus, dims: [4, 4], faults: [{link: [0, 1]}]}, algorithm: ring}\n");
  ASSERT_EQ(study.points.size(), 2u);
  EXPECT_EQ(study.axes, (std::vector<std::string>{"topology", "algorithm"}));
  EXPECT_EQ(study.points[0].labels, (std::vector<std::string>{"torus:2x8", ""}));
  EXPECT_EQ(study.points[1].labels[1], "ring");
  EXPECT_THAT(study.points[1].labels[0], HasSubstr("faults"));
  EXPECT_THAT(study.points[1].scenario_text, HasSubstr("algorithm: ring"));
}

// The loop limits are axes: a point sets its scenario's key, overriding the
// base's.
TEST_F(StudyTest, LoopLimitsAreAxes) {
  Write("base.yaml", "module: " + std::string(TPUSIM_SOURCE_DIR) +
                         "/scenarios/allreduce_topology/allreduce_16.hlo\n"
                         "chip: tpu-v5e\ntopology: torus:4x4\nmode: timing\n"
                         "max_executed_instructions: 7\n");
  const Study study = Load(
      "grid:\n  max_executed_instructions: [5, 1000]\n  max_while_iterations: [9]\n"
      "  max_loop_work: [100]\n");
  ASSERT_EQ(study.points.size(), 2u);
  EXPECT_EQ(study.axes, (std::vector<std::string>{"max_executed_instructions",
                                                  "max_while_iterations", "max_loop_work"}));
  EXPECT_EQ(study.points[1].labels, (std::vector<std::string>{"1000", "9", "100"}));
  const std::string& text = study.points[1].scenario_text;
  EXPECT_THAT(text, HasSubstr("max_executed_instructions: 1000"));
  EXPECT_THAT(text, Not(HasSubstr("max_executed_instructions: 7")));
  EXPECT_THAT(text, HasSubstr("max_while_iterations: 9"));
  EXPECT_THAT(text, HasSubstr("max_loop_work: 100"));
}

// A study of where a job runs beside another: placement and other_jobs are
// axes, and the other jobs' modules, in the base and in axis values, are
// made absolute so that each point's scenario runs from its own directory.
TEST_F(StudyTest, PlacementAndOtherJobsAreAxes) {
  fs::copy_file(std::string(TPUSIM_SOURCE_DIR) + "/scenarios/allreduce_topology/allreduce_16.hlo",
                dir_ / "ar.hlo");
  Write("base.yaml",
        "module: ar.hlo\nchip: tpu-v5e\ntopology: torus:4x8\nmode: timing\n"
        "other_jobs: [{module: ar.hlo}]\n");
  const Study study = Load(
      "grid:\n  placement: [0-15, '0-7,16-23']\n"
      "  other_jobs: {beside: [{module: ar.hlo}], "
      "interleaved: [{module: ar.hlo, placement: '8-15,24-31'}]}\n");
  ASSERT_EQ(study.points.size(), 4u);
  EXPECT_EQ(study.axes, (std::vector<std::string>{"placement", "other_jobs"}));
  EXPECT_EQ(study.points[3].labels, (std::vector<std::string>{"0-7,16-23", "interleaved"}));
  const std::string absolute = "module: " + (dir_ / "ar.hlo").string();
  const std::string& text = study.points[3].scenario_text;
  EXPECT_THAT(text, HasSubstr("placement: 0-7,16-23"));
  EXPECT_THAT(text, HasSubstr("placement: \"8-15,24-31\""));
  EXPECT_THAT(text, HasSubstr(absolute));
  EXPECT_THAT(text, Not(HasSubstr("module: ar.hlo")));
}

PointResult Result(const Study& study, size_t index, const std::string& message) {
  PointResult r;
  r.index = static_cast<int64_t>(index);
  r.key = study.points[index].key;
  r.status = message.empty() ? "ok" : "error";
  r.metrics = {{"time_us", 12.5}, {"cycles", 3}};
  r.message = message;
  return r;
}

TEST_F(StudyTest, ResultLinesReadBackAndCsvQuotes) {
  const Study study = Load("grid:\n  topology: [torus:4x4, torus:2x8]\n");
  const PointResult r = Result(study, 1, "bad \"x\", y");
  const std::string line = ResultJsonLine(study, r);
  EXPECT_EQ(line.rfind("{\"index\":1,\"point\":\"" + r.key +
                           "\",\"params\":{\"topology\":"
                           "\"torus:2x8\"},\"status\":\"error\",",
                       0),
            0u)
      << line;
  StatusOr<PointResult> back = ResultFromJsonLine(study, line, "here");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->metrics, r.metrics);
  EXPECT_EQ(back->message, r.message);
  EXPECT_THAT(ResultCsvRow(study, r), HasSubstr(",error,3.0,12.5,,,,,,,,,\"bad \"\"x\"\", y\"\n"));
  // A line of another study's point is refused.
  PointResult stranger = r;
  stranger.key = "0123456789abcdef";
  EXPECT_FALSE(ResultFromJsonLine(study, ResultJsonLine(study, stranger), "here").ok());
}

TEST_F(StudyTest, ResumeDropsATornLineAndRebuildsTheCsv) {
  const Study study = Load("grid:\n  topology: [torus:4x4, torus:2x8]\n");
  const std::string out = (dir_ / "out").string();
  {
    StatusOr<ResultsDir> results = ResultsDir::Open(out, study, false);
    ASSERT_TRUE(results.ok()) << results.status().message();
    ASSERT_TRUE(results->Append(Result(study, 1, "")).ok());
  }
  {
    std::ofstream torn(out + "/results.jsonl", std::ios::app);
    torn << "{\"index\":0,\"point\":";
  }
  EXPECT_FALSE(ResultsDir::Open(out, study, false).ok());  // holds a sweep: needs --resume
  StatusOr<ResultsDir> resumed = ResultsDir::Open(out, study, true);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  ASSERT_EQ(resumed->done().size(), 1u);
  EXPECT_EQ(resumed->done()[0].index, 1);
  ASSERT_TRUE(resumed->Append(Result(study, 0, "")).ok());
  ASSERT_TRUE(resumed->Finish().ok());
  const StatusOr<std::string> journal = ReadFile(out + "/results.jsonl");
  ASSERT_TRUE(journal.ok());
  EXPECT_EQ(*journal, ResultJsonLine(study, Result(study, 0, "")) + "\n" +
                          ResultJsonLine(study, Result(study, 1, "")) + "\n");
  const StatusOr<std::string> csv = ReadFile(out + "/results.csv");
  ASSERT_TRUE(csv.ok());
  EXPECT_EQ(*csv, ResultsCsvHeader(study) + ResultCsvRow(study, Result(study, 0, "")) +
                      ResultCsvRow(study, Result(study, 1, "")));
  // Another study's directory is refused.
  const Study other = Load("grid:\n  topology: [torus:4x4, torus:2x8, torus:8x2]\n");
  const StatusOr<ResultsDir> refused = ResultsDir::Open(out, other, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("another study"));
}

TEST_F(StudyTest, LinePlotHasALinePerSeriesAndSkipsFailedPoints) {
  const Study study = Load(
      "grid:\n  topology: [torus:4x4, torus:2x8]\n"
      "  chip.overrides.ici.hop_latency: [1us, 2us]\n"
      "plots:\n  - {name: p, kind: line, metric: time_us, x: chip.overrides.ici.hop_latency, "
      "series: topology}\n");
  ASSERT_EQ(study.plots.size(), 1u);
  std::vector<PointResult> results;
  for (size_t i = 0; i < 4; ++i) results.push_back(Result(study, i, i == 3 ? "failed" : ""));
  const std::string svg = PlotSvg(study, study.plots[0], results);
  EXPECT_THAT(svg, HasSubstr(">torus:4x4</text>"));
  EXPECT_THAT(svg, HasSubstr(">torus:2x8</text>"));
  size_t circles = 0;
  for (size_t at = 0; (at = svg.find("<circle", at)) != std::string::npos; ++at) ++circles;
  EXPECT_EQ(circles, 3u);  // the failed point has no marker
}

}  // namespace
}  // namespace tpusim::harness
