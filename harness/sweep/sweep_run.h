// `tpusim sweep`'s run: a study's points, each in its own child process
// (`tpusim scenario-exec`, like `tpusim run`) up to `jobs` at once on every
// MPI rank, each result appended as it finishes, and the plots drawn when the
// last point is in. SIGINT or SIGTERM stops it so that --resume continues.
#ifndef TPUSIM_HARNESS_SWEEP_SWEEP_RUN_H_
#define TPUSIM_HARNESS_SWEEP_SWEEP_RUN_H_

#include <cstdint>
#include <iosfwd>
#include <string>

#include "sim/base/status.h"

namespace tpusim::harness {

/// What a sweep is asked to do (`tpusim sweep STUDY --out DIR ...`).
struct SweepOptions {
  std::string study;       ///< the study file (*.study.yaml)
  std::string out;         ///< the results directory
  int64_t jobs = 1;        ///< points run at once (per rank)
  bool resume = false;     ///< continue the sweep in `out`, skipping the points done
  std::string models_dir;  ///< where preset names resolve; AddSweepCommand sets the default
  double timeout = 600;    ///< seconds a point may run unless its scenario sets `timeout`
};

/// How a sweep ended on this rank.
struct SweepOutcome {
  enum class End : uint8_t {
    kEveryPointRan,    ///< rank 0: all points are in the results, the plots drawn
    kPointFailed,      ///< as kEveryPointRan, but a point failed (error, crash, timeout)
    kInterrupted,      ///< by `signal`: the points done are kept for --resume
    kRanksStoppedEarly,  ///< rank 0: an MPI rank left points unrun (no signal)
    kReportedByRankZero,  ///< another rank: the study or results failed; rank 0 said why
  };
  End end = End::kEveryPointRan;
  bool rank_zero = true;  ///< this rank holds the results (and reports them)
  int signal = 0;     ///< with kInterrupted: SIGINT or SIGTERM
  size_t points = 0;  ///< the study's points
  size_t done = 0;    ///< in the results (rank 0)
  size_t ok = 0;      ///< of those, the ones that ran (rank 0, kEveryPointRan/kPointFailed)
  std::string name;   ///< the study's name
};

/// Runs the sweep `options` asks for, drawing its progress on `err`;
/// errors for a bad study or results directory, or results it cannot write.
StatusOr<SweepOutcome> RunStudy(const SweepOptions& options, std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SWEEP_SWEEP_RUN_H_
