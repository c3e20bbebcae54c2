#include "harness/checks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "sim/hlo/opcode.h"
#include "sim/hlo/primitive_type.h"

namespace tpusim::harness {
namespace {

/// "%g" of a value, for messages.
std::string Num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

/// The element's bits as an integer ordered like the float values it encodes
/// (sign-magnitude to two's complement), so ulp distance is a difference.
int64_t OrderedBits(std::span<const std::byte> element) {
  uint64_t bits = 0;
  std::memcpy(&bits, element.data(), element.size());  // little-endian host
  const int width = static_cast<int>(element.size()) * 8;
  const uint64_t sign = uint64_t{1} << (width - 1);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) != 0 ? -magnitude : magnitude;
}

}  // namespace

std::string CompareOutput(const std::string& name, const value::Literal& actual,
                          const value::Literal& golden, const OutputTolerance& tolerance) {
  if (actual.shape().ToString() != golden.shape().ToString()) {
    return name + ": shape " + actual.shape().ToString() + " differs from the golden's " +
           golden.shape().ToString();
  }
  const hlo::PrimitiveType type = actual.element_type();
  const bool exact = tolerance.exact || (!tolerance.atol && !tolerance.rtol && !tolerance.ulp);
  const int64_t count = actual.element_count();
  if (count == 0) return "";
  const size_t width = actual.bytes().size() / static_cast<size_t>(count);
  if (hlo::IsComplex(type) && !exact) {
    return name + ": tolerances are not supported for complex outputs; use exact: true";
  }
  const bool is_float = hlo::IsFloatingPoint(type);
  int64_t differing = 0;
  int64_t first = -1;
  double max_abs = 0;
  for (int64_t i = 0; i < count; ++i) {
    const auto a_bytes = actual.bytes().subspan(static_cast<size_t>(i) * width, width);
    const auto g_bytes = golden.bytes().subspan(static_cast<size_t>(i) * width, width);
    if (std::memcmp(a_bytes.data(), g_bytes.data(), width) == 0) continue;
    bool ok = false;
    if (!exact) {
      const double a = actual.GetAsDouble(i);
      const double g = golden.GetAsDouble(i);
      const bool nan_a = std::isnan(a), nan_g = std::isnan(g);
      if (nan_a || nan_g) {
        ok = nan_a && nan_g;
      } else {
        const double diff = std::fabs(a - g);
        if (!std::isinf(diff)) max_abs = std::max(max_abs, diff);
        if (tolerance.atol || tolerance.rtol) {
          ok = diff <= tolerance.atol.value_or(0) + tolerance.rtol.value_or(0) * std::fabs(g);
        }
        if (!ok && tolerance.ulp && width <= 8) {
          const int64_t ulps =
              is_float ? OrderedBits(a_bytes) - OrderedBits(g_bytes) : static_cast<int64_t>(a - g);
          ok = (ulps < 0 ? -ulps : ulps) <= *tolerance.ulp;
        }
      }
    }
    if (ok) continue;
    ++differing;
    if (first < 0) first = i;
  }
  if (differing == 0) return "";
  std::string what = exact ? "exact" : "";
  if (tolerance.atol) what += "atol " + Num(*tolerance.atol);
  if (tolerance.rtol) what += (what.empty() ? "" : ", ") + ("rtol " + Num(*tolerance.rtol));
  if (tolerance.ulp) what += (what.empty() ? "" : ", ") + ("ulp " + std::to_string(*tolerance.ulp));
  std::string message = name + ": " + std::to_string(differing) + " of " + std::to_string(count) +
                        " elements differ (" + what + "); first at flat index " +
                        std::to_string(first) + ": got " + Num(actual.GetAsDouble(first)) +
                        ", golden " + Num(golden.GetAsDouble(first));
  if (!exact) message += "; largest absolute difference " + Num(max_abs);
  return message;
}

