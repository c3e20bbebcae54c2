// What `tpusim exec` reports of a finished run: the values' summary table
// (and each output as .npy), the op table, the JSON document and the
// Perfetto trace. docs/cli.md describes them.
#ifndef TPUSIM_HARNESS_RUN_RUN_REPORT_H_
#define TPUSIM_HARNESS_RUN_RUN_REPORT_H_

#include <cstdint>
#include <iosfwd>
#include <string>

#include "harness/run/module_run.h"
#include "harness/run/run_names.h"
#include "sim/base/status.h"

namespace tpusim::harness {

/// Where the report goes besides the terminal; an empty path: not written.
struct RunReportOptions {
  std::string out_dir;  ///< each output as .npy (device_<d>/ for SPMD programs)
  int64_t top = 10;     ///< instructions the op table lists
  std::string json;     ///< the whole report as JSON
  std::string trace;    ///< the Perfetto trace of a timed run
};

/// Writes `run`'s report (as `mode` ran it) to `out` and to the files
/// `options` names, atomically.
Status WriteRunReport(const ModuleRun& run, RunMode mode, const RunReportOptions& options,
                      std::ostream& out);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_RUN_REPORT_H_
