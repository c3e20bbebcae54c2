// Running a program as a child process and capturing what it prints, for
// integration tests of the `tpusim` binary.
#ifndef TPUSIM_TESTS_INTEGRATION_RUN_BINARY_H_
#define TPUSIM_TESTS_INTEGRATION_RUN_BINARY_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace tpusim::test {

/// How a child process ended and what it wrote.
struct RunResult {
  /// The exit status, or 128 + signal number when a signal killed it (as a
  /// shell reports it), or -1 when the program could not be started.
  int exit_code = -1;
  std::string out;  ///< everything written to stdout
  std::string err;  ///< everything written to stderr (or why spawning failed)
};

/// Runs `program` with `args` (argv[1...]), stdin from /dev/null, and waits
/// for it. Both output streams are drained concurrently, so a child that fills
/// one pipe cannot deadlock.
RunResult RunBinary(const std::string& program, const std::vector<std::string>& args);

/// Starts `program` with `args` (argv[1...]) in a process group of its own,
/// its output to /dev/null, and returns at once: for tests that signal a
/// running program (kill(pid, ...)) or all it started (kill(-pid, ...)).
/// -1 when fork fails.
pid_t StartInOwnGroup(const std::string& program, const std::vector<std::string>& args);

/// Appends `option` ("name=value") to ASAN_OPTIONS in this process's
/// environment, which children inherit. A no-op for what a build without
/// AddressSanitizer does; under it, a test whose premise the sanitizer would
/// change (a signal injected from outside, a library's leaks) says so here.
void AddSanitizerOption(const std::string& option);

}  // namespace tpusim::test

#endif  // TPUSIM_TESTS_INTEGRATION_RUN_BINARY_H_
