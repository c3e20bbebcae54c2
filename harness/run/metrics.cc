#include "harness/run/metrics.h"

#include <algorithm>

#include "sim/base/arith.h"
#include "sim/hlo/opcode.h"
#include "sim/value/literal.h"

namespace tpusim::harness {
namespace {

/// What a collective delivers: its result; for a `*-start` whose shape is a
/// tuple (operands, results, ...), element 1.
int64_t CollectiveResultBytes(const hlo::HloInstruction& inst) {
  const hlo::Shape& shape = inst.shape();
  const hlo::Shape& result =
      shape.IsTuple() && shape.tuple_size() >= 2 ? shape.tuple_shapes(1) : shape;
  const StatusOr<int64_t> bytes = value::Literal::ByteSizeOf(result);
  return bytes.ok() ? *bytes : 0;
}

double AsDouble(int64_t value) { return static_cast<double>(value); }
double AsDouble(double value) { return value; }
double AsDouble(const std::optional<int64_t>& value) { return AsDouble(value.value_or(0)); }

}  // namespace

Metrics MetricsOf(const timing::TimingResult& result) {
  Metrics metrics;
  metrics.cycles = result.cycles;
  metrics.time_us = result.time_us;
  metrics.flops = result.flops;
  metrics.hbm_bytes = result.hbm_bytes;
  metrics.pcie_bytes = result.pcie_bytes;
  int64_t blocked_cycles = 0;
  for (const timing::OpRecord& op : result.ops) {
    const hlo::HloOpcode opcode = op.instruction->opcode();
    if (hlo::IsCollective(opcode) || hlo::IsCollectiveDone(opcode)) {
      blocked_cycles = SatAdd(blocked_cycles, op.TotalCycles());
    }
  }
  int64_t collective_cycles = 0;
  for (const timing::CollectiveRecord& c : result.collectives) collective_cycles += c.cycles;
  if (result.collectives.empty()) collective_cycles = blocked_cycles;
  const auto us = [&result](int64_t cycles) {
    return result.clock_hz > 0
               ? static_cast<double>(cycles) * 1e6 / static_cast<double>(result.clock_hz)
               : 0;
  };
  metrics.collective_time_us = us(collective_cycles);
  metrics.exposed_collective_time_us = us(blocked_cycles);
  const double seconds = result.time_us * 1e-6;
  metrics.utilisation = seconds > 0 && result.peak_flops > 0
                            ? static_cast<double>(result.flops) / (result.peak_flops * seconds)
                            : 0;
  if (!result.interconnect.empty()) {
    metrics.ici_bytes = 0;
    for (const timing::CollectiveRecord& c : result.collectives) *metrics.ici_bytes += c.ici_bytes;
  }
  for (const timing::LinkUse& link : result.links) {
    metrics.link_utilisation = std::max(metrics.link_utilisation, link.utilisation);
    metrics.busiest_link_bytes = std::max(metrics.busiest_link_bytes, link.bytes);
  }
  for (const timing::OpRecord& op : result.ops) {
    if (hlo::IsCollective(op.instruction->opcode())) {
      metrics.collective_bytes += SatMul(CollectiveResultBytes(*op.instruction), op.runs);
    }
  }
  return metrics;
}

std::map<std::string, double> NamedMetrics(const Metrics& metrics) {
  std::map<std::string, double> named;
#define V(name) named[#name] = AsDouble(metrics.name);
#include "harness/run/metrics.def"
#undef V
  return named;
}

nlohmann::ordered_json MetricsJson(const std::map<std::string, double>& metrics) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const auto& [name, value] : metrics) json[name] = value;
  return json;
}

std::map<std::string, double> MetricsFromJson(const nlohmann::ordered_json& json) {
  std::map<std::string, double> metrics;
  for (const auto& [name, value] : json.items()) metrics[name] = value.get<double>();
  return metrics;
}

}  // namespace tpusim::harness
