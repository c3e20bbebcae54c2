// `tpusim run PATH...`: finds scenario files, runs each in its own child
// process (`tpusim scenario-exec`) up to `jobs` at once, and reports the
// suite: its table, JSON, JUnit, HTML and GitHub annotations.
#ifndef TPUSIM_HARNESS_SUITE_SUITE_RUN_H_
#define TPUSIM_HARNESS_SUITE_SUITE_RUN_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace tpusim::harness {

/// What a suite run is asked to do (`tpusim run PATH... [-j N] [--filter
/// GLOB] [--update-golden] [--json OUT] [--junit OUT] [--report DIR]
/// [--github-annotations]`).
struct RunOptions {
  std::vector<std::string> paths;  ///< scenario files or directories searched recursively
  int64_t jobs = 1;                ///< scenarios run at once
  std::string filter;              ///< glob over scenario names; empty: all
  bool update_golden = false;      ///< write goldens instead of comparing with them
  std::string json;                ///< suite report as JSON here; empty: do not
  std::string junit;               ///< JUnit XML here; empty: do not
  std::string report;              ///< HTML report (and traces) into this directory; empty: do not
  bool github_annotations = false;  ///< print GitHub Actions ::error/::warning lines
  /// The golden store's root; empty: the nearest directory named `golden` in
  /// or above the first path, else ./golden.
  std::string golden_dir;
  std::string models_dir;  ///< where preset names resolve; AddRunCommand sets the default
  double timeout = 600;    ///< seconds per scenario unless it says `timeout`
};

/// Runs the suite `options` names, writing its table to `out` and progress
/// and errors to `err`. Returns the exit code: kExitOk when every scenario
/// passed, kExitCheckFailed when one failed (a check, a stale golden, a crash
/// or timeout), kExitInputError when one could not be loaded or run, or no
/// scenario was found.
int RunSuite(const RunOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_SUITE_RUN_H_
