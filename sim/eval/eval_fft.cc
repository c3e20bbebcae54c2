// fft: FFT, IFFT, RFFT and IRFFT over the 1 to 3 innermost dimensions.
//
// Our own deterministic transform: a direct O(n^2) DFT along each transformed
// axis, innermost axis last (IRFFT: the outer axes first, then the
// Hermitian-extended innermost axis), in f64 whatever the element type:
// X[k] = sum over j in increasing order of x[j] * w^(jk mod n), with
// w^r = (cos(2 pi r / n), -/+ sin(2 pi r / n)) from detmath. The inverse
// transforms divide by n per axis. c64 results round once to f32 at the end.
// Each output's error is about n * 2^-53 of the sum of |x| per axis, far
// below f32's rounding for any size a TPU program uses.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/det_math/det_math.h"
#include "sim/eval/kernels.h"

namespace tpusim::eval {
namespace {

using hlo::HloInstruction;
using hlo::PrimitiveType;
using value::Literal;

struct Cx {
  double re = 0;
  double im = 0;
};

/// 2 pi rounded to double.
constexpr double kTwoPi = 6.283185307179586476925286766559;

/// In-place DFT along `axis` of the row-major array `data` of `dims`.
void DftAxis(std::vector<Cx>& data, const std::vector<int64_t>& dims, size_t axis, bool inverse) {
  const int64_t n = dims[axis];
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  std::vector<Cx> twiddle(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    const double angle = kTwoPi * static_cast<double>(r) / static_cast<double>(n);
    const double s = detmath::Sin(angle);
    twiddle[r] = {detmath::Cos(angle), inverse ? s : -s};
  }
  std::vector<Cx> line(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < inner; ++s) {
      const int64_t base = o * n * inner + s;
      for (int64_t j = 0; j < n; ++j) line[j] = data[base + j * inner];
      for (int64_t k = 0; k < n; ++k) {
        Cx sum;
        for (int64_t j = 0; j < n; ++j) {
          const Cx w = twiddle[(j * k) % n];
          sum.re = sum.re + (line[j].re * w.re - line[j].im * w.im);
          sum.im = sum.im + (line[j].re * w.im + line[j].im * w.re);
        }
        if (inverse) {
          sum.re = sum.re / static_cast<double>(n);
          sum.im = sum.im / static_cast<double>(n);
        }
        data[base + k * inner] = sum;
      }
    }
  }
}

/// How an FFT operand or result holds its elements: one list of the element
/// types for both Load and Store.
enum class FftStorage : uint8_t { kReal, kC64, kC128 };

FftStorage StorageOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kC64:
      return FftStorage::kC64;
    case PrimitiveType::kC128:
      return FftStorage::kC128;
    case PrimitiveType::kPred: case PrimitiveType::kS1: case PrimitiveType::kS2:
    case PrimitiveType::kS4: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64: case PrimitiveType::kU1:
    case PrimitiveType::kU2: case PrimitiveType::kU4: case PrimitiveType::kU8:
    case PrimitiveType::kU16: case PrimitiveType::kU32: case PrimitiveType::kU64:
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64: case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN: case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ: case PrimitiveType::kF8E4M3FNUZ: case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E8M0FNU: case PrimitiveType::kF4E2M1FN: case PrimitiveType::kToken:
    case PrimitiveType::kOpaque:
      return FftStorage::kReal;
  }
  return FftStorage::kReal;  // unreachable: every PrimitiveType returns above
}

/// Element `i` of a real or complex array as a complex f64.
Cx Load(const Literal& in, int64_t i) {
  switch (StorageOf(in.element_type())) {
    case FftStorage::kC64: {
      const auto v = in.data<std::complex<float>>()[i];
      return {v.real(), v.imag()};
    }
    case FftStorage::kC128: {
      const auto v = in.data<std::complex<double>>()[i];
      return {v.real(), v.imag()};
    }
    case FftStorage::kReal:
      break;
  }
  return {in.GetAsDouble(i), 0.0};
}

void Store(Literal& out, int64_t i, Cx v) {
  switch (StorageOf(out.element_type())) {
    case FftStorage::kC64:
      out.data<std::complex<float>>()[i] = {static_cast<float>(v.re), static_cast<float>(v.im)};
      return;
    case FftStorage::kC128:
      out.data<std::complex<double>>()[i] = {v.re, v.im};
      return;
    case FftStorage::kReal:
      out.SetFromDouble(i, v.re);
  }
}

