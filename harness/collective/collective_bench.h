// `tpusim collective`: one collective timed on an interconnect at each of a
// list of sizes, without an HLO module, and reported as tpusim's table (with
// the algorithm that ran and what bounded it), nccl-tests' layout (for the
// tools that read it) or JSON: quick what-if questions about a network.
#ifndef TPUSIM_HARNESS_COLLECTIVE_COLLECTIVE_BENCH_H_
#define TPUSIM_HARNESS_COLLECTIVE_COLLECTIVE_BENCH_H_

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"
#include "sim/ici/interconnect.h"

namespace tpusim::harness {

/// Device-steps timed per second. Measured 2026-12-04, Release -O2, on 2
/// cores shared with a build, all-reduce of 64MiB on tpu-v5e:
/// fattree:radix=32,levels=3 (4,096 chips, 49,152 device-steps) 1.5 s,
/// torus:16x16x16 (4,096 chips, 49,152) 1.4 s, fattree:radix=32,levels=4
/// (65,536 chips, 1,048,576) 26 s to 41 s: about 30,000 a second.
inline constexpr int64_t kDeviceStepsPerSecond = 30'000;

/// The most device-steps timed without `allow_large`: 2^18, about 8 s
/// (16,384 chips in one group run; 32,768 do not).
inline constexpr int64_t kMaxDeviceSteps = int64_t{1} << 18;

/// nccl-tests' element types (its -d), with their sizes in bytes: only its
/// count and type columns read them.
struct NcclType {
  std::string_view name;
  int64_t bytes = 0;
};
/// "int8", "float", "bfloat16", ...; kInvalidArgument listing them otherwise.
StatusOr<NcclType> ParseNcclType(std::string_view name);

/// The sizes a command line asks for, as written: one of `bytes`, `sweep`
/// and nccl-tests' `min_bytes`/`max_bytes` (with `step_factor`).
struct CollectiveSizeOptions {
  std::string bytes;  ///< one size: "64MiB", "1GB", or bare bytes
  std::string sweep;  ///< "LO:HI": every power of two between, both included
  /// nccl-tests' sweep (-b, -e, -f): sizes from min_bytes, times step_factor,
  /// up to max_bytes; -b or -e alone is one size.
  std::string min_bytes, max_bytes;
  int64_t step_factor = 2;
};
/// The sizes `options` names, ascending, each positive and at most 1 PiB.
StatusOr<std::vector<int64_t>> CollectiveSizes(const CollectiveSizeOptions& options);

enum class CollectiveReport : uint8_t {
  kTable,      ///< tpusim's table: size, time, algbw, busbw, algorithm, explanation
  kNcclTests,  ///< nccl-tests' header, columns and footer
};

/// What `tpusim collective` times, parsed from its command line.
struct CollectiveBench {
  ici::CollectiveKind kind = ici::CollectiveKind::kAllReduce;
  ici::Algorithm algorithm = ici::Algorithm::kAuto;
  std::vector<int64_t> sizes;          ///< bytes, ascending
  std::string chip;                    ///< preset name or YAML path (its ICI figures)
  std::vector<std::string> overrides;  ///< key.path=value on the preset
  std::string models_dir;              ///< where chip presets are found
  std::string topology;                ///< short form or YAML file
  /// Groups of logical devices, "0,1,2,3;4,5,6,7", read once the topology's
  /// device count is known; empty (and `first_devices` 0): one group of every device.
  std::string groups;
  int64_t first_devices = 0;  ///< > 0: one group of devices 0..N-1 (nccl-tests' -g)
  CollectiveReport report = CollectiveReport::kTable;
  NcclType datatype{"float", 4};
  std::string json;          ///< write the rows as JSON here; empty: do not
  bool allow_large = false;  ///< time past the transfer and device-step limits
};

/// Times `bench` at each size and writes its report to `out` (and its JSON
/// file); kInvalidArgument for bad presets, topologies, groups or sizes
/// beyond the limits, each prefixed with "tpusim collective: error: ".
Status TimeCollectiveBench(const CollectiveBench& bench, std::ostream& out);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_COLLECTIVE_COLLECTIVE_BENCH_H_
