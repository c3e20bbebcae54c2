#include "sim/value/literal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace tpusim::value {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(LiteralTest, ArrayIsZeroFilledRowMajor) {
  Literal l(Shape(PrimitiveType::kF32, {2, 3}));
  EXPECT_EQ(l.element_count(), 6);
  EXPECT_EQ(l.bytes().size(), 24u);
  for (float v : l.data<float>()) EXPECT_EQ(v, 0.0f);
  l.Set<float>({1, 2}, 7.5f);
  EXPECT_EQ(l.data<float>()[5], 7.5f);  // last dimension varies fastest
  EXPECT_EQ(l.Get<float>({1, 2}), 7.5f);
  EXPECT_EQ(l.LinearIndex(std::vector<int64_t>{1, 0}), 3);
}

TEST(LiteralTest, ElementSizesFollowTheStorageTable) {
  const struct {
    PrimitiveType type;
    int64_t bytes;
  } cases[] = {
      {PrimitiveType::kPred, 1},     {PrimitiveType::kS1, 1},    {PrimitiveType::kS4, 1},
      {PrimitiveType::kU2, 1},       {PrimitiveType::kS16, 2},   {PrimitiveType::kU64, 8},
      {PrimitiveType::kF16, 2},      {PrimitiveType::kBF16, 2},  {PrimitiveType::kF8E4M3FN, 1},
      {PrimitiveType::kF4E2M1FN, 1}, {PrimitiveType::kF64, 8},   {PrimitiveType::kC64, 8},
      {PrimitiveType::kC128, 16},    {PrimitiveType::kToken, 0},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ElementByteSize(c.type), c.bytes) << hlo::PrimitiveTypeName(c.type);
  }
}

TEST(LiteralTest, LayoutsAreDropped) {
  Shape shape(PrimitiveType::kBF16, {8, 128});
  shape.mutable_layout() = hlo::Layout({0, 1});
  Literal l(shape);
  EXPECT_FALSE(l.shape().has_layout());
  EXPECT_EQ(l.shape().ToString(), "bf16[8,128]");
}

TEST(LiteralTest, CreateHelpers) {
  EXPECT_EQ(Literal::CreateR0<int32_t>(-4).ToString(), "s32[] -4");
  EXPECT_EQ(Literal::CreateR0(true).ToString(), "pred[] true");
  EXPECT_EQ(Literal::CreateR1<float>({1.5f, -2.0f}).ToString(), "f32[2] {1.5, -2}");
  EXPECT_EQ(Literal::CreateR1<int8_t>({-1, 2}).ToString(), "s8[2] {-1, 2}");
  EXPECT_EQ(Literal::CreateR1<uint64_t>({18446744073709551615u}).ToString(),
            "u64[1] {18446744073709551615}");
  EXPECT_EQ(Literal::CreateR0(BF16::FromFloat(3.140625f)).ToString(), "bf16[] 3.140625");
  EXPECT_EQ(Literal::CreateR0(std::complex<float>(1, -2)).ToString(), "c64[] (1,-2)");
  const std::vector<double> values = {-9, 7.9, 3};
  EXPECT_EQ(Literal::CreateR1(PrimitiveType::kS4, values).ToString(), "s4[3] {-8, 7, 3}");
  EXPECT_EQ(Literal::CreateR0(PrimitiveType::kF8E4M3FN, 1e9).ToString(), "f8e4m3fn[] nan");
}

TEST(LiteralTest, ToStringSummarisesLargeArraysAndTuples) {
  Literal big(Shape(PrimitiveType::kS32, {100, 100}));
  EXPECT_EQ(big.ToString(), "s32[100,100] {0, 0, 0, 0, 0, 0, 0, 0, ... 10000 elements}");
  std::vector<Literal> parts;
  parts.push_back(Literal::CreateR0<int32_t>(1));
  parts.push_back(Literal::CreateToken());
  parts.push_back(Literal(Shape(PrimitiveType::kF32, {0})));
  EXPECT_EQ(Literal::CreateTuple(std::move(parts)).ToString(), "(s32[] 1, token, f32[0] {})");
  EXPECT_EQ(Literal().ToString(), "()");
}

