// dot (TPU MXU numerics and the IEEE reference), reduce and reduce-window
// (fixed order, variadic, fast path equal to the generic path),
// select-and-scatter, and run-to-run determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/eval/mxu_tile.h"
#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using value::Literal;

/// Deterministic f32 values spread over a few binades with full mantissas.
Literal Floats(std::vector<int64_t> dims, uint32_t seed) {
  Literal l(hlo::Shape(hlo::PrimitiveType::kF32, std::move(dims)));
  uint32_t state = seed;
  for (float& x : l.data<float>()) {
    state = state * 1664525u + 1013904223u;
    x = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 4.0f;
  }
  return l;
}

float Bf16Round(float x) { return value::Bf16ToFloat(value::Bf16FromFloat(x)); }

std::string MatmulHlo(int m, int k, int n, std::string_view precision) {
  const std::string ms = std::to_string(m), ks = std::to_string(k), ns = std::to_string(n);
  return "HloModule m\nENTRY e {\n  a = f32[" + ms + "," + ks + "] parameter(0)\n  b = f32[" + ks +
         "," + ns + "] parameter(1)\n  ROOT d = f32[" + ms + "," + ns +
         "] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={" +
         std::string(precision) + "," + std::string(precision) + "}\n}\n";
}

TEST(EvalDot, BatchAndContractingDims) {
  const char* text = R"(HloModule m
ENTRY e {
  a = s32[2,2,3] parameter(0)
  b = s32[3,2] parameter(1)
  c = s32[2,3,2] broadcast(b), dimensions={1,2}
  ROOT d = s32[2,2,2] dot(a, c), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})";
  Literal a(hlo::Shape(hlo::PrimitiveType::kS32, {2, 2, 3}));
  for (int i = 0; i < 12; ++i) a.data<int32_t>()[i] = i;
  Literal b(hlo::Shape(hlo::PrimitiveType::kS32, {3, 2}));
  for (int i = 0; i < 6; ++i) b.data<int32_t>()[i] = i + 1;  // {{1,2},{3,4},{5,6}}
  Literal r = Eval(text, {a, b});
  const std::vector<int32_t> expected = {13, 16, 40, 52, 67, 88, 94, 124};
  EXPECT_EQ(std::vector<int32_t>(r.data<int32_t>().begin(), r.data<int32_t>().end()), expected);
}

TEST(EvalDot, IntegerDotWrapsInResultType) {
  const char* text = R"(HloModule m
ENTRY e {
  a = s8[2] parameter(0)
  b = s8[2] parameter(1)
  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})";
  EXPECT_EQ(Eval(text, {R1<int8_t>({-128, 127}), R1<int8_t>({-128, 127})}),
            Literal::CreateR0<int32_t>(16384 + 16129));
}

/// The C++ tile model, counting the int8 tiles it multiplies.
class CountingTile final : public MxuTileEngine {
 public:
  void MultiplyBf16(const MxuTileShape& shape, std::span<const float> weights,
                    std::span<const float> activations, bool skip_zero, std::span<float> sums) override {
    model_.MultiplyBf16(shape, weights, activations, skip_zero, sums);
  }
  void MultiplyInt8(const MxuTileShape& shape, std::span<const int8_t> weights,
                    std::span<const int8_t> activations, std::span<int32_t> sums) override {
    ++int8_tiles;
    model_.MultiplyInt8(shape, weights, activations, sums);
  }
  int int8_tiles = 0;

 private:
  AnalyticMxuTile model_;
};

/// s8 values over the whole range, -128 and 127 included.
Literal Int8s(std::vector<int64_t> dims, uint32_t seed) {
  Literal l(hlo::Shape(hlo::PrimitiveType::kS8, std::move(dims)));
  uint32_t state = seed;
  for (int8_t& x : l.data<int8_t>()) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<int8_t>(state >> 24);
  }
  return l;
}

