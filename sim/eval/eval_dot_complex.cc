// dot on complex operands (c64, c128), which complex convolution also lowers
// to: a reference computation, not an MXU model. Numerics: each product
// (a+bi)(c+di) = (ac - bd) + (ad + bc)i and each sum in the component type (f32 for c64, f64 for
// c128), one rounding per operation, no FMA; the sum runs over the contracting dimensions flattened
// in the order lhs_contracting_dims lists them (first slowest), in increasing order, starting from
// +0.
#include <complex>
#include <cstdint>
#include <vector>

#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::PrimitiveType;
using value::Literal;

template <typename R>
void ComplexDotLoop(const Literal& lhs, const Literal& rhs, const DotIndex& ix, Literal& out) {
  using C = std::complex<R>;
  const auto x = lhs.data<C>(), y = rhs.data<C>();
  auto o = out.data<C>();
  const auto &lb = ix.lhs_b, &lm = ix.lhs_m, &lk = ix.lhs_k, &rb = ix.rhs_b, &rk = ix.rhs_k,
             &rn = ix.rhs_n;
  size_t pos = 0;
  for (size_t b = 0; b < lb.size(); ++b) {
    for (size_t m = 0; m < lm.size(); ++m) {
      for (size_t n = 0; n < rn.size(); ++n) {
        R re = 0, im = 0;
        for (size_t k = 0; k < lk.size(); ++k) {
          const C p = x[lb[b] + lm[m] + lk[k]], q = y[rb[b] + rk[k] + rn[n]];
          const R rr = p.real() * q.real(), ii = p.imag() * q.imag();
          const R ri = p.real() * q.imag(), ir = p.imag() * q.real();
          re = re + (rr - ii);
          im = im + (ri + ir);
        }
        o[pos++] = C{re, im};
      }
    }
  }
}

}  // namespace

Status ComplexDot(const Literal& lhs, const Literal& rhs, const DotIndex& ix, Literal& out) {
  const PrimitiveType type = out.element_type();
  if (lhs.element_type() != type || rhs.element_type() != type || !hlo::IsComplex(type)) {
    return Unimplemented("complex dot needs operands of the result's complex type");
  }
  if (type == PrimitiveType::kC64) {
    ComplexDotLoop<float>(lhs, rhs, ix, out);
  } else {
    ComplexDotLoop<double>(lhs, rhs, ix, out);
  }
  return Status::Ok();
}

}  // namespace tpusim::eval
