// batch-norm-training, -inference and -grad against values worked by hand
// from XLA's operation semantics.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using value::Literal;

/// f32[2,2] with feature dimension 1: feature 0 holds {1, 3}, feature 1 {2, 6}.
Literal X() {
  Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {2, 2}));
  const float v[] = {1, 2, 3, 6};
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = v[i];
  return x;
}

TEST(EvalBatchNorm, TrainingNormalisesEachFeatureAndReturnsItsMoments) {
  const Literal out = Eval(R"(HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  ROOT t = (f32[2,2], f32[2], f32[2]) batch-norm-training(x, s, o), epsilon=0, feature_index=1
}
)", {X(), R1<float>({1, 2}), R1<float>({0, 10})});
  ASSERT_EQ(out.tuple_size(), 3);
  // Feature 0: mean 2, variance 1 -> (-1, 1). Feature 1: mean 4, variance 4
  // -> (-1, 1) * scale 2 + offset 10 = (8, 12).
  EXPECT_EQ(out.tuple_element(1), R1<float>({2, 4}));
  EXPECT_EQ(out.tuple_element(2), R1<float>({1, 4}));
  const auto y = out.tuple_element(0).data<float>();
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[1], 8.0f);
  EXPECT_EQ(y[2], 1.0f);
  EXPECT_EQ(y[3], 12.0f);
}

TEST(EvalBatchNorm, InferenceUsesTheGivenMoments) {
  const Literal y = Eval(R"(HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  o = f32[2] parameter(2)
  m = f32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT y = f32[2,2] batch-norm-inference(x, s, o, m, v), epsilon=0, feature_index=1
}
)", {X(), R1<float>({1, 1}), R1<float>({0, 0}), R1<float>({0, 2}), R1<float>({1, 16})});
  // Feature 0: x / 1; feature 1: (x - 2) / 4.
  const auto v = y.data<float>();
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_EQ(v[2], 3.0f);
  EXPECT_EQ(v[3], 1.0f);
}

TEST(EvalBatchNorm, GradFollowsTheSemanticsFormulas) {
  const Literal out = Eval(R"(HloModule m
ENTRY e {
  x = f32[2,2] parameter(0)
  s = f32[2] parameter(1)
  m = f32[2] parameter(2)
  v = f32[2] parameter(3)
  dy = f32[2,2] parameter(4)
  ROOT g = (f32[2,2], f32[2], f32[2]) batch-norm-grad(x, s, m, v, dy), epsilon=0, feature_index=1
}
)",
                           {X(), R1<float>({1, 3}), R1<float>({2, 4}), R1<float>({1, 4}), [] {
                              Literal dy(hlo::Shape(hlo::PrimitiveType::kF32, {2, 2}));
                              const float v[] = {1, 1, 3, -1};
                              for (int i = 0; i < 4; ++i) dy.data<float>()[i] = v[i];
                              return dy;
                            }()});
  // Feature 0: x - mean = (-1, 1), dy = (1, 3), inv = 1: grad_offset 4,
  // grad_scale = (-1 + 3) = 2, dx = 1 * ((dy - 2) - (x - mean) * 2 / 2) = (0, 0).
  // Feature 1: x - mean = (-2, 2), dy = (1, -1), inv = 1/2: grad_offset 0,
  // grad_scale = (-2 - 2) / 2 = -2, dx = 3/2 * (dy - (x - mean) * (-4) / 8)
  // = 3/2 * (1 - 1, -1 + 1) = (0, 0).
  EXPECT_EQ(out.tuple_element(1), R1<float>({2, -2}));
  EXPECT_EQ(out.tuple_element(2), R1<float>({4, 0}));
  for (float v : out.tuple_element(0).data<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(EvalBatchNorm, GradOfTheOperandRemovesTheMeanAndTheProjection) {
  // One feature, three samples x = (-1, 0, 1), mean 0, variance 1, scale 2,
  // dy = (1, 0, 0): grad_offset 1, grad_scale -1, and
  // dx = 2 * (dy - 1/3 - x * (-1/3)) = (2/3, -2/3, 0).
  const Literal out = Eval(R"(HloModule m
ENTRY e {
  x = f32[3,1] parameter(0)
  s = f32[1] parameter(1)
  m = f32[1] parameter(2)
  v = f32[1] parameter(3)
  dy = f32[3,1] parameter(4)
  ROOT g = (f32[3,1], f32[1], f32[1]) batch-norm-grad(x, s, m, v, dy), epsilon=0, feature_index=1
}
)",
                           {[] {
                              Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {3, 1}));
                              x.data<float>()[0] = -1;
                              x.data<float>()[2] = 1;
                              return x;
                            }(),
                            R1<float>({2}), R1<float>({0}), R1<float>({1}), [] {
                              Literal dy(hlo::Shape(hlo::PrimitiveType::kF32, {3, 1}));
                              dy.data<float>()[0] = 1;
                              return dy;
                            }()});
  EXPECT_EQ(out.tuple_element(1), R1<float>({-1}));
  EXPECT_EQ(out.tuple_element(2), R1<float>({1}));
  const auto dx = out.tuple_element(0).data<float>();
  EXPECT_NEAR(dx[0], 2.0 / 3, 1e-6);
  EXPECT_NEAR(dx[1], -2.0 / 3, 1e-6);
  EXPECT_NEAR(dx[2], 0.0, 1e-6);
}

}  // namespace
}  // namespace tpusim::eval
