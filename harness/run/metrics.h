// The totals of one timed run, computed once from its timing::TimingResult: what
// scenarios check, goldens keep, sweeps tabulate and `tpusim diff` compares.
#ifndef TPUSIM_HARNESS_RUN_METRICS_H_
#define TPUSIM_HARNESS_RUN_METRICS_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/timing/timing.h"

namespace tpusim::harness {

struct Metrics {
  int64_t cycles = 0;  ///< timing::TimingResult::cycles
  double time_us = 0;  ///< timing::TimingResult::time_us
  int64_t flops = 0;
  int64_t hbm_bytes = 0;
  /// Bytes moved to and from host memory over PCIe (timing::TimingResult's).
  int64_t pcie_bytes = 0;
  /// Time of the collectives. On a network, the collective timeline's: each
  /// instance from its start to its last transfer; without one, the
  /// collective instructions' own records, async `-done` waits included.
  double collective_time_us = 0;
  /// What compute did not hide of it: the time TensorCore 0 spent in
  /// collective instructions and in the `-done` waits of async ones (their
  /// own records), the collectives' share of the critical path.
  double exposed_collective_time_us = 0;
  double utilisation = 0;  ///< flops / (peak FLOP/s x time); 0 when no time passed
  /// Bytes the collectives put on the links, summed over links; unset when
  /// the run had no network.
  std::optional<int64_t> ici_bytes;
  double link_utilisation = 0;  ///< the busiest link's fraction of its bandwidth over the run
  /// The bytes of the link that carried most; 0 without a network. Not a
  /// checked metric: `tpusim diff --link-tolerance` gates it.
  int64_t busiest_link_bytes = 0;
  /// Result bytes of every executed collective (a `*-start` counts its
  /// result, not its operands), from the shapes: what the collectives
  /// deliver, not the traffic on the links. Not a checked metric (not in
  /// metrics.def): `tpusim diff` reports it.
  int64_t collective_bytes = 0;
};

/// The metrics of `result`.
Metrics MetricsOf(const timing::TimingResult& result);

/// The metrics of metrics.def by name, as goldens, scenario results and sweep
/// results store them (ici_bytes 0 without a network).
std::map<std::string, double> NamedMetrics(const Metrics& metrics);

/// The `metrics` object of golden manifests, scenario results and sweep
/// results: {name: value} in name order, one writer for all three.
nlohmann::ordered_json MetricsJson(const std::map<std::string, double>& metrics);
/// MetricsJson's inverse; throws nlohmann::json::exception when `json` is not
/// an object of numbers (the caller names its file).
std::map<std::string, double> MetricsFromJson(const nlohmann::ordered_json& json);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_RUN_METRICS_H_
