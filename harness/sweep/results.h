// The results directory of `tpusim sweep` (docs/sweeps.md, "Results"):
// DIR/results.jsonl, the journal, one JSON line per finished point, and
// DIR/results.csv, the same as a table. Each point is appended to both and
// fsynced as it finishes; when every point is done both are rewritten in
// point order (atomically), so that any two runs of a study, interrupted or
// not, one process or many, end with the same bytes. DIR/study.json stamps the
// directory with the study it holds.
#ifndef TPUSIM_HARNESS_SWEEP_RESULTS_H_
#define TPUSIM_HARNESS_SWEEP_RESULTS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/sweep/study.h"
#include "sim/base/status.h"

namespace tpusim::harness {

/// What became of one point. Nothing in it varies between identical runs.
struct PointResult {
  int64_t index = 0;
  std::string key;  ///< StudyPoint::key
  /// ok; error (the point's scenario failed to run: an input error, a
  /// deadlock...); crashed (the child died); timeout.
  std::string status;
  std::map<std::string, double> metrics;  ///< the simulated metrics, when timed
  std::string message;                    ///< why it is not ok, one line
};

/// The point as one JSON line (no newline): index, point, params (axis:
/// label), status, metrics, message.
std::string ResultJsonLine(const Study& study, const PointResult& result);
/// Parses a journal line back; an error when it is malformed or names a
/// point this study does not have (another study's results).
StatusOr<PointResult> ResultFromJsonLine(const Study& study, const std::string& line,
                                         const std::string& where);

/// The CSV header row and one row per point (RFC 4180 quoting), newline-ended.
std::string ResultsCsvHeader(const Study& study);
std::string ResultCsvRow(const Study& study, const PointResult& result);

/// The open results directory of one sweep.
class ResultsDir {
 public:
  /// Opens `dir` (created when missing) for `study`. Without `resume`, a
  /// directory already holding a sweep is an error. With it, the journal's
  /// complete lines are the points done (a torn last line, left by SIGKILL,
  /// is dropped and its point runs again), the CSV is rebuilt from them, and
  /// a directory stamped by another study is an error.
  static StatusOr<ResultsDir> Open(const std::string& dir, const Study& study, bool resume);
  ResultsDir(ResultsDir&& other) noexcept;
  ResultsDir& operator=(ResultsDir&&) = delete;
  ResultsDir(const ResultsDir&) = delete;
  ~ResultsDir();

  /// The points done, in the order they finished.
  const std::vector<PointResult>& done() const { return done_; }
  /// Appends a finished point to both files, each flushed and fsynced.
  Status Append(const PointResult& result);
  /// Every point is done: rewrites both files in point order, atomically.
  Status Finish();

 private:
  ResultsDir(std::string dir, const Study& study) : dir_(std::move(dir)), study_(&study) {}
  Status OpenForAppend();

  std::string dir_;
  const Study* study_;
  std::vector<PointResult> done_;
  int jsonl_fd_ = -1;
  int csv_fd_ = -1;
};

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SWEEP_RESULTS_H_
