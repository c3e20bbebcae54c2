// Comparing two arrays element by element: the one vocabulary of closeness
// that scenario checks (an output against its golden) and `tpusim diff` (a
// release's output against the previous one's) share.
#ifndef TPUSIM_SIM_VALUE_COMPARE_H_
#define TPUSIM_SIM_VALUE_COMPARE_H_

#include <cstdint>
#include <map>
#include <optional>

#include "sim/value/literal.h"

namespace tpusim::value {

/// When an element of the compared array counts as close to the reference's.
/// Bit-identical elements always pass. With `exact`, nothing else does.
/// Otherwise a NaN passes only against a NaN, and other elements pass when
/// |actual - reference| <= atol + rtol * |reference| (numpy's allclose, the
/// reference on the right; an infinite difference never passes), or when
/// `ulp` is set and they are at most that many representable values apart
/// (UlpDistance). Complex elements use the modulus of their difference.
struct ErrorSpec {
  bool exact = false;
  double atol = 0;
  double rtol = 0;
  std::optional<uint64_t> ulp;
};

/// An ErrorSpec for each element type: `by_type`'s for the types it names,
/// `all` for the others (a bf16 output need not be held to what an f32 one
/// meets).
struct TypedErrorSpec {
  ErrorSpec all;
  std::map<hlo::PrimitiveType, ErrorSpec> by_type;
  const ErrorSpec& For(hlo::PrimitiveType type) const {
    const auto it = by_type.find(type);
    return it != by_type.end() ? it->second : all;
  }
};

/// How far an array is from its reference.
struct LiteralComparison {
  /// False when the shapes are incompatible (other dimensions, dynamic sizes
  /// or element type) or not arrays: nothing below was measured. Padding
  /// beyond a dynamic size is zero on both sides, so only valid elements differ.
  bool compared = false;
  int64_t elements = 0;
  /// Elements that are not bit-identical, two NaNs apart (their payloads are
  /// not values).
  int64_t differing = 0;
  /// Elements outside the ErrorSpec.
  int64_t beyond_tolerance = 0;
  /// Elements NaN on exactly one side (counted in beyond_tolerance too).
  int64_t nan_mismatches = 0;
  /// Over differing elements that are not NaN on either side; an infinity
  /// against a finite value makes it infinite.
  double max_abs_error = 0;
  /// |actual - reference| / |reference| over elements with a finite non-zero reference.
  double max_rel_error = 0;
  /// Largest UlpDistance over differing elements (NaN mismatches excluded);
  /// set for floating-point types only.
  std::optional<uint64_t> max_ulp;
  /// Row-major index of the element with the largest absolute error; -1 when none differs.
  int64_t worst_index = -1;
  /// Row-major index of the first element outside the ErrorSpec; -1 when none is.
  int64_t first_beyond_index = -1;

  bool within_tolerance() const { return compared && beyond_tolerance == 0; }
};

/// Units in the last place between element `index` of two arrays of the same
/// type. Floating point: the count of representable values from one to the
/// other, by ordering their bit patterns as integers (+0 and -0 are 0 apart,
/// the largest finite value and infinity 1 apart); 0 when both are NaN,
/// nullopt when just one is. Integers: |a - b|. Nullopt for other types
/// (pred, complex) and when the types differ.
std::optional<uint64_t> UlpDistance(const Literal& a, const Literal& b, int64_t index);

/// Compares `actual` with `reference` element by element under `spec`.
LiteralComparison CompareLiterals(const Literal& reference, const Literal& actual,
                                  const ErrorSpec& spec);

}  // namespace tpusim::value

#endif  // TPUSIM_SIM_VALUE_COMPARE_H_
