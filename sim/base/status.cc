#include "sim/base/status.h"

#include <algorithm>

namespace tpusim {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kUnimplemented: return "unimplemented";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Quote(std::string_view text) {
  constexpr size_t kLongest = 60;
  constexpr size_t kExcerpt = 40;
  if (text.size() <= kLongest && text.find('\n') == std::string_view::npos) {
    return "'" + std::string(text) + "'";
  }
  const size_t cut = std::min(text.find('\n'), kExcerpt);
  return "'" + std::string(text.substr(0, cut)) + "...' (" + std::to_string(text.size()) +
         " characters)";
}

}  // namespace tpusim
