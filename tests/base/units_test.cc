#include "sim/base/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tpusim {
namespace {

using ::testing::HasSubstr;

/// The error message of a parse that must fail.
template <typename T>
std::string ErrorOf(const StatusOr<T>& result) {
  EXPECT_FALSE(result.ok());
  if (result.ok()) return "";
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  return result.status().message();
}

TEST(Units, FrequencyParsesExactlyFromDecimalFractions) {
  EXPECT_EQ(ParseHertz("1.6GHz")->value(), 1'600'000'000);
  EXPECT_EQ(ParseHertz("940MHz")->value(), 940'000'000);
  EXPECT_EQ(ParseHertz("1.05GHz")->value(), 1'050'000'000);
  EXPECT_EQ(ParseHertz("2 kHz")->value(), 2'000);
  EXPECT_EQ(ParseHertz("7Hz")->value(), 7);
}

TEST(Units, SizesUseDecimalAndBinaryPrefixes) {
  EXPECT_EQ(ParseBytes("16GiB")->value(), int64_t{16} << 30);
  EXPECT_EQ(ParseBytes("16GB")->value(), 16'000'000'000);
  EXPECT_EQ(ParseBytes("512B")->value(), 512);
  EXPECT_EQ(ParseBytes("1.5KiB")->value(), 1'536);
  EXPECT_EQ(ParseBytes("4kB")->value(), 4'000);
  EXPECT_EQ(ParseBytes("4KB")->value(), 4'000);
  EXPECT_EQ(ParseBytes("1TiB")->value(), int64_t{1} << 40);
}

TEST(Units, BandwidthAcceptsScientificNotation) {
  EXPECT_EQ(ParseBytesPerSecond("819GB/s")->value(), 819'000'000'000);
  EXPECT_EQ(ParseBytesPerSecond("8.2e11B/s")->value(), 820'000'000'000);
  EXPECT_EQ(ParseBytesPerSecond("2575GiB/s")->value(), int64_t{2575} << 30);
  EXPECT_EQ(ParseBytesPerSecond("12902.4GB/s")->value(), 12'902'400'000'000);
  EXPECT_EQ(ParseBytesPerSecond("1E3B/s")->value(), 1'000);
}

TEST(Units, DurationsAreWholePicoseconds) {
  EXPECT_EQ(ParsePicoseconds("1.5us")->value(), 1'500'000);
  EXPECT_EQ(ParsePicoseconds("1ns")->value(), 1'000);
  EXPECT_EQ(ParsePicoseconds("2ms")->value(), 2'000'000'000);
  EXPECT_EQ(ParsePicoseconds("1s")->value(), 1'000'000'000'000);
  EXPECT_EQ(ParsePicoseconds("0ps")->value(), 0);
}

TEST(Units, ThroughputAndCycles) {
  EXPECT_EQ(ParseFlopsPerSecond("197TFLOP/s")->value(), 197'000'000'000'000);
  EXPECT_EQ(ParseFlopsPerSecond("4.614PFLOP/s")->value(), 4'614'000'000'000'000);
  EXPECT_EQ(ParseCycles("512")->value(), 512);
  EXPECT_EQ(ParseCycles("8 cycles")->value(), 8);
  EXPECT_EQ(ParseCycles("1cycle")->value(), 1);
}

TEST(Units, PercentageIsOneSyntaxWithOneMeaning) {
  EXPECT_EQ(*ParsePercentage("2%"), 2.0);
  EXPECT_EQ(*ParsePercentage("0.5%"), 0.5);
  EXPECT_EQ(*ParsePercentage("0%"), 0.0);
  EXPECT_EQ(*ParsePercentage("1e-3%"), 1e-3);
  // A bare number could mean a fraction or a percentage: refused.
  EXPECT_EQ(ErrorOf(ParsePercentage("2")),
            "invalid percentage '2': expected a non-negative number followed by %, e.g. 2% or "
            "0.5%");
  for (const char* bad : {"0.02", "2 %", "%", "-1%", "2%%", "inf%", "nan%", "", "two%"}) {
    EXPECT_FALSE(ParsePercentage(bad).ok()) << bad;
  }
}

TEST(Units, NegativeExponentMustLeaveAWholeNumber) {
  EXPECT_EQ(ParseBytes("1500e-3KB")->value(), 1'500);
  EXPECT_EQ(ParseHertz("1.50GHz")->value(), 1'500'000'000);
  EXPECT_EQ(ErrorOf(ParseBytes("1.5B")), "invalid size '1.5B': not a whole number of bytes");
  EXPECT_EQ(ErrorOf(ParsePicoseconds("0.5ps")),
            "invalid duration '0.5ps': not a whole number of picoseconds");
}

TEST(Units, UnknownUnitNamesTheTextAndTheChoices) {
  EXPECT_EQ(ErrorOf(ParseHertz("1.6GHzz")),
            "invalid frequency '1.6GHzz': unknown unit 'GHzz' (expected Hz, kHz, MHz, GHz)");
  EXPECT_THAT(ErrorOf(ParseBytesPerSecond("819GBps")), HasSubstr("unknown unit 'GBps'"));
  EXPECT_THAT(ErrorOf(ParseBytes("16gib")), HasSubstr("unknown unit 'gib'"));
  EXPECT_THAT(ErrorOf(ParseCycles("3 ns")), HasSubstr("unknown unit 'ns'"));
}

TEST(Units, MissingUnitOrNumberIsAnError) {
  EXPECT_EQ(ErrorOf(ParseBytes("16")),
            "invalid size '16': missing unit (expected B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  EXPECT_EQ(ErrorOf(ParseHertz("GHz")), "invalid frequency 'GHz': expected a number");
  EXPECT_EQ(ErrorOf(ParseHertz("")), "invalid frequency '': expected a number");
  EXPECT_THAT(ErrorOf(ParseBytes("-1B")), HasSubstr("expected a number"));
  EXPECT_THAT(ErrorOf(ParseBytes("1..5B")), HasSubstr("unknown unit '.5B'"));
}

TEST(Units, ValuesBeyondInt64AreRejected) {
  EXPECT_EQ(ErrorOf(ParseBytes("8EiB")),
            "invalid size '8EiB': unknown unit 'EiB' (expected B, "
            "kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  EXPECT_EQ(ErrorOf(ParseBytes("10000000TiB")), "invalid size '10000000TiB': out of range");
  EXPECT_EQ(ErrorOf(ParseBytes("1e30B")), "invalid size '1e30B': out of range");
  EXPECT_EQ(ErrorOf(ParseBytes("123456789012345678901B")),
            "invalid size '123456789012345678901B': too many digits");
  EXPECT_EQ(ErrorOf(ParseBytes("1e999B")), "invalid size '1e999B': exponent out of range");
  EXPECT_EQ(ParseBytes("9223372036854775807B")->value(), INT64_MAX);
}

TEST(Units, FormatBytesGivesWholeBytesThenTwoDecimalsInTheLargestUnitThatFits) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1024), "1.00 KiB");
  EXPECT_EQ(FormatBytes(3 * 512 * 1024), "1.50 MiB");
  EXPECT_EQ(FormatBytes(int64_t{1} << 50), "1.00 PiB");
  EXPECT_EQ(FormatBytes(std::numeric_limits<int64_t>::max()), "8.00 EiB");
}

TEST(Units, FormatBytesStopsAtTheLargestUnitAskedFor) {
  EXPECT_EQ(FormatBytes(int64_t{1} << 50, BinaryByteUnit::kTiB), "1024.00 TiB");
  EXPECT_EQ(FormatBytes(int64_t{1} << 40, BinaryByteUnit::kTiB), "1.00 TiB");
  EXPECT_EQ(FormatBytes(2048, BinaryByteUnit::kB), "2048 B");
}

TEST(Units, FormatSignificantKeepsTheDigitsAskedFor) {
  EXPECT_EQ(FormatSignificant(0.1875), "0.1875");
  EXPECT_EQ(FormatSignificant(1234567.0), "1.23457e+06");
  EXPECT_EQ(FormatSignificant(1234567.0, 9), "1234567");
  EXPECT_EQ(FormatSignificant(2.0 / 3.0, 9), "0.666666667");
  EXPECT_EQ(FormatSignificant(-0.5), "-0.5");
}

TEST(Units, FormatGroupedPutsACommaBetweenThousands) {
  EXPECT_EQ(FormatGrouped(0), "0");
  EXPECT_EQ(FormatGrouped(999), "999");
  EXPECT_EQ(FormatGrouped(1000), "1,000");
  EXPECT_EQ(FormatGrouped(1234567), "1,234,567");
  EXPECT_EQ(FormatGrouped(-123), "-123");
  EXPECT_EQ(FormatGrouped(-1024), "-1,024");
  EXPECT_EQ(FormatGrouped(INT64_MIN), "-9,223,372,036,854,775,808");
}

TEST(Units, CountOfPluralisesTheNounUnlessThereIsOne) {
  EXPECT_EQ(CountOf(1, "operand"), "1 operand");
  EXPECT_EQ(CountOf(0, "operand"), "0 operands");
  EXPECT_EQ(CountOf(2, "branch"), "2 branches");
  EXPECT_EQ(CountOf(3, "pass"), "3 passes");
  EXPECT_EQ(CountOf(-1, "device"), "-1 devices");
}

TEST(Units, FormatFixedAndFormatPercentRoundToTheirDecimals) {
  EXPECT_EQ(FormatFixed(0.2444, 3), "0.244");
  EXPECT_EQ(FormatFixed(4096.0, 0), "4096");
  EXPECT_EQ(FormatFixed(1e300, 1).size(), 303u);  // no truncation of huge values
  EXPECT_EQ(FormatPercent(12.34), "12.3%");
  EXPECT_EQ(FormatPercent(12.34, PercentSign::kSigned), "+12.3%");
  EXPECT_EQ(FormatPercent(-4.0, PercentSign::kSigned), "-4.0%");
}

TEST(Units, QuantitiesOfOneUnitAddAndCompare) {
  const Bytes a(3);
  const Bytes b(4);
  EXPECT_EQ((a + b).value(), 7);
  EXPECT_EQ((b - a).value(), 1);
  EXPECT_EQ((a * 2).value(), 6);
  EXPECT_EQ((2 * a).value(), 6);
  EXPECT_LT(a, b);
  EXPECT_EQ(Cycles().value(), 0);
}

}  // namespace
}  // namespace tpusim
