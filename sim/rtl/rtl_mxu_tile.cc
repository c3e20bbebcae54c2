#include "sim/rtl/rtl_mxu_tile.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "sim/value/float_formats.h"

namespace tpusim::rtl {

RtlMxuTile::RtlMxuTile(int size) : array_(MakeMxuArray(size)) {}

int64_t RtlMxuTile::cycles() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cycles_;
}

void RtlMxuTile::MultiplyBf16(const eval::MxuTileShape& shape, std::span<const float> weights,
                              std::span<const float> activations, bool skip_zero,
                              std::span<float> sums) {
  std::vector<uint16_t> w(weights.size()), a(activations.size());
  std::transform(weights.begin(), weights.end(), w.begin(), value::Bf16FromFloat);
  std::transform(activations.begin(), activations.end(), a.begin(), value::Bf16FromFloat);
  std::vector<uint32_t> bits(sums.size());
  std::transform(sums.begin(), sums.end(), bits.begin(), [](float x) { return std::bit_cast<uint32_t>(x); });
  Multiply(shape, w.data(), a.data(), /*pad_activation=*/0x8000, skip_zero, false, bits.data());
  std::transform(bits.begin(), bits.end(), sums.begin(), [](uint32_t x) { return std::bit_cast<float>(x); });
}

void RtlMxuTile::MultiplyInt8(const eval::MxuTileShape& shape, std::span<const int8_t> weights,
                              std::span<const int8_t> activations, std::span<int32_t> sums) {
  auto raw = [](int8_t x) { return static_cast<uint16_t>(static_cast<uint8_t>(x)); };
  std::vector<uint16_t> w(weights.size()), a(activations.size());
  std::transform(weights.begin(), weights.end(), w.begin(), raw);
  std::transform(activations.begin(), activations.end(), a.begin(), raw);
  std::vector<uint32_t> bits(sums.begin(), sums.end());
  Multiply(shape, w.data(), a.data(), /*pad_activation=*/0, false, true, bits.data());
  std::transform(bits.begin(), bits.end(), sums.begin(), [](uint32_t x) { return static_cast<int32_t>(x); });
}

void RtlMxuTile::Multiply(const eval::MxuTileShape& shape, const uint16_t* weights,
                          const uint16_t* activations, uint16_t pad_activation, bool skip_zero,
                          bool int8, uint32_t* sums) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t size = array_->rows();
  for (int64_t k0 = 0; k0 < shape.k; k0 += size) {
    std::vector<ArrayTile> tiles;
    for (int64_t n0 = 0; n0 < shape.n; n0 += size) {
      ArrayTile tile;
      tile.skip_zero = skip_zero;
      tile.weights.assign(static_cast<size_t>(size * size), 0);
      tile.activations.assign(static_cast<size_t>(shape.m * size), pad_activation);
      tile.seeds.assign(static_cast<size_t>(shape.m * size), 0);
      for (int64_t kk = k0; kk < std::min(shape.k, k0 + size); ++kk) {
        for (int64_t j = n0; j < std::min(shape.n, n0 + size); ++j) {
          tile.weights[static_cast<size_t>((kk - k0) * size + j - n0)] = weights[kk * shape.n + j];
        }
        for (int64_t i = 0; i < shape.m; ++i) {
          tile.activations[static_cast<size_t>(i * size + kk - k0)] = activations[i * shape.k + kk];
        }
      }
      for (int64_t i = 0; i < shape.m; ++i) {
        for (int64_t j = n0; j < std::min(shape.n, n0 + size); ++j) {
          tile.seeds[static_cast<size_t>(i * size + j - n0)] = sums[i * shape.n + j];
        }
      }
      tiles.push_back(std::move(tile));
    }
    const ArrayRun run = array_->Run(tiles, int8, /*double_buffer=*/true);
    cycles_ += run.cycles;
    for (size_t t = 0; t < tiles.size(); ++t) {
      const int64_t n0 = static_cast<int64_t>(t) * size;
      for (int64_t i = 0; i < shape.m; ++i) {
        for (int64_t j = n0; j < std::min(shape.n, n0 + size); ++j) {
          sums[i * shape.n + j] = run.sums[t][static_cast<size_t>(i * size + j - n0)];
        }
      }
    }
  }
}

}  // namespace tpusim::rtl
