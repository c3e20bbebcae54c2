// cholesky, triangular-solve and fft against hand-computed results.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using value::Literal;
using C64 = std::complex<float>;

Literal Matrix(hlo::PrimitiveType type, std::vector<int64_t> dims, std::vector<double> values) {
  Literal m(hlo::Shape(type, dims));
  for (size_t i = 0; i < values.size(); ++i) m.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return m;
}

std::string CholeskyHlo(std::string_view shape, bool lower) {
  return "HloModule m\nENTRY e {\n  a = " + std::string(shape) +
         " parameter(0)\n  ROOT c = " + std::string(shape) +
         " cholesky(a), lower=" + (lower ? "true" : "false") + "\n}\n";
}

TEST(EvalCholesky, FactorsLowerAndUpperWithZerosInTheOtherTriangle) {
  using hlo::PrimitiveType;
  // [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]]; the triangle not read
  // (999) does not matter.
  EXPECT_EQ(
      Eval(CholeskyHlo("f32[2,2]", true), {Matrix(PrimitiveType::kF32, {2, 2}, {4, 999, 2, 5})}),
      Matrix(PrimitiveType::kF32, {2, 2}, {2, 0, 1, 2}));
  EXPECT_EQ(
      Eval(CholeskyHlo("f32[2,2]", false), {Matrix(PrimitiveType::kF32, {2, 2}, {4, 2, 999, 5})}),
      Matrix(PrimitiveType::kF32, {2, 2}, {2, 1, 0, 2}));
  // Batched f64 3x3: the textbook [[4,12,-16],[12,37,-43],[-16,-43,98]].
  const Literal a = Matrix(PrimitiveType::kF64, {2, 3, 3},
                           {4, 12, -16, 12, 37, -43, -16, -43, 98, 1, 0, 0, 0, 9, 0, 0, 0, 16});
  EXPECT_EQ(Eval(CholeskyHlo("f64[2,3,3]", true), {a}),
            Matrix(PrimitiveType::kF64, {2, 3, 3},
                   {2, 0, 0, 6, 1, 0, -8, 5, 3, 1, 0, 0, 0, 3, 0, 0, 0, 4}));
}

TEST(EvalCholesky, NotPositiveDefiniteGivesNaNFromTheFailingPivot) {
  const Literal out =
      Eval(CholeskyHlo("f32[2,2]", true), {Matrix(hlo::PrimitiveType::kF32, {2, 2}, {1, 0, 2, 1})});
  EXPECT_EQ(out.data<float>()[0], 1.0f);
  EXPECT_EQ(out.data<float>()[2], 2.0f);
  EXPECT_TRUE(std::isnan(out.data<float>()[3]));  // sqrt(1 - 4)
}

std::string SolveHlo(std::string_view a, std::string_view b, std::string_view attrs) {
  return "HloModule m\nENTRY e {\n  a = " + std::string(a) +
         " parameter(0)\n  b = " + std::string(b) + " parameter(1)\n  ROOT x = " + std::string(b) +
         " triangular-solve(a, b), " + std::string(attrs) + "\n}\n";
}

TEST(EvalTriangularSolve, LeftSideEveryTransposeAndUnitDiagonal) {
  using hlo::PrimitiveType;
  // a = [[2, 0], [1, 4]] (99 is in the triangle not read), b = [2, 9]^T.
  const Literal a = Matrix(PrimitiveType::kF32, {2, 2}, {2, 99, 1, 4});
  const Literal b = Matrix(PrimitiveType::kF32, {2, 1}, {2, 9});
  auto solve = [&](std::string_view attrs) {
    return Eval(SolveHlo("f32[2,2]", "f32[2,1]", attrs), {a, b});
  };
  // a x = b: x0 = 1, x1 = (9 - 1) / 4.
  EXPECT_EQ(solve("left_side=true, lower=true, transpose_a=NO_TRANSPOSE"),
            Matrix(PrimitiveType::kF32, {2, 1}, {1, 2}));
  // a^T x = b: x1 = 9 / 4, x0 = (2 - 2.25) / 2.
  EXPECT_EQ(solve("left_side=true, lower=true, transpose_a=TRANSPOSE"),
            Matrix(PrimitiveType::kF32, {2, 1}, {-0.125, 2.25}));
  EXPECT_EQ(solve("left_side=true, lower=true, transpose_a=ADJOINT"),
            Matrix(PrimitiveType::kF32, {2, 1}, {-0.125, 2.25}));
  // Unit diagonal: x0 = 2, x1 = 9 - 2.
  EXPECT_EQ(solve("left_side=true, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE"),
            Matrix(PrimitiveType::kF32, {2, 1}, {2, 7}));
}

TEST(EvalTriangularSolve, RightSideUpperAndBatched) {
  using hlo::PrimitiveType;
  // x a = b with a = [[2, 0], [1, 4]] lower: [2 x0 + x1, 4 x1] = [4, 8].
  const Literal a = Matrix(PrimitiveType::kF64, {2, 2, 2}, {2, 0, 1, 4, 1, 0, 0, 1});
  const Literal b = Matrix(PrimitiveType::kF64, {2, 1, 2}, {4, 8, 5, 6});
  EXPECT_EQ(Eval(SolveHlo("f64[2,2,2]", "f64[2,1,2]",
                          "left_side=false, lower=true, transpose_a=NO_TRANSPOSE"),
                 {a, b}),
            Matrix(PrimitiveType::kF64, {2, 1, 2}, {1, 2, 5, 6}));
  // Upper: a = [[2, 1], [0, 4]] read from the upper triangle (7 ignored);
  // [2 x0, x0 + 4 x1] = [4, 10] -> x = [2, 2].
  const Literal u = Matrix(PrimitiveType::kF64, {1, 2, 2}, {2, 1, 7, 4});
  EXPECT_EQ(Eval(SolveHlo("f64[1,2,2]", "f64[1,1,2]",
                          "left_side=false, lower=false, transpose_a=NO_TRANSPOSE"),
                 {u, Matrix(PrimitiveType::kF64, {1, 1, 2}, {4, 10})}),
            Matrix(PrimitiveType::kF64, {1, 1, 2}, {2, 2}));
}