// Issue 7: with a tile engine chosen (`--mxu rtl`), s8 x s8 dots and
// convolutions into 32 bits or fewer run on the MXU's int8 datapath, tile by
// tile, and give the evaluator's integer results; a 64-bit result, whose sums
// the int32 datapath would wrap, stays on the integer path.
TEST(EvalDot, S8ProductsTakeTheTileEnginesInt8Datapath) {
  const char* text = R"(HloModule m
ENTRY e {
  a = s8[2,3,300] parameter(0)
  b = s8[2,300,5] parameter(1)
  x = s8[1,6,6,40] parameter(2)
  k = s8[3,3,40,2] parameter(3)
  d32 = s32[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  d16 = s16[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  c = s32[1,4,4,2] convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  d64 = s64[2,3,5] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT t = (s32[2,3,5], s16[2,3,5], s32[1,4,4,2], s64[2,3,5]) tuple(d32, d16, c, d64)
})";
  const std::vector<Literal> args = {Int8s({2, 3, 300}, 1), Int8s({2, 300, 5}, 2),
                                     Int8s({1, 6, 6, 40}, 3), Int8s({3, 3, 40, 2}, 4)};
  CountingTile tile;
  EvaluatorOptions with_tile;
  with_tile.mxu_engine = &tile;
  const Literal expected = Eval(text, args);
  EXPECT_EQ(Eval(text, args, with_tile), expected);
  // d32 and d16: 2 batches x 3 k tiles each; the convolution, one product of
  // its patches and kernel: 3 k tiles (k = 3 * 3 * 40 = 360).
  EXPECT_EQ(tile.int8_tiles, 2 * (2 * 3) + 3);
}

// Issue 3: an f32 dot at DEFAULT precision equals the dot of bf16-rounded
// operands exactly (products exact, same f32 accumulation order).
TEST(EvalDot, DefaultPrecisionEqualsDotOfBf16RoundedOperands) {
  const int m = 3, k = 300, n = 4;  // k spans three MXU tiles
  Literal a = Floats({m, k}, 1), b = Floats({k, n}, 2);
  Literal rounded_a = a, rounded_b = b;
  for (float& x : rounded_a.data<float>()) x = Bf16Round(x);
  for (float& x : rounded_b.data<float>()) x = Bf16Round(x);
  Literal direct = Eval(MatmulHlo(m, k, n, "default"), {a, b});
  Literal via_rounded = Eval(MatmulHlo(m, k, n, "default"), {rounded_a, rounded_b});
  EXPECT_EQ(direct, via_rounded);
  // And that is the documented order: per 128-tile f32 sums, tiles added in order.
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int k0 = 0; k0 < k; k0 += 128) {
        float chunk = 0.0f;
        for (int kk = k0; kk < std::min(k0 + 128, k); ++kk) {
          const float p = rounded_a.Get<float>({i, kk}) * rounded_b.Get<float>({kk, j});
          chunk = kk == k0 ? p : chunk + p;
        }
        acc = k0 == 0 ? chunk : acc + chunk;
      }
      EXPECT_EQ(direct.Get<float>({i, j}), acc) << i << "," << j;
    }
  }
}

TEST(EvalDot, Bf16OperandsUseOnePassWhateverThePrecision) {
  const char* text = R"(HloModule m
ENTRY e {
  a = bf16[2,3] parameter(0)
  b = bf16[3,2] parameter(1)
  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
})";
  Literal a(hlo::Shape(hlo::PrimitiveType::kBF16, {2, 3}));
  Literal b(hlo::Shape(hlo::PrimitiveType::kBF16, {3, 2}));
  for (int i = 0; i < 6; ++i) {
    a.SetFromDouble(i, 0.5 * i + 0.25);
    b.SetFromDouble(i, 1.0 - 0.75 * i);
  }
  Literal r = Eval(text, {a, b});
  // Small exact values: the sums are exact too.
  EXPECT_EQ(r.Get<float>({0, 0}), 0.25f * 1.0f + 0.75f * -0.5f + 1.25f * -2.0f);
}

