// `tpusim diff BEFORE AFTER`: runs two compilations of the same program on the
// same inputs and chip and gathers what changed — structure (module_diff),
// outputs (output_diff), time and bytes (perf_diff) — into a DiffReport, which
// diff_report.h judges and prints. docs/diff.md describes the comparison.
#ifndef TPUSIM_HARNESS_DIFF_PROGRAM_DIFF_H_
#define TPUSIM_HARNESS_DIFF_PROGRAM_DIFF_H_

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "harness/diff/module_diff.h"
#include "harness/diff/output_diff.h"
#include "harness/diff/perf_diff.h"
#include "harness/run/module_run.h"
#include "harness/run/run_spec.h"
#include "sim/arch/chip_config.h"
#include "sim/base/status.h"
#include "sim/hlo/module.h"
#include "sim/ici/interconnect.h"
#include "sim/value/compare.h"

namespace tpusim::harness {

/// What passes: a change within every threshold is no regression.
/// A gate on one total: its largest change, either way, in percent, and the
/// command line's spelling of it ("2%"), which the JSON report repeats.
struct ChangeTolerance {
  double percent = 0;
  std::string text;
};

struct DiffThresholds {
  double rtol = 1e-3;              ///< relative tolerance of an output element
  double atol = 1e-5;              ///< absolute tolerance of an output element
  std::optional<int64_t> max_ulp;  ///< an element within this many ulps passes too
  /// Outputs of these element types are held to their own tolerance instead
  /// (--type-tolerance).
  std::map<hlo::PrimitiveType, value::ErrorSpec> per_type;
  ChangeTolerance time{2, "2%"};   ///< total time
  ChangeTolerance bytes{1, "1%"};  ///< HBM bytes
  /// The collectives' time (Metrics::collective_time_us), gated like time:
  /// a schedule that no longer fits its network fails even when compute
  /// still hides it.
  ChangeTolerance collective{2, "2%"};
  /// Bytes on ICI links and the busiest link's bytes: reported whenever the
  /// modules ran on a network, gated only when given.
  std::optional<ChangeTolerance> ici_bytes;
  std::optional<ChangeTolerance> link_bytes;
  bool structure_fails = true;  ///< a structural change fails (--structure fail)
};

/// One `tpusim diff`, typed: its command line parsed once (cli/diff.cc).
struct DiffSpec {
  std::string before;  ///< path of the reference module
  std::string after;   ///< path of the module compared with it
  /// kFull compares outputs and times both, kTiming only times, kValues only
  /// computes outputs.
  RunMode mode = RunMode::kFull;
  EvaluationSpec evaluation;             ///< the inputs both run on, and how
  LoopLimits limits;                     ///< for both runs of each module
  std::optional<arch::ChipConfig> chip;  ///< the preset both are timed on; unset for kValues
  std::string chip_name;                 ///< that preset as given (name or file), for the reports
  std::string topology;                  ///< the network both run on; empty: device 0 alone
  std::string topology_after;            ///< AFTER's network when it differs; empty: `topology`'s
  /// The collective algorithm on the network; anything but kAuto needs one.
  ici::Algorithm algorithm = ici::Algorithm::kAuto;
  DiffThresholds thresholds;
  int64_t top = 10;  ///< instructions the reports list by time change
};

/// Everything `tpusim diff` found, before it is judged and printed.
struct DiffReport {
  bool values_run = false;  ///< outputs computed and compared (--mode full or values)
  /// Why the outputs were not compared although the mode asked for them:
  /// values that cannot be computed (ValuesCannotBeComputed). Empty otherwise.
  std::string values_skipped;
  /// When the outputs of only some devices were compared, which and why;
  /// unset when all were.
  std::optional<DeviceSubset> values_subset;
  bool timing_run = false;  ///< both timed (--mode full or timing)
  ModuleDiff structure;
  std::vector<OutputComparison> outputs;
  std::vector<std::string> output_count_notes;  ///< leaves present on one side only
  PerformanceDiff performance;
  // Changes in percent (PercentChange) of the totals the thresholds gate.
  double time_change = 0;
  double bytes_change = 0;       ///< HBM bytes
  double collective_change = 0;  ///< the collectives' time
  double ici_bytes_change = 0;   ///< 0 unless both ran on a network
  double link_bytes_change = 0;  ///< the busiest link's bytes
  /// The networks each ran on (Describe()), when they were given and differ
  /// (--topology-after): the change under study.
  std::string network_before;
  std::string network_after;
  /// The modules compared, which `structure` points into.
  std::unique_ptr<const hlo::HloModule> before_module;
  std::unique_ptr<const hlo::HloModule> after_module;
};

/// Reads, parses and verifies both modules, checks that they take the same
/// inputs, then compares them as `spec` says: structure always, outputs
/// (evaluated on the same inputs) and time (both timed in one SystemC run)
/// per its mode. Every error is an input error; `err` gets the warnings of
/// the values runs.
StatusOr<DiffReport> DiffPrograms(const DiffSpec& spec, std::ostream& err);

/// DiffPrograms for several pairs (the modules of two dump directories), all
/// timed in one SystemC run, since the kernel starts once per process: one
/// result per spec, in order. Every error is its own pair's: one module that
/// cannot be timed leaves the other pairs timed.
std::vector<StatusOr<DiffReport>> DiffProgramPairs(std::span<const DiffSpec> specs,
                                                   std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_DIFF_PROGRAM_DIFF_H_
