// Published TPU timings, one per row of a CSV file in the layout of
// ../shared/reference/measurements/ (docs/validation.md, "Adding your own
// measurements"): what ran, on which chip, how long it took, and where the
// number was published.
#ifndef TPUSIM_HARNESS_VALIDATE_MEASUREMENT_H_
#define TPUSIM_HARNESS_VALIDATE_MEASUREMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/base/status.h"

namespace tpusim::harness {

/// One published timing.
struct Measurement {
  std::string id;                ///< unique key, e.g. "v4-mm-0001"
  std::string chip;              ///< "tpu-v4", "tpu-v7x": the preset it is compared on
  int64_t devices = 1;           ///< JAX devices the timed op ran on
  int64_t devices_per_chip = 1;  ///< 2 where each TensorCore is its own device (TPU7x)
  std::string topology;          ///< the slice, as published (free text)
  std::string op;                ///< HLO opcode timed, "fusion[NAME]" or "module[NAME]"
  std::string dtype;             ///< element types, as published
  std::string shapes;            ///< operands -> result in HLO notation
  std::string groups;            ///< replica groups of a collective; empty otherwise
  double measured_us = 0;        ///< the published time
  std::string statistic;         ///< mean, median, ... and the sample count
  std::string source;            ///< repo@commit:path:line
  std::string note;              ///< the workload and how the time was derived
  std::string where;             ///< FILE:LINE of the row, for messages
};

/// The rows of `path`: a header line naming at least the columns above (in
/// any order; others are ignored), then one row per measurement, RFC 4180
/// quoting. Errors read "FILE:LINE:COL: error: ..." (an unterminated quote, a
/// missing column, a row with too few fields, a time that is not a positive
/// number, a duplicate id).
StatusOr<std::vector<Measurement>> LoadMeasurements(const std::string& path);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_VALIDATE_MEASUREMENT_H_
