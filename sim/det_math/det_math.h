// Deterministic elementary functions for the functional evaluator.
//
// Every function here gives bit-identical results on every x86-64 machine,
// compiler and optimisation level: the library calls no host libm function
// (only the IEEE-exact square root), is compiled with -ffp-contract=off, and
// rejects -ffast-math and x87 arithmetic at compile time. Results assume the
// IEEE default environment (round to nearest even, subnormals not flushed).
//
// f64 functions work internally in double-double arithmetic and are within
// about 0.5 ulp of the exact result (measured bounds per function in
// docs/numerics-math.md). f32 functions evaluate the f64 function on the
// widened argument and round once to float.
//
// Special values follow IEEE 754 and C99 Annex F (±0, ±inf, overflow and
// underflow thresholds, subnormal results, pow's special cases). A NaN argument
// is returned quietened with its sign and payload kept (for two arguments, the
// first NaN); an invalid operation on non-NaN arguments returns the canonical
// quiet NaN 0x7ff8000000000000 (f32: 0x7fc00000).
#ifndef TPUSIM_SIM_DET_MATH_DET_MATH_H_
#define TPUSIM_SIM_DET_MATH_DET_MATH_H_

namespace tpusim::detmath {

// Exponentials and logarithms.
double Exp(double x);
float Exp(float x);
/// exp(x) - 1, accurate for small |x|.
double Expm1(double x);
float Expm1(float x);
/// Natural logarithm; Log(±0) = -inf, Log(x < 0) = NaN.
double Log(double x);
float Log(float x);
/// log(1 + x), accurate for small |x|.
double Log1p(double x);
float Log1p(float x);
/// x^y with C99 special cases; exact whenever the result is representable.
double Pow(double x, double y);
float Pow(float x, float y);

// Hyperbolic functions and the logistic sigmoid.
double Tanh(double x);
float Tanh(float x);
/// 1 / (1 + exp(-x)), evaluated without cancellation for both signs of x.
double Logistic(double x);
float Logistic(float x);
double Sinh(double x);
float Sinh(float x);
double Cosh(double x);
float Cosh(float x);
double Asinh(double x);
float Asinh(float x);
double Acosh(double x);
float Acosh(float x);
double Atanh(double x);
float Atanh(float x);

// Trigonometric functions; arguments of any size are reduced exactly.
double Sin(double x);
float Sin(float x);
double Cos(double x);
float Cos(float x);
double Tan(double x);
float Tan(float x);
double Atan(double x);
float Atan(float x);
/// Angle of the point (x, y) in [-pi, pi], with C99's signed-zero quadrants.
double Atan2(double y, double x);
float Atan2(float y, float x);
double Asin(double x);
float Asin(float x);
double Acos(double x);
float Acos(float x);

// Error function.
double Erf(double x);
float Erf(float x);

// Roots. Sqrt is IEEE's correctly rounded square root; Rsqrt and Cbrt are
// correctly rounded (Rsqrt exactly, by an integer midpoint test) or within a
// hair of it (Cbrt, see the docs).
double Sqrt(double x);
float Sqrt(float x);
/// 1 / sqrt(x), correctly rounded; Rsqrt(±0) = ±inf, Rsqrt(+inf) = +0.
double Rsqrt(double x);
float Rsqrt(float x);
double Cbrt(double x);
float Cbrt(float x);

// Rounding to integral values (exact, by bit manipulation; ±0 and the sign of
// a result that rounds to zero are kept).
/// Round half to even (IEEE roundToIntegralTiesToEven, XLA round-nearest-even).
double RoundNearestEven(double x);
float RoundNearestEven(float x);
/// Round half away from zero (C round, XLA round-nearest-afz).
double RoundNearestAfz(double x);
float RoundNearestAfz(float x);
double Floor(double x);
float Floor(float x);
double Ceil(double x);
float Ceil(float x);

}  // namespace tpusim::detmath

#endif  // TPUSIM_SIM_DET_MATH_DET_MATH_H_
