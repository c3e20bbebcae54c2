// Every corpus module times on every preset without error, and the cycle
// count is deterministic: each module is simulated twice in the same batch and
// both runs must agree exactly. One preset per TEST (one SystemC run each).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sim/base/file.h"
#include "sim/timing/timing.h"
#include "tests/timing/timing_test_util.h"

namespace tpusim::timing {
namespace {

namespace fs = std::filesystem;

std::vector<std::unique_ptr<hlo::HloModule>> LoadCorpus() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(TPUSIM_CORPUS_DIR)) {
    if (entry.path().extension() == ".hlo") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  EXPECT_GE(paths.size(), 10u) << "corpus at " << TPUSIM_CORPUS_DIR;
  std::vector<std::unique_ptr<hlo::HloModule>> modules;
  for (const fs::path& p : paths) {
    auto text = ReadFile(p.string());
    EXPECT_TRUE(text.ok()) << p;
    if (!text.ok()) continue;
    auto m = hlo::ParseHloModule(*text, p.string());
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (m.ok()) modules.push_back(std::move(*m));
  }
  return modules;
}

class CorpusTiming : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTiming, EveryModuleTimesDeterministically) {
  const arch::ChipConfig chip = Preset(GetParam());
  const std::vector<std::unique_ptr<hlo::HloModule>> modules = LoadCorpus();
  std::vector<SimulationJob> jobs;
  for (const auto& m : modules) {
    jobs.push_back({m.get(), &chip, {}});
    jobs.push_back({m.get(), &chip, {}});
  }
  auto results = SimulateBatch(jobs);
  ASSERT_TRUE(results.ok()) << results.status().message();
  ASSERT_EQ(results->size(), 2 * modules.size());
  int64_t busy_modules = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    const TimingResult& a = (*results)[2 * i];
    const TimingResult& b = (*results)[2 * i + 1];
    EXPECT_EQ(a.cycles, b.cycles) << modules[i]->name();
    EXPECT_EQ(a.hbm_bytes, b.hbm_bytes) << modules[i]->name();
    ASSERT_EQ(a.ops.size(), b.ops.size()) << modules[i]->name();
    for (size_t k = 0; k < a.ops.size(); ++k) EXPECT_EQ(a.ops[k].start_cycle, b.ops[k].start_cycle);
    if (a.cycles > 0) ++busy_modules;
  }
  // Nearly every module does some work (a few only pass tokens or tuples around).
  EXPECT_GE(busy_modules * 10, static_cast<int64_t>(modules.size()) * 9);
}

INSTANTIATE_TEST_SUITE_P(Presets, CorpusTiming,
                         ::testing::Values("tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e",
                                           "tpu-v7x"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace tpusim::timing
