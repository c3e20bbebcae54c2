// Physical quantities as distinct types, so that a byte count can never be
// passed where a frequency is expected (style.md rule 4), plus exact parsing of
// the unit strings that presets and scenarios use ("1.6GHz", "819GB/s",
// "16GiB", "1.5us"), and sizes formatted for messages ("1.50 MiB").
//
// Every quantity holds a signed 64-bit integer count of its base unit (cycles,
// bytes, picoseconds, hertz, bytes per second, FLOP per second). Integers keep
// results bit-identical across machines; int64 covers every figure a TPU pod
// needs (a 4.6 PFLOP/s chip is 4.6e15 of 9.2e18).
#ifndef TPUSIM_SIM_BASE_UNITS_H_
#define TPUSIM_SIM_BASE_UNITS_H_

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "sim/base/status.h"

namespace tpusim {

/// A count of one base unit, distinguished by `Tag` so that different
/// quantities do not mix. Only same-unit arithmetic and scaling by a plain
/// number are defined; conversions between units are explicit functions.
template <typename Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(int64_t count) : count_(count) {}

  /// The count in the base unit (e.g. bytes, hertz).
  constexpr int64_t value() const { return count_; }

  friend constexpr auto operator<=>(Quantity, Quantity) = default;
  friend constexpr Quantity operator+(Quantity a, Quantity b) {
    return Quantity(a.count_ + b.count_);
  }
  friend constexpr Quantity operator-(Quantity a, Quantity b) {
    return Quantity(a.count_ - b.count_);
  }
  friend constexpr Quantity operator*(Quantity a, int64_t k) { return Quantity(a.count_ * k); }
  friend constexpr Quantity operator*(int64_t k, Quantity a) { return Quantity(k * a.count_); }

 private:
  int64_t count_ = 0;  ///< in the base unit; zero-initialised so configs start empty
};

using Cycles = Quantity<struct CyclesTag>;                  ///< clock cycles of some clock domain
using Bytes = Quantity<struct BytesTag>;                    ///< bytes
using Picoseconds = Quantity<struct PicosecondsTag>;        ///< simulated time
using Hertz = Quantity<struct HertzTag>;                    ///< clock frequency
using BytesPerSecond = Quantity<struct BytesPerSecondTag>;  ///< bandwidth
using FlopsPerSecond = Quantity<struct FlopsPerSecondTag>;  ///< arithmetic throughput

// Parsers for "NUMBER[ ]UNIT" text. NUMBER is decimal with an optional
// fraction and exponent ("1.5", "8.2e11"); no sign. The result must be a whole
// number of the base unit that fits in int64, computed exactly (no floating
// point): "1.6GHz" is 1'600'000'000 Hz, "0.5ps" is an error. Errors are
// kInvalidArgument and quote the bad text, e.g.
// "invalid frequency '1.6GHzz': unknown unit 'GHzz' (expected Hz, kHz, MHz, GHz)".

/// Units: Hz, kHz, MHz, GHz.
StatusOr<Hertz> ParseHertz(std::string_view text);
/// Units: B, kB (= KB), MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB (powers of 1024).
StatusOr<Bytes> ParseBytes(std::string_view text);
/// Units: any byte unit followed by "/s", e.g. "819GB/s", "2575GiB/s".
StatusOr<BytesPerSecond> ParseBytesPerSecond(std::string_view text);
/// Units: ps, ns, us, ms, s.
StatusOr<Picoseconds> ParsePicoseconds(std::string_view text);
/// Units: FLOP/s, kFLOP/s, MFLOP/s, GFLOP/s, TFLOP/s, PFLOP/s.
StatusOr<FlopsPerSecond> ParseFlopsPerSecond(std::string_view text);
/// A bare whole number ("512") or one followed by "cycles" or "cycle".
StatusOr<Cycles> ParseCycles(std::string_view text);

/// A percentage: a non-negative decimal number followed by "%" ("2%", "0.5%",
/// "1e-3%"), the one way tolerances and bounds are written (scenarios,
/// `tpusim diff`, validation suites); a bare number is refused, so "2" can
/// mean neither 2% nor 200%. Returns the number of percent: "2%" gives 2.
StatusOr<double> ParsePercentage(std::string_view text);

/// The binary units FormatBytes prints a size in, smallest first.
enum class BinaryByteUnit : uint8_t { kB, kKiB, kMiB, kGiB, kTiB, kPiB, kEiB };

/// `bytes` (>= 0) for people: in the largest unit up to `largest` that it is
/// at least one of, whole bytes or two decimals: "512 B", "4.00 KiB",
/// "281.93 GiB", "1024.00 TiB" with `largest` kTiB. Not parsed back.
std::string FormatBytes(int64_t bytes, BinaryByteUnit largest = BinaryByteUnit::kEiB);

/// `value` with at most `significant` significant digits, in printf's %g
/// form ("0.1875", "1.5e+06", "inf"): 6 for tables and charts, which people
/// read; 9 for messages that quote a measured value against a bound, so two
/// values that differ are never printed the same.
std::string FormatSignificant(double value, int significant = 6);

/// `value` with `decimals` digits after the point (printf's %.Nf): "0.244"
/// seconds, "12.5" pixels, "4096" bytes with 0.
std::string FormatFixed(double value, int decimals);

/// A percentage for people, one decimal: "12.3%"; with `sign`, "+12.3%" and
/// "-4.0%", for changes and signed errors.
enum class PercentSign : uint8_t { kUnsigned, kSigned };
std::string FormatPercent(double percent, PercentSign sign = PercentSign::kUnsigned);

/// `n` with its thousands grouped for people: "1,234,567", "-1,024".
std::string FormatGrouped(int64_t n);

/// `n` and the English noun `singular`, plural unless n is 1: "1 operand",
/// "2 operands", "3 branches" (-es after s, x, z, ch and sh).
std::string CountOf(int64_t n, std::string_view singular);

}  // namespace tpusim

#endif  // TPUSIM_SIM_BASE_UNITS_H_