// Issue 3: HIGHEST is within f32 rounding of an f64 reference; DEFAULT is not.
TEST(EvalDot, HighestIsWithinF32RoundingOfF64) {
  const int m = 4, k = 256, n = 4;
  Literal a = Floats({m, k}, 3), b = Floats({k, n}, 4);
  Literal highest = Eval(MatmulHlo(m, k, n, "highest"), {a, b});
  Literal high = Eval(MatmulHlo(m, k, n, "high"), {a, b});
  Literal fallback = Eval(MatmulHlo(m, k, n, "default"), {a, b});
  double worst_highest = 0, worst_high = 0, worst_default = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double exact = 0, magnitude = 0;
      for (int kk = 0; kk < k; ++kk) {
        const double p = static_cast<double>(a.Get<float>({i, kk})) * b.Get<float>({kk, j});
        exact += p;
        magnitude += std::fabs(p);
      }
      // Relative to the sum of |products|, in units of f32 epsilon (2^-24).
      auto err = [&](const Literal& r) {
        return std::fabs(r.Get<float>({i, j}) - exact) / magnitude / std::ldexp(1.0, -24);
      };
      worst_highest = std::max(worst_highest, err(highest));
      worst_high = std::max(worst_high, err(high));
      worst_default = std::max(worst_default, err(fallback));
    }
  }
  // HIGHEST drops only terms below 2^-24 of each product, so what is left is
  // the f32 accumulation's own rounding (measured: under 0.2). HIGH drops
  // terms near 2^-16 of a product (measured: about 14); DEFAULT's bf16
  // operand rounding costs thousands.
  EXPECT_LT(worst_highest, 4.0);
  EXPECT_LT(worst_high, 256.0);
  EXPECT_GT(worst_default, 1000.0);
}

TEST(EvalDot, IeeeModeRoundsAnF64SumOnce) {
  const int m = 2, k = 50, n = 2;
  Literal a = Floats({m, k}, 5), b = Floats({k, n}, 6);
  EvaluatorOptions ieee;
  ieee.numerics = Numerics::kIeee;
  Literal r = Eval(MatmulHlo(m, k, n, "default"), {a, b}, ieee);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double exact = 0;
      for (int kk = 0; kk < k; ++kk) {
        exact += static_cast<double>(a.Get<float>({i, kk})) * b.Get<float>({kk, j});
      }
      EXPECT_EQ(r.Get<float>({i, j}), static_cast<float>(exact));
    }
  }
}

/// MatmulHlo with `algorithm=` in place of the operand precisions.
std::string AlgorithmHlo(int m, int k, int n, std::string_view algorithm) {
  std::string text = MatmulHlo(m, k, n, "default");
  const std::string precisions = "operand_precision={default,default}";
  text.replace(text.find(precisions), precisions.size(), "algorithm=" + std::string(algorithm));
  return text;
}

TEST(EvalDot, AnAlgorithmRunsTheFewestBf16PassesThatHoldItsOperandType) {
  const int m = 4, k = 64, n = 4;
  const Literal a = Floats({m, k}, 7), b = Floats({k, n}, 8);
  const auto same = [&](std::string_view algorithm, std::string_view precision) {
    EXPECT_EQ(Eval(AlgorithmHlo(m, k, n, algorithm), {a, b}),
              Eval(MatmulHlo(m, k, n, precision), {a, b}))
        << algorithm;
  };
  same("dot_bf16_bf16_f32", "default");
  same("dot_bf16_bf16_bf16", "default");
  same("dot_any_f8_any_f8_f32", "default");
  same("dot_tf32_tf32_f32", "high");  // tf32's 11 bits in the hi/lo split
  same("dot_f16_f16_f32", "high");
  same("dot_tf32_tf32_f32_x3", "highest");
  same("dot_f32_f32_f32", "highest");
  // Nine passes add the products of the small pieces, which six drop: below
  // 2^-32 of each product, so nine are as close to the exact sum as six.
  const Literal nine = Eval(AlgorithmHlo(m, k, n, "dot_bf16_bf16_f32_x9"), {a, b});
  const Literal six = Eval(MatmulHlo(m, k, n, "highest"), {a, b});
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      EXPECT_NEAR(nine.Get<float>({i, j}), six.Get<float>({i, j}),
                  1e-5 * std::abs(six.Get<float>({i, j})) + 1e-6);
    }
  }
}

