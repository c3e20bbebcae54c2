// rng-bit-generator against the published Threefry-2x32-20 and
// Philox-4x32-10 known-answer vectors (Random123, as used by JAX's and XLA's
// tests), XLA's element and state layout; rng's ranges and determinism.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using testing::TryEval;
using value::Literal;

uint64_t Join(uint32_t lo, uint32_t hi) { return uint64_t{lo} | (uint64_t{hi} << 32); }

/// rng-bit-generator of `data` from a u64[n] state, returning (state, bits).
std::string Rbg(std::string_view algorithm, int state_size, std::string_view data) {
  const std::string s = "u64[" + std::to_string(state_size) + "]";
  return "HloModule m\nENTRY e {\n  s = " + s + " parameter(0)\n  ROOT r = (" + s + ", " +
         std::string(data) + ") rng-bit-generator(s), algorithm=" + std::string(algorithm) +
         "\n}\n";
}

TEST(EvalRng, ThreeFry64BitOutputsMatchKnownAnswers) {
  // Threefry2x32-20: key (0x13198a2e, 0x03707344), counter (0x243f6a88,
  // 0x85a308d3) -> (0xc4923a9c, 0x483df7a0); all zeros -> (0x6b200159,
  // 0x99ba4efe).
  const uint64_t key = Join(0x13198a2e, 0x03707344);
  const uint64_t counter = Join(0x243f6a88, 0x85a308d3);
  const Literal out = Eval(Rbg("rng_three_fry", 2, "u64[1]"), {R1<uint64_t>({key, counter})});
  EXPECT_EQ(out.tuple_element(1), R1<uint64_t>({Join(0xc4923a9c, 0x483df7a0)}));
  EXPECT_EQ(out.tuple_element(0), R1<uint64_t>({key, counter + 1}));
  const Literal zero = Eval(Rbg("rng_three_fry", 2, "u64[1]"), {R1<uint64_t>({0, 0})});
  EXPECT_EQ(zero.tuple_element(1), R1<uint64_t>({Join(0x6b200159, 0x99ba4efe)}));
}

