// Runs a validation suite: every published measurement's workload timed on its
// chip preset, the error against the published time, and each family's
// statistics against its bound (docs/validation.md).
#ifndef TPUSIM_HARNESS_VALIDATE_VALIDATION_H_
#define TPUSIM_HARNESS_VALIDATE_VALIDATION_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/validate/measurement.h"
#include "harness/validate/suite.h"
#include "sim/base/status.h"

namespace tpusim::harness {

struct ValidationOptions {
  std::vector<std::string> families;   ///< run only these; empty: all
  std::vector<std::string> chips;      ///< run only families on these presets; empty: all
  std::vector<std::string> overrides;  ///< -p key.path=value, applied to every preset
  std::string models_dir;              ///< where preset names resolve
  int jobs = 1;                        ///< child processes timing rows in parallel
  /// Called with (rows timed, rows in all) as shards finish; may be empty.
  std::function<void(int64_t, int64_t)> progress;
};

/// One measurement and what tpusim predicts for it.
struct ValidationRow {
  Measurement measurement;
  std::string family;
  double predicted_us = 0;
  std::string bound_by;  ///< the timed instruction's limiting unit ("module" for whole modules)
  std::string skipped;   ///< why no prediction was made; empty when there is one

  /// (predicted - measured) / measured.
  double Error() const {
    return (predicted_us - measurement.measured_us) / measurement.measured_us;
  }
};

/// A family's error statistics, in percent (r2 is a fraction).
struct FamilyStats {
  std::string name;
  std::string chip;
  std::string description;
  int64_t rows = 0;     ///< rows with a prediction
  int64_t skipped = 0;  ///< rows without one
  double mape = 0;      ///< mean |error|
  double median = 0;    ///< median |error|
  double max = 0;       ///< largest |error|
  double bias = 0;      ///< mean signed error: > 0 when tpusim is slower than silicon
  double r2 = 0;        ///< squared Pearson correlation of log(predicted) and log(measured)
  double max_mape = 0;
  double target_mape = 0;
  bool over_bound() const { return max_mape > 0 && rows > 0 && mape > max_mape; }
  /// The gate: over its bound, or rows left untimed (a row that stops
  /// running must not make the family's error look better than it is).
  bool failed() const { return over_bound() || skipped > 0; }
};

struct ValidationResult {
  std::vector<ValidationRow> rows;    ///< in suite order
  std::vector<FamilyStats> families;  ///< in suite order, then "all"
};

/// Loads every selected family's rows, generates and times their workloads
/// (in `options.jobs` child processes: one SystemC run per process), and
/// computes the statistics. Rows whose workload cannot be generated or timed
/// are kept with `skipped` set. Errors: the suite or a CSV unreadable, a
/// preset that does not load, a filter that matches nothing.
StatusOr<ValidationResult> RunValidation(const ValidationSuite& suite,
                                         const ValidationOptions& options);

/// The statistics of `rows` (those with a prediction).
FamilyStats ComputeStats(const std::vector<const ValidationRow*>& rows);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_VALIDATE_VALIDATION_H_
