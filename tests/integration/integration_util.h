// Helpers shared by the integration tests: describing a run, reading and
// writing files, scratch directories, listing the corpus.
#ifndef TPUSIM_TESTS_INTEGRATION_INTEGRATION_UTIL_H_
#define TPUSIM_TESTS_INTEGRATION_INTEGRATION_UTIL_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/integration/run_binary.h"

namespace tpusim::test {

/// Everything about a run, for failure messages.
std::string Describe(const RunResult& r);

/// The whole file, or "" when it cannot be read.
std::string ReadText(const std::filesystem::path& path);
/// Replaces the file with `text`; a failure is a test failure.
void WriteText(const std::filesystem::path& path, const std::string& text);

/// A fresh directory for one test, removed with everything in it afterwards.
class ScratchDir {
 public:
  ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();
  /// A path inside the directory.
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;  ///< empty if mkdtemp failed (tests then fail on file access)
};

/// The names of the files directly in `dir` ending with `suffix`, sorted.
std::vector<std::string> FileNamesEndingWith(const std::filesystem::path& dir, const std::string& suffix);

/// The error a malformed input file (tests/harness/malformed_*) must produce:
/// its first line "# expect: LINE:COL: TEXT" becomes "PATH:LINE:COL: error: TEXT"
/// (TEXT may begin with "error:" itself). A missing line is a test failure,
/// and the result is then "".
std::string ExpectedError(const std::string& path);

/// The *.hlo files directly in `dir`, sorted by name; fails when there are none.
::testing::AssertionResult ListModules(const std::filesystem::path& dir,
                                       std::vector<std::filesystem::path>& modules);

/// A module of one while loop, `w` at 24:3, of 10 iterations whose trip count
/// timing reads off the condition.
inline constexpr char kTenIterationLoopModule[] = R"(HloModule loop

cond {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  x = f32[8] get-tuple-element(p), index=1
  y = f32[8] exponential(x)
  ROOT t = (s32[], f32[8]) tuple(next, y)
}

ENTRY e {
  zero = s32[] constant(0)
  x = f32[8] parameter(0)
  t = (s32[], f32[8]) tuple(zero, x)
  ROOT w = (s32[], f32[8]) while(t), condition=cond, body=body
}
)";

}  // namespace tpusim::test

#endif  // TPUSIM_TESTS_INTEGRATION_INTEGRATION_UTIL_H_