TEST(EvalRng, ThreeFry32BitOutputsPairWordsAlongTheSplitDimension) {
  // u32[2]: one counter block, both words.
  const Literal two = Eval(Rbg("rng_three_fry", 2, "u32[2]"), {R1<uint64_t>({0, 0})});
  EXPECT_EQ(two.tuple_element(1), R1<uint32_t>({0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(two.tuple_element(0), R1<uint64_t>({0, 1}));
  // u32[3] (no even dimension): blocks 0, 0, 1 with words 0, 1, 0; the
  // counter advances by the two blocks.
  const Literal three = Eval(Rbg("rng_three_fry", 2, "u32[3]"), {R1<uint64_t>({0, 0})});
  const Literal block1 = Eval(Rbg("rng_three_fry", 2, "u64[1]"), {R1<uint64_t>({0, 1})});
  const auto bits = three.tuple_element(1).data<uint32_t>();
  EXPECT_EQ(bits[0], 0x6b200159u);
  EXPECT_EQ(bits[1], 0x99ba4efeu);
  EXPECT_EQ(bits[2], static_cast<uint32_t>(block1.tuple_element(1).data<uint64_t>()[0]));
  EXPECT_EQ(three.tuple_element(0), R1<uint64_t>({0, 2}));
  // u32[3,2]: dimension 1 is even; element (i, j) is word j of block i.
  const Literal m = Eval(Rbg("rng_three_fry", 2, "u32[3,2]"), {R1<uint64_t>({0, 0})});
  EXPECT_EQ(m.tuple_element(1).data<uint32_t>()[0], 0x6b200159u);
  EXPECT_EQ(m.tuple_element(1).data<uint32_t>()[1], 0x99ba4efeu);
  EXPECT_EQ(m.tuple_element(1).data<uint32_t>()[2], bits[2]);  // (1, 0): block 1, word 0
}

TEST(EvalRng, PhiloxOutputsMatchKnownAnswers) {
  // Philox4x32-10: counter (0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
  // key (0xa4093822, 0x299f31d0) -> (0xd16cfe09, 0x94fdcceb, 0x5001e420,
  // 0x24126ea1).
  const uint64_t key = Join(0xa4093822, 0x299f31d0);
  const uint64_t low = Join(0x243f6a88, 0x85a308d3), high = Join(0x13198a2e, 0x03707344);
  const Literal out = Eval(Rbg("rng_philox", 3, "u32[4]"), {R1<uint64_t>({key, low, high})});
  EXPECT_EQ(out.tuple_element(1), R1<uint32_t>({0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  EXPECT_EQ(out.tuple_element(0), R1<uint64_t>({key, low + 1, high}));
  const Literal wide = Eval(Rbg("rng_philox", 3, "u64[2]"), {R1<uint64_t>({key, low, high})});
  EXPECT_EQ(wide.tuple_element(1),
            R1<uint64_t>({Join(0xd16cfe09, 0x94fdcceb), Join(0x5001e420, 0x24126ea1)}));
  // rng_default is Philox.
  const Literal def = Eval(Rbg("rng_default", 3, "u32[4]"), {R1<uint64_t>({key, low, high})});
  EXPECT_EQ(def.tuple_element(1), out.tuple_element(1));
}

TEST(EvalRng, PhiloxTwoWordStateUsesTheKeyAsHighCounterAndCarries) {
  // u64[2] state (0, 0): counter 0 with high half = key = 0, key 0.
  const Literal out = Eval(Rbg("rng_philox", 2, "u32[5]"), {R1<uint64_t>({0, 0})});
  const auto bits = out.tuple_element(1).data<uint32_t>();
  EXPECT_EQ(bits[0], 0x6627e8d5u);
  EXPECT_EQ(bits[3], 0x9b00dbd8u);
  EXPECT_EQ(out.tuple_element(0), R1<uint64_t>({0, 2}));  // two blocks for five words
  // A low counter half at its maximum carries into the high half.
  const Literal carry = Eval(Rbg("rng_philox", 3, "u32[8]"), {R1<uint64_t>({0, ~uint64_t{0}, 5})});
  EXPECT_EQ(carry.tuple_element(0), R1<uint64_t>({0, 1, 6}));
}

TEST(EvalRng, UnknownAlgorithmIsUnimplemented) {
  auto result = TryEval(Rbg("rng_mystery", 2, "u32[2]"), {R1<uint64_t>({0, 0})});
  EXPECT_FALSE(result.ok());
}

TEST(EvalRng, UniformAndNormalAreInRangeAndReproducible) {
  const std::string text = R"(HloModule m
ENTRY e {
  a = f32[] constant(2)
  b = f32[] constant(3)
  u = f32[1000] rng(a, b), distribution=rng_uniform
  v = f32[1000] rng(a, b), distribution=rng_uniform
  lo = s32[] constant(-2)
  hi = s32[] constant(3)
  i = s32[1000] rng(lo, hi), distribution=rng_uniform
  zero = f32[] constant(0)
  one = f32[] constant(1)
  n = f32[1000] rng(zero, one), distribution=rng_normal
  ROOT t = (f32[1000], f32[1000], s32[1000], f32[1000]) tuple(u, v, i, n)
})";
  const Literal out = Eval(text);
  const auto u = out.tuple_element(0).data<float>();
  for (float x : u) {
    EXPECT_GE(x, 2.0f);
    EXPECT_LT(x, 3.0f);
  }
  EXPECT_NE(out.tuple_element(0), out.tuple_element(1));  // each execution its own stream
  bool seen_lo = false, seen_top = false;
  for (int32_t x : out.tuple_element(2).data<int32_t>()) {
    EXPECT_GE(x, -2);
    EXPECT_LT(x, 3);
    seen_lo |= x == -2;
    seen_top |= x == 2;
  }
  EXPECT_TRUE(seen_lo && seen_top);
  double sum = 0, sum_sq = 0;
  for (float x : out.tuple_element(3).data<float>()) {
    sum += x;
    sum_sq += static_cast<double>(x) * x;
  }
  EXPECT_NEAR(sum / 1000, 0.0, 0.15);
  EXPECT_NEAR(sum_sq / 1000, 1.0, 0.2);
  EXPECT_EQ(Eval(text), out);  // bit-identical on a rerun
}

}  // namespace
}  // namespace tpusim::eval
