#include "harness/run/run_names.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <system_error>

#include "sim/hlo/collective_groups.h"

namespace tpusim::harness {

std::string_view RunModeName(RunMode mode) {
  switch (mode) {
    case RunMode::kValues:
      return "values";
    case RunMode::kTiming:
      return "timing";
    case RunMode::kFull:
      return "full";
  }
  return "unknown";
}

StatusOr<RunMode> ParseRunMode(std::string_view text) {
  for (const RunMode mode : {RunMode::kValues, RunMode::kTiming, RunMode::kFull}) {
    if (text == RunModeName(mode)) return mode;
  }
  return InvalidArgument("expected full, timing or values, got " + Quote(text));
}

std::string_view NumericsName(eval::Numerics numerics) {
  switch (numerics) {
    case eval::Numerics::kTpu:
      return "tpu";
    case eval::Numerics::kIeee:
      return "ieee";
  }
  return "unknown";
}

StatusOr<eval::Numerics> ParseNumerics(std::string_view text) {
  for (const eval::Numerics numerics : {eval::Numerics::kTpu, eval::Numerics::kIeee}) {
    if (text == NumericsName(numerics)) return numerics;
  }
  return InvalidArgument("expected tpu or ieee, got " + Quote(text));
}

int64_t NonNegativeInteger(std::string_view text) {
  int64_t n = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  return ec == std::errc() && ptr == text.data() + text.size() && !text.empty() && n >= 0 ? n : -1;
}

StatusOr<std::vector<int64_t>> ParsePlacement(std::string_view text, const std::string& what) {
  // Bounded: a placement names at most the devices an SPMD program may have.
  const auto error = [&](const std::string& why) {
    return InvalidArgument(what + " " + Quote(text) + ": " + why);
  };
  std::vector<int64_t> devices;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    const size_t dash = item.find('-');
    const int64_t first = NonNegativeInteger(item.substr(0, dash));
    const int64_t last =
        dash == std::string_view::npos ? first : NonNegativeInteger(item.substr(dash + 1));
    if (first < 0 || last < 0) {
      return error("expected network device numbers and ranges such as 0-7 or 0,2,4,6, got " +
                   Quote(item));
    }
    if (last < first) return error("the range " + Quote(item) + " runs backwards");
    if (last - first >= hlo::kMaxSpmdDevices - static_cast<int64_t>(devices.size())) {
      return error("names more than " + std::to_string(hlo::kMaxSpmdDevices) + " devices");
    }
    for (int64_t d = first; d <= last; ++d) devices.push_back(d);
    at = comma + 1;
  }
  return devices;
}

std::string PlacementText(const std::vector<int64_t>& placement) {
  std::string text;
  for (size_t i = 0; i < placement.size();) {
    size_t last = i;
    while (last + 1 < placement.size() && placement[last + 1] == placement[last] + 1) ++last;
    text += (text.empty() ? "" : ",") + std::to_string(placement[i]);
    if (last > i) text += "-" + std::to_string(placement[last]);
    i = last + 1;
  }
  return text;
}

}  // namespace tpusim::harness
