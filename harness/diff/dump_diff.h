// `tpusim diff DUMP_BEFORE DUMP_AFTER`: the after-optimizations modules of two
// XLA dump directories paired by name (harness/run/dump_dir.h), each pair
// compared as two files are, all timed in one run; one verdict line per
// module, a summary, and the JSON report. docs/diff.md describes them.
#ifndef TPUSIM_HARNESS_DIFF_DUMP_DIFF_H_
#define TPUSIM_HARNESS_DIFF_DUMP_DIFF_H_

#include <iosfwd>
#include <string>

#include "harness/diff/program_diff.h"
#include "sim/base/status.h"

namespace tpusim::harness {

/// Compares the dump directories spec.before and spec.after: writes a
/// verdict line per module and the summary to `out`, each module's input
/// error to `err`, and the JSON report to `json` when it is not empty.
/// Returns the worst module's exit code (kExitInputError for a module that
/// could not be compared); an error for directories it cannot list or pair.
StatusOr<int> DiffDumpDirectories(const DiffSpec& spec, const std::string& json,
                                  std::ostream& out, std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_DIFF_DUMP_DIFF_H_
