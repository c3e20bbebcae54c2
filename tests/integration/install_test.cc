// `cmake --install` and the Debian package CPack makes: the installed tpusim,
// its prefix moved anywhere, finds its presets and validation suite beside
// itself, and the package says which Debian packages it needs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/integration_util.h"
#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kModule = std::string(TPUSIM_CORPUS_DIR) + "/composite_call.hlo";

TEST(Install, TheInstalledBinaryFindsItsDataWhereverThePrefixIsMoved) {
  ScratchDir dir;
  const RunResult install =
      RunBinary(TPUSIM_CMAKE, {"--install", TPUSIM_BUILD_DIR, "--prefix", dir / "prefix"});
  ASSERT_EQ(install.exit_code, 0) << Describe(install);
  fs::rename(dir / "prefix", dir / "moved");
  const std::string tpusim = dir / "moved/bin/tpusim";
  const std::string share = dir / "moved/share/tpusim";

  const RunResult help = RunBinary(tpusim, {"presets", "--help"});
  EXPECT_THAT(help.out, HasSubstr("default: " + share + "/models"));
  const RunResult presets = RunBinary(tpusim, {"presets"});
  EXPECT_EQ(presets.exit_code, 0) << Describe(presets);
  EXPECT_THAT(presets.out, HasSubstr("tpu-v5e"));
  EXPECT_THAT(RunBinary(tpusim, {"validate", "--help"}).out,
              HasSubstr("default: " + share + "/validation/tpu.validation.yaml"));
  const RunResult exec =
      RunBinary(tpusim, {"exec", "--mode", "timing", "--chip", "tpu-v5e", kModule});
  EXPECT_EQ(exec.exit_code, 0) << Describe(exec);
  EXPECT_TRUE(fs::exists(dir / "moved/share/doc/tpusim/CHANGELOG.md"));
  EXPECT_TRUE(fs::exists(share + "/python/tpusim/__init__.py"));  // docs/python.md
  EXPECT_TRUE(fs::exists(share + "/python/tpusim/pytest_plugin.py"));

  // TPUSIM_MODELS_DIR wins over the installed presets.
  fs::create_directory(dir / "mine");
  fs::copy_file(std::string(TPUSIM_SOURCE_DIR) + "/models/test/tiny-chip.yaml",
                dir / "mine/tiny-chip.yaml");
  ASSERT_EQ(setenv("TPUSIM_MODELS_DIR", (dir / "mine").c_str(), 1), 0);
  const RunResult mine = RunBinary(tpusim, {"presets"});
  unsetenv("TPUSIM_MODELS_DIR");
  EXPECT_THAT(mine.out, HasSubstr("tiny-chip"));
  EXPECT_THAT(mine.out, Not(HasSubstr("tpu-v5e")));
}

TEST(Install, TheDebianPackageHoldsTheBinaryItsDataAndItsDependencies) {
  ScratchDir dir;
  const RunResult pack = RunBinary(
      TPUSIM_CPACK, {"-G", "DEB", "--config", std::string(TPUSIM_BUILD_DIR) + "/CPackConfig.cmake",
                     "-B", dir / "package"});
  ASSERT_EQ(pack.exit_code, 0) << Describe(pack);
  const std::vector<std::string> debs = FileNamesEndingWith(dir.path() / "package", ".deb");
  ASSERT_EQ(debs.size(), 1u) << Describe(pack);
  const std::string deb = dir / ("package/" + debs[0]);
  const RunResult fields = RunBinary("/usr/bin/dpkg-deb", {"--field", deb, "Package", "Depends"});
  EXPECT_THAT(fields.out, HasSubstr("Package: tpusim"));
  EXPECT_THAT(fields.out, HasSubstr("libsystemc"));
  EXPECT_THAT(fields.out, HasSubstr("libyaml-cpp"));

  const RunResult unpack = RunBinary("/usr/bin/dpkg-deb", {"--extract", deb, dir / "root"});
  ASSERT_EQ(unpack.exit_code, 0) << Describe(unpack);
  const std::string tpusim = dir / "root/usr/bin/tpusim";
  const RunResult presets = RunBinary(tpusim, {"presets", "--help"});
  EXPECT_THAT(presets.out, HasSubstr("default: " + (dir / "root/usr/share/tpusim/models")));
  const RunResult exec =
      RunBinary(tpusim, {"exec", "--mode", "timing", "--chip", "tpu-v7x", kModule});
  EXPECT_EQ(exec.exit_code, 0) << Describe(exec);
}

}  // namespace
}  // namespace tpusim::test
