// `tpusim check` on malformed HLO: every file in tests/hlo/malformed/ holds one
// mistake and names, on its first line, the error it must produce:
//
//   // expect: <text the error message contains>
//
// Each file is its own test case. The contract: exit code 2, a first stderr
// line "FILE:LINE:COL: error: ..." pointing into the file (past the expect
// comment), the expected text in that line, and no sanitizer report.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/run_binary.h"

namespace tpusim::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kExpectPrefix = "// expect: ";

/// File names (not paths) of the malformed inputs, sorted so the test order and
/// names are stable.
std::vector<std::string> MalformedFiles() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(TPUSIM_MALFORMED_DIR, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Everything about a run, for failure messages.
std::string Describe(const RunResult& r) {
  return "exit code " + std::to_string(r.exit_code) + "\n--- stdout ---\n" + r.out +
         "\n--- stderr ---\n" + r.err;
}

TEST(MalformedSuite, HasAtLeastFortyFiles) {
  EXPECT_GE(MalformedFiles().size(), 40u) << "in " << TPUSIM_MALFORMED_DIR;
}

class MalformedHlo : public ::testing::TestWithParam<std::string> {};

TEST_P(MalformedHlo, CheckReportsTheExpectedErrorAtItsLocationAndExitsTwo) {
  const std::string path = (fs::path(TPUSIM_MALFORMED_DIR) / GetParam()).string();
  const std::string text = ReadBytes(path);
  ASSERT_TRUE(text.starts_with(kExpectPrefix))
      << path << ": the first line must be '" << kExpectPrefix << "<error text>'";
  const size_t eol = text.find('\n');
  ASSERT_NE(eol, std::string::npos) << path << ": the expect comment needs a newline";
  const std::string expected = text.substr(kExpectPrefix.size(), eol - kExpectPrefix.size());
  ASSERT_FALSE(expected.empty()) << path << ": empty expectation";
  const int64_t line_count = std::count(text.begin(), text.end(), '\n') + 1;

  const RunResult r = RunBinary(TPUSIM_BINARY, {"check", path});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_EQ(r.out, "") << Describe(r);
  EXPECT_THAT(r.err, Not(HasSubstr("Sanitizer"))) << Describe(r);
  EXPECT_THAT(r.err, Not(HasSubstr("runtime error"))) << Describe(r);

  const std::string first_line = r.err.substr(0, r.err.find('\n'));
  ASSERT_TRUE(first_line.starts_with(path + ":")) << Describe(r);
  const std::string located = first_line.substr(path.size() + 1);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(located, m, std::regex("^([0-9]+):([0-9]+): error: ")))
      << "the first line of stderr must read FILE:LINE:COL: error: ...\n" << Describe(r);
  const int64_t line = std::stoll(m[1].str());
  const int64_t column = std::stoll(m[2].str());
  EXPECT_GE(line, 2) << "the error must point past the expect comment\n" << Describe(r);
  EXPECT_LE(line, line_count) << Describe(r);
  EXPECT_GE(column, 1) << Describe(r);
  EXPECT_THAT(first_line, HasSubstr(expected)) << Describe(r);
}

/// gtest names allow only [A-Za-z0-9_].
std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = fs::path(info.param).stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Files, MalformedHlo, ::testing::ValuesIn(MalformedFiles()), TestName);

}  // namespace
}  // namespace tpusim::test
