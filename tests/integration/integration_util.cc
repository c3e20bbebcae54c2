#include "tests/integration/integration_util.h"

#include <stdlib.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string_view>
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

std::vector<std::string> FileNamesEndingWith(const fs::path& dir, const std::string& suffix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(suffix)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ExpectedError(const std::string& path) {
  constexpr std::string_view kPrefix = "# expect: ";
  const std::string text = ReadText(path);
  if (text.rfind(kPrefix, 0) != 0) {
    ADD_FAILURE() << path << " must start with '# expect: '";
    return "";
  }
  // "12:3: key path `x`: ..." -> "PATH:12:3: error: key path `x`: ..."
  const std::string expect = text.substr(kPrefix.size(), text.find('\n') - kPrefix.size());
  const size_t second_colon = expect.find(':', expect.find(':') + 1);
  const std::string what = expect.substr(second_colon + 1);
  return path + ":" + expect.substr(0, second_colon) + ":" +
         (what.rfind(" error:", 0) == 0 ? "" : " error:") + what;
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
