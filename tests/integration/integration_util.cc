#include "tests/integration/integration_util.h"

#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <system_error>

namespace tpusim::test {

namespace fs = std::filesystem;

std::string Describe(const RunResult& r) {
  return "exit code " + std::to_string(r.exit_code) + "\n--- stdout ---\n" + r.out +
         "\n--- stderr ---\n" + r.err;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

ScratchDir::ScratchDir() {
  std::string pattern = ::testing::TempDir() + "tpusim_test_XXXXXX";
  if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path_.empty()) fs::remove_all(path_, ignored);
}

::testing::AssertionResult ListModules(const fs::path& dir, std::vector<fs::path>& modules) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return ::testing::AssertionFailure()
           << "module directory " << dir
           << " does not exist; set TPUSIM_CORPUS_DIR (cmake -DTPUSIM_CORPUS_DIR=...) to the "
              "shared corpus of HLO modules";
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") {
      modules.push_back(entry.path());
    }
  }
  if (ec) return ::testing::AssertionFailure() << "cannot list " << dir << ": " << ec.message();
  if (modules.empty()) {
    return ::testing::AssertionFailure() << "module directory " << dir << " has no .hlo files";
  }
  std::sort(modules.begin(), modules.end());
  return ::testing::AssertionSuccess();
}

}  // namespace tpusim::test
