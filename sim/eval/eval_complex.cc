// Elementwise ops on complex elements (c64, c128) and the ops that cross
// between complex and real: real, imag, complex, abs, convert.
//
// Numerics (docs/evaluator.md, "Complex elements"):
// - add, subtract, negate, multiply and divide compute in the component type
//   (f32 for c64, f64 for c128), each operation rounded on its own (no FMA):
//   (a+bi)(c+di) = (ac - bd) + (ad + bc)i; divide is Smith's algorithm.
// - abs, sign, exp, log, sqrt, rsqrt, sin, cos, tanh and power compute in f64
//   from detmath functions and round once to the component type (so c64 gets
//   f64 accuracy rounded once, as real f32 transcendentals do).
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

#include "sim/det_math/det_math.h"
#include "sim/eval/kernels.h"
#include "sim/value/element_type.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using value::Literal;

/// A complex value in f64, the working type of the transcendental functions.
struct Cx {
  double re = 0;
  double im = 0;
};

Cx Mul(Cx x, Cx y) { return {x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re}; }

/// (ac - bd) + (ad + bc)i, each product and sum rounded on its own.
template <typename R>
std::complex<R> Mul(std::complex<R> x, std::complex<R> y) {
  const R rr = x.real() * y.real(), ii = x.imag() * y.imag();
  const R ri = x.real() * y.imag(), ir = x.imag() * y.real();
  return {rr - ii, ri + ir};
}

/// Smith's algorithm: divides by the larger of |c| and |d| first, so that
/// moderate operands cannot overflow or underflow in the denominator.
template <typename R>
std::complex<R> Div(std::complex<R> x, std::complex<R> y) {
  const R a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  if (std::fabs(c) >= std::fabs(d)) {
    if (c == 0 && d == 0) {
      // x / 0: inf or NaN per component, as real division gives.
      return {a / c, b / c};
    }
    const R r = d / c;
    const R den = c + d * r;
    return {(a + b * r) / den, (b - a * r) / den};
  }
  const R r = c / d;
  const R den = d + c * r;
  return {(a * r + b) / den, (b * r - a) / den};
}

/// |x| without overflow or underflow in the squares: the larger component
/// scales the smaller; inf wins over NaN (IEEE hypot).
double Abs(Cx x) {
  const double a = std::fabs(x.re), b = std::fabs(x.im);
  if (std::isinf(a) || std::isinf(b)) return INFINITY;
  if (std::isnan(a) || std::isnan(b)) return NAN;
  const double big = a > b ? a : b, small = a > b ? b : a;
  if (big == 0) return 0;
  const double ratio = small / big;
  return big * detmath::Sqrt(1.0 + ratio * ratio);
}

Cx Exp(Cx x) {
  const double e = detmath::Exp(x.re);
  if (x.im == 0) return {e, x.im};  // keeps exp of a real number real (and -0 imaginary)
  return {e * detmath::Cos(x.im), e * detmath::Sin(x.im)};
}

Cx Log(Cx x) { return {detmath::Log(Abs(x)), detmath::Atan2(x.im, x.re)}; }

/// Principal square root (Kahan): t = sqrt((|a| + |z|) / 2), the other
/// component b / 2t, so neither cancels.
Cx Sqrt(Cx x) {
  if (x.re == 0 && x.im == 0) return {0.0, x.im};
  if (std::isinf(x.im)) return {INFINITY, x.im};
  const double t = detmath::Sqrt((std::fabs(x.re) + Abs(x)) * 0.5);
  if (x.re >= 0) return {t, x.im / (2 * t)};
  return {std::fabs(x.im) / (2 * t), std::copysign(t, x.im)};
}

Cx Sin(Cx x) {
  return {detmath::Sin(x.re) * detmath::Cosh(x.im), detmath::Cos(x.re) * detmath::Sinh(x.im)};
}
Cx Cos(Cx x) {
  return {detmath::Cos(x.re) * detmath::Cosh(x.im), -(detmath::Sin(x.re) * detmath::Sinh(x.im))};
}

/// tanh(a + bi) = (sinh 2a + i sin 2b) / (cosh 2a + cos 2b); for |a| > 20 the
/// real part is ±1 to f64 precision and the formula would overflow.
Cx Tanh(Cx x) {
  if (std::fabs(x.re) > 20) {
    return {std::copysign(1.0, x.re), std::copysign(0.0, detmath::Sin(2 * x.im))};
  }
  const double den = detmath::Cosh(2 * x.re) + detmath::Cos(2 * x.im);
  return {detmath::Sinh(2 * x.re) / den, detmath::Sin(2 * x.im) / den};
}