/// A c64 array of `dims` holding `values`.
Literal C64Array(std::vector<int64_t> dims, std::vector<C64> values) {
  Literal m(hlo::Shape(hlo::PrimitiveType::kC64, dims));
  for (size_t i = 0; i < values.size(); ++i) m.data<C64>()[i] = values[i];
  return m;
}

TEST(EvalCholesky, HermitianComplexMatrices) {
  // [[4, 2i], [-2i, 5]] = L L^H with L = [[2, 0], [-i, 2]]; U = L^H.
  const Literal a = C64Array({2, 2}, {{4, 0}, {0, 2}, {0, -2}, {5, 0}});
  EXPECT_EQ(Eval(CholeskyHlo("c64[2,2]", true), {a}),
            C64Array({2, 2}, {{2, 0}, {0, 0}, {0, -1}, {2, 0}}));
  EXPECT_EQ(Eval(CholeskyHlo("c64[2,2]", false), {a}),
            C64Array({2, 2}, {{2, 0}, {0, 1}, {0, 0}, {2, 0}}));
}

TEST(EvalTriangularSolve, ComplexTransposeAndAdjointDiffer) {
  // L = [[2, 0], [-i, 2]]: L^H [1, 1] = [2 + i, 2] and L^T [1, 1] = [2 - i, 2].
  const Literal l = C64Array({2, 2}, {{2, 0}, {0, 0}, {0, -1}, {2, 0}});
  const std::string adjoint =
      SolveHlo("c64[2,2]", "c64[2,1]", "left_side=true, lower=true, transpose_a=ADJOINT");
  EXPECT_EQ(Eval(adjoint, {l, C64Array({2, 1}, {{2, 1}, {2, 0}})}),
            C64Array({2, 1}, {{1, 0}, {1, 0}}));
  const std::string transpose =
      SolveHlo("c64[2,2]", "c64[2,1]", "left_side=true, lower=true, transpose_a=TRANSPOSE");
  EXPECT_EQ(Eval(transpose, {l, C64Array({2, 1}, {{2, -1}, {2, 0}})}),
            C64Array({2, 1}, {{1, 0}, {1, 0}}));
}

std::string FftHlo(std::string_view in, std::string_view out, std::string_view type,
                   std::string_view length) {
  return "HloModule m\nENTRY e {\n  x = " + std::string(in) +
         " parameter(0)\n  ROOT f = " + std::string(out) +
         " fft(x), fft_type=" + std::string(type) + ", fft_length={" + std::string(length) +
         "}\n}\n";
}

void ExpectNear(const Literal& out, std::vector<C64> want) {
  const auto got = out.data<C64>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), 1e-6) << i;
    EXPECT_NEAR(got[i].imag(), want[i].imag(), 1e-6) << i;
  }
}

TEST(EvalFft, ForwardAndInverseOfImpulses) {
  const Literal x = R1<C64>({{0, 0}, {1, 0}, {0, 0}, {0, 0}});
  // FFT of a delayed impulse: e^{-2 pi i k / 4} = 1, -i, -1, i.
  const Literal f = Eval(FftHlo("c64[4]", "c64[4]", "FFT", "4"), {x});
  ExpectNear(f, {{1, 0}, {0, -1}, {-1, 0}, {0, 1}});
  EXPECT_EQ(f.data<C64>()[0], C64(1, 0));  // exact where the twiddle is
  ExpectNear(Eval(FftHlo("c64[4]", "c64[4]", "IFFT", "4"), {f}), {{0, 0}, {1, 0}, {0, 0}, {0, 0}});
}

TEST(EvalFft, RealTransformsAndTwoDimensions) {
  // rfft([1, 2, 3, 4]) = [10, -2+2i, -2].
  const Literal r = Eval(FftHlo("f32[4]", "c64[3]", "RFFT", "4"), {R1<float>({1, 2, 3, 4})});
  ExpectNear(r, {{10, 0}, {-2, 2}, {-2, 0}});
  const Literal back = Eval(FftHlo("c64[3]", "f32[4]", "IRFFT", "4"), {r});
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(back.data<float>()[i], i + 1, 1e-6);
  // Odd length: irfft(rfft(x)) = x for n = 5.
  const Literal r5 = Eval(FftHlo("f32[5]", "c64[3]", "RFFT", "5"), {R1<float>({1, -1, 2, 0, 3})});
  const Literal b5 = Eval(FftHlo("c64[3]", "f32[5]", "IRFFT", "5"), {r5});
  const float want[] = {1, -1, 2, 0, 3};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(b5.data<float>()[i], want[i], 1e-6);
  // 2-D FFT of [[1, 2], [3, 4]] = [[10, -2], [-4, 0]], batched over a leading 1.
  Literal m(hlo::Shape(hlo::PrimitiveType::kC64, {1, 2, 2}));
  for (int i = 0; i < 4; ++i) m.data<C64>()[i] = {static_cast<float>(i + 1), 0};
  ExpectNear(Eval(FftHlo("c64[1,2,2]", "c64[1,2,2]", "FFT", "2,2"), {m}),
             {{10, 0}, {-2, 0}, {-4, 0}, {0, 0}});
}

}  // namespace
}  // namespace tpusim::eval
