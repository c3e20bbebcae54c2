// Hyperbolic functions, their inverses and the logistic sigmoid, built on the
// double-double exp, expm1 and log kernels of det_math_exp_log.cc. Each is
// written in a form without cancellation (expm1 for small arguments, the
// positive terms of log1p-like expressions), evaluated in DD arithmetic and
// rounded once.
#include "sim/det_math/det_math.h"
#include "sim/det_math/det_math_internal.h"

namespace tpusim::detmath {

using namespace internal;

double Sinh(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a < 0x1p-26) return x;  // x (1 + x^2/6): the correction is below half an ulp; keeps ±0
  double r;
  if (a > 711.0) {
    r = kInf;  // sinh overflows above 710.48; also inf
  } else if (a > 40.0) {
    const ScaledDD e = ExpDD({a, 0.0});  // e^-a is below 2^-115 of e^a: sinh = e^a / 2
    r = ScaleRound(e.v, e.k - 1);
  } else {
    // (e^a - e^-a)/2 = (E + E/(E + 1))/2 with E = expm1(a): two positive terms.
    const DD em1 = Expm1DD(a);
    r = 0.5 * Add(em1, Div(em1, Add(em1, 1.0))).hi;
  }
  return CopySign(r, x);
}

double Cosh(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a < 0x1p-27) return 1.0;  // 1 + x^2/2 rounds to 1
  if (a > 711.0) return kInf;   // cosh overflows above 710.48; also ±inf
  const ScaledDD e = ExpDD({a, 0.0});
  if (a > 40.0) return ScaleRound(e.v, e.k - 1);  // e^-a is below 2^-115 of e^a
  const double s = Pow2(e.k);                     // exact: 0 <= k <= 58
  const DD ea = {e.v.hi * s, e.v.lo * s};
  return 0.5 * Add(ea, Div({1.0, 0.0}, ea)).hi;  // (e^a + e^-a)/2, two positive terms
}

double Tanh(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a < 0x1p-27) return x;  // x (1 - x^2/3): the correction is below half an ulp
  // 1 - tanh(a) = 2/(e^2a + 1) < 2^-62 from 22 on: rounds to 1; also ±inf.
  if (a >= 22.0) return CopySign(1.0, x);
  const DD em1 = Expm1DD(2.0 * a);
  return CopySign(Div(em1, Add(em1, 2.0)).hi, x);  // tanh a = E / (E + 2), E = expm1(2a)
}

double Logistic(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (x >= 40.0) return 1.0;   // 1 - logistic(x) < e^-40 < 2^-57, below half an ulp; also +inf
  if (x < -746.0) return 0.0;  // below 2^-1076; also -inf
  // With e = e^-|x| <= 1, logistic(x) is 1/(1 + e) for x >= 0 and e/(1 + e)
  // for x < 0: no cancellation for either sign.
  const ScaledDD ed = ExpDD({-Abs(x), 0.0});
  if (x < -40.0) {
    // e/(1 + e) = e (1 - e + ...) with e < 2^-57: e (1 - e) is exact to 2^-114,
    // and ScaleRound keeps a single rounding for subnormal results.
    const double e = Ldexp(ed.v.hi, ed.k);  // only a correction: its own underflow is harmless
    return ScaleRound(Mul(ed.v, DD{1.0, -e}), ed.k);
  }
  const double s = Pow2(ed.k);  // exact: -58 <= k <= 0
  const DD e = {ed.v.hi * s, ed.v.lo * s};
  const DD one_plus_e = Add(e, 1.0);
  return (x >= 0.0 ? Div({1.0, 0.0}, one_plus_e) : Div(e, one_plus_e)).hi;
}

double Asinh(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a < 0x1p-26) return x;  // x (1 - x^2/6): the correction is below half an ulp
  if (IsInf(x)) return x;
  DD r;
  if (a > 0x1p28) {
    r = Add(LogDD(a), kLn2DD);  // ln(2a) + 1/(4a^2) - ...: the tail is below 2^-62 of the result
  } else {
    r = LogOfDD(Add(Sqrt(Add(TwoProd(a, a), 1.0)), a));  // ln(a + sqrt(a^2 + 1))
  }
  return CopySign(r.hi, x);
}

double Acosh(double x) {
  if (IsNaN(x)) return Quiet(x);
  if (x < 1.0) return kNaN;  // also -inf
  if (x == 1.0) return 0.0;
  if (IsInf(x)) return x;
  if (x > 0x1p28) return Add(LogDD(x), kLn2DD).hi;  // ln(2x) - 1/(4x^2) - ...
  // x^2 - 1 exactly: x^2 = sq.hi + sq.lo, and sq.hi - 1 is exact by TwoSum.
  const DD sq = TwoProd(x, x);
  const DD root = Sqrt(Add(TwoSum(sq.hi, -1.0), sq.lo));
  return LogOfDD(Add(root, x)).hi;  // ln(x + sqrt(x^2 - 1))
}

double Atanh(double x) {
  if (IsNaN(x)) return Quiet(x);
  const double a = Abs(x);
  if (a > 1.0) return kNaN;
  if (a == 1.0) return CopySign(kInf, x);
  if (a < 0x1p-27) return x;  // x (1 + x^2/3): the correction is below half an ulp
  // atanh a = ln((1 + a)/(1 - a)) / 2; 1 + a and 1 - a are exact DDs.
  const DD q = Div(TwoSum(1.0, a), TwoSum(1.0, -a));
  return CopySign(0.5 * LogOfDD(q).hi, x);
}

}  // namespace tpusim::detmath
