// JSON text of a document whose strings come from the user's files.
#ifndef TPUSIM_SIM_BASE_JSON_TEXT_H_
#define TPUSIM_SIM_BASE_JSON_TEXT_H_

#include <string>

namespace tpusim {

/// `document` (an nlohmann json or ordered_json) as JSON text, on one line when
/// `indent` < 0. An HLO string attribute may hold any byte (metadata, a
/// custom call's target, `\377` escapes), so a byte that is not UTF-8 becomes
/// U+FFFD rather than the exception nlohmann's plain dump throws.
template <typename Json>
std::string JsonText(const Json& document, int indent = -1) {
  return document.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace tpusim

#endif  // TPUSIM_SIM_BASE_JSON_TEXT_H_
