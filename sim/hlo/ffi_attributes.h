// The attributes of a typed-FFI custom call (`api_version=API_VERSION_TYPED_FFI`).
// XLA prints them in `backend_config` as an MLIR attribute dictionary, not as
// JSON: `{attn_heads = 32 : i64, is_training = true, scale = 1.0e+00 : f64}`.
#ifndef TPUSIM_SIM_HLO_FFI_ATTRIBUTES_H_
#define TPUSIM_SIM_HLO_FFI_ATTRIBUTES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tpusim::hlo {

/// Each attribute's value text without its type: `32`, `true`, `1.0e+00`,
/// `"name"`, `[1, 2]`; empty for a unit attribute (a bare name).
using FfiAttributes = std::map<std::string, std::string, std::less<>>;

/// The dictionary's attributes, or nullopt when `text` is not a dictionary
/// (braces around `name = value` entries separated by commas outside quotes
/// and brackets).
std::optional<FfiAttributes> ParseFfiAttributes(std::string_view text);

/// The integer attribute `name` (`32 : i64`, `-1 : i32`, `7`), or nullopt when
/// it is missing, not an integer, or past 64 bits.
std::optional<int64_t> FfiInt(const FfiAttributes& attributes, std::string_view name);

}  // namespace tpusim::hlo

#endif  // TPUSIM_SIM_HLO_FFI_ATTRIBUTES_H_