/// x^y = exp(y log x), with XLA's cases for a zero base: 0^0 = 1 and
/// 0^y = 0 for real positive y.
Cx Pow(Cx x, Cx y) {
  if (x.re == 0 && x.im == 0) {
    if (y.re == 0 && y.im == 0) return {1, 0};
    if (y.im == 0 && y.re > 0) return {0, 0};
  }
  return Exp(Mul(y, Log(x)));
}

template <typename R>
Cx Widen(std::complex<R> v) {
  return {static_cast<double>(v.real()), static_cast<double>(v.imag())};
}
template <typename R>
std::complex<R> Narrow(Cx v) {
  return {static_cast<R>(v.re), static_cast<R>(v.im)};
}

Status NotForComplex(HloOpcode op) {
  return InvalidArgument(std::string(hlo::HloOpcodeName(op)) +
                         " is not defined for complex elements");
}

/// Fails unless every operand has the result's element type.
Status ExpectResultType(Operands ops, const Literal& out) {
  for (const Literal* operand : ops) {
    if (operand->element_type() != out.element_type()) {
      return InvalidArgument("operand " + operand->shape().ToString(false) +
                             " does not match the result's element type");
    }
  }
  return Status::Ok();
}

/// Unary ops on complex elements of component type R: abs gives the real
/// magnitude, the others a result of the operand's type.
template <typename R>
Status ComplexUnary(UnaryArith op, Operands ops, Literal& out) {
  using C = std::complex<R>;
  const C* x = ops[0]->data<C>().data();
  if (op == UnaryArith::kAbs) {
    auto o = out.data<R>();
    for (size_t i = 0; i < o.size(); ++i) o[i] = static_cast<R>(Abs(Widen(x[i])));
    return Status::Ok();
  }
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(ops, out));
  auto o = out.data<C>();
  auto unary = [&](auto f) {
    for (size_t i = 0; i < o.size(); ++i) o[i] = Narrow<R>(f(Widen(x[i])));
    return Status::Ok();
  };
  switch (op) {
    case UnaryArith::kNegate:
      for (size_t i = 0; i < o.size(); ++i) o[i] = C{-x[i].real(), -x[i].imag()};
      return Status::Ok();
    case UnaryArith::kSign:
      // z / |z|, and 0 for 0 (NaN stays NaN).
      return unary([](Cx v) -> Cx {
        if (v.re == 0 && v.im == 0) return v;
        const double m = Abs(v);
        if (std::isinf(m)) {
          // Direction of the infinite components only.
          return {std::isinf(v.re) ? std::copysign(1.0, v.re) : std::copysign(0.0, v.re),
                  std::isinf(v.im) ? std::copysign(1.0, v.im) : std::copysign(0.0, v.im)};
        }
        return {v.re / m, v.im / m};
      });
    case UnaryArith::kExp:
      return unary(Exp);
    case UnaryArith::kLog:
      return unary(Log);
    case UnaryArith::kSqrt:
      return unary(Sqrt);
    case UnaryArith::kRsqrt:
      return unary([](Cx v) {
        const Cx s = Sqrt(v);
        const std::complex<double> q = Div<double>({1.0, 0.0}, {s.re, s.im});
        return Cx{q.real(), q.imag()};
      });
    case UnaryArith::kSin:
      return unary(Sin);
    case UnaryArith::kCos:
      return unary(Cos);
    case UnaryArith::kTanh:
      return unary(Tanh);
    case UnaryArith::kAbs:  // computed above
    case UnaryArith::kNot:
    case UnaryArith::kPopulationCount:
    case UnaryArith::kClz:
    case UnaryArith::kFloor:
    case UnaryArith::kCeil:
    case UnaryArith::kRoundNearestAfz:
    case UnaryArith::kRoundNearestEven:
    case UnaryArith::kCbrt:
    case UnaryArith::kExpm1:
    case UnaryArith::kLog1p:
    case UnaryArith::kLogistic:
    case UnaryArith::kTan:
    case UnaryArith::kAtan:
    case UnaryArith::kAsin:
    case UnaryArith::kAcos:
    case UnaryArith::kSinh:
    case UnaryArith::kCosh:
    case UnaryArith::kAsinh:
    case UnaryArith::kAcosh:
    case UnaryArith::kAtanh:
    case UnaryArith::kErf:
      return NotForComplex(OpcodeOf(op));
  }
  return NotForComplex(OpcodeOf(op));  // unreachable: every UnaryArith returns above
}

