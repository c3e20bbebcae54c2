#include "sim/value/constant_range.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "sim/hlo/parser.h"

namespace tpusim::value {
namespace {

using ::testing::HasSubstr;

/// VerifyConstantsFit of a module whose entry returns `type[] constant(value)`.
Status Verify(const std::string& type, const std::string& value) {
  auto module = hlo::ParseHloModule(
      "HloModule m\nENTRY e {\n  ROOT c = " + type + "[] constant(" + value + ")\n}\n", "c.hlo");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? VerifyConstantsFit(**module) : module.status();
}

TEST(VerifyConstantsFit, AFiniteValueThatRoundsBeyondTheTypeIsOutOfRange) {
  // What rounds to the largest finite value fits; what rounds beyond does not.
  EXPECT_TRUE(Verify("f16", "65504").ok());
  EXPECT_TRUE(Verify("f16", "65519").ok());
  EXPECT_FALSE(Verify("f16", "65520").ok());
  EXPECT_FALSE(Verify("f16", "-70000").ok());
  EXPECT_TRUE(Verify("bf16", "3.38e38").ok());
  EXPECT_FALSE(Verify("bf16", "1e39").ok());
  // XLA prints the largest f32 as 3.40282347e+38, a little above it.
  EXPECT_TRUE(Verify("f32", "3.40282347e+38").ok());
  EXPECT_FALSE(Verify("f32", "1e39").ok());
  EXPECT_TRUE(Verify("f64", "1e308").ok());
  EXPECT_TRUE(Verify("f8e4m3fn", "464").ok());  // a tie, to 448's even code
  EXPECT_FALSE(Verify("f8e4m3fn", "465").ok());
  EXPECT_FALSE(Verify("c64", "(1, 1e39)").ok());
  // Infinities and NaN written as such are what the program holds.
  EXPECT_TRUE(Verify("f16", "inf").ok());
  EXPECT_TRUE(Verify("f32", "-inf").ok());
  EXPECT_TRUE(Verify("bf16", "nan").ok());
  const Status f16 = Verify("f16", "70000");
  EXPECT_THAT(f16.message(),
              HasSubstr("c.hlo:3:3: error: c: f16 constant 70000 is out of range (the largest "
                        "finite f16 is 65504)"));
}

}  // namespace
}  // namespace tpusim::value