TEST(LiteralTest, SetFromDoubleIntegersSaturateTruncateAndZeroNan) {
  struct Case {
    PrimitiveType type;
    double in;
    double out;
  };
  const Case cases[] = {
      {PrimitiveType::kS8, 1e9, 127},
      {PrimitiveType::kS8, -1e9, -128},
      {PrimitiveType::kS8, -3.9, -3},
      {PrimitiveType::kS8, 3.9, 3},
      {PrimitiveType::kS8, kNan, 0},
      {PrimitiveType::kU8, -5, 0},
      {PrimitiveType::kU8, 255.9, 255},
      {PrimitiveType::kU8, 256, 255},
      {PrimitiveType::kS4, 8, 7},
      {PrimitiveType::kS4, -8.5, -8},
      {PrimitiveType::kU4, 16, 15},
      {PrimitiveType::kU2, 3.5, 3},
      {PrimitiveType::kS2, -3, -2},
      {PrimitiveType::kS1, 0.5, 0},
      {PrimitiveType::kS1, -7, -1},
      {PrimitiveType::kU1, kInf, 1},
      {PrimitiveType::kS32, kInf, 2147483647},
      {PrimitiveType::kS32, -kInf, -2147483648.0},
      {PrimitiveType::kS64, 1e19, 9223372036854775807.0},
      {PrimitiveType::kU64, -0.5, 0},
      {PrimitiveType::kPred, 0.25, 1},
      {PrimitiveType::kPred, -0.0, 0},
      {PrimitiveType::kPred, kNan, 1},
  };
  for (const Case& c : cases) {
    Literal l(Shape(c.type, {}));
    l.SetFromDouble(0, c.in);
    EXPECT_EQ(l.GetAsDouble(0), c.out) << hlo::PrimitiveTypeName(c.type) << " from " << c.in;
  }
  // 64-bit extremes are exact in storage even though doubles cannot show them.
  Literal s64(Shape(PrimitiveType::kS64, {}));
  s64.SetFromDouble(0, 1e19);
  EXPECT_EQ(s64.data<int64_t>()[0], std::numeric_limits<int64_t>::max());
  Literal u64(Shape(PrimitiveType::kU64, {}));
  u64.SetFromDouble(0, 1e30);
  EXPECT_EQ(u64.data<uint64_t>()[0], std::numeric_limits<uint64_t>::max());
}

// The bulk form stores each value where SetFromDouble would, and nothing
// outside [first, first + n).
TEST(LiteralTest, SetFromDoublesStoresARunAsSetFromDoubleWouldEachValue) {
  const double values[] = {1e9, -3.9, 0.5, kNan, -kInf, 1 + 0x1p-8 + 0x1p-30};
  for (const PrimitiveType type : {PrimitiveType::kS8, PrimitiveType::kPred, PrimitiveType::kBF16,
                                   PrimitiveType::kF16, PrimitiveType::kF32, PrimitiveType::kC64}) {
    Literal bulk(Shape(type, {8}));
    Literal each(Shape(type, {8}));
    bulk.SetFromDoubles(1, values);
    for (int64_t i = 0; i < 6; ++i) each.SetFromDouble(1 + i, values[i]);
    EXPECT_TRUE(std::ranges::equal(bulk.bytes(), each.bytes())) << hlo::PrimitiveTypeName(type);
    EXPECT_EQ(bulk.GetAsDouble(0), 0) << hlo::PrimitiveTypeName(type);
    EXPECT_EQ(bulk.GetAsDouble(7), 0) << hlo::PrimitiveTypeName(type);
    EXPECT_NE(bulk.GetAsDouble(2), 0) << hlo::PrimitiveTypeName(type);
  }
}