/// Binary ops whose operands and result are all complex of component type R;
/// `out` may be `a`.
template <typename R>
Status ComplexBinaryOf(BinaryArith op, const Literal& a, const Literal& b, Literal& out) {
  using C = std::complex<R>;
  const C* x = a.data<C>().data();
  const C* y = b.data<C>().data();
  auto o = out.data<C>();
  auto binary = [&](auto f) {
    for (size_t i = 0; i < o.size(); ++i) o[i] = f(x[i], y[i]);
    return Status::Ok();
  };
  switch (op) {
    case BinaryArith::kAdd:
      return binary([](C p, C q) { return C{p.real() + q.real(), p.imag() + q.imag()}; });
    case BinaryArith::kSubtract:
      return binary([](C p, C q) { return C{p.real() - q.real(), p.imag() - q.imag()}; });
    case BinaryArith::kMultiply:
      return binary(Mul<R>);
    case BinaryArith::kDivide:
      return binary(Div<R>);
    case BinaryArith::kPower:
      return binary([](C p, C q) { return Narrow<R>(Pow(Widen(p), Widen(q))); });
    case BinaryArith::kRemainder:
    case BinaryArith::kMaximum:
    case BinaryArith::kMinimum:
    case BinaryArith::kAtan2:
    case BinaryArith::kAnd:
    case BinaryArith::kOr:
    case BinaryArith::kXor:
    case BinaryArith::kShiftLeft:
    case BinaryArith::kShiftRightLogical:
    case BinaryArith::kShiftRightArithmetic:
    case BinaryArith::kMulhi:
      return NotForComplex(OpcodeOf(op));
  }
  return NotForComplex(OpcodeOf(op));  // unreachable: every BinaryArith returns above
}

/// The real (or imaginary) part of each element of a complex array; of a
/// real array, the value itself (imaginary part 0), as XLA defines them.
template <typename R>
void TakePart(const Literal& in, bool imaginary, Literal& out) {
  const auto x = in.data<std::complex<R>>();
  auto o = out.data<R>();
  for (size_t i = 0; i < o.size(); ++i) o[i] = imaginary ? x[i].imag() : x[i].real();
}

/// convert to or from complex: a real source becomes (x, 0) rounded once to
/// the component type; a complex source converts each component (to a real
/// result, the real part, as StableHLO and NumPy do).
Status ConvertComplex(const Literal& in, Literal& out) {
  const int64_t n = out.element_count();
  const PrimitiveType from = in.element_type(), to = out.element_type();
  if (!hlo::IsComplex(from)) {
    for (int64_t i = 0; i < n; ++i) out.SetFromDouble(i, in.GetAsDouble(i));  // (x, 0)
    return Status::Ok();
  }
  auto part = [&](int64_t i, bool imaginary) {
    return from == PrimitiveType::kC64
               ? static_cast<double>(imaginary ? in.data<std::complex<float>>()[i].imag()
                                               : in.data<std::complex<float>>()[i].real())
               : (imaginary ? in.data<std::complex<double>>()[i].imag()
                            : in.data<std::complex<double>>()[i].real());
  };
  if (to == PrimitiveType::kC64) {
    auto o = out.data<std::complex<float>>();
    for (int64_t i = 0; i < n; ++i) {
      o[i] = {static_cast<float>(part(i, false)), static_cast<float>(part(i, true))};
    }
  } else if (to == PrimitiveType::kC128) {
    auto o = out.data<std::complex<double>>();
    for (int64_t i = 0; i < n; ++i) o[i] = {part(i, false), part(i, true)};
  } else {
    for (int64_t i = 0; i < n; ++i) out.SetFromDouble(i, part(i, false));
  }
  return Status::Ok();
}

Status CheckCount(const Literal& operand, int64_t n) {
  if (!operand.shape().IsArray() || operand.element_count() != n) {
    return InvalidArgument("operand " + operand.shape().ToString(false) +
                           " does not match the result's size");
  }
  return Status::Ok();
}

