// The RTL MXU array against the C++ model: the sums of random tiles (NaN,
// infinities, signed zeros, subnormals, max-magnitude values, cancellation)
// are bit-identical to AnalyticMxuTile's for bf16 and int8 at 8x8, 16x16 and
// 128x128; the cycles of back-to-back tiles equal chip::Mxu's tile timing;
// and whole matrix products through RtlMxuTile equal MxuMatMul.
#include "sim/rtl/mxu_array.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/preset_loader.h"
#include "sim/chip/mxu.h"
#include "sim/eval/mxu_matmul.h"
#include "sim/eval/mxu_tile.h"
#include "sim/rtl/rtl_mxu_tile.h"
#include "sim/value/float_formats.h"
#include "sim/value/literal.h"

namespace tpusim::rtl {
namespace {

/// A small deterministic generator (LCG), so failures reproduce.
class Random {
 public:
  explicit Random(uint32_t seed) : state_(seed) {}
  uint32_t Next() {
    state_ = state_ * 1664525u + 1013904223u;
    return state_ >> 8;
  }
  uint32_t Below(uint32_t n) { return Next() % n; }

 private:
  uint32_t state_;
};

/// bf16 bit patterns: NaN, infinities, zeros, subnormals, the smallest
/// normal, the largest finite (max magnitude), ones.
const std::vector<uint16_t> kBf16Specials = {0x7FC0, 0x7F81, 0xFFC1, 0x7F80, 0xFF80, 0x0000, 0x8000,
                                             0x0001, 0x807F, 0x0040, 0x0080, 0x8080, 0x7F7F, 0xFF7F,
                                             0x3F80, 0xBF80};

uint16_t RandomBf16(Random& random) {
  const uint32_t kind = random.Below(10);
  const uint16_t sign = static_cast<uint16_t>(random.Below(2) << 15);
  if (kind < 2) return kBf16Specials[random.Below(static_cast<uint32_t>(kBf16Specials.size()))];
  // Any exponent: products overflow, underflow to subnormals and to zero.
  if (kind < 4) return static_cast<uint16_t>(sign | (random.Below(255) << 7) | random.Below(128));
  // Near 1: long sums with rounding at every step.
  return static_cast<uint16_t>(sign | ((124 + random.Below(7)) << 7) | random.Below(128));
}

uint32_t RandomSeed(Random& random) {
  const uint32_t kind = random.Below(8);
  if (kind < 3) return 0x8000'0000u;  // -0, the seed of a fresh tile sum
  if (kind < 4) return uint32_t{RandomBf16(random)} << 16;
  return static_cast<uint32_t>(random.Below(2) << 31) | ((120u + random.Below(15)) << 23) |
         random.Below(1u << 23);
}

/// A bf16 tile: random, or a cancelling one where each column's products
/// come in +x, -x pairs (exact +0 sums, then whatever the seed adds).
ArrayTile RandomBf16Tile(Random& random, int size, int m, bool cancelling) {
  ArrayTile tile;
  tile.skip_zero = random.Below(2) == 1;
  for (int i = 0; i < size * size; ++i) tile.weights.push_back(RandomBf16(random));
  for (int i = 0; i < m * size; ++i) tile.activations.push_back(RandomBf16(random));
  for (int i = 0; i < m * size; ++i) tile.seeds.push_back(RandomSeed(random));
  if (cancelling) {
    for (int k = 1; k < size; k += 2) {
      for (int c = 0; c < size; ++c) tile.weights[k * size + c] = tile.weights[(k - 1) * size + c] ^ 0x8000;
      for (int r = 0; r < m; ++r) tile.activations[r * size + k] = tile.activations[r * size + k - 1];
    }
  }
  return tile;
}

ArrayTile RandomInt8Tile(Random& random, int size, int m) {
  ArrayTile tile;
  auto int8 = [&] {
    const uint32_t kind = random.Below(4);
    return static_cast<uint16_t>(kind == 0 ? (random.Below(2) ? 0x80 : 0x7F) : random.Below(256));
  };
  for (int i = 0; i < size * size; ++i) tile.weights.push_back(int8());
  for (int i = 0; i < m * size; ++i) tile.activations.push_back(int8());
  for (int i = 0; i < m * size; ++i) {
    // Seeds near the s32 limits, so that sums wrap.
    tile.seeds.push_back(random.Below(2) ? random.Next() : 0x7FFF'F000u + random.Below(0x2000));
  }
  return tile;
}

/// The C++ model's sums of one tile, as bits.
std::vector<uint32_t> Expected(const ArrayTile& tile, int size, bool int8) {
  const int64_t m = static_cast<int64_t>(tile.activations.size()) / size;
  const eval::MxuTileShape shape{m, size, size};
  eval::AnalyticMxuTile model;
  std::vector<uint32_t> bits = tile.seeds;
  if (int8) {
    std::vector<int8_t> w, a;
    for (uint16_t x : tile.weights) w.push_back(static_cast<int8_t>(x & 0xFF));
    for (uint16_t x : tile.activations) a.push_back(static_cast<int8_t>(x & 0xFF));
    std::vector<int32_t> sums(bits.begin(), bits.end());
    model.MultiplyInt8(shape, w, a, sums);
    return {sums.begin(), sums.end()};
  }
  std::vector<float> w, a, sums;
  for (uint16_t x : tile.weights) w.push_back(value::Bf16ToFloat(x));
  for (uint16_t x : tile.activations) a.push_back(value::Bf16ToFloat(x));
  for (uint32_t x : bits) sums.push_back(std::bit_cast<float>(x));
  model.MultiplyBf16(shape, w, a, tile.skip_zero, sums);
  std::vector<uint32_t> out;
  for (float x : sums) out.push_back(std::bit_cast<uint32_t>(x));
  return out;
}

void ExpectSameSums(const std::vector<ArrayTile>& tiles, const ArrayRun& run, int size, bool int8) {
  ASSERT_EQ(run.sums.size(), tiles.size());
  for (size_t t = 0; t < tiles.size(); ++t) {
    const std::vector<uint32_t> expected = Expected(tiles[t], size, int8);
    ASSERT_EQ(run.sums[t].size(), expected.size()) << "tile " << t;
    int mismatches = 0;
    for (size_t i = 0; i < expected.size() && mismatches < 5; ++i) {
      if (run.sums[t][i] != expected[i]) {
        ++mismatches;
        ADD_FAILURE() << "tile " << t << " row " << i / size << " column " << i % size << ": model 0x"
                      << std::hex << expected[i] << ", RTL 0x" << run.sums[t][i] << std::dec;
      }
    }
  }
}

void CheckRandomTiles(int size, bool int8, int tile_count, uint32_t seed) {
  std::unique_ptr<MxuArray> array = MakeMxuArray(size);
  Random random(seed);
  for (bool double_buffer : {true, false}) {
    std::vector<ArrayTile> tiles;
    for (int t = 0; t < tile_count; ++t) {
      const int m = 1 + static_cast<int>(random.Below(static_cast<uint32_t>(2 * size)));
      tiles.push_back(int8 ? RandomInt8Tile(random, size, m) : RandomBf16Tile(random, size, m, t % 3 == 2));
    }
    SCOPED_TRACE(::testing::Message() << size << "x" << size << (int8 ? " int8" : " bf16")
                                      << (double_buffer ? " double-buffered" : " single-buffered"));
    ExpectSameSums(tiles, array->Run(tiles, int8, double_buffer), size, int8);
  }
}

TEST(RtlMxuArray, Bf16SumsEqualTheCppModelAt8x8) { CheckRandomTiles(8, false, 40, 1); }
TEST(RtlMxuArray, Bf16SumsEqualTheCppModelAt16x16) { CheckRandomTiles(16, false, 24, 2); }
TEST(RtlMxuArray, Int8SumsEqualTheCppModelAt8x8) { CheckRandomTiles(8, true, 20, 3); }
TEST(RtlMxuArray, Int8SumsEqualTheCppModelAt16x16) { CheckRandomTiles(16, true, 12, 4); }
TEST(RtlMxuArray, Bf16AndInt8SumsEqualTheCppModelAt128x128) {
  if (MxuArraySizes().back() != 128) {
    // scripts/test.sh's sanitizer build; its Release build has the 128x128 array.
    GTEST_SKIP() << "configured without the 128x128 array (TPUSIM_RTL_ARRAY_SIZES)";
  }
  CheckRandomTiles(128, false, 3, 5);
  CheckRandomTiles(128, true, 2, 6);
}

/// The chip model of a single MXU of the array's size (vregs of 8 sublanes).
chip::Mxu ChipMxu(int size) {
  StatusOr<arch::ChipConfig> chip =
      arch::LoadChipPreset(std::string(TPUSIM_MODELS_DIR) + "/test/tiny-chip.yaml", TPUSIM_MODELS_DIR);
  EXPECT_TRUE(chip.ok());
  arch::ChipConfig config = chip.ok() ? *chip : arch::ChipConfig{};
  config.mxu.rows = size;
  config.mxu.cols = size;
  config.mxu.count_per_core = 1;
  config.vpu.sublanes = 8;
  return chip::Mxu(config);
}

TEST(RtlMxuArray, CyclesOfBackToBackTilesEqualTheChipModel) {
  for (int size : {8, 16}) {
    std::unique_ptr<MxuArray> array = MakeMxuArray(size);
    const chip::Mxu mxu = ChipMxu(size);
    Random random(7);
    for (int m : {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 64, 100, 255, 1024}) {
      for (int tile_count : {1, 2, 3}) {
        std::vector<ArrayTile> tiles;
        for (int t = 0; t < tile_count; ++t) tiles.push_back(RandomBf16Tile(random, size, m, false));
        for (bool double_buffer : {true, false}) {
          SCOPED_TRACE(::testing::Message() << size << "x" << size << ", " << tile_count << " tiles of "
                                            << m << " rows, double_buffer " << double_buffer);
          const ArrayRun run = array->Run(tiles, false, double_buffer);
          EXPECT_EQ(run.cycles, mxu.TileSequenceCycles(tile_count, m, double_buffer));
          // The schedule is hazard-free: every tile used its own weights.
          ExpectSameSums(tiles, run, size, false);
        }
      }
    }
  }
}

TEST(RtlMxuArray, MatmulCyclesOfTheChipModelEqualTheRtlStreamingWholeVregs) {
  // One matmul of `tile_count` k tiles on one MXU: the chip model pads m to
  // whole 8-row vregs, and so does the RTL's input.
  const int size = 16;
  std::unique_ptr<MxuArray> array = MakeMxuArray(size);
  const chip::Mxu mxu = ChipMxu(size);
  Random random(8);
  for (int m : {1, 5, 16, 21, 40}) {
    for (int tile_count : {1, 2, 4}) {
      const int streamed = (m + 7) / 8 * 8;
      std::vector<ArrayTile> tiles;
      for (int t = 0; t < tile_count; ++t) tiles.push_back(RandomBf16Tile(random, size, streamed, false));
      EXPECT_EQ(array->Run(tiles, false, true).cycles,
                mxu.MatmulCycles({.batch = 1, .m = m, .k = size * tile_count, .n = size}))
          << m << " rows, " << tile_count << " tiles";
    }
  }
}

TEST(RtlMxuArray, SmallStreamsWaitForTheWeightLoad) {
  // One row per tile on a 16x16 array: each tile waits for its successor's
  // weights, 2 cycles of 8 rows, which the analytic model did not count
  // before the RTL showed it (it charged 3 x 1 + 1 + 32).
  std::unique_ptr<MxuArray> array = MakeMxuArray(16);
  Random random(9);
  std::vector<ArrayTile> tiles;
  for (int t = 0; t < 4; ++t) tiles.push_back(RandomBf16Tile(random, 16, 1, false));
  EXPECT_EQ(array->Run(tiles, false, true).cycles, 3 * 2 + 1 + 16 + 16);
  // Single-buffered: the load starts as the last row enters, 1 + 2 - 1 a tile.
  EXPECT_EQ(array->Run(tiles, false, false).cycles, 3 * 2 + 1 + 16 + 16);
  // Two rows: double buffering hides the load, single buffering does not.
  for (ArrayTile& tile : tiles) {
    tile.activations.resize(2 * 16, 0);
    tile.seeds.resize(2 * 16, 0);
  }
  EXPECT_EQ(array->Run(tiles, false, true).cycles, 3 * 2 + 2 + 16 + 16);
  EXPECT_EQ(array->Run(tiles, false, false).cycles, 3 * 3 + 2 + 16 + 16);
}

/// MxuMatMul against MxuMatMulByTiles through the RTL, on f32 operands (three
/// pieces, six passes) with edge values, k over one 128 tile.
TEST(RtlMxuTile, MatrixProductsEqualMxuMatMul) {
  const int m = 5, k = 150, n = 19;
  Random random(10);
  value::Literal a(hlo::Shape(hlo::PrimitiveType::kF32, {m, k}));
  value::Literal b(hlo::Shape(hlo::PrimitiveType::kF32, {k, n}));
  const std::vector<float> specials = {0.0f, -0.0f, 1e-40f, 3.0e38f, -1e-30f, 1.0f + 0x1p-20f};
  for (value::Literal* l : {&a, &b}) {
    for (int64_t i = 0; i < l->element_count(); ++i) {
      const float x = random.Below(6) == 0 ? specials[random.Below(6)]
                                           : static_cast<float>(random.Next()) / 16777216.0f - 0.5f;
      l->SetFromDouble(i, x);
    }
  }
  std::vector<int64_t> batch = {0}, a_rows, a_k, b_rows, b_k;
  for (int i = 0; i < m; ++i) a_rows.push_back(int64_t{i} * k);
  for (int kk = 0; kk < k; ++kk) {
    a_k.push_back(kk);
    b_k.push_back(int64_t{kk} * n);
  }
  for (int j = 0; j < n; ++j) b_rows.push_back(j);
  const eval::MatrixView lhs{&a, batch, a_rows, a_k}, rhs{&b, batch, b_rows, b_k};
  const std::vector<eval::MxuPass> highest = {{0, 2}, {2, 0}, {1, 1}, {0, 1}, {1, 0}, {0, 0}};
  std::vector<float> fast(m * n), rtl(m * n);
  eval::MxuMatMul(lhs, rhs, highest, eval::SimdLevel::kBaseline, fast);
  RtlMxuTile engine(16);
  eval::MxuMatMulByTiles(lhs, rhs, highest, engine, rtl);
  for (int i = 0; i < m * n; ++i) {
    EXPECT_EQ(std::bit_cast<uint32_t>(fast[i]), std::bit_cast<uint32_t>(rtl[i])) << "element " << i;
  }
  EXPECT_GT(engine.cycles(), 0);
}

/// MxuInt8MatMulByTiles through the RTL against int32 sums computed here, on
/// s8 operands with the extremes, k over two 128 tiles and batched.
TEST(RtlMxuTile, Int8MatrixProductsEqualWrappedIntegerSums) {
  const int batches = 2, m = 4, k = 260, n = 17;
  Random random(11);
  value::Literal a(hlo::Shape(hlo::PrimitiveType::kS8, {batches, m, k}));
  value::Literal b(hlo::Shape(hlo::PrimitiveType::kS8, {batches, k, n}));
  for (value::Literal* l : {&a, &b}) {
    for (int8_t& x : l->data<int8_t>()) {
      x = random.Below(5) == 0 ? (random.Below(2) == 0 ? int8_t{-128} : int8_t{127})
                               : static_cast<int8_t>(random.Next());
    }
  }
  std::vector<int64_t> a_batch, b_batch, a_rows, a_k, b_rows, b_k;
  for (int bi = 0; bi < batches; ++bi) {
    a_batch.push_back(int64_t{bi} * m * k);
    b_batch.push_back(int64_t{bi} * k * n);
  }
  for (int i = 0; i < m; ++i) a_rows.push_back(int64_t{i} * k);
  for (int kk = 0; kk < k; ++kk) {
    a_k.push_back(kk);
    b_k.push_back(int64_t{kk} * n);
  }
  for (int j = 0; j < n; ++j) b_rows.push_back(j);
  std::vector<int32_t> rtl(static_cast<size_t>(batches * m * n));
  RtlMxuTile engine(16);
  eval::MxuInt8MatMulByTiles({&a, a_batch, a_rows, a_k}, {&b, b_batch, b_rows, b_k}, engine, rtl);
  const auto av = a.data<int8_t>(), bv = b.data<int8_t>();
  for (int bi = 0; bi < batches; ++bi) {
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        int32_t sum = 0;  // |sum| < 260 * 2^14: no wrap
        for (int kk = 0; kk < k; ++kk) {
          sum += av[static_cast<size_t>((bi * m + i) * k + kk)] * bv[static_cast<size_t>((bi * k + kk) * n + j)];
        }
        EXPECT_EQ(rtl[static_cast<size_t>((bi * m + i) * n + j)], sum) << bi << "," << i << "," << j;
      }
    }
  }
  EXPECT_GT(engine.cycles(), 0);
}

}  // namespace
}  // namespace tpusim::rtl