TEST(LiteralTest, SubByteSignedValuesAreSignExtended) {
  Literal l(Shape(PrimitiveType::kS4, {2}));
  l.SetFromDouble(0, -3);
  l.SetFromDouble(1, 5);
  EXPECT_EQ(l.data<int8_t>()[0], -3);
  EXPECT_EQ(static_cast<uint8_t>(l.bytes()[0]), 0xFD);
  EXPECT_EQ(l.data<int8_t>()[1], 5);
}

TEST(LiteralTest, SetFromDoubleFloatsRoundOnce) {
  // 1 + 2^-8 + 2^-30 must round up in bf16; via float it would tie down to 1.
  Literal bf16(Shape(PrimitiveType::kBF16, {}));
  bf16.SetFromDouble(0, 1.0 + 0x1p-8 + 0x1p-30);
  EXPECT_EQ(bf16.data<uint16_t>()[0], 0x3F81);
  EXPECT_EQ(bf16.data<BF16>()[0].bits(), 0x3F81);
  Literal f32(Shape(PrimitiveType::kF32, {}));
  f32.SetFromDouble(0, 0.1);
  EXPECT_EQ(f32.data<float>()[0], 0.1f);
  Literal c128(Shape(PrimitiveType::kC128, {}));
  c128.SetFromDouble(0, -2.5);
  EXPECT_EQ(c128.data<std::complex<double>>()[0], std::complex<double>(-2.5, 0));
  EXPECT_EQ(c128.GetAsDouble(0), -2.5);
  Literal e8m0(Shape(PrimitiveType::kF8E8M0FNU, {}));
  e8m0.SetFromDouble(0, 0.0);
  EXPECT_TRUE(std::isnan(e8m0.GetAsDouble(0)));
}

TEST(LiteralTest, RawBitsViewsAreAllowed) {
  Literal l(Shape(PrimitiveType::kF8E5M2, {3}));
  l.data<uint8_t>()[1] = 0x3C;
  EXPECT_EQ(l.GetAsDouble(1), 1.0);
  EXPECT_EQ(l.data<F8E5M2>()[1].bits(), 0x3C);
  EXPECT_TRUE(IsStorageTypeFor<uint16_t>(PrimitiveType::kBF16));
  EXPECT_TRUE(IsStorageTypeFor<int8_t>(PrimitiveType::kS2));
  EXPECT_FALSE(IsStorageTypeFor<uint16_t>(PrimitiveType::kS16));
  EXPECT_FALSE(IsStorageTypeFor<float>(PrimitiveType::kBF16));
  EXPECT_FALSE(IsStorageTypeFor<BF16>(PrimitiveType::kF16));
}

TEST(LiteralTest, TuplesAndTokens) {
  const Shape shape = Shape::Tuple({Shape(PrimitiveType::kF32, {2}),
                                    Shape::Tuple({Shape::Token(), Shape(PrimitiveType::kS8, {})})});
  Literal t(shape);
  ASSERT_EQ(t.tuple_size(), 2);
  EXPECT_EQ(t.element_count(), 0);
  EXPECT_EQ(t.tuple_element(0).element_count(), 2);
  EXPECT_TRUE(t.tuple_element(1).tuple_element(0).shape().IsToken());
  t.mutable_tuple_element(0).data<float>()[1] = 4.0f;
  EXPECT_EQ(t.ToString(), "(f32[2] {0, 4}, (token, s8[] 0))");
  EXPECT_EQ(*Literal::ByteSizeOf(shape), 9);
  std::vector<Literal> parts = std::move(t).DecomposeTuple();
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].Get<float>({1}), 4.0f);
  EXPECT_EQ(t.tuple_size(), 0);
}

TEST(LiteralTest, EqualityIsBitwise) {
  Literal a = Literal::CreateR1<float>({0.0f, 1.0f});
  Literal b = Literal::CreateR1<float>({0.0f, 1.0f});
  EXPECT_EQ(a, b);
  b.data<float>()[0] = -0.0f;
  EXPECT_NE(a, b);  // +0 and -0 differ bitwise
  Literal nan1 = Literal::CreateR0(std::numeric_limits<float>::quiet_NaN());
  Literal nan2 = Literal::CreateR0(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan1, nan2);                                                     // same bits
  EXPECT_NE(Literal::CreateR0<int32_t>(0), Literal::CreateR0<uint32_t>(0));  // types differ
  EXPECT_NE(Literal(Shape(PrimitiveType::kS8, {2, 3})), Literal(Shape(PrimitiveType::kS8, {3, 2})));
}

