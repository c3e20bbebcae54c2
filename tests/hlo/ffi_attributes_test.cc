// Typed-FFI custom-call attributes: the MLIR dictionary XLA prints as their
// backend_config.
#include "sim/hlo/ffi_attributes.h"

#include <gtest/gtest.h>

namespace tpusim::hlo {
namespace {

TEST(FfiAttributes, ValuesLoseTheirTypesAndKeepTheirText) {
  const auto attributes = ParseFfiAttributes(
      R"({attn_heads = 32 : i64, deterministic = false, dropout_probability = 0.000000e+00 : f64,
          window_size_left = -1 : i64, name = "a, b = c", "quoted name" = 7, dims = array<i64: 1, 2>, list = [3, 4], flag})");
  ASSERT_TRUE(attributes.has_value());
  EXPECT_EQ(attributes->size(), 9u);
  EXPECT_EQ(FfiInt(*attributes, "quoted name"), 7);
  EXPECT_EQ(attributes->at("attn_heads"), "32");
  EXPECT_EQ(attributes->at("deterministic"), "false");
  EXPECT_EQ(attributes->at("dropout_probability"), "0.000000e+00");
  EXPECT_EQ(attributes->at("name"), R"("a, b = c")");
  EXPECT_EQ(attributes->at("dims"), "array<i64: 1, 2>");
  EXPECT_EQ(attributes->at("list"), "[3, 4]");
  EXPECT_EQ(attributes->at("flag"), "");
  EXPECT_EQ(FfiInt(*attributes, "attn_heads"), 32);
  EXPECT_EQ(FfiInt(*attributes, "window_size_left"), -1);
  EXPECT_EQ(FfiInt(*attributes, "dropout_probability"), std::nullopt);
  EXPECT_EQ(FfiInt(*attributes, "deterministic"), std::nullopt);
  EXPECT_EQ(FfiInt(*attributes, "missing"), std::nullopt);
  EXPECT_TRUE(ParseFfiAttributes(" {} ")->empty());
}

TEST(FfiAttributes, WhatIsNoDictionaryIsRefused) {
  for (const char* text :
       {"", "attn_heads = 32", "{a = 1", R"({"a": 1})", "{a = [1, 2}", R"({a = "open})",
        "{a = 1 = 2}", "{= 1}", "{2a = 1}", "{a b = 1}", "{a = : i64}", "{a = 1,}"}) {
    EXPECT_EQ(ParseFfiAttributes(text), std::nullopt) << text;
  }
  // Past 64 bits an integer is none.
  EXPECT_EQ(FfiInt(*ParseFfiAttributes("{n = 9223372036854775808 : i64}"), "n"), std::nullopt);
  EXPECT_EQ(FfiInt(*ParseFfiAttributes("{n = 9223372036854775807 : i64}"), "n"),
            9223372036854775807);
}

}  // namespace
}  // namespace tpusim::hlo