std::map<std::string, double> TimingMetrics(const timing::TimingResult& result) {
  // On a network, the collective timeline says how long each collective took
  // (start to last transfer); without one, the collective instructions' own
  // records, async `-done` waits included.
  int64_t collective_cycles = 0;
  for (const timing::CollectiveRecord& c : result.collectives) collective_cycles += c.cycles;
  if (result.collectives.empty()) {
    for (const timing::OpRecord& op : result.ops) {
      const std::optional<hlo::HloOpcode> opcode = hlo::HloOpcodeFromName(op.opcode);
      if (!opcode.has_value()) continue;
      const bool done = *opcode == hlo::HloOpcode::kAllReduceDone ||
                        *opcode == hlo::HloOpcode::kAllGatherDone ||
                        *opcode == hlo::HloOpcode::kCollectivePermuteDone;
      if (done || hlo::IsCollective(*opcode)) collective_cycles += op.cycles;
    }
  }
  const double seconds = result.time_us * 1e-6;
  std::map<std::string, double> metrics;
  metrics["cycles"] = static_cast<double>(result.cycles);
  metrics["time_us"] = result.time_us;
  metrics["flops"] = static_cast<double>(result.flops);
  metrics["hbm_bytes"] = static_cast<double>(result.hbm_bytes);
  metrics["collective_time_us"] =
      result.clock_hz > 0
          ? static_cast<double>(collective_cycles) * 1e6 / static_cast<double>(result.clock_hz)
          : 0;
  metrics["utilisation"] = seconds > 0 && result.peak_flops > 0
                               ? static_cast<double>(result.flops) / (result.peak_flops * seconds)
                               : 0;
  // The interconnect's share (zero without a topology): bytes on every link
  // summed, and the busiest link's fraction of its bandwidth over the run.
  int64_t ici_bytes = 0;
  for (const timing::CollectiveRecord& c : result.collectives) ici_bytes += c.ici_bytes;
  double link_utilisation = 0;
  for (const timing::LinkUse& link : result.links) {
    link_utilisation = std::max(link_utilisation, link.utilisation);
  }
  metrics["ici_bytes"] = static_cast<double>(ici_bytes);
  metrics["link_utilisation"] = link_utilisation;
  return metrics;
}

std::vector<std::string> CheckMetrics(const Scenario& scenario,
                                      const std::map<std::string, double>& actual,
                                      const std::map<std::string, double>* golden) {
  std::vector<std::string> failures;
  for (const auto& [name, check] : scenario.metrics) {
    const auto it = actual.find(name);
    if (it == actual.end()) {
      failures.push_back(name + ": not measured");
      continue;
    }
    const double value = it->second;
    if (check.min && value < *check.min) {
      failures.push_back(name + ": " + Num(value) + " is below the minimum " + Num(*check.min));
    }
    if (check.max && value > *check.max) {
      failures.push_back(name + ": " + Num(value) + " is above the maximum " + Num(*check.max));
    }
    if (check.golden && golden != nullptr) {
      const auto g = golden->find(name);
      if (g == golden->end()) {
        failures.push_back(name + ": the golden has no value for it (run --update-golden)");
        continue;
      }
      const double diff = std::fabs(value - g->second);
      if (diff > check.tolerance * std::fabs(g->second)) {
        const double percent = g->second != 0 ? diff / std::fabs(g->second) * 100 : INFINITY;
        failures.push_back(name + ": " + Num(value) + " differs from the golden " + Num(g->second) +
                           " by " + Num(percent) + "% (tolerance " + Num(check.tolerance * 100) +
                           "%)");
      }
    }
  }
  return failures;
}

std::string NetworkExplanation(const timing::TimingResult& result) {
  const timing::CollectiveRecord* slowest = nullptr;
  for (const timing::CollectiveRecord& c : result.collectives) {
    if (slowest == nullptr || c.cycles > slowest->cycles) slowest = &c;
  }
  if (slowest == nullptr) return "";
  return "why: on " + result.interconnect + ", the slowest collective " + slowest->name + " (" +
         slowest->kind + ", " + slowest->algorithm + ") was " + slowest->explanation;
}

std::vector<std::string> CheckOps(const Scenario& scenario, const hlo::HloModule& module) {
  const auto find = [&module](const OpMatcher& m) -> const hlo::HloInstruction* {
    for (const auto& computation : module.computations()) {
      if (m.entry_only && computation.get() != module.entry()) continue;
      for (const auto& inst : computation->instructions()) {
        if (hlo::HloOpcodeName(inst->opcode()) != m.opcode) continue;
        const std::span<const int64_t> permutation = inst->dimensions();
        const bool moves_minor = !permutation.empty() &&
                                 permutation.back() != static_cast<int64_t>(permutation.size()) - 1;
        if (!m.minor_dims || moves_minor) return inst.get();
      }
    }
    return nullptr;
  };
  std::vector<std::string> failures;
  for (const OpMatcher& m : scenario.forbid_ops) {
    if (const hlo::HloInstruction* inst = find(m)) {
      const hlo::SourceLocation at = inst->location();
      failures.push_back(
          "forbidden op " + m.opcode + (m.minor_dims ? " of the minor dimension" : "") +
          (m.entry_only ? " (entry)" : "") + " found: " + inst->name() + " at " +
          module.filename() + ":" + std::to_string(at.line) + ":" + std::to_string(at.column));
    }
  }
  for (const OpMatcher& m : scenario.require_ops) {
    if (find(m) == nullptr) {
      failures.push_back("required op " + m.opcode +
                         (m.minor_dims ? " of the minor dimension" : "") + " not found" +
                         (m.entry_only ? " in the entry computation" : ""));
    }
  }
  return failures;
}

}  // namespace tpusim::harness
