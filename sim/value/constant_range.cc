#include "sim/value/constant_range.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/value/float_formats.h"

namespace tpusim::value {

namespace {

using hlo::PrimitiveType;

/// The shortest decimal that reads back as `x`.
std::string Decimal(double x) {
  char text[32];
  const auto [end, ec] = std::to_chars(text, text + sizeof(text), x);
  return ec == std::errc() ? std::string(text, end) : std::string("?");
}

/// The largest finite value of a real float type when a finite `x` rounds
/// beyond it (to an infinity, or to NaN in formats without one); nullopt when
/// `x` fits. f64 holds every double; f4e2m1fn saturates, as ml_dtypes does.
std::optional<double> LargestExceeded(PrimitiveType type, double x) {
  if (!std::isfinite(x) || type == PrimitiveType::kF64) return std::nullopt;
  if (type == PrimitiveType::kF32) {
    if (std::isfinite(static_cast<float>(x))) return std::nullopt;
    return static_cast<double>(std::numeric_limits<float>::max());
  }
  if (std::isfinite(NarrowFloatToDouble(type, NarrowFloatFromDouble(type, x)))) {
    return std::nullopt;
  }
  return NarrowFloatToDouble(type, FloatFormatOf(type).max_finite_code());
}

/// The type of a complex type's parts; the type itself for real types.
PrimitiveType PartType(PrimitiveType type) {
  if (type == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (type == PrimitiveType::kC128) return PrimitiveType::kF64;
  return type;
}

/// Why the first value of `literal` (of `shape`) that does not fit does not.
std::optional<std::string> FirstMisfit(const hlo::ConstantLiteral& literal,
                                       const hlo::Shape& shape) {
  // Tuple constants nest as deep as their shape: a stack, not recursion.
  std::vector<std::pair<const hlo::ConstantLiteral*, const hlo::Shape*>> pending{
      {&literal, &shape}};
  while (!pending.empty()) {
    const auto [lit, s] = pending.back();
    pending.pop_back();
    if (s->IsTuple()) {
      const size_t n = std::min(lit->elements.size(), s->tuple_shapes().size());
      for (size_t i = n; i-- > 0;) pending.emplace_back(&lit->elements[i], &s->tuple_shapes(i));
      continue;
    }
    if (!s->IsArray() || !(hlo::IsFloatingPoint(s->element_type()) ||
                           hlo::IsComplex(s->element_type()))) {
      continue;
    }
    const PrimitiveType part = PartType(s->element_type());
    for (const std::vector<double>* values : {&lit->reals, &lit->imags}) {
      for (double x : *values) {
        if (const std::optional<double> largest = LargestExceeded(part, x)) {
          const std::string type(hlo::PrimitiveTypeName(s->element_type()));
          return type + " constant " + Decimal(x) + " is out of range (the largest finite " +
                 std::string(hlo::PrimitiveTypeName(part)) + " is " + Decimal(*largest) + ")";
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

Status VerifyConstantsFit(const hlo::HloModule& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->opcode() != hlo::HloOpcode::kConstant || !inst->has_literal()) continue;
      if (std::optional<std::string> why = FirstMisfit(inst->literal(), inst->shape())) {
        return InvalidArgument(module.ErrorAt(inst->location(), inst->name() + ": " + *why));
      }
    }
  }
  return Status::Ok();
}

}  // namespace tpusim::value