TEST(EvalDot, AnF64AlgorithmIsUnimplemented) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  ROOT d = f32[] dot(a, a), lhs_contracting_dims={0}, rhs_contracting_dims={0}, algorithm=dot_f64_f64_f64
})";
  auto r = testing::TryEval(text, {R1<float>({1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented);
}

const char* kAddReducer = R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)";

TEST(EvalReduce, SumsInRowMajorOrderOfReducedDims) {
  const std::string text = std::string("HloModule m\n") + kAddReducer + R"(
ENTRY e {
  p = f32[2,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add
})";
  Literal p(hlo::Shape(hlo::PrimitiveType::kF32, {2, 3}));
  for (int i = 0; i < 6; ++i) p.data<float>()[i] = static_cast<float>(i);
  EXPECT_EQ(Eval(text, {p}), R1<float>({3, 5, 7}));
}

TEST(EvalReduce, FastPathEqualsGenericReducerBitForBit) {
  // The same reducer written with an extra (no-op) instruction takes the
  // generic path; sequential f32 sums of mixed magnitudes must agree exactly.
  const std::string fast = std::string("HloModule m\n") + kAddReducer + R"(
ENTRY e {
  p = f32[4,300] parameter(0)
  z = f32[] constant(0.1)
  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add
})";
  const std::string generic = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  c = f32[] copy(y)
  ROOT s = f32[] add(x, c)
}
ENTRY e {
  p = f32[4,300] parameter(0)
  z = f32[] constant(0.1)
  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add
})";
  Literal p = Floats({4, 300}, 7);
  Literal a = Eval(fast, {p});
  EXPECT_EQ(a, Eval(generic, {p}));
  float expected = 0.1f;
  for (int k = 0; k < 300; ++k) expected += p.Get<float>({2, k});
  EXPECT_EQ(a.Get<float>({2}), expected);
}

TEST(EvalReduce, VariadicArgmax) {
  const char* text = R"(HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v1, v0), direction=GT
  v = f32[] select(gt, v1, v0)
  i = s32[] select(gt, i1, i0)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  p = f32[5] parameter(0)
  idx = s32[5] iota(), iota_dimension=0
  lo = f32[] constant(-inf)
  z = s32[] constant(-1)
  ROOT r = (f32[], s32[]) reduce(p, idx, lo, z), dimensions={0}, to_apply=argmax
})";
  Literal r = Eval(text, {R1<float>({1, 7, 3, 7, 2})});
  ASSERT_EQ(r.tuple_size(), 2);
  EXPECT_EQ(r.tuple_element(0), Literal::CreateR0<float>(7));
  EXPECT_EQ(r.tuple_element(1), Literal::CreateR0<int32_t>(1));
}

TEST(EvalReduceWindow, MaxPoolWithStrideAndPadding) {
  const char* text = R"(HloModule m
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
ENTRY e {
  p = f32[5] parameter(0)
  lo = f32[] constant(-inf)
  ROOT r = f32[3] reduce-window(p, lo), window={size=2 stride=2 pad=0_1}, to_apply=max
})";
  EXPECT_EQ(Eval(text, {R1<float>({1, 3, 2, 5, 4})}), R1<float>({3, 5, 4}));
}

TEST(EvalReduceWindow, GenericReducerWithDilationsSkipsHoles) {
  // A reducer the fast path does not recognise; base dilation 2 makes
  // {1,2,3} into {1,_,2,_,3}, and holes are skipped rather than combined.
  const char* text = R"(HloModule m
sum {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  c = s32[] copy(y)
  ROOT s = s32[] add(x, c)
}
ENTRY e {
  p = s32[3] parameter(0)
  z = s32[] constant(100)
  ROOT r = s32[4] reduce-window(p, z), window={size=2 lhs_dilate=2}, to_apply=sum
})";
  EXPECT_EQ(Eval(text, {R1<int32_t>({1, 2, 3})}), R1<int32_t>({101, 102, 102, 103}));
}

