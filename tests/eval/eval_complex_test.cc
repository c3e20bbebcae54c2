// Complex elements (c64, c128): arithmetic in the component type, the
// transcendental functions, the ops crossing real and complex, constants and
// the complex dot, each against hand-computed values.
#include <gtest/gtest.h>

#include <complex>
#include <string>
#include <vector>

#include "sim/det_math/det_math.h"
#include "tests/eval/eval_test_util.h"

namespace tpusim::eval {
namespace {

using testing::Eval;
using testing::R1;
using testing::TryEval;
using value::Literal;
using C64 = std::complex<float>;
using C128 = std::complex<double>;

std::string Unary(std::string_view op, std::string_view in, std::string_view out) {
  return "HloModule m\nENTRY e {\n  p = " + std::string(in) +
         " parameter(0)\n  ROOT r = " + std::string(out) + " " + std::string(op) + "(p)\n}\n";
}
std::string Binary(std::string_view op, std::string_view in, std::string_view out,
                   std::string_view attrs = "") {
  return "HloModule m\nENTRY e {\n  a = " + std::string(in) +
         " parameter(0)\n  b = " + std::string(in) +
         " parameter(1)\n  ROOT r = " + std::string(out) + " " + std::string(op) + "(a, b)" +
         std::string(attrs) + "\n}\n";
}

/// A c64 array of `dims` holding `values` in row-major order.
Literal Shaped(std::vector<int64_t> dims, std::vector<C64> values) {
  Literal out(hlo::Shape(hlo::PrimitiveType::kC64, dims));
  for (size_t i = 0; i < values.size(); ++i) out.data<C64>()[i] = values[i];
  return out;
}

TEST(EvalComplex, ArithmeticIsExactOnSmallIntegers) {
  const Literal a = R1<C64>({{1, 2}, {-1, 3}});
  const Literal b = R1<C64>({{3, -1}, {1, 1}});
  EXPECT_EQ(Eval(Binary("add", "c64[2]", "c64[2]"), {a, b}), R1<C64>({{4, 1}, {0, 4}}));
  EXPECT_EQ(Eval(Binary("subtract", "c64[2]", "c64[2]"), {a, b}), R1<C64>({{-2, 3}, {-2, 2}}));
  // (1+2i)(3-i) = 5+5i; (-1+3i)(1+i) = -4+2i.
  EXPECT_EQ(Eval(Binary("multiply", "c64[2]", "c64[2]"), {a, b}), R1<C64>({{5, 5}, {-4, 2}}));
  // (-1+3i)/(1+i) = 1+2i exactly under Smith's algorithm.
  EXPECT_EQ(Eval(Binary("divide", "c64[2]", "c64[2]"), {a, b}).data<C64>()[1], C64(1, 2));
  EXPECT_EQ(Eval(Unary("negate", "c64[2]", "c64[2]"), {a}), R1<C64>({{-1, -2}, {1, -3}}));
}

TEST(EvalComplex, DivideByALargerImaginaryPartUsesTheOtherBranch) {
  // 1 / 2i = -0.5i: |d| > |c| takes Smith's second branch.
  const Literal out =
      Eval(Binary("divide", "c128[1]", "c128[1]"), {R1<C128>({{1, 0}}), R1<C128>({{0, 2}})});
  EXPECT_EQ(out.data<C128>()[0], C128(0, -0.5));
}

TEST(EvalComplex, AbsReturnsTheRealModulus) {
  const Literal out = Eval(Unary("abs", "c64[3]", "f32[3]"), {R1<C64>({{3, 4}, {0, -2}, {0, 0}})});
  EXPECT_EQ(out, R1<float>({5, 2, 0}));
  const Literal big = Eval(Unary("abs", "c128[1]", "f64[1]"), {R1<C128>({{3e300, 4e300}})});
  EXPECT_DOUBLE_EQ(big.data<double>()[0], 5e300);  // no overflow in the squares
}

TEST(EvalComplex, SqrtRsqrtSignAreThePrincipalValues) {
  const Literal x = R1<C128>({{3, 4}, {-4, 0}});
  EXPECT_EQ(Eval(Unary("sqrt", "c128[2]", "c128[2]"), {x}), R1<C128>({{2, 1}, {0, 2}}));
  const Literal r = Eval(Unary("rsqrt", "c128[2]", "c128[2]"), {x});
  EXPECT_EQ(r.data<C128>()[1], C128(0, -0.5));        // 1 / 2i
  EXPECT_NEAR(r.data<C128>()[0].real(), 0.4, 1e-16);  // 1/(2+i) = (2-i)/5
  EXPECT_NEAR(r.data<C128>()[0].imag(), -0.2, 1e-16);
  const Literal s = Eval(Unary("sign", "c64[2]", "c64[2]"), {R1<C64>({{3, 4}, {0, 0}})});
  EXPECT_EQ(s, R1<C64>({{0.6f, 0.8f}, {0, 0}}));
}

TEST(EvalComplex, ExpLogSinCosTanhFollowTheirIdentities) {
  const double pi = 3.141592653589793;
  const Literal e = Eval(Unary("exponential", "c128[2]", "c128[2]"), {R1<C128>({{0, pi}, {1, 0}})});
  EXPECT_NEAR(e.data<C128>()[0].real(), -1, 1e-15);
  EXPECT_NEAR(e.data<C128>()[0].imag(), 0, 1e-15);
  EXPECT_EQ(e.data<C128>()[1], C128(detmath::Exp(1.0), 0));  // a real argument stays real
  const Literal l = Eval(Unary("log", "c128[2]", "c128[2]"), {R1<C128>({{-1, 0}, {0, 1}})});
  EXPECT_EQ(l.data<C128>()[0], C128(0, detmath::Atan2(0.0, -1.0)));
  EXPECT_EQ(l.data<C128>()[1], C128(0, detmath::Atan2(1.0, 0.0)));
  // sin(i) = i sinh 1, cos(i) = cosh 1, tanh(i pi/4) = i tan(pi/4) = i.
  const Literal i = R1<C128>({{0, 1}});
  EXPECT_EQ(Eval(Unary("sine", "c128[1]", "c128[1]"), {i}).data<C128>()[0],
            C128(0, detmath::Sinh(1.0)));
  EXPECT_EQ(Eval(Unary("cosine", "c128[1]", "c128[1]"), {i}).data<C128>()[0].real(),
            detmath::Cosh(1.0));
  const Literal t = Eval(Unary("tanh", "c128[1]", "c128[1]"), {R1<C128>({{0, pi / 4}})});
  EXPECT_NEAR(t.data<C128>()[0].real(), 0, 1e-16);
  EXPECT_NEAR(t.data<C128>()[0].imag(), 1, 1e-15);
}

TEST(EvalComplex, PowerHasXlasZeroBaseCases) {
  const Literal out =
      Eval(Binary("power", "c128[3]", "c128[3]"),
           {R1<C128>({{0, 1}, {0, 0}, {0, 0}}), R1<C128>({{2, 0}, {0, 0}, {3, 0}})});
  EXPECT_NEAR(out.data<C128>()[0].real(), -1, 1e-15);  // i^2
  EXPECT_NEAR(out.data<C128>()[0].imag(), 0, 1e-15);
  EXPECT_EQ(out.data<C128>()[1], C128(1, 0));  // 0^0
  EXPECT_EQ(out.data<C128>()[2], C128(0, 0));  // 0^3
}

TEST(EvalComplex, CompareEqNeSelectAndOrderedDirectionsFail) {
  const Literal a = R1<C64>({{1, 2}, {1, 2}});
  const Literal b = R1<C64>({{1, 2}, {1, -2}});
  EXPECT_EQ(Eval(Binary("compare", "c64[2]", "pred[2]", ", direction=EQ"), {a, b}),
            R1<bool>({true, false}));
  EXPECT_EQ(Eval(Binary("compare", "c64[2]", "pred[2]", ", direction=NE"), {a, b}),
            R1<bool>({false, true}));
  EXPECT_FALSE(TryEval(Binary("compare", "c64[2]", "pred[2]", ", direction=LT"), {a, b}).ok());
  const Literal sel = Eval(R"(HloModule m
ENTRY e {
  p = pred[2] parameter(0)
  a = c64[2] parameter(1)
  b = c64[2] parameter(2)
  ROOT r = c64[2] select(p, a, b)
})",
                           {R1<bool>({false, true}), a, b});
  EXPECT_EQ(sel, R1<C64>({{1, 2}, {1, 2}}));
}

TEST(EvalComplex, RealImagComplexAndConvertCrossTypes) {
  const Literal z = R1<C64>({{1.5f, -2}});
  EXPECT_EQ(Eval(Unary("real", "c64[1]", "f32[1]"), {z}), R1<float>({1.5f}));
  EXPECT_EQ(Eval(Unary("imag", "c64[1]", "f32[1]"), {z}), R1<float>({-2}));
  EXPECT_EQ(Eval(Unary("imag", "f32[1]", "f32[1]"), {R1<float>({7})}), R1<float>({0}));
  EXPECT_EQ(Eval(Binary("complex", "f64[1]", "c128[1]"), {R1<double>({1}), R1<double>({-3})}),
            R1<C128>({{1, -3}}));
  EXPECT_EQ(Eval(Unary("convert", "f32[1]", "c64[1]"), {R1<float>({2.5f})}), R1<C64>({{2.5f, 0}}));
  EXPECT_EQ(Eval(Unary("convert", "s32[1]", "c128[1]"), {R1<int32_t>({-3})}), R1<C128>({{-3, 0}}));
  EXPECT_EQ(Eval(Unary("convert", "c64[1]", "c128[1]"), {z}), R1<C128>({{1.5, -2}}));
  EXPECT_EQ(Eval(Unary("convert", "c64[1]", "f32[1]"), {z}), R1<float>({1.5f}));
}

TEST(EvalComplex, ConstantsHoldBothParts) {
  const Literal out = Eval(R"(HloModule m
ENTRY e {
  ROOT c = c64[2] constant({(1, 2), (3.5, -4)})
})");
  EXPECT_EQ(out, R1<C64>({{1, 2}, {3.5f, -4}}));
}

TEST(EvalComplex, DotSumsComplexProducts) {
  // [1+i, 2] . [i, 1-i] = (1+i)i + 2(1-i) = 1 - i.
  const Literal d = Eval(R"(HloModule m
ENTRY e {
  a = c64[1,2] parameter(0)
  b = c64[2,1] parameter(1)
  ROOT d = c64[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                         {Shaped({1, 2}, {{1, 1}, {2, 0}}), Shaped({2, 1}, {{0, 1}, {1, -1}})});
  EXPECT_EQ(d.data<C64>()[0], C64(1, -1));
}

TEST(EvalComplex, ConvolutionSumsComplexProducts) {
  // out[j] = x[j] w[0] + x[j+1] w[1] with x = [1, i, 2], w = [i, 1]:
  // [1 i + i 1, i i + 2 1] = [2i, 1].
  const Literal out =
      Eval(R"(HloModule m
ENTRY e {
  x = c64[1,3,1] parameter(0)
  k = c64[2,1,1] parameter(1)
  ROOT c = c64[1,2,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
})",
           {Shaped({1, 3, 1}, {{1, 0}, {0, 1}, {2, 0}}), Shaped({2, 1, 1}, {{0, 1}, {1, 0}})});
  EXPECT_EQ(out.data<C64>()[0], C64(0, 2));
  EXPECT_EQ(out.data<C64>()[1], C64(1, 0));
}

TEST(EvalComplex, ReduceAddsComplexElements) {
  const Literal out = Eval(R"(HloModule m
add {
  x = c64[] parameter(0)
  y = c64[] parameter(1)
  ROOT s = c64[] add(x, y)
}
ENTRY e {
  p = c64[3] parameter(0)
  z = c64[] constant((0, 0))
  ROOT r = c64[] reduce(p, z), dimensions={0}, to_apply=add
})",
                           {R1<C64>({{1, 2}, {3, -4}, {0.5f, 0}})});
  EXPECT_EQ(out.data<C64>()[0], C64(4.5f, -2));
}

}  // namespace
}  // namespace tpusim::eval