/// Copies the elements of `from` (dims `from_dims`) whose index is inside
/// `to_dims` into `to` (dims `to_dims`), either way: a truncation or a
/// zero-padded embedding along the last axis.
template <typename Get, typename Put>
void CopyOverlap(std::span<const int64_t> from_dims, std::span<const int64_t> to_dims,
                 Get get, Put put) {
  const std::vector<int64_t> from_strides = RowMajorStrides(from_dims);
  const std::vector<int64_t> to_strides = RowMajorStrides(to_dims);
  std::vector<int64_t> common(from_dims.size());
  for (size_t d = 0; d < common.size(); ++d) common[d] = std::min(from_dims[d], to_dims[d]);
  ForEachIndex(common, [&](std::span<const int64_t> index) {
    int64_t f = 0, t = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      f += index[d] * from_strides[d];
      t += index[d] * to_strides[d];
    }
    put(t, get(f));
  });
}

}  // namespace

StatusOr<Literal> EvalFft(EvalContext& ctx, const HloInstruction& inst, Operands ops) {
  const Literal& in = *ops[0];
  const std::string_view type = inst.string_attr(hlo::AttrId::kFftType);
  const auto* length_attr = inst.GetAttr<std::vector<int64_t>>(hlo::AttrId::kFftLength);
  const bool real_in = type == "RFFT", real_out = type == "IRFFT";
  const bool inverse = type == "IFFT" || type == "IRFFT";
  if (type != "FFT" && type != "IFFT" && !real_in && !real_out) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "unknown fft_type \"" + std::string(type) + "\"");
  }
  if (length_attr == nullptr || length_attr->empty() || length_attr->size() > 3 ||
      !in.shape().IsArray() || !inst.shape().IsArray() ||
      static_cast<int64_t>(length_attr->size()) > in.shape().rank() ||
      in.shape().rank() != inst.shape().rank()) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "fft needs fft_length of 1 to 3 sizes, at most the operand's rank");
  }
  const std::vector<int64_t>& length = *length_attr;
  const size_t rank = static_cast<size_t>(in.shape().rank());
  const size_t first = rank - length.size();
  // The transform runs on complex data of the full fft_length.
  std::vector<int64_t> work_dims(in.shape().dimensions().begin(), in.shape().dimensions().end());
  for (size_t d = 0; d < length.size(); ++d) work_dims[first + d] = length[d];
  // Checks that the operand and result have the sizes the type implies.
  std::vector<int64_t> half_dims = work_dims;
  half_dims.back() = length.back() / 2 + 1;
  const std::vector<int64_t>& want_in = real_out ? half_dims : work_dims;
  const std::vector<int64_t>& want_out = real_in ? half_dims : work_dims;
  const bool complex_in = hlo::IsComplex(in.element_type());
  const bool complex_out = hlo::IsComplex(inst.shape().element_type());
  if (in.shape().dimensions() != want_in || inst.shape().dimensions() != want_out ||
      complex_in == real_in || complex_out == real_out) {
    return ctx.Error(inst, StatusCode::kInvalidArgument,
                     "operand or result shape does not match fft_type and fft_length");
  }
  int64_t work_count = 1;
  for (int64_t d : work_dims) work_count *= d;
  if (work_count == 0) return ctx.NewValue(inst, inst.shape());
  std::vector<Cx> data(static_cast<size_t>(work_count));
  CopyOverlap(
      in.shape().dimensions(), work_dims, [&](int64_t i) { return Load(in, i); },
      [&](int64_t i, Cx v) { data[i] = v; });
  for (size_t axis = first; axis + 1 < rank; ++axis) DftAxis(data, work_dims, axis, inverse);
  if (real_out) {
    // The innermost axis of a real signal's spectrum is Hermitian:
    // X[k] = conj(X[n - k]) above n / 2.
    const int64_t n = length.back();
    for (int64_t base = 0; base < work_count; base += n) {
      for (int64_t k = n / 2 + 1; k < n; ++k) {
        data[base + k] = {data[base + n - k].re, -data[base + n - k].im};
      }
    }
  }
  DftAxis(data, work_dims, rank - 1, inverse);
  TPUSIM_ASSIGN_OR_RETURN(Literal out, ctx.NewValue(inst, inst.shape()));
  CopyOverlap(
      work_dims, inst.shape().dimensions(), [&](int64_t i) { return data[i]; },
      [&](int64_t i, Cx v) { Store(out, i, v); });
  return out;
}

}  // namespace tpusim::eval
