// Numeric comparison of two runs' outputs, element by element, for
// `tpusim diff`: max absolute and relative error, distance in units in the
// last place, how many elements differ and how many are beyond tolerance.
#ifndef TPUSIM_HARNESS_OUTPUT_DIFF_H_
#define TPUSIM_HARNESS_OUTPUT_DIFF_H_

#include <cstdint>
#include <optional>
#include <string>

#include "sim/value/literal.h"

namespace tpusim::harness {

/// When two elements count as the same. An element of `after` passes when
/// |after - before| <= atol + rtol * |before| (numpy's allclose with `before`
/// as the reference), or when max_ulp is set and their ulp distance is at
/// most max_ulp. NaN passes only against NaN; an infinity only against the
/// same infinity.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
  std::optional<uint64_t> max_ulp;
};

/// Units in the last place between element `index` of two arrays of the same
/// floating-point type (bf16, f16, f32 or f64): the count of representable
/// values from one to the other, by ordering their bit patterns as integers
/// (so +0 and -0 are 0 apart, the largest finite value and infinity 1 apart).
/// 0 when both are NaN; nullopt when just one is NaN, the types differ or are
/// not one of these four.
std::optional<uint64_t> UlpDistance(const value::Literal& a, const value::Literal& b,
                                    int64_t index);

/// How one output differs between two runs.
struct OutputComparison {
  std::string name;          ///< "output_0", "device_1/output_0"
  std::string before_shape;  ///< e.g. "f32[8,128]"
  std::string after_shape;
  /// False when the shapes are incompatible (other dimensions or element
  /// type): a structural change, and no numbers below.
  bool compared = false;
  int64_t elements = 0;
  /// Elements whose values are not identical (two NaNs are identical, +0 and
  /// -0 are not).
  int64_t differing = 0;
  /// Elements outside the Tolerance.
  int64_t beyond_tolerance = 0;
  /// Elements NaN on exactly one side (counted in beyond_tolerance too).
  int64_t nan_mismatches = 0;
  /// Over elements that are not NaN on either side; an infinity against a
  /// finite value makes max_abs_error infinite.
  double max_abs_error = 0;
  /// |after - before| / |before| over elements with a finite non-zero `before`.
  double max_rel_error = 0;
  /// Largest ulp distance (float types of UlpDistance only; NaN mismatches
  /// excluded); unset for other types.
  std::optional<uint64_t> max_ulp;
  /// Row-major index of the element with the largest absolute error; -1 when none differs.
  int64_t worst_index = -1;

  bool within_tolerance() const { return compared && beyond_tolerance == 0; }
};

/// Compares two array leaves. Complex elements compare by the modulus of
/// their difference (no ulp distance); pred and integers as numbers.
OutputComparison CompareOutput(const std::string& name, const value::Literal& before,
                               const value::Literal& after, const Tolerance& tolerance);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_OUTPUT_DIFF_H_
