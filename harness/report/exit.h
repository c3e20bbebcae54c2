// How a subcommand ends, as its caller sees it: the process exit code, the
// same for every subcommand (DESIGN.md) and stated in the JSON reports, and
// an error's message on the error stream.
#ifndef TPUSIM_HARNESS_REPORT_EXIT_H_
#define TPUSIM_HARNESS_REPORT_EXIT_H_

#include <iosfwd>

#include "sim/base/status.h"

namespace tpusim::harness {

/// Process exit codes, the same for every subcommand (DESIGN.md).
enum ExitCode : int {
  kExitOk = 0,           ///< success
  kExitCheckFailed = 1,  ///< a check on the input failed (e.g. `fmt --check`)
  kExitInputError = 2,   ///< bad usage, unreadable file, parse or verify error
};

/// Writes a failed status's message to `err` verbatim, ending it with a newline.
void PrintError(const Status& status, std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_REPORT_EXIT_H_
