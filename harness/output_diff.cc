#include "harness/output_diff.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "sim/eval/det_math.h"

namespace tpusim::harness {
namespace {

using hlo::PrimitiveType;

/// Raw bits and width of element `index` for the four ulp-measured types.
struct RawFloat {
  uint64_t bits = 0;
  int width = 0;  ///< 16, 32 or 64
};

std::optional<RawFloat> RawBits(const value::Literal& literal, int64_t index) {
  switch (literal.element_type()) {
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16:
      return RawFloat{literal.data<uint16_t>()[index], 16};
    case PrimitiveType::kF32: {
      uint32_t bits = 0;
      const float v = literal.data<float>()[index];
      std::memcpy(&bits, &v, sizeof bits);
      return RawFloat{bits, 32};
    }
    case PrimitiveType::kF64: {
      uint64_t bits = 0;
      const double v = literal.data<double>()[index];
      std::memcpy(&bits, &v, sizeof bits);
      return RawFloat{bits, 64};
    }
    case PrimitiveType::kPred: case PrimitiveType::kS1: case PrimitiveType::kS2:
    case PrimitiveType::kS4: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64: case PrimitiveType::kU1:
    case PrimitiveType::kU2: case PrimitiveType::kU4: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
    case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3: case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ: case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ: case PrimitiveType::kF8E3M4: case PrimitiveType::kF8E8M0FNU:
    case PrimitiveType::kF4E2M1FN: case PrimitiveType::kC64: case PrimitiveType::kC128:
    case PrimitiveType::kToken: case PrimitiveType::kOpaque:
      return std::nullopt;
  }
  return std::nullopt;  // unreachable: every PrimitiveType returns above
}

/// Sign-magnitude bits mapped onto a line where adjacent floats are adjacent
/// integers and -0 meets +0: magnitude for positives, -magnitude for negatives.
/// As a signed 65-bit quantity split into sign and magnitude to avoid overflow.
struct Ordered {
  bool negative = false;
  uint64_t magnitude = 0;
};

Ordered ToOrdered(const RawFloat& f) {
  const uint64_t sign = uint64_t{1} << (f.width - 1);
  return {(f.bits & sign) != 0, f.bits & (sign - 1)};
}

uint64_t OrderedDistance(const Ordered& a, const Ordered& b) {
  if (a.negative == b.negative) {
    return a.magnitude > b.magnitude ? a.magnitude - b.magnitude : b.magnitude - a.magnitude;
  }
  return a.magnitude + b.magnitude;  // across zero; at most 2^64 - 2 for f64
}

bool IsNanElement(const value::Literal& literal, int64_t index) {
  const double v = literal.GetAsDouble(index);
  return v != v;
}

}  // namespace

std::optional<uint64_t> UlpDistance(const value::Literal& a, const value::Literal& b,
                                    int64_t index) {
  if (a.element_type() != b.element_type()) return std::nullopt;
  const std::optional<RawFloat> ra = RawBits(a, index);
  const std::optional<RawFloat> rb = RawBits(b, index);
  if (!ra || !rb) return std::nullopt;
  const bool nan_a = IsNanElement(a, index);
  const bool nan_b = IsNanElement(b, index);
  if (nan_a || nan_b) return nan_a && nan_b ? std::optional<uint64_t>(0) : std::nullopt;
  return OrderedDistance(ToOrdered(*ra), ToOrdered(*rb));
}

OutputComparison CompareOutput(const std::string& name, const value::Literal& before,
                               const value::Literal& after, const Tolerance& tolerance) {
  OutputComparison result;
  result.name = name;
  result.before_shape = before.shape().ToString(/*print_layout=*/false);
  result.after_shape = after.shape().ToString(/*print_layout=*/false);
  if (!before.shape().IsArray() || !before.shape().Compatible(after.shape())) return result;
  result.compared = true;
  result.elements = before.element_count();
  const PrimitiveType type = before.element_type();
  const bool complex = hlo::IsComplex(type);
  if (type == PrimitiveType::kBF16 || type == PrimitiveType::kF16 || type == PrimitiveType::kF32 ||
      type == PrimitiveType::kF64) {
    result.max_ulp = 0;
  }

  for (int64_t i = 0; i < result.elements; ++i) {
    double abs_error = 0;
    double magnitude = 0;
    bool nan_before = false, nan_after = false, identical = false;
    if (complex) {
      const auto element = [&](const value::Literal& l) {
        return type == PrimitiveType::kC64 ? std::complex<double>(l.data<std::complex<float>>()[i])
                                           : l.data<std::complex<double>>()[i];
      };
      const std::complex<double> x = element(before), y = element(after);
      nan_before = x != x;
      nan_after = y != y;
      identical = x == y;
      const double dr = y.real() - x.real(), di = y.imag() - x.imag();
      abs_error = eval::detmath::Sqrt(dr * dr + di * di);
      magnitude = eval::detmath::Sqrt(x.real() * x.real() + x.imag() * x.imag());
    } else {
      const double x = before.GetAsDouble(i), y = after.GetAsDouble(i);
      nan_before = x != x;
      nan_after = y != y;
      // Identical values: same number and same sign of zero.
      identical = x == y && std::signbit(x) == std::signbit(y);
      abs_error = x == y ? 0.0 : y - x < 0 ? x - y : y - x;  // inf - inf never reached
      magnitude = x < 0 ? -x : x;
    }
    if (nan_before || nan_after) {
      if (nan_before && nan_after) continue;  // NaN matches NaN
      ++result.differing;
      ++result.beyond_tolerance;
      ++result.nan_mismatches;
      continue;
    }
    if (identical) continue;
    ++result.differing;
    if (result.worst_index < 0 || abs_error > result.max_abs_error) {
      result.max_abs_error = abs_error;
      result.worst_index = i;
    }
    if (magnitude > 0 && magnitude < std::numeric_limits<double>::infinity()) {
      result.max_rel_error = std::max(result.max_rel_error, abs_error / magnitude);
    }
    std::optional<uint64_t> ulp;
    if (result.max_ulp.has_value()) {
      ulp = UlpDistance(before, after, i);
      if (ulp) result.max_ulp = std::max(*result.max_ulp, *ulp);
    }
    // An infinite error (an infinity against anything else) is never close,
    // even though rtol * infinity would admit it.
    const bool close = abs_error < std::numeric_limits<double>::infinity() &&
                       abs_error <= tolerance.atol + tolerance.rtol * magnitude;
    const bool ulp_close = tolerance.max_ulp.has_value() && ulp.has_value() &&
                           *ulp <= *tolerance.max_ulp;
    if (!close && !ulp_close) ++result.beyond_tolerance;
  }
  return result;
}

}  // namespace tpusim::harness
