// Integers in protobuf's JSON: XLA writes backend configs with protobuf's
// JSON printer, which writes an int64 as a decimal string; other writers
// (Pallas, hand-written configs) write a number.
#ifndef TPUSIM_SIM_TIMING_PROTO_JSON_H_
#define TPUSIM_SIM_TIMING_PROTO_JSON_H_

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tpusim::timing {

/// `value` as a non-negative integer, or nullopt for anything else (a sign,
/// a fraction, 2^63 or more).
inline std::optional<int64_t> ProtoJsonCount(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  if (text.empty() || text.size() > 18) return std::nullopt;  // 18 digits fit int64
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace tpusim::timing

#endif  // TPUSIM_SIM_TIMING_PROTO_JSON_H_
