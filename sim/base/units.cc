#include "sim/base/units.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <system_error>

namespace tpusim {
namespace {

// Exact arithmetic in 128 bits: a mantissa below 10^20 times a unit scale of at
// most 2^40 or 10^15 stays far below 2^127 before the int64 range check.
using Wide = __int128;
constexpr Wide kMaxResult = std::numeric_limits<int64_t>::max();
constexpr Wide kMaxMantissa = static_cast<Wide>(1'000'000'000'000'000'000LL) * 100;

/// One accepted unit spelling and how many base units it stands for.
struct UnitScale {
  std::string_view suffix;
  int64_t scale;
};

constexpr int64_t kKi = int64_t{1} << 10;
constexpr int64_t kKilo = 1'000;
constexpr int64_t kMega = 1'000'000;
constexpr int64_t kGiga = 1'000'000'000;
constexpr int64_t kTera = 1'000'000'000'000;
constexpr int64_t kPeta = 1'000'000'000'000'000;

// One row per unit family reads better than one unit per line.
// clang-format off
constexpr std::array<UnitScale, 4> kHertzUnits = {{
    {"Hz", 1}, {"kHz", kKilo}, {"MHz", kMega}, {"GHz", kGiga}}};
constexpr std::array<UnitScale, 10> kByteUnits = {{
    {"B", 1}, {"kB", kKilo}, {"KB", kKilo}, {"MB", kMega}, {"GB", kGiga}, {"TB", kTera},
    {"KiB", kKi}, {"MiB", kKi * kKi}, {"GiB", kKi * kKi * kKi}, {"TiB", kKi * kKi * kKi * kKi}}};
constexpr std::array<UnitScale, 10> kBytePerSecondUnits = {{
    {"B/s", 1}, {"kB/s", kKilo}, {"KB/s", kKilo}, {"MB/s", kMega}, {"GB/s", kGiga},
    {"TB/s", kTera}, {"KiB/s", kKi}, {"MiB/s", kKi * kKi}, {"GiB/s", kKi * kKi * kKi},
    {"TiB/s", kKi * kKi * kKi * kKi}}};
constexpr std::array<UnitScale, 5> kTimeUnits = {{
    {"ps", 1}, {"ns", kKilo}, {"us", kMega}, {"ms", kGiga}, {"s", kTera}}};
constexpr std::array<UnitScale, 6> kFlopUnits = {{
    {"FLOP/s", 1}, {"kFLOP/s", kKilo}, {"MFLOP/s", kMega}, {"GFLOP/s", kGiga},
    {"TFLOP/s", kTera}, {"PFLOP/s", kPeta}}};
constexpr std::array<UnitScale, 3> kCycleUnits = {{{"", 1}, {"cycles", 1}, {"cycle", 1}}};
// clang-format on

/// What is being parsed, for messages: "invalid KIND 'TEXT': ...".
struct QuantityKind {
  std::string_view noun;       ///< "frequency", "size", ...
  std::string_view base_unit;  ///< "hertz", "bytes", ... for "not a whole number of"
  std::span<const UnitScale> units;
};

std::string ExpectedUnits(std::span<const UnitScale> units) {
  std::string list;
  for (const UnitScale& u : units) {
    if (u.suffix.empty()) continue;
    if (!list.empty()) list += ", ";
    list += u.suffix;
  }
  return list;
}

/// Parses TEXT as NUMBER[ ]UNIT into a count of the base unit, exactly.
StatusOr<int64_t> ParseScaled(std::string_view text, const QuantityKind& kind) {
  const auto fail = [&](const std::string& why) -> Status {
    return InvalidArgument("invalid " + std::string(kind.noun) + " '" + std::string(text) +
                           "': " + why);
  };
  size_t pos = 0;
  Wide mantissa = 0;
  int64_t exponent10 = 0;  // the value is mantissa * 10^exponent10 units
  size_t digits = 0;
  bool in_fraction = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    ++digits;
    mantissa = mantissa * 10 + (c - '0');
    if (mantissa > kMaxMantissa) return fail("too many digits");
    if (in_fraction) --exponent10;
  }
  if (digits == 0) return fail("expected a number");
  if (pos + 1 < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    size_t p = pos + 1;
    bool negative = false;
    if (text[p] == '+' || text[p] == '-') negative = text[p++] == '-';
    int64_t e = 0;
    const size_t exp_start = p;
    for (; p < text.size() && text[p] >= '0' && text[p] <= '9'; ++p) {
      e = e * 10 + (text[p] - '0');
      if (e > 100) return fail("exponent out of range");
    }
    if (p > exp_start) {
      exponent10 += negative ? -e : e;
      pos = p;
    }
  }
  if (pos < text.size() && text[pos] == ' ') ++pos;
  const std::string_view unit = text.substr(pos);

