// Integer helpers for sizes and costs: exact, saturating at INT64_MAX instead
// of overflowing (a pathological shape must give a huge cost or size, not a
// wrapped one). One home for the chip cost formulas, timing's lowering, the
// evaluator's memory estimate and the topology loader's chip counts.
#ifndef TPUSIM_SIM_BASE_ARITH_H_
#define TPUSIM_SIM_BASE_ARITH_H_

#include <cstdint>
#include <limits>

namespace tpusim {

inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// a * b for a, b >= 0, saturating.
inline int64_t SatMul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kInt64Max : r;
}
/// a + b for a, b >= 0, saturating.
inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kInt64Max : r;
}
/// ceil(a / b) for a >= 0, b > 0.
inline int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
/// a rounded up to a multiple of b, for a >= 0, b > 0; saturating.
inline int64_t RoundUp(int64_t a, int64_t b) { return SatMul(CeilDiv(a, b), b); }
/// ceil(a * b / c) for a, b >= 0, c > 0, exact through 128-bit intermediates; saturating.
inline int64_t MulDivCeil(int64_t a, int64_t b, int64_t c) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * static_cast<unsigned __int128>(b);
  const unsigned __int128 q = p / static_cast<unsigned __int128>(c) + (p % c != 0 ? 1 : 0);
  return q > static_cast<unsigned __int128>(kInt64Max) ? kInt64Max : static_cast<int64_t>(q);
}

}  // namespace tpusim

#endif  // TPUSIM_SIM_BASE_ARITH_H_
