#include "sim/timing/hlo_helpers.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sim/timing/fused_attention.h"
#include "sim/timing/proto_json.h"

namespace tpusim::timing {

using hlo::HloInstruction;
using hlo::HloOpcode;

StepKind StepKindOf(const HloInstruction& inst) {
  switch (hlo::OpRoleOf(inst.opcode())) {
    case hlo::OpRole::kCompute:
      return StepKind::kKernel;
    // Control flow costs what its computations' steps cost; host transfers
    // are not modelled.
    case hlo::OpRole::kBookkeeping:
    case hlo::OpRole::kControlFlow:
    case hlo::OpRole::kHostTransfer:
    case hlo::OpRole::kAsyncUpdate:
      return StepKind::kFree;
    case hlo::OpRole::kAsyncStart:
      return StepKind::kAsyncStart;
    case hlo::OpRole::kAsyncDone:
      return StepKind::kAsyncDone;
  }
  return StepKind::kKernel;  // unreachable: every OpRole returns above
}

namespace {

/// The integer value of a scalar integer constant, or nullopt.
std::optional<int64_t> ScalarInt(const HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kConstant || !inst->has_literal()) return std::nullopt;
  const hlo::ConstantLiteral& lit = inst->literal();
  if (lit.ints.size() != 1) return std::nullopt;
  return lit.ints[0];
}

/// i when `inst` is get-tuple-element(`param`), index i.
std::optional<int64_t> TupleIndexOf(const HloInstruction* inst, const HloInstruction* param) {
  if (inst->opcode() != HloOpcode::kGetTupleElement || inst->operand(0) != param)
    return std::nullopt;
  return inst->int_attr(hlo::AttrId::kIndex);
}

/// `"known_trip_count":{"n":"N"}` in a backend config.
std::optional<int64_t> BackendTripCount(const HloInstruction& w) {
  const auto* config = w.GetAttr<hlo::BackendConfig>(hlo::AttrId::kBackendConfig);
  if (config == nullptr) return std::nullopt;
  const std::string& text = config->text;
  const size_t key = text.find("known_trip_count");
  if (key == std::string::npos) return std::nullopt;
  const size_t n = text.find("\"n\"", key);
  if (n == std::string::npos) return std::nullopt;
  size_t i = text.find_first_of("0123456789", n + 3);
  if (i == std::string::npos) return std::nullopt;
  int64_t value = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (value > 1'000'000'000'000) return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

}  // namespace

namespace {

/// Decimal digits of `v`: __int128 has no std::to_string.
std::string Int128ToString(__int128 v) {
  if (v < 0) return "-" + Int128ToString(-v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return digits;
}

/// The iterations of `for (v = start; v DIRECTION limit; v += step)` with v of
/// the integer type `type`, whose add wraps around as XLA's does; an error
/// when the loop never ends or runs more iterations than tpusim counts.
StatusOr<std::optional<int64_t>> CountIterations(std::string_view direction,
                                                 hlo::PrimitiveType type, __int128 start,
                                                 __int128 limit, __int128 step) {
  const int bits = hlo::PrimitiveTypeBitWidth(type);
  const __int128 modulus = __int128{1} << bits;
  const __int128 lowest = hlo::IsSignedInt(type) ? -(modulus / 2) : 0;
  const __int128 highest = lowest + modulus - 1;
  // Constants hold u64 values above 2^63 as negative int64 bit patterns.
  const auto in_range = [&](__int128 v) { return v < lowest ? v + modulus : v; };
  start = in_range(start);
  limit = in_range(limit);
  const auto goes_on = [&](__int128 v) {
    if (direction == "LT") return v < limit;
    if (direction == "LE") return v <= limit;
    if (direction == "GT") return v > limit;
    return v >= limit;  // GE
  };
  const auto counted = [](__int128 n) -> StatusOr<std::optional<int64_t>> {
    if (n > std::numeric_limits<int64_t>::max()) {
      return Status(StatusCode::kInvalidArgument,
                    "its counter runs " + Int128ToString(n) +
                        " iterations, more than tpusim counts (2^63 - 1)");
    }
    return std::optional<int64_t>(static_cast<int64_t>(n));
  };
  if (!goes_on(start)) return counted(0);
  const std::string counter = "its " + std::string(hlo::PrimitiveTypeName(type)) +
                              " counter, from " + Int128ToString(start) + " by " +
                              Int128ToString(step) + ", ";
  if (goes_on(lowest) && goes_on(highest)) {
    return Status(StatusCode::kInvalidArgument,
                  "the loop never ends: " + counter + "takes no value its condition (" +
                      std::string(direction) + " " + Int128ToString(limit) + ") stops at");
  }
  // The counter walks towards the limit: the first value past it ends the
  // loop, unless that value is beyond the type's range and wraps around.
  const bool towards = (step > 0 && (direction == "LT" || direction == "LE")) ||
                       (step < 0 && (direction == "GT" || direction == "GE"));
  if (towards) {
    const __int128 stride = step > 0 ? step : -step;
    const __int128 span = step > 0 ? limit - start + (direction == "LE" ? 1 : 0)
                                   : start - limit + (direction == "GE" ? 1 : 0);
    const __int128 n = (span + stride - 1) / stride;
    const __int128 last = start + n * step;
    if (last >= lowest && last <= highest) return counted(n);
  }
  // Otherwise the counter wraps around (or stands still). Small types are
  // followed around their whole cycle; a 32- or 64-bit counter that wraps
  // would take billions of iterations to follow.
  const __int128 step_in_range = ((step % modulus) + modulus) % modulus;
  const __int128 cycle = step_in_range == 0 ? 1 : modulus / (step_in_range & -step_in_range);
  constexpr __int128 kLongestFollowedCycle = __int128{1} << 20;
  if (cycle > kLongestFollowedCycle) {
    return Status(StatusCode::kInvalidArgument,
                  counter + "wraps around its type's range before the condition (" +
                      std::string(direction) + " " + Int128ToString(limit) +
                      ") ends the loop; tpusim does not count such loops: give the trip "
                      "count (exec --trip-count NAME=N)");
  }
  __int128 v = start;
  for (__int128 k = 1; k <= cycle; ++k) {
    v += step_in_range;
    if (v > highest) v -= modulus;
    if (!goes_on(v)) return counted(k);
  }
  return Status(StatusCode::kInvalidArgument,
                "the loop never ends: " + counter + "comes back to " +
                    Int128ToString(start) + " without meeting its condition's end (" +
                    std::string(direction) + " " + Int128ToString(limit) + ")");
}

}  // namespace

StatusOr<std::optional<int64_t>> KnownTripCount(const HloInstruction& w) {
  if (std::optional<int64_t> n = BackendTripCount(w)) return n;
  const std::optional<int64_t> unrecognised;
  const hlo::HloComputation* cond = w.called_computation(hlo::AttrId::kCondition);
  const hlo::HloComputation* body = w.called_computation(hlo::AttrId::kBody);
  if (cond == nullptr || body == nullptr || w.operand_count() != 1) return unrecognised;
  const HloInstruction* compare = cond->root();
  if (compare == nullptr || compare->opcode() != HloOpcode::kCompare ||
      cond->parameter_count() != 1 || compare->operand_count() != 2) {
    return unrecognised;
  }
  std::string direction(compare->string_attr(hlo::AttrId::kDirection));
  const HloInstruction* cparam = cond->parameters()[0];
  std::optional<int64_t> index = TupleIndexOf(compare->operand(0), cparam);
  std::optional<int64_t> limit = ScalarInt(compare->operand(1));
  if (!index || !limit) {
    // `constant OP counter`: swap to `counter OP' constant`.
    index = TupleIndexOf(compare->operand(1), cparam);
    limit = ScalarInt(compare->operand(0));
    if (direction == "LT")
      direction = "GT";
    else if (direction == "GT")
      direction = "LT";
    else if (direction == "LE")
      direction = "GE";
    else if (direction == "GE")
      direction = "LE";
  }
  if (!index || !limit) return unrecognised;
  if (direction != "LT" && direction != "LE" && direction != "GT" && direction != "GE")
    return unrecognised;
  const hlo::Shape& counter_shape = compare->operand(0)->shape();
  if (!counter_shape.IsArray() || !hlo::IsInteger(counter_shape.element_type()))
    return unrecognised;
  // Initial value: element `index` of the while's tuple operand.
  const HloInstruction* init = w.operand(0);
  if (init->opcode() != HloOpcode::kTuple || *index < 0 || *index >= init->operand_count())
    return unrecognised;
  const std::optional<int64_t> start = ScalarInt(init->operand(*index));
  // Step: body root element `index` = add(gte(param, index), constant).
  const HloInstruction* root = body->root();
  if (!start || root == nullptr || root->opcode() != HloOpcode::kTuple ||
      *index >= root->operand_count() || body->parameter_count() != 1) {
    return unrecognised;
  }
  const HloInstruction* next = root->operand(*index);
  if (next->opcode() != HloOpcode::kAdd) return unrecognised;
  const HloInstruction* bparam = body->parameters()[0];
  std::optional<int64_t> step;
  if (TupleIndexOf(next->operand(0), bparam) == index) step = ScalarInt(next->operand(1));
  if (!step && TupleIndexOf(next->operand(1), bparam) == index) step = ScalarInt(next->operand(0));
  if (!step) return unrecognised;
  return CountIterations(direction, counter_shape.element_type(), *start, *limit, *step);
}

namespace {

/// A cost-estimate field: protobuf's JSON writes int64 as a string, other
/// writers as a number; nullopt for anything but a non-negative integer.
std::optional<int64_t> EstimateField(const nlohmann::json& estimate, const char* key) {
  const auto it = estimate.find(key);
  if (it == estimate.end()) return 0;  // proto3 JSON omits zero fields
  return ProtoJsonCount(*it);
}

}  // namespace

std::optional<KernelCostEstimate> CustomCallCostEstimate(const HloInstruction& custom_call) {
  if (custom_call.opcode() != HloOpcode::kCustomCall) return std::nullopt;
  if (std::optional<KernelCostEstimate> attention = FusedAttentionEstimate(custom_call)) {
    return attention;
  }
  const auto* config = custom_call.GetAttr<hlo::BackendConfig>(hlo::AttrId::kBackendConfig);
  if (config == nullptr) return std::nullopt;
  const nlohmann::json json = nlohmann::json::parse(config->text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  const auto kernel = json.find("custom_call_config");
  if (kernel == json.end() || !kernel->is_object()) return std::nullopt;
  const auto estimate = kernel->find("cost_estimate");
  if (estimate == kernel->end() || !estimate->is_object()) return std::nullopt;
  const std::optional<int64_t> flops = EstimateField(*estimate, "flops");
  const std::optional<int64_t> transcendentals = EstimateField(*estimate, "transcendentals");
  const std::optional<int64_t> bytes = EstimateField(*estimate, "bytes_accessed");
  if (!flops || !transcendentals || !bytes) return std::nullopt;
  return KernelCostEstimate{*flops, *transcendentals, *bytes};
}

}  // namespace tpusim::timing
