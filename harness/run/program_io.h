// A program's inputs and outputs as files: .npy inputs read from a directory,
// results written as .npy, and the one-line-per-output summary `tpusim exec`
// prints. docs/cli.md documents the file names.
#ifndef TPUSIM_HARNESS_RUN_PROGRAM_IO_H_
#define TPUSIM_HARNESS_RUN_PROGRAM_IO_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/module.h"
#include "sim/value/literal.h"

namespace tpusim::harness {

/// Reads the entry parameters of `module` from `dir`: `param_<N>.npy` for
/// parameter N, and for a tuple parameter `param_<N>_<i>.npy` for its i-th
/// array leaf (depth-first; token leaves take no file). With `device` set, a
/// file in `dir/device_<d>/` wins over the shared one in `dir`. Each file must
/// hold exactly the parameter's element type and dimensions. Errors
/// (kInvalidArgument) name the file and what was expected; kResourceExhausted
/// when the files of one device would exceed `max_bytes`.
StatusOr<std::vector<value::Literal>> ReadInputs(const hlo::HloModule& module,
                                                 const std::string& dir,
                                                 std::optional<int64_t> device, int64_t max_bytes);

/// One array leaf of a result, in output order, and the name its file takes:
/// "output" for an array result, "output_<i>" for the i-th array leaf of a
/// tuple result (depth-first; tokens are skipped but keep their number).
struct OutputLeaf {
  std::string name;
  const value::Literal* value = nullptr;
};
std::vector<OutputLeaf> OutputLeaves(const value::Literal& result);

/// What the outputs of `device` are named under in a program of
/// `device_count` devices: "device_<d>/" (their directory in --out, goldens
/// and reports), or "" for a single-device program.
std::string DeviceOutputPrefix(int64_t device_count, int64_t device);

/// Writes each leaf of `result` to `dir/<name>.npy` atomically, creating `dir`
/// (and its parents) when missing.
Status WriteOutputs(const value::Literal& result, const std::string& dir);

/// What the summary table shows of one output.
struct OutputSummary {
  std::string name;   ///< "output_1", or "device_3/output_1" for SPMD runs
  std::string shape;  ///< e.g. "bf16[8,128]"
  /// Over the non-NaN elements as doubles (complex: real parts); unset when
  /// there is none. `nan_count` counts the rest.
  std::optional<double> min, max, mean;
  int64_t nan_count = 0;
  /// FNV-1a 64 of the element bytes as stored (values.md's storage): equal
  /// checksums mean bit-identical outputs.
  uint64_t checksum = 0;
};
OutputSummary Summarize(const std::string& name, const value::Literal& leaf);

/// The summary as a table with a header row, columns aligned.
void PrintSummaryTable(const std::vector<OutputSummary>& rows, std::ostream& out);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_PROGRAM_IO_H_
