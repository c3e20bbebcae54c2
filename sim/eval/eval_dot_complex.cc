// dot on complex operands (c64, c128), and the matrix product complex
// convolution lowers to: a reference computation, not an MXU model. Numerics: each product
// (a+bi)(c+di) = (ac - bd) + (ad + bc)i and each sum in the component type (f32 for c64, f64 for
// c128), one rounding per operation, no FMA; the sum runs over the contracting dimensions flattened
// in the order lhs_contracting_dims lists them (first slowest), in increasing order, starting from
// +0.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::AttrId;
using hlo::HloInstruction;
using hlo::PrimitiveType;
using value::Literal;

std::vector<int64_t> DimList(const HloInstruction& inst, AttrId id) {
  const auto* v = inst.GetAttr<std::vector<int64_t>>(id);
  return v ? *v : std::vector<int64_t>{};
}

/// Element offsets of every index over `dims` of `shape`, the first listed
/// dimension slowest.
std::vector<int64_t> OffsetsOver(const hlo::Shape& shape, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> strides = RowMajorStrides(shape.dimensions());
  std::vector<int64_t> sizes;
  for (int64_t d : dims) sizes.push_back(shape.dimensions(d));
  std::vector<int64_t> offsets;
  ForEachIndex(sizes, [&](std::span<const int64_t> index) {
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i) offset += index[i] * strides[dims[i]];
    offsets.push_back(offset);
  });
  return offsets;
}

/// The dimensions of `shape` in neither list, in increasing order.
std::vector<int64_t> Free(const hlo::Shape& shape, const std::vector<int64_t>& a,
                          const std::vector<int64_t>& b) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() &&
        std::find(b.begin(), b.end(), d) == b.end()) {
      free.push_back(d);
    }
  }
  return free;
}

template <typename R>
void ComplexDotLoop(const Literal& lhs, const Literal& rhs, const std::vector<int64_t> (&ix)[6],
                    Literal& out) {
  using C = std::complex<R>;
  const auto x = lhs.data<C>(), y = rhs.data<C>();
  auto o = out.data<C>();
  const auto &lb = ix[0], &lm = ix[1], &lk = ix[2], &rb = ix[3], &rk = ix[4], &rn = ix[5];
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

Status ComplexDot(const HloInstruction& inst, const Literal& lhs, const Literal& rhs,
                  Literal& out) {
  const PrimitiveType type = out.element_type();
  if (lhs.element_type() != type || rhs.element_type() != type || !hlo::IsComplex(type)) {
    return Unimplemented("complex dot needs operands of the result's complex type");
  }
  const std::vector<int64_t> lb = DimList(inst, AttrId::kLhsBatchDims);
  const std::vector<int64_t> rb = DimList(inst, AttrId::kRhsBatchDims);
  const std::vector<int64_t> lc = DimList(inst, AttrId::kLhsContractingDims);
  const std::vector<int64_t> rc = DimList(inst, AttrId::kRhsContractingDims);
  auto valid = [](const std::vector<int64_t>& dims, const hlo::Shape& s) {
    return std::all_of(dims.begin(), dims.end(), [&](int64_t d) { return d >= 0 && d < s.rank(); });
  };
  if (lb.size() != rb.size() || lc.size() != rc.size() || !valid(lb, lhs.shape()) ||
      !valid(lc, lhs.shape()) || !valid(rb, rhs.shape()) || !valid(rc, rhs.shape())) {
    return InvalidArgument("batch and contracting dimensions must pair up and be in range");
  }
  for (size_t i = 0; i < lb.size(); ++i) {
    if (lhs.shape().dimensions(lb[i]) != rhs.shape().dimensions(rb[i])) {
      return InvalidArgument("batch dimension sizes differ");
    }
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (lhs.shape().dimensions(lc[i]) != rhs.shape().dimensions(rc[i])) {
      return InvalidArgument("contracting dimension sizes differ");
    }
  }
  const std::vector<int64_t> ix[6] = {
      OffsetsOver(lhs.shape(), lb), OffsetsOver(lhs.shape(), Free(lhs.shape(), lb, lc)),
      OffsetsOver(lhs.shape(), lc), OffsetsOver(rhs.shape(), rb),
      OffsetsOver(rhs.shape(), rc), OffsetsOver(rhs.shape(), Free(rhs.shape(), rb, rc))};
  if (static_cast<size_t>(out.element_count()) != ix[0].size() * ix[1].size() * ix[5].size()) {
    return InvalidArgument("result shape does not match batch, lhs free and rhs free dimensions");
  }
  if (type == PrimitiveType::kC64) {
    ComplexDotLoop<float>(lhs, rhs, ix, out);
  } else {
    ComplexDotLoop<double>(lhs, rhs, ix, out);
  }
  return Status::Ok();
}

Status ComplexMatMul(const Literal& lhs, const Literal& rhs, Literal& out) {
  const PrimitiveType type = out.element_type();
  if (lhs.element_type() != type || rhs.element_type() != type || !hlo::IsComplex(type)) {
    return Unimplemented("complex convolution needs operands of the result's complex type");
  }
  const int64_t m = lhs.shape().dimensions(0), k = lhs.shape().dimensions(1);
  const int64_t n = rhs.shape().dimensions(1);
  std::vector<int64_t> ix[6] = {{0}, {}, {}, {0}, {}, {}};
  for (int64_t i = 0; i < m; ++i) ix[1].push_back(i * k);
  for (int64_t i = 0; i < k; ++i) {
    ix[2].push_back(i);
    ix[4].push_back(i * n);
  }
  for (int64_t i = 0; i < n; ++i) ix[5].push_back(i);
  if (type == PrimitiveType::kC64) {
    ComplexDotLoop<float>(lhs, rhs, ix, out);
  } else {
    ComplexDotLoop<double>(lhs, rhs, ix, out);
  }
  return Status::Ok();
}

}  // namespace tpusim::eval