TEST(LiteralTest, CreateGuardsSize) {
  // 2^62 f32 elements: 2^64 bytes overflow int64.
  const Shape huge(PrimitiveType::kF32, {int64_t{1} << 31, int64_t{1} << 31});
  StatusOr<Literal> overflow = Literal::Create(huge, std::numeric_limits<int64_t>::max());
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(overflow.status().message().find("f32[2147483648,2147483648]"), std::string::npos);

  StatusOr<Literal> over_limit = Literal::Create(Shape(PrimitiveType::kF32, {1024}), 4095);
  ASSERT_FALSE(over_limit.ok());
  EXPECT_EQ(over_limit.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over_limit.status().message(),
            "a value of shape f32[1024] needs 4096 bytes, more than the limit of 4095");
  EXPECT_TRUE(Literal::Create(Shape(PrimitiveType::kF32, {1024}), 4096).ok());

  // A tuple counts all its elements.
  const Shape pair =
      Shape::Tuple({Shape(PrimitiveType::kF64, {64}), Shape(PrimitiveType::kF64, {64})});
  EXPECT_FALSE(Literal::Create(pair, 1000).ok());
  EXPECT_TRUE(Literal::Create(pair, 1024).ok());

  // An empty array is empty even when its other dimensions are enormous.
  const Shape empty(PrimitiveType::kF32, {int64_t{1} << 40, int64_t{1} << 40, 0});
  EXPECT_EQ(*Literal::ByteSizeOf(empty), 0);

  StatusOr<Literal> negative = Literal::Create(Shape(PrimitiveType::kS32, {-2}), 100);
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  Shape unbounded(PrimitiveType::kS32, {Shape::kUnboundedSize});
  unbounded.set_dynamic_dimension(0, true);
  EXPECT_EQ(Literal::Create(unbounded, 100).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Literal::Create(Shape::Opaque(), 100).status().code(), StatusCode::kUnimplemented);
}

TEST(LiteralTest, BoundedDynamicDimensionsHoldTheBound) {
  Shape shape(PrimitiveType::kF32, {16});
  shape.set_dynamic_dimension(0, true);
  Literal l(shape);
  EXPECT_EQ(l.element_count(), 16);
}

TEST(LiteralDeathTest, CallerBugsAbortWithAMessage) {
  Literal l(Shape(PrimitiveType::kF32, {2, 2}));
  EXPECT_DEATH(l.data<double>(), "not a storage type");
  EXPECT_DEATH(l.Get<float>({2, 0}), "index out of bounds");
  EXPECT_DEATH(l.Get<float>({0}), "index rank differs");
  EXPECT_DEATH(l.GetAsDouble(4), "linear index out of bounds");
  EXPECT_DEATH(l.tuple_element(0), "tuple index out of bounds");
  EXPECT_DEATH(Literal(Shape(PrimitiveType::kS8, {-2})), "negative dimension");
}

/// The VmFlags line of the mapping of /proc/self/smaps that holds `address`.
std::string VmFlagsAt(uintptr_t address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= address && address < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(LiteralTest, LargeArraysAskForHugePages) {
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) {
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  }
  const Literal l(Shape(PrimitiveType::kF32, {int64_t{4} << 20}));  // 16 MiB
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  const uintptr_t first_whole_page =
      (reinterpret_cast<uintptr_t>(l.bytes().data()) + kHugePage - 1) & ~(kHugePage - 1);
  const std::string flags = VmFlagsAt(first_whole_page);
  ASSERT_FALSE(flags.empty()) << "no mapping in /proc/self/smaps holds the literal";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;  // MADV_HUGEPAGE
}

}  // namespace
}  // namespace tpusim::value
