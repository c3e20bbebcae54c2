#include "sim/eval/mxu_tile.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include "sim/value/check.h"
#include "sim/value/element_type.h"
#include "sim/value/float_formats.h"

namespace tpusim::eval {
namespace {

constexpr uint32_t kQuietNan = 0x7FC0'0000;

/// The view's matrices as f32, [batch][row][k].
std::vector<float> Gather(const MatrixView& view) {
  const size_t rows = view.row_offsets.size();
  const size_t k = view.k_offsets.size();
  std::vector<float> out(view.batch_offsets.size() * rows * k);
  value::VisitArrayType(view.values->element_type(), [&](auto tag) {
    using T = value::NativeType<decltype(tag)::value>;
    constexpr bool kFloat = std::is_same_v<T, float> ||
                            (std::is_class_v<T> && !std::is_same_v<T, std::complex<float>> &&
                             !std::is_same_v<T, std::complex<double>>);
    if constexpr (kFloat) {
      const auto values = view.values->template data<T>();
      size_t i = 0;
      for (int64_t b : view.batch_offsets) {
        for (int64_t r : view.row_offsets) {
          for (int64_t kk : view.k_offsets) {
            if constexpr (std::is_same_v<T, float>) {
              out[i++] = values[static_cast<size_t>(b + r + kk)];
            } else {
              out[i++] = values[static_cast<size_t>(b + r + kk)].ToFloat();
            }
          }
        }
      }
    } else {
      TPUSIM_VALUE_CHECK(false, "MxuMatMulByTiles operands must be f32 or narrower floats");
    }
  });
  return out;
}

}  // namespace

void AnalyticMxuTile::MultiplyBf16(const MxuTileShape& shape, std::span<const float> weights,
                                   std::span<const float> activations, bool skip_zero,
                                   std::span<float> sums) {
  for (int64_t i = 0; i < shape.m; ++i) {
    for (int64_t j = 0; j < shape.n; ++j) {
      float sum = sums[static_cast<size_t>(i * shape.n + j)];
      for (int64_t kk = 0; kk < shape.k; ++kk) {
        const float a = activations[static_cast<size_t>(i * shape.k + kk)];
        const float w = weights[static_cast<size_t>(kk * shape.n + j)];
        if (skip_zero && (a == 0.0f || w == 0.0f)) continue;
        sum = sum + a * w;
      }
      sums[static_cast<size_t>(i * shape.n + j)] = sum != sum ? std::bit_cast<float>(kQuietNan) : sum;
    }
  }
}

void AnalyticMxuTile::MultiplyInt8(const MxuTileShape& shape, std::span<const int8_t> weights,
                                   std::span<const int8_t> activations, std::span<int32_t> sums) {
  for (int64_t i = 0; i < shape.m; ++i) {
    for (int64_t j = 0; j < shape.n; ++j) {
      uint32_t sum = static_cast<uint32_t>(sums[static_cast<size_t>(i * shape.n + j)]);
      for (int64_t kk = 0; kk < shape.k; ++kk) {
        sum += static_cast<uint32_t>(activations[static_cast<size_t>(i * shape.k + kk)] *
                                     weights[static_cast<size_t>(kk * shape.n + j)]);
      }
      sums[static_cast<size_t>(i * shape.n + j)] = static_cast<int32_t>(sum);
    }
  }
}

void MxuMatMulByTiles(const MatrixView& lhs, const MatrixView& rhs, std::span<const MxuPass> passes,
                      MxuTileEngine& engine, std::span<float> result) {
  const int64_t batches = static_cast<int64_t>(lhs.batch_offsets.size());
  const int64_t m = static_cast<int64_t>(lhs.row_offsets.size());
  const int64_t n = static_cast<int64_t>(rhs.row_offsets.size());
  const int64_t k = static_cast<int64_t>(lhs.k_offsets.size());
  TPUSIM_VALUE_CHECK(static_cast<int64_t>(result.size()) == batches * m * n &&
                         rhs.batch_offsets.size() == lhs.batch_offsets.size() &&
                         rhs.k_offsets.size() == lhs.k_offsets.size() && !passes.empty(),
                     "MxuMatMulByTiles operand and result sizes disagree");
  std::fill(result.begin(), result.end(), 0.0f);  // an empty contraction is +0
  if (result.empty() || k == 0) return;
  int pieces = 1;
  for (const MxuPass& pass : passes) {
    TPUSIM_VALUE_CHECK(pass.lhs >= 0 && pass.lhs < 3 && pass.rhs >= 0 && pass.rhs < 3,
                       "an MXU pass names a piece other than 0, 1 or 2");
    pieces = std::max({pieces, pass.lhs + 1, pass.rhs + 1});
  }
  // Piece planes: [piece][batch][row][k].
  auto split = [&](const MatrixView& view) {
    const std::vector<float> values = Gather(view);
    std::vector<float> planes(values.size() * static_cast<size_t>(pieces));
    float piece[3];
    for (size_t i = 0; i < values.size(); ++i) {
      SplitIntoBf16Pieces(values[i], pieces, piece);
      for (int p = 0; p < pieces; ++p) planes[p * values.size() + i] = piece[p];
    }
    return planes;
  };
  const std::vector<float> a = split(lhs);
  const std::vector<float> b = split(rhs);
  const size_t a_plane = static_cast<size_t>(batches * m * k);
  const size_t b_plane = static_cast<size_t>(batches * n * k);
  std::vector<float> weights, activations, sums;
  for (int64_t batch = 0; batch < batches; ++batch) {
    float* out = result.data() + batch * m * n;
    for (int64_t k0 = 0; k0 < k; k0 += kMxuTile) {
      const MxuTileShape shape{m, std::min(kMxuTile, k - k0), n};
      sums.assign(static_cast<size_t>(m * n), -0.0f);
      for (const MxuPass& pass : passes) {
        const float* a_rows = a.data() + pass.lhs * a_plane + static_cast<size_t>(batch * m * k + k0);
        const float* b_rows = b.data() + pass.rhs * b_plane + static_cast<size_t>(batch * n * k + k0);
        activations.resize(static_cast<size_t>(m * shape.k));
        weights.resize(static_cast<size_t>(shape.k * n));
        for (int64_t i = 0; i < m; ++i) {
          std::copy_n(a_rows + i * k, shape.k, activations.data() + i * shape.k);
        }
        for (int64_t kk = 0; kk < shape.k; ++kk) {
          for (int64_t j = 0; j < n; ++j) weights[static_cast<size_t>(kk * n + j)] = b_rows[j * k + kk];
        }
        engine.MultiplyBf16(shape, weights, activations, pass.lhs != 0 || pass.rhs != 0, sums);
      }
      for (size_t i = 0; i < sums.size(); ++i) out[i] = k0 == 0 ? sums[i] : out[i] + sums[i];
    }
  }
  for (float& x : result) {
    if (x != x) x = std::bit_cast<float>(kQuietNan);
  }
}

}  // namespace tpusim::eval
