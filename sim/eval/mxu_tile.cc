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

/// The view's matrices, [batch][row][k], each element converted by `as`.
template <typename Out, typename Element, typename Convert>
std::vector<Out> GatherAs(const MatrixView& view, std::span<const Element> values, Convert as) {
  std::vector<Out> out;
  out.reserve(view.batch_offsets.size() * view.row_offsets.size() * view.k_offsets.size());
  for (int64_t b : view.batch_offsets) {
    for (int64_t r : view.row_offsets) {
      for (int64_t kk : view.k_offsets) out.push_back(as(values[static_cast<size_t>(b + r + kk)]));
    }
  }
  return out;
}

/// The view's matrices as f32, [batch][row][k].
std::vector<float> Gather(const MatrixView& view) {
  std::vector<float> out;
  value::VisitArrayType(view.values->element_type(), [&](auto tag) {
    using T = value::NativeType<decltype(tag)::value>;
    if constexpr (std::is_same_v<T, float>) {
      out = GatherAs<float>(view, view.values->template data<T>(), [](float x) { return x; });
    } else if constexpr (std::is_class_v<T> && !std::is_same_v<T, std::complex<float>> &&
                         !std::is_same_v<T, std::complex<double>>) {
      out = GatherAs<float>(view, view.values->template data<T>(), [](T x) { return x.ToFloat(); });
    } else {
      TPUSIM_VALUE_CHECK(false, "MxuMatMulByTiles operands must be f32 or narrower floats");
    }
  });
  return out;
}

/// The matrix sizes of lhs x rhs -> result, checked to agree.
struct TileProblem {
  int64_t batches = 0, m = 0, n = 0, k = 0;
};

TileProblem CheckedProblem(const MatrixView& lhs, const MatrixView& rhs, size_t result_size) {
  const TileProblem p{static_cast<int64_t>(lhs.batch_offsets.size()),
                      static_cast<int64_t>(lhs.row_offsets.size()),
                      static_cast<int64_t>(rhs.row_offsets.size()),
                      static_cast<int64_t>(lhs.k_offsets.size())};
  TPUSIM_VALUE_CHECK(static_cast<int64_t>(result_size) == p.batches * p.m * p.n &&
                         rhs.batch_offsets.size() == lhs.batch_offsets.size() &&
                         rhs.k_offsets.size() == lhs.k_offsets.size(),
                     "MXU tile operand and result sizes disagree");
  return p;
}

/// Rows [k0, k0 + shape.k) of batch `batch` of the [batch][row][k] planes
/// `a` (activations, m rows) and `b` (weights, n rows), laid out as the tile
/// engine takes them: activations [m][k], weights [k][n].
template <typename T>
void CutTile(const T* a, const T* b, const TileProblem& p, int64_t batch, int64_t k0,
             const MxuTileShape& shape, std::vector<T>& activations, std::vector<T>& weights) {
  const T* a_rows = a + static_cast<size_t>(batch * p.m * p.k + k0);
  const T* b_rows = b + static_cast<size_t>(batch * p.n * p.k + k0);
  activations.resize(static_cast<size_t>(p.m * shape.k));
  weights.resize(static_cast<size_t>(shape.k * p.n));
  for (int64_t i = 0; i < p.m; ++i) {
    std::copy_n(a_rows + i * p.k, shape.k, activations.data() + i * shape.k);
  }
  for (int64_t kk = 0; kk < shape.k; ++kk) {
    for (int64_t j = 0; j < p.n; ++j) weights[static_cast<size_t>(kk * p.n + j)] = b_rows[j * p.k + kk];
  }
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
  const TileProblem p = CheckedProblem(lhs, rhs, result.size());
  TPUSIM_VALUE_CHECK(!passes.empty(), "MxuMatMulByTiles needs at least one pass");
  std::fill(result.begin(), result.end(), 0.0f);  // an empty contraction is +0
  if (result.empty() || p.k == 0) return;
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
      for (int q = 0; q < pieces; ++q) planes[q * values.size() + i] = piece[q];
    }
    return planes;
  };
  const std::vector<float> a = split(lhs);
  const std::vector<float> b = split(rhs);
  const size_t a_plane = static_cast<size_t>(p.batches * p.m * p.k);
  const size_t b_plane = static_cast<size_t>(p.batches * p.n * p.k);
  std::vector<float> weights, activations, sums;
  for (int64_t batch = 0; batch < p.batches; ++batch) {
    float* out = result.data() + batch * p.m * p.n;
    for (int64_t k0 = 0; k0 < p.k; k0 += kMxuTile) {
      const MxuTileShape shape{p.m, std::min(kMxuTile, p.k - k0), p.n};
      sums.assign(static_cast<size_t>(p.m * p.n), -0.0f);
      for (const MxuPass& pass : passes) {
        CutTile(a.data() + pass.lhs * a_plane, b.data() + pass.rhs * b_plane, p, batch, k0, shape,
                activations, weights);
        engine.MultiplyBf16(shape, weights, activations, pass.lhs != 0 || pass.rhs != 0, sums);
      }
      for (size_t i = 0; i < sums.size(); ++i) out[i] = k0 == 0 ? sums[i] : out[i] + sums[i];
    }
  }
  for (float& x : result) {
    if (x != x) x = std::bit_cast<float>(kQuietNan);
  }
}

void MxuInt8MatMulByTiles(const MatrixView& lhs, const MatrixView& rhs, MxuTileEngine& engine,
                          std::span<int32_t> result) {
  const TileProblem p = CheckedProblem(lhs, rhs, result.size());
  auto gather = [](const MatrixView& view) {
    TPUSIM_VALUE_CHECK(view.values->element_type() == hlo::PrimitiveType::kS8,
                       "MxuInt8MatMulByTiles operands must be s8");
    return GatherAs<int8_t>(view, view.values->data<int8_t>(), [](int8_t x) { return x; });
  };
  const std::vector<int8_t> a = gather(lhs);
  const std::vector<int8_t> b = gather(rhs);
  std::fill(result.begin(), result.end(), 0);
  std::vector<int8_t> weights, activations;
  for (int64_t batch = 0; batch < p.batches; ++batch) {
    // The int32 sums wrap, so accumulating every k tile into the result is
    // the same as adding per-tile sums: the order cannot matter.
    const std::span<int32_t> sums = result.subspan(static_cast<size_t>(batch * p.m * p.n),
                                                   static_cast<size_t>(p.m * p.n));
    for (int64_t k0 = 0; k0 < p.k; k0 += kMxuTile) {
      const MxuTileShape shape{p.m, std::min(kMxuTile, p.k - k0), p.n};
      CutTile(a.data(), b.data(), p, batch, k0, shape, activations, weights);
      engine.MultiplyInt8(shape, weights, activations, sums);
    }
  }
}

}  // namespace tpusim::eval