TEST(EvalReduceWindow, VariadicReduceWindow) {
  const char* text = R"(HloModule m
both {
  a0 = s32[] parameter(0)
  b0 = f32[] parameter(1)
  a1 = s32[] parameter(2)
  b1 = f32[] parameter(3)
  a = s32[] add(a0, a1)
  b = f32[] maximum(b0, b1)
  ROOT t = (s32[], f32[]) tuple(a, b)
}
ENTRY e {
  p = s32[4] parameter(0)
  q = f32[4] parameter(1)
  z = s32[] constant(0)
  lo = f32[] constant(-inf)
  ROOT r = (s32[3], f32[3]) reduce-window(p, q, z, lo), window={size=2}, to_apply=both
})";
  Literal r = Eval(text, {R1<int32_t>({1, 2, 3, 4}), R1<float>({4, 1, 3, 2})});
  ASSERT_EQ(r.tuple_size(), 2);
  EXPECT_EQ(r.tuple_element(0), R1<int32_t>({3, 5, 7}));
  EXPECT_EQ(r.tuple_element(1), R1<float>({4, 3, 3}));
}

TEST(EvalSelectAndScatter, MaxPoolGradientRoutesToTheFirstMaximum) {
  const char* text = R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[6] parameter(0)
  g = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[6] select-and-scatter(p, g, z), window={size=3 stride=2 pad=0_1}, select=ge, scatter=add
})";
  // Windows {1,5,5}, {5,2,7} and {7,3}+padding select positions 1 (GE keeps
  // the first of the tied 5s), 4 and 4; the gradients add up there.
  Literal r = Eval(text, {R1<float>({1, 5, 5, 2, 7, 3}), R1<float>({10, 20, 30})});
  EXPECT_EQ(r, R1<float>({0, 10, 0, 0, 50, 0}));
}

TEST(Evaluator, SameInputsGiveIdenticalBytesTwice) {
  const std::string text = std::string("HloModule m\n") + kAddReducer + R"(
ENTRY e {
  a = f32[8,200] parameter(0)
  b = f32[200,8] parameter(1)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={high,high}
  t = f32[8,8] tanh(d)
  z = f32[] constant(0)
  ROOT r = f32[8] reduce(t, z), dimensions={1}, to_apply=add
})";
  Literal a = Floats({8, 200}, 8), b = Floats({200, 8}, 9);
  EXPECT_EQ(Eval(text, {a, b}), Eval(text, {a, b}));
}


TEST(EvalDot, IntegerWeightsWithFloatActivationsEqualConvertingThemFirst) {
  // s8 x bf16 -> bf16, as TPU dumps have it: the s8 operand enters the MXU as
  // (exact) bf16 values, so the result equals the all-bf16 dot.
  const char* mixed = R"(HloModule m
ENTRY e {
  a = bf16[2,3] parameter(0)
  w = s8[3,2] parameter(1)
  ROOT d = bf16[2,2] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  const char* converted = R"(HloModule m
ENTRY e {
  a = bf16[2,3] parameter(0)
  w = s8[3,2] parameter(1)
  c = bf16[3,2] convert(w)
  ROOT d = bf16[2,2] dot(a, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";
  Literal a(hlo::Shape(hlo::PrimitiveType::kBF16, {2, 3}));
  for (int64_t i = 0; i < 6; ++i) a.SetFromDouble(i, 0.375 * static_cast<double>(i) - 1);
  Literal w(hlo::Shape(hlo::PrimitiveType::kS8, {3, 2}));
  for (int64_t i = 0; i < 6; ++i) w.SetFromDouble(i, static_cast<double>(i * 37 % 255) - 127);
  const Literal got = Eval(mixed, {a, w});
  EXPECT_EQ(got, Eval(converted, {a, w}));
  EXPECT_NE(got.GetAsDouble(0), 0.0);
}

}  // namespace
}  // namespace tpusim::eval