/// Dispatches on the component type R of the complex type involved.
template <typename R>
Status ComplexOf(const HloInstruction& inst, Operands ops, Literal& out) {
  using C = std::complex<R>;
  const HloOpcode op = inst.opcode();
  const int64_t n = out.element_count();
  for (const Literal* operand : ops) TPUSIM_RETURN_IF_ERROR(CheckCount(*operand, n));
  switch (op) {
    case HloOpcode::kReal:
    case HloOpcode::kImag:
      TakePart<R>(*ops[0], op == HloOpcode::kImag, out);
      return Status::Ok();
    case HloOpcode::kComplex: {
      const auto re = ops[0]->data<R>(), im = ops[1]->data<R>();
      auto o = out.data<C>();
      for (int64_t i = 0; i < n; ++i) o[i] = C{re[i], im[i]};
      return Status::Ok();
    }
    case HloOpcode::kCompare: {
      const std::string_view direction = inst.string_attr(hlo::AttrId::kDirection);
      if (direction != "EQ" && direction != "NE") {
        return InvalidArgument("complex numbers are not ordered: only EQ and NE compare them");
      }
      const auto x = ops[0]->data<C>(), y = ops[1]->data<C>();
      auto o = out.data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) {
        const bool equal = x[i].real() == y[i].real() && x[i].imag() == y[i].imag();
        o[i] = (direction == "EQ") == equal ? 1 : 0;
      }
      return Status::Ok();
    }
    case HloOpcode::kConvert:
      return ConvertComplex(*ops[0], out);
#define X(name)         \
  case HloOpcode::name: \
    return ComplexUnary<R>(UnaryArith::name, ops, out);
      TPUSIM_EVAL_UNARY_ARITHMETIC(X)
#undef X
#define X(name)                                         \
  case HloOpcode::name:                                 \
    TPUSIM_RETURN_IF_ERROR(ExpectResultType(ops, out)); \
    return ComplexBinaryOf<R>(BinaryArith::name, *ops[0], *ops[1], out);
      TPUSIM_EVAL_BINARY_ARITHMETIC(X)
#undef X
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kClamp:
    case HloOpcode::kIsFinite:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kSelect:
    case HloOpcode::kStochasticConvert:
#define V TPUSIM_HLO_CASE_IF_NOT_ELEMENTWISE
#include "sim/hlo/opcode.def"
#undef V
      break;
  }
  TPUSIM_RETURN_IF_ERROR(ExpectResultType(ops, out));
  return NotForComplex(op);
}

}  // namespace

std::complex<float> ComplexMultiply(std::complex<float> x, std::complex<float> y) {
  return Mul<float>(x, y);
}
std::complex<double> ComplexMultiply(std::complex<double> x, std::complex<double> y) {
  return Mul<double>(x, y);
}
std::complex<float> ComplexDivide(std::complex<float> x, std::complex<float> y) {
  return Div<float>(x, y);
}
std::complex<double> ComplexDivide(std::complex<double> x, std::complex<double> y) {
  return Div<double>(x, y);
}

Status ComplexBinary(BinaryArith op, const Literal& a, const Literal& b, Literal& out) {
  if (a.element_type() == PrimitiveType::kC64) return ComplexBinaryOf<float>(op, a, b, out);
  return ComplexBinaryOf<double>(op, a, b, out);
}

bool IsComplexElementwise(const HloInstruction& inst, Operands ops) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kReal || op == HloOpcode::kImag || op == HloOpcode::kComplex) return true;
  // select moves elements of any type; the generic kernel handles it.
  if (op == HloOpcode::kSelect || !inst.shape().IsArray()) return false;
  if (hlo::IsComplex(inst.shape().element_type())) return true;
  for (const Literal* operand : ops) {
    if (operand->shape().IsArray() && hlo::IsComplex(operand->element_type())) return true;
  }
  return false;
}

Status ComplexElementwise(const HloInstruction& inst, Operands ops, Literal& out) {
  const HloOpcode op = inst.opcode();
  // real and imag of a real array: the value, and zeros.
  if ((op == HloOpcode::kReal || op == HloOpcode::kImag) &&
      !hlo::IsComplex(ops[0]->element_type())) {
    if (ops[0]->element_type() != out.element_type() ||
        ops[0]->element_count() != out.element_count()) {
      return InvalidArgument("real/imag of a real array keeps its type and shape");
    }
    if (op == HloOpcode::kReal) out = *ops[0];
    return Status::Ok();  // out is zero-filled
  }
  // The complex type involved: the result's, else the first operand's.
  PrimitiveType type = out.element_type();
  if (!hlo::IsComplex(type)) type = ops[0]->element_type();
  if (op == HloOpcode::kComplex) {
    type = out.element_type();
    if (ops.size() != 2 || ops[0]->element_type() != ops[1]->element_type() ||
        ops[0]->element_type() !=
            (type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64)) {
      return InvalidArgument("complex needs two f32 operands for c64, two f64 for c128");
    }
  }
  if (type == PrimitiveType::kC64) return ComplexOf<float>(inst, ops, out);
  if (type == PrimitiveType::kC128) return ComplexOf<double>(inst, ops, out);
  return InvalidArgument(std::string(hlo::HloOpcodeName(op)) + " needs a complex operand");
}

}  // namespace tpusim::eval
