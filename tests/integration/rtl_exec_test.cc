// Issue 7's point 3: `tpusim exec --mxu rtl` (dot and convolution products
// through the Verilated 128x128 array) writes the same outputs, byte for byte,
// as the default analytic MXU on every corpus module whose products fit the
// size limit below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;

/// The corpus modules whose dots and convolutions execute at most 2^20
/// multiply-adds in all (one device), so that the RTL runs them in seconds:
/// every such module of the corpus, found by scanning the corpus for dot and
/// convolution instructions and their operand shapes.
const std::vector<std::string> kModules = {
    "fully_connected_reference_model.hlo",
    "gpu_triton_gemm_fusion.hlo",
    "cpu_thunk_coverage_mix.hlo",
};

/// Every regular file under `dir`, relative to it, sorted.
std::vector<std::string> Files(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), dir).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class RtlExec : public ::testing::TestWithParam<std::string> {};

TEST_P(RtlExec, OutputsEqualTheAnalyticMxu) {
  const std::string module = (fs::path(TPUSIM_CORPUS_DIR) / GetParam()).string();
  ScratchDir dir;
  const RunResult analytic = RunBinary(
      TPUSIM_BINARY, {"exec", module, "--inputs", "seed:3", "--mxu", "analytic", "--out", dir / "analytic"});
  ASSERT_EQ(analytic.exit_code, 0) << Describe(analytic);
  const RunResult rtl =
      RunBinary(TPUSIM_BINARY, {"exec", module, "--inputs", "seed:3", "--mxu", "rtl", "--out", dir / "rtl"});
  ASSERT_EQ(rtl.exit_code, 0) << Describe(rtl);
  const std::vector<std::string> files = Files(dir.path() / "analytic");
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(Files(dir.path() / "rtl"), files);
  for (const std::string& file : files) {
    EXPECT_EQ(ReadText(dir.path() / "rtl" / file), ReadText(dir.path() / "analytic" / file)) << file;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, RtlExec, ::testing::ValuesIn(kModules),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id;
                           for (char c : fs::path(info.param).stem().string()) {
                             id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return id;
                         });

}  // namespace
}  // namespace tpusim::test
