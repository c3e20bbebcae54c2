// Every corpus module times on every preset without error, and the cycle
// count is deterministic: each module is simulated twice in the same batch and
// both runs must agree exactly. A third run simulates every loop iteration
// (no fast-forward) and must agree with them in cycles and in every
// instruction's runs and totals. One preset per TEST (one SystemC run each).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
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

/// Each instruction's runs and cycles, FLOPs and HBM bytes summed over them.
std::map<std::string, std::array<int64_t, 4>> TotalsByInstruction(const TimingResult& r) {
  std::map<std::string, std::array<int64_t, 4>> totals;
  for (const OpRecord& op : r.ops) {
    std::array<int64_t, 4>& t = totals[op.instruction->name()];
    t[0] += op.runs;
    t[1] += op.TotalCycles();
    t[2] += op.TotalFlops();
    t[3] += op.TotalHbmBytes();
  }
  return totals;
}

class CorpusTiming : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusTiming, EveryModuleTimesDeterministically) {
  const arch::ChipConfig chip = Preset(GetParam());
  const std::vector<std::unique_ptr<hlo::HloModule>> modules = LoadCorpus();
  TimingOptions unrolled;
  unrolled.fast_forward_loops = false;
  std::vector<SimulationJob> jobs;
  for (const auto& m : modules) {
    jobs.push_back({m.get(), &chip, {}});
    jobs.push_back({m.get(), &chip, {}});
    jobs.push_back({m.get(), &chip, unrolled});
  }
  auto results = AllTimed(SimulateBatch(jobs));
  ASSERT_TRUE(results.ok()) << results.status().message();
  ASSERT_EQ(results->size(), 3 * modules.size());
  int64_t busy_modules = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    const TimingResult& a = (*results)[3 * i];
    const TimingResult& b = (*results)[3 * i + 1];
    const TimingResult& every_iteration = (*results)[3 * i + 2];
    EXPECT_EQ(a.cycles, every_iteration.cycles) << modules[i]->name();
    EXPECT_EQ(a.flops, every_iteration.flops) << modules[i]->name();
    EXPECT_EQ(TotalsByInstruction(a), TotalsByInstruction(every_iteration)) << modules[i]->name();
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
