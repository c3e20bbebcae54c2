// Output comparison under each tolerance, metric checks, op checks, and the
// golden store's round trip and integrity checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/checks.h"
#include "harness/golden.h"
#include "harness/scenario.h"
#include "sim/base/file.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using value::Literal;

TEST(CompareOutput, ExactByDefault) {
  const Literal a = Literal::CreateR1<float>({1.0f, 2.0f, 3.0f});
  const Literal b = Literal::CreateR1<float>({1.0f, 2.5f, 3.0f});
  EXPECT_EQ(CompareOutput("out", a, a, {}), "");
  EXPECT_EQ(CompareOutput("out", a, b, {}),
            "out: 1 of 3 elements differ (exact); first at flat index 1: got 2, golden 2.5");
}

TEST(CompareOutput, AtolAndRtol) {
  const Literal a = Literal::CreateR1<float>({1.0f, 100.5f});
  const Literal g = Literal::CreateR1<float>({1.01f, 100.0f});
  OutputTolerance t;
  t.atol = 0.02;
  EXPECT_THAT(CompareOutput("o", a, g, t), HasSubstr("1 of 2 elements differ (atol 0.02)"));
  t.rtol = 0.01;  // 0.02 + 0.01 * 100 covers 0.5
  EXPECT_EQ(CompareOutput("o", a, g, t), "");
}

TEST(CompareOutput, Ulp) {
  const float one = 1.0f;
  const float next = std::nextafter(one, 2.0f);
  const float next2 = std::nextafter(next, 2.0f);
  OutputTolerance t;
  t.ulp = 1;
  EXPECT_EQ(CompareOutput("o", Literal::CreateR1<float>({next}), Literal::CreateR1<float>({one}), t), "");
  EXPECT_THAT(CompareOutput("o", Literal::CreateR1<float>({next2}), Literal::CreateR1<float>({one}), t),
              HasSubstr("1 of 1 elements differ (ulp 1)"));
  // Across zero: -0 and +0 are 0 ulps apart.
  EXPECT_EQ(CompareOutput("o", Literal::CreateR1<float>({-0.0f}), Literal::CreateR1<float>({0.0f}), t), "");
}

TEST(CompareOutput, NanMustMatchNan) {
  OutputTolerance t;
  t.atol = 1e9;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THAT(CompareOutput("o", Literal::CreateR1<float>({nan}), Literal::CreateR1<float>({1.0f}), t),
              HasSubstr("1 of 1 elements differ"));
}

TEST(CompareOutput, ShapeMismatch) {
  EXPECT_THAT(CompareOutput("o", Literal::CreateR1<float>({1.0f}),
                            Literal::CreateR1<float>({1.0f, 2.0f}), {}),
              HasSubstr("o: shape f32[1]"));
}

TEST(CheckMetrics, BoundsAndGolden) {
  Scenario s;
  s.metrics["cycles"] = MetricCheck{true, 0.02, std::nullopt, 1000.0};
  const std::map<std::string, double> golden = {{"cycles", 900}};
  EXPECT_TRUE(CheckMetrics(s, {{"cycles", 910}}, &golden).empty());
  const auto failures = CheckMetrics(s, {{"cycles", 1100}}, &golden);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0], "cycles: 1100 is above the maximum 1000");
  EXPECT_EQ(failures[1],
            "cycles: 1100 differs from the golden 900 by 22.2222222% (tolerance 2%)");
}

class GoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tpusim_golden_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(GoldenTest, RoundTripsAndDetectsATornOutput) {
  Golden golden;
  golden.stamp = {"0.1.0", "00112233aabbccdd", "torus:2x2"};
  golden.metrics = {{"cycles", 1234}, {"time_us", 1.5}};
  golden.outputs.push_back({"output_0", Literal::CreateR1<float>({1.0f, 2.0f})});
  golden.outputs.push_back({"device_1/output_0", Literal::CreateR1<int32_t>({7})});
  ASSERT_TRUE(WriteGolden(dir_.string(), golden).ok());

  StatusOr<std::optional<Golden>> read = ReadGolden(dir_.string());
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_TRUE(read->has_value());
  EXPECT_EQ((*read)->stamp, golden.stamp);
  EXPECT_EQ((*read)->metrics, golden.metrics);
  ASSERT_EQ((*read)->outputs.size(), 2u);
  EXPECT_EQ((*read)->outputs[1].name, "device_1/output_0");
  EXPECT_TRUE((*read)->outputs[0].value == golden.outputs[0].value);

  // An output file that is not the one the manifest describes is reported.
  Golden other = golden;
  other.outputs[0].value = Literal::CreateR1<float>({5.0f, 6.0f});
  const fs::path elsewhere = dir_ / "other";
  ASSERT_TRUE(WriteGolden(elsewhere.string(), other).ok());
  fs::copy_file(elsewhere / "output_0.npy", dir_ / "output_0.npy",
                fs::copy_options::overwrite_existing);
  StatusOr<std::optional<Golden>> torn = ReadGolden(dir_.string());
  ASSERT_FALSE(torn.ok());
  EXPECT_THAT(torn.status().message(), HasSubstr("output_0.npy: error: checksum"));
}

TEST_F(GoldenTest, MissingGoldenIsNotAnError) {
  StatusOr<std::optional<Golden>> read = ReadGolden((dir_ / "none").string());
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->has_value());
}

TEST_F(GoldenTest, RewriteRemovesOutputsNoLongerProduced) {
  Golden golden;
  golden.outputs.push_back({"output_0", Literal::CreateR1<float>({1.0f})});
  golden.outputs.push_back({"output_1", Literal::CreateR1<float>({2.0f})});
  ASSERT_TRUE(WriteGolden(dir_.string(), golden).ok());
  golden.outputs.pop_back();
  ASSERT_TRUE(WriteGolden(dir_.string(), golden).ok());
  EXPECT_TRUE(fs::exists(dir_ / "output_0.npy"));
  EXPECT_FALSE(fs::exists(dir_ / "output_1.npy"));
}

TEST(Stamp, ChangesWithTopologyAndChip) {
  Scenario a;
  a.topology = "torus:2x2";
  Scenario b = a;
  b.topology = "torus:4x4";
  EXPECT_FALSE(StampOf(a) == StampOf(b));
  EXPECT_EQ(StampOf(a).chip_hash, "");
}

}  // namespace
}  // namespace tpusim::harness
