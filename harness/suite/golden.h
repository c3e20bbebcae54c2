// The golden store (docs/scenarios.md, "Goldens"): per scenario a directory
// `GOLDEN_ROOT/<name>/` with each output as .npy, the module the golden was
// made from as `module.hlo` (printed canonically), and `metrics.json`, the
// manifest: the stamp (tpusim version, chip preset hash, topology), the
// metrics and every file's FNV-1a checksum. Files are replaced
// atomically and the manifest last, so an interrupted update leaves every
// file old or new, and a manifest that disagrees with an output file is
// reported rather than compared.
#ifndef TPUSIM_HARNESS_SUITE_GOLDEN_H_
#define TPUSIM_HARNESS_SUITE_GOLDEN_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/suite/scenario.h"
#include "sim/base/status.h"
#include "sim/value/literal.h"

namespace tpusim::harness {

/// Which simulator and hardware a golden was made by.
struct GoldenStamp {
  std::string version;  ///< tpusim version
  std::string
      chip_hash;  ///< arch::ConfigHash of the resolved preset, 16 hex digits; "" without a chip
  std::string topology;  ///< canonical topology text, or ""
  friend bool operator==(const GoldenStamp&, const GoldenStamp&) = default;
};

/// The stamp a run of `scenario` with this build would write.
GoldenStamp StampOf(const Scenario& scenario);

/// One golden output: its name ("output_0", "device_1/output_0") and value.
struct GoldenOutput {
  std::string name;
  value::Literal value;
};

struct Golden {
  GoldenStamp stamp;
  std::map<std::string, double> metrics;
  std::vector<GoldenOutput> outputs;
  /// The module the golden was made from (hlo::PrintModule), which a failing
  /// run is diffed against to name the cause; "" in goldens written before
  /// tpusim kept it.
  std::string module_text;
};

/// The file of the golden module in a golden directory.
inline constexpr char kGoldenModuleFile[] = "module.hlo";

/// The golden directory of `scenario_name` under `root`.
std::string GoldenDir(const std::string& root, const std::string& scenario_name);

/// Reads the golden in `dir`: nullopt when there is no manifest; an error
/// when the manifest is malformed or an output file is missing or does not
/// match the checksum the manifest records.
StatusOr<std::optional<Golden>> ReadGolden(const std::string& dir);

/// Writes `golden` into `dir` (created when missing): each output .npy and
/// the module atomically, then the manifest atomically, then removes output files the
/// new manifest does not list.
Status WriteGolden(const std::string& dir, const Golden& golden);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_GOLDEN_H_
