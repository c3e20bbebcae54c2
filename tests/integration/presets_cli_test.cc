// Integration tests of `tpusim presets`: the table lists every chip preset in
// models/ and the exit code follows DESIGN.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::string Describe(const RunResult& r) {
  return "exit code " + std::to_string(r.exit_code) + "\n--- stdout ---\n" + r.out +
         "\n--- stderr ---\n" + r.err;
}

TEST(PresetsCli, ListsEveryPresetInModelsAndExitsZero) {
  const RunResult r = RunBinary(TPUSIM_BINARY, {"presets"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_THAT(r.err, IsEmpty());
  EXPECT_THAT(r.out, StartsWith("NAME "));
  std::vector<std::string> presets;
  for (const fs::directory_entry& e : fs::directory_iterator(TPUSIM_MODELS_DIR)) {
    if (e.path().extension() == ".yaml") presets.push_back(e.path().stem().string());
  }
  ASSERT_GE(presets.size(), 4u);
  for (const std::string& name : presets) EXPECT_THAT(r.out, HasSubstr("\n" + name + " "));
  // A headline row as tpu-facts.md gives it: 197 TFLOP/s, 819 GB/s [GC-v5e].
  EXPECT_THAT(r.out, HasSubstr("tpu-v5e  -         1.5 GHz   1x4 128x128"));
  EXPECT_THAT(r.out, HasSubstr("197       819     14.9  4 x 45\n"));
  // Devices per chip: TPU7x exposes each of its 2 TensorCores; v4's megacore is one device.
  EXPECT_THAT(r.out, HasSubstr("2x4 256x256" + std::string(17, ' ') + "2  "));
  EXPECT_THAT(r.out, HasSubstr("2x4 128x128" + std::string(17, ' ') + "1  "));
}

TEST(PresetsCli, BrokenPresetIsReportedAndExitsTwo) {
  std::string dir = ::testing::TempDir() + "tpusim_presets_cli_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/broken.yaml") << "mxu: {rowz: 1}\n";
  const RunResult r = RunBinary(TPUSIM_BINARY, {"presets", "--models-dir", dir});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr(dir + "/broken.yaml:1:7: error: unknown key 'mxu.rowz'"));
  fs::remove_all(dir);
}

TEST(PresetsCli, MissingModelsDirectoryExitsTwo) {
  const RunResult r = RunBinary(TPUSIM_BINARY, {"presets", "--models-dir", "/nonexistent/models"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/models: error: cannot list chip presets"));
}

}  // namespace
}  // namespace tpusim::test
