#include "sim/value/compare.h"

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>

#include "sim/det_math/det_math.h"

namespace tpusim::value {
namespace {

using hlo::PrimitiveType;

/// Element `index`'s bytes.
std::span<const std::byte> ElementBytes(const Literal& literal, int64_t index) {
  const size_t width = literal.bytes().size() / static_cast<size_t>(literal.element_count());
  return literal.bytes().subspan(static_cast<size_t>(index) * width, width);
}

bool BitIdentical(const Literal& a, const Literal& b, int64_t index) {
  const std::span<const std::byte> x = ElementBytes(a, index);
  const std::span<const std::byte> y = ElementBytes(b, index);
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size()) == 0;
}

bool IsNan(const Literal& literal, int64_t index) {
  const double v = literal.GetAsDouble(index);
  return v != v;
}

/// A float's bits on a line where adjacent values are adjacent integers and
/// -0 meets +0: sign and magnitude, kept apart so that f64 cannot overflow.
struct Ordered {
  bool negative = false;
  uint64_t magnitude = 0;
};

Ordered OrderedBits(const Literal& literal, int64_t index) {
  uint64_t bits = 0;
  const std::span<const std::byte> element = ElementBytes(literal, index);
  std::memcpy(&bits, element.data(), std::min(element.size(), sizeof bits));  // little-endian
  const int width = hlo::PrimitiveTypeBitWidth(literal.element_type());
  const uint64_t sign = uint64_t{1} << (width - 1);
  return {(bits & sign) != 0, bits & (sign - 1)};
}

}  // namespace

std::optional<uint64_t> UlpDistance(const Literal& a, const Literal& b, int64_t index) {
  const PrimitiveType type = a.element_type();
  if (type != b.element_type()) return std::nullopt;
  if (hlo::IsInteger(type)) {
    const double x = a.GetAsDouble(index), y = b.GetAsDouble(index);
    return static_cast<uint64_t>(x < y ? y - x : x - y);
  }
  if (!hlo::IsFloatingPoint(type)) return std::nullopt;
  const bool nan_a = IsNan(a, index), nan_b = IsNan(b, index);
  if (nan_a || nan_b) return nan_a && nan_b ? std::optional<uint64_t>(0) : std::nullopt;
  const Ordered x = OrderedBits(a, index), y = OrderedBits(b, index);
  if (x.negative == y.negative) {
    return x.magnitude > y.magnitude ? x.magnitude - y.magnitude : y.magnitude - x.magnitude;
  }
  return x.magnitude + y.magnitude;  // across zero; at most 2^64 - 2 for f64
}

LiteralComparison CompareLiterals(const Literal& reference, const Literal& actual,
                                  const ErrorSpec& spec) {
  LiteralComparison result;
  if (!reference.shape().IsArray() || !reference.shape().Compatible(actual.shape())) return result;
  // Values whose dynamic sizes differ have different shapes: their padding
  // (zero) is no value to compare.
  for (int64_t d = 0; d < reference.shape().rank(); ++d) {
    if (reference.dynamic_size(d) != actual.dynamic_size(d)) return result;
  }
  result.compared = true;
  result.elements = reference.element_count();
  const PrimitiveType type = reference.element_type();
  const bool complex = hlo::IsComplex(type);
  if (hlo::IsFloatingPoint(type)) result.max_ulp = 0;
  const auto beyond = [&](int64_t i) {
    ++result.beyond_tolerance;
    if (result.first_beyond_index < 0) result.first_beyond_index = i;
  };

  for (int64_t i = 0; i < result.elements; ++i) {
    if (BitIdentical(reference, actual, i)) continue;
    double abs_error = 0;
    double magnitude = 0;
    bool nan_reference = false, nan_actual = false;
    if (complex) {
      const auto element = [&](const Literal& l) {
        return type == PrimitiveType::kC64 ? std::complex<double>(l.data<std::complex<float>>()[i])
                                           : l.data<std::complex<double>>()[i];
      };
      const std::complex<double> x = element(reference), y = element(actual);
      nan_reference = x != x;
      nan_actual = y != y;
      const double dr = y.real() - x.real(), di = y.imag() - x.imag();
      abs_error = detmath::Sqrt(dr * dr + di * di);
      magnitude = detmath::Sqrt(x.real() * x.real() + x.imag() * x.imag());
    } else {
      const double x = reference.GetAsDouble(i), y = actual.GetAsDouble(i);
      nan_reference = x != x;
      nan_actual = y != y;
      abs_error = x == y ? 0.0 : y - x < 0 ? x - y : y - x;  // inf - inf never reached
      magnitude = x < 0 ? -x : x;
    }
    if (nan_reference || nan_actual) {
      if (nan_reference && nan_actual) {
        if (spec.exact) beyond(i);  // bit for bit: NaN payloads count
        continue;
      }
      ++result.differing;
      ++result.nan_mismatches;
      beyond(i);
      continue;
    }
    ++result.differing;
    if (result.worst_index < 0 || abs_error > result.max_abs_error) {
      result.max_abs_error = abs_error;
      result.worst_index = i;
    }
    if (magnitude > 0 && magnitude < std::numeric_limits<double>::infinity()) {
      result.max_rel_error = std::max(result.max_rel_error, abs_error / magnitude);
    }
    std::optional<uint64_t> ulp;
    if (result.max_ulp.has_value() || spec.ulp.has_value()) {
      ulp = UlpDistance(reference, actual, i);
      if (ulp && result.max_ulp.has_value()) result.max_ulp = std::max(*result.max_ulp, *ulp);
    }
    if (spec.exact) {
      beyond(i);
      continue;
    }
    // An infinite error (an infinity against anything else) is never close,
    // even though rtol * infinity would admit it.
    const bool close = abs_error < std::numeric_limits<double>::infinity() &&
                       abs_error <= spec.atol + spec.rtol * magnitude;
    const bool ulp_close = spec.ulp.has_value() && ulp.has_value() && *ulp <= *spec.ulp;
    if (!close && !ulp_close) beyond(i);
  }
  return result;
}

}  // namespace tpusim::value
