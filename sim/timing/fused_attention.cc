#include "sim/timing/fused_attention.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/arith.h"
#include "sim/hlo/attribute.h"
#include "sim/hlo/ffi_attributes.h"
#include "sim/timing/layout_bytes.h"
#include "sim/timing/proto_json.h"

namespace tpusim::timing {

using hlo::HloInstruction;

namespace {

/// The sum over i in [from, to) of max(0, c + slope * i), slope -1, 0 or 1.
__int128 SumOfPositive(int64_t from, int64_t to, int64_t c, int slope) {
  if (slope > 0) from = std::max(from, 1 - c);  // c + i >= 1
  if (slope < 0) to = std::min(to, c);          // c - i >= 1
  if (slope == 0 && c <= 0) return 0;
  if (from >= to) return 0;
  const __int128 n = to - from;
  return n * c + slope * (static_cast<__int128>(from) + to - 1) * n / 2;
}

}  // namespace

int64_t AttendedPairs(const AttentionWork& work) {
  // Query i sees keys lo(i)..hi(i): hi is the last key, or the diagonal plus
  // the right side (the causal diagonal, or the window's right side inside
  // it); lo is key 0, or the diagonal less the left side. A side wider than
  // every key is open.
  const int64_t span = work.q_len + work.kv_len;
  int64_t right = work.window_right >= span ? -1 : work.window_right;
  if (work.causal) right = right < 0 ? 0 : std::min<int64_t>(right, 0);
  const int64_t left = work.window_left >= span ? -1 : work.window_left;
  // Where hi stops following the diagonal, and where lo starts to.
  const int64_t hi_flat_from = right < 0 ? 0 : work.kv_len - 1 - work.diagonal - right;
  const int64_t lo_rises_from = left < 0 ? work.q_len : left - work.diagonal;
  std::vector<int64_t> edges = {0, work.q_len};
  for (int64_t edge : {hi_flat_from, lo_rises_from}) {
    if (edge > 0 && edge < work.q_len) edges.push_back(edge);
  }
  std::sort(edges.begin(), edges.end());
  __int128 pairs = 0;
  for (size_t e = 0; e + 1 < edges.size(); ++e) {
    const int64_t from = edges[e];
    // On [from, next edge), hi - lo + 1 = c + slope * i.
    int64_t c = 1;
    int slope = 0;
    if (from >= hi_flat_from) {
      c += work.kv_len - 1;
    } else {
      c += work.diagonal + right;
      ++slope;
    }
    if (from >= lo_rises_from) {
      c -= work.diagonal - left;
      --slope;
    }
    pairs += SumOfPositive(from, edges[e + 1], c, slope);
  }
  return pairs > INT64_MAX ? INT64_MAX : static_cast<int64_t>(pairs);
}

KernelCostEstimate AttentionEstimate(const AttentionWork& work, int64_t bytes) {
  const int64_t pairs = SatMul(SatMul(work.batch, work.q_heads), AttendedPairs(work));
  // Forward: S = Q Kᵀ (qk_dim) and O = P V (v_dim). Backward: S again and
  // dQ = dS K, dK = dSᵀ Q (qk_dim); dP = dO Vᵀ and dV = Pᵀ dO (v_dim).
  const int64_t depth = work.backward ? SatAdd(SatMul(3, work.qk_dim), SatMul(2, work.v_dim))
                                      : SatAdd(work.qk_dim, work.v_dim);
  return KernelCostEstimate{SatMul(SatMul(2, pairs), depth), pairs, bytes};
}

namespace {

/// Operands read and results written once, less the scratch buffer both
/// libraries return last (a `u8` array that holds no result).
int64_t BoundaryBytes(const HloInstruction& call) {
  int64_t bytes = 0;
  for (const HloInstruction* operand : call.operands())
    bytes = SatAdd(bytes, PhysicalBytes(operand->shape()));
  const hlo::Shape& result = call.shape();
  if (!result.IsTuple()) return SatAdd(bytes, PhysicalBytes(result));
  for (int64_t i = 0; i < result.tuple_size(); ++i) {
    const hlo::Shape& element = result.tuple_shapes(i);
    const bool scratch = i == result.tuple_size() - 1 && !element.IsTuple() &&
                         element.element_type() == hlo::PrimitiveType::kU8;
    if (!scratch) bytes = SatAdd(bytes, PhysicalBytes(element));
  }
  return bytes;
}

/// Every dimension positive, and sequences no longer than 2^31 positions (the
/// libraries' lengths are int32), which keeps the pair arithmetic in range.
bool Plausible(const AttentionWork& w) {
  constexpr int64_t kLongest = int64_t{1} << 31;
  return w.batch > 0 && w.q_heads > 0 && w.q_len > 0 && w.kv_len > 0 && w.qk_dim > 0 &&
         w.v_dim > 0 && w.q_len <= kLongest && w.kv_len <= kLongest;
}

/// Transformer Engine's JAX calls: the dimensions are attributes
/// (transformer_engine/jax/cpp_extensions/attention.py), the mask an
/// NVTE_Mask_Type (transformer_engine/common/include/transformer_engine/fused_attn.h).
std::optional<AttentionWork> TransformerEngineWork(const HloInstruction& call, bool backward) {
  const auto* config = call.GetAttr<hlo::BackendConfig>(hlo::AttrId::kBackendConfig);
  if (config == nullptr) return std::nullopt;
  const std::optional<hlo::FfiAttributes> attributes = hlo::ParseFfiAttributes(config->text);
  if (!attributes) return std::nullopt;
  const auto get = [&](std::string_view name) { return hlo::FfiInt(*attributes, name); };
  const auto batch = get("input_batch"), heads = get("attn_heads"), q_len = get("q_max_seqlen"),
             kv_len = get("kv_max_seqlen"), qk_dim = get("qk_head_dim"), v_dim = get("v_head_dim"),
             mask = get("mask_type");
  if (!batch || !heads || !q_len || !kv_len || !qk_dim || !v_dim || !mask) return std::nullopt;
  AttentionWork work{*batch, *heads, *q_len, *kv_len, *qk_dim, *v_dim};
  // 2 and 3: causal, aligned to the top left; 4 and 5: to the bottom right;
  // 0, 1 (padding) and 6 (an arbitrary mask, a value) attend every pair.
  work.causal = *mask >= 2 && *mask <= 5;
  const bool top_left = *mask == 2 || *mask == 3;
  work.diagonal = top_left ? 0 : work.kv_len - work.q_len;
  work.window_left = get("window_size_left").value_or(-1);
  work.window_right = get("window_size_right").value_or(-1);
  work.backward = backward;
  if (!Plausible(work)) return std::nullopt;
  return work;
}

/// XLA's cuDNN calls (CudnnfMHABackendConfig in xla/service/gpu/backend_configs.proto):
/// the scores' shape [batch, heads, q_len, kv_len] is `intermediate_tensor_shape`;
/// the head dimensions follow from the queries (operand 0) and from the
/// result (forward) or the key and value gradients (backward, results 1 and 2).
std::optional<AttentionWork> CudnnWork(const HloInstruction& call, bool backward) {
  const auto* config = call.GetAttr<hlo::BackendConfig>(hlo::AttrId::kBackendConfig);
  if (config == nullptr || call.operand_count() < 3) return std::nullopt;
  const nlohmann::json json =
      nlohmann::json::parse(config->text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  const auto fmha = json.find("cudnn_fmha_backend_config");
  if (fmha == json.end() || !fmha->is_object()) return std::nullopt;
  const auto scores = fmha->find("intermediate_tensor_shape");
  if (scores == fmha->end() || !scores->is_object()) return std::nullopt;
  const auto dims = scores->find("dimensions");
  if (dims == scores->end() || !dims->is_array() || dims->size() != 4) return std::nullopt;
  int64_t d[4];
  for (int i = 0; i < 4; ++i) {
    const std::optional<int64_t> v = ProtoJsonCount((*dims)[i]);
    if (!v || *v <= 0) return std::nullopt;
    d[i] = *v;
  }
  const hlo::Shape& result = call.shape();
  if (!result.IsTuple() || result.tuple_size() < (backward ? 3 : 1)) return std::nullopt;
  const int64_t rows = SatMul(SatMul(d[0], d[1]), d[2]);  // query rows of all heads
  const int64_t queries = call.operand(0)->shape().element_count();
  if (queries % rows != 0) return std::nullopt;
  AttentionWork work{d[0], d[1], d[2], d[3], queries / rows, 0};
  if (backward) {
    const int64_t keys = result.tuple_shapes(1).element_count();
    const int64_t values = result.tuple_shapes(2).element_count();
    if (keys <= 0 || SatMul(values, work.qk_dim) % keys != 0) return std::nullopt;
    work.v_dim = SatMul(values, work.qk_dim) / keys;
  } else {
    const int64_t out = result.tuple_shapes(0).element_count();
    if (out % rows != 0) return std::nullopt;
    work.v_dim = out / rows;
  }
  // Fields of another type than the proto's say nothing (nlohmann's value()
  // would throw on them).
  const auto field = [&](const char* key) -> const nlohmann::json* {
    const auto it = fmha->find(key);
    return it == fmha->end() ? nullptr : &*it;
  };
  // MaskType CAUSAL (2) and PADDING_CAUSAL (3), by name or number; or the
  // older `is_causal_mask`.
  const nlohmann::json* mask = field("mask_type");
  const int64_t mask_number = mask ? ProtoJsonCount(*mask).value_or(-1) : -1;
  const bool causal_name =
      mask && mask->is_string() && (*mask == "CAUSAL" || *mask == "PADDING_CAUSAL");
  const nlohmann::json* legacy = field("is_causal_mask");
  work.causal = causal_name || mask_number == 2 || mask_number == 3 ||
                (legacy && legacy->is_boolean() && legacy->get<bool>());
  const nlohmann::json* window = field("sliding_window_length");
  const std::optional<int64_t> length = window ? ProtoJsonCount(*window) : std::nullopt;
  if (length && *length > 0) {
    work.window_left = *length - 1;  // the window holds the query's own key
    work.window_right = 0;
  }
  work.backward = backward;
  if (!Plausible(work)) return std::nullopt;
  return work;
}

}  // namespace

std::optional<KernelCostEstimate> FusedAttentionEstimate(const HloInstruction& call) {
  if (call.opcode() != hlo::HloOpcode::kCustomCall) return std::nullopt;
  const std::string_view target = call.string_attr(hlo::AttrId::kCustomCallTarget);
  std::optional<AttentionWork> work;
  if (target == "te_fused_attn_forward_ffi" || target == "te_fused_attn_backward_ffi") {
    work = TransformerEngineWork(call, target == "te_fused_attn_backward_ffi");
  } else if (target.starts_with("__cudnn$fmha")) {
    work = CudnnWork(call, target.ends_with("Backward"));
  }
  if (!work) return std::nullopt;
  return AttentionEstimate(*work, BoundaryBytes(call));
}

}  // namespace tpusim::timing