  const UnitScale* match = nullptr;
  for (const UnitScale& u : kind.units) {
    if (u.suffix == unit) match = &u;
  }
  if (match == nullptr) {
    if (unit.empty()) return fail("missing unit (expected " + ExpectedUnits(kind.units) + ")");
    return fail("unknown unit '" + std::string(unit) + "' (expected " + ExpectedUnits(kind.units) +
                ")");
  }

  Wide value = mantissa * match->scale;
  for (; exponent10 > 0 && value != 0; --exponent10) {
    value *= 10;
    if (value > kMaxResult) return fail("out of range");
  }
  for (; exponent10 < 0 && value != 0; ++exponent10) {
    if (value % 10 != 0) return fail("not a whole number of " + std::string(kind.base_unit));
    value /= 10;
  }
  if (value > kMaxResult) return fail("out of range");
  return static_cast<int64_t>(value);
}

template <typename Q>
StatusOr<Q> Parse(std::string_view text, const QuantityKind& kind) {
  TPUSIM_ASSIGN_OR_RETURN(const int64_t count, ParseScaled(text, kind));
  return Q(count);
}

}  // namespace

StatusOr<Hertz> ParseHertz(std::string_view text) {
  return Parse<Hertz>(text, {"frequency", "hertz", kHertzUnits});
}

StatusOr<Bytes> ParseBytes(std::string_view text) {
  return Parse<Bytes>(text, {"size", "bytes", kByteUnits});
}

StatusOr<BytesPerSecond> ParseBytesPerSecond(std::string_view text) {
  return Parse<BytesPerSecond>(text, {"bandwidth", "bytes per second", kBytePerSecondUnits});
}

StatusOr<Picoseconds> ParsePicoseconds(std::string_view text) {
  return Parse<Picoseconds>(text, {"duration", "picoseconds", kTimeUnits});
}

StatusOr<FlopsPerSecond> ParseFlopsPerSecond(std::string_view text) {
  return Parse<FlopsPerSecond>(text, {"throughput", "FLOP/s", kFlopUnits});
}

StatusOr<Cycles> ParseCycles(std::string_view text) {
  return Parse<Cycles>(text, {"cycle count", "cycles", kCycleUnits});
}

StatusOr<double> ParsePercentage(std::string_view text) {
  double percent = -1;
  const char* end = text.data() + text.size();
  const auto [number_end, ec] = std::from_chars(text.data(), end, percent);
  if (ec != std::errc() || number_end == text.data() || std::string_view(number_end, end) != "%" ||
      !(percent >= 0) || percent == std::numeric_limits<double>::infinity()) {
    return InvalidArgument("invalid percentage '" + std::string(text) +
                           "': expected a non-negative number followed by %, e.g. 2% or 0.5%");
  }
  return percent;
}

std::string FormatBytes(int64_t bytes, BinaryByteUnit largest) {
  // Indexed by BinaryByteUnit.
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  static_assert(std::size(kNames) == static_cast<size_t>(BinaryByteUnit::kEiB) + 1);
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit < static_cast<size_t>(largest)) {
    value /= 1024;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.2f %s", value, kNames[unit]);
  return buffer;
}

std::string FormatSignificant(double value, int significant) {
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", significant, value);
  return text;
}

std::string FormatFixed(double value, int decimals) {
  // 318 digits before the point at most (DBL_MAX), plus the decimals.
  char text[400];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string FormatGrouped(int64_t n) {
  const std::string text = std::to_string(n);
  const size_t first = n < 0 ? 1 : 0;  // the first digit, after any sign
  std::string grouped = text.substr(0, first);
  for (size_t i = first; i < text.size(); ++i) {
    if (i > first && (text.size() - i) % 3 == 0) grouped += ',';
    grouped += text[i];
  }
  return grouped;
}

std::string CountOf(int64_t n, std::string_view singular) {
  std::string text = std::to_string(n) + " " + std::string(singular);
  if (n == 1) return text;
  const bool sibilant = singular.ends_with("s") || singular.ends_with("x") ||
                        singular.ends_with("z") || singular.ends_with("ch") ||
                        singular.ends_with("sh");
  return text + (sibilant ? "es" : "s");
}

std::string FormatPercent(double percent, PercentSign sign) {
  char text[400];
  std::snprintf(text, sizeof text, sign == PercentSign::kSigned ? "%+.1f%%" : "%.1f%%", percent);
  return text;
}

}  // namespace tpusim
