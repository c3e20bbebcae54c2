// The CI jobs of docs/examples/: every tpusim command they run, run here as
// the job would (in a checkout holding the scenarios, their goldens and the
// compiled module), and the compile script is valid Python. Only the hosted
// runner, the package install and the pip step are not exercised.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::SizeIs;

const fs::path kSource = TPUSIM_SOURCE_DIR;

/// The lines of `file` that run tpusim, without YAML list dashes.
std::vector<std::string> TpusimCommands(const fs::path& file) {
  std::istringstream in(ReadText(file));
  std::vector<std::string> commands;
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(" -");
    if (start != std::string::npos && line.compare(start, 7, "tpusim ") == 0) {
      commands.push_back(line.substr(start));
    }
  }
  return commands;
}

class CiExample : public ::testing::TestWithParam<const char*> {};

TEST_P(CiExample, ItsTpusimCommandsPassInACheckoutWithTheCompiledModule) {
  const std::vector<std::string> commands =
      TpusimCommands(kSource / "docs/examples" / GetParam());
  ASSERT_THAT(commands, SizeIs(2));  // check, then run
  ScratchDir checkout;
  fs::copy(kSource / "scenarios", checkout.path() / "scenarios", fs::copy_options::recursive);
  fs::copy(kSource / "golden", checkout.path() / "golden", fs::copy_options::recursive);
  // The compile step's output: a TPU-compiled module.
  fs::create_directories(checkout.path() / "hlo");
  fs::copy_file(kSource / "scenarios/hlo/mlp_bf16.hlo", checkout.path() / "hlo/mlp.hlo");
  const std::string bin = fs::path(TPUSIM_BINARY).parent_path().string();
  for (const std::string& command : commands) {
    const std::string in_checkout =
        "cd '" + checkout.path().string() + "' && PATH='" + bin + "':$PATH " + command;
    const RunResult r = RunBinary("/bin/sh", {"-c", in_checkout});
    EXPECT_EQ(r.exit_code, 0) << command << "\n" << Describe(r);
  }
  EXPECT_THAT(ReadText(checkout.path() / "junit.xml"), HasSubstr("<testsuites"));
  EXPECT_THAT(ReadText(checkout.path() / "results.json"), HasSubstr("\"failed\": 0"));
  EXPECT_TRUE(fs::exists(checkout.path() / "report/index.html"));
}

INSTANTIATE_TEST_SUITE_P(Jobs, CiExample,
                         ::testing::Values("github-actions.yml", "gitlab-ci.yml"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = fs::path(info.param).stem().string();
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CiExamples, TheCompileScriptIsValidPython) {
  const RunResult r = RunBinary(
      "/usr/bin/python3",
      {"-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())",
       (kSource / "docs/examples/compile_for_tpu.py").string()});
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
}

}  // namespace
}  // namespace tpusim::test
