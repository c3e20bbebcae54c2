// The blocked, vectorised MXU matrix product against a plain scalar loop that
// follows docs/evaluator.md's order word for word: bit-exact on random values,
// on NaN, infinities, signed zeros, subnormals, overflowing and underflowing
// products, on sizes that are not multiples of the kernel's blocks or of the
// 128-wide k tile, at every SIMD level the CPU has; and MxuMatMulByTiles (the
// tile-by-tile path of `--mxu`) through the C++ tile model likewise.
#include "sim/eval/mxu_matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "sim/eval/mxu_tile.h"
#include "sim/value/float_formats.h"

namespace tpusim::eval {
namespace {

using hlo::PrimitiveType;
using value::Literal;

const std::vector<MxuPass> kDefault = {{0, 0}};
const std::vector<MxuPass> kHigh = {{0, 1}, {1, 0}, {0, 0}};
const std::vector<MxuPass> kHighest = {{0, 2}, {2, 0}, {1, 1}, {0, 1}, {1, 0}, {0, 0}};

uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }

/// x0 = bf16(x), x1 = bf16(x - x0), x2 = bf16(x - x0 - x1); an inf or NaN
/// piece leaves nothing.
std::array<float, 3> Pieces(float x) {
  std::array<float, 3> pieces{};
  for (float& piece : pieces) {
    piece = value::Bf16ToFloat(value::Bf16FromFloat(x));
    x = std::isfinite(piece) ? x - piece : 0.0f;
  }
  return pieces;
}

/// The documented order, one result element at a time. a is m x k, b is k x n,
/// both row-major floats.
std::vector<float> Reference(const std::vector<float>& a, const std::vector<float>& b, int m,
                             int k, int n, const std::vector<MxuPass>& passes) {
  std::vector<float> result;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int k0 = 0; k0 < k; k0 += 128) {
        float tile = 0.0f;
        bool seeded = false;
        for (const MxuPass& pass : passes) {
          for (int kk = k0; kk < std::min(k0 + 128, k); ++kk) {
            const float x = Pieces(a[i * k + kk])[pass.lhs];
            const float y = Pieces(b[kk * n + j])[pass.rhs];
            const bool lower = pass.lhs != 0 || pass.rhs != 0;
            if (lower && (x == 0.0f || y == 0.0f)) continue;
            tile = seeded ? tile + x * y : x * y;
            seeded = true;
          }
        }
        acc = k0 == 0 ? tile : acc + tile;
      }
      result.push_back(std::isnan(acc) ? std::bit_cast<float>(0x7FC0'0000u) : acc);
    }
  }
  return result;
}

/// An array of `type` holding `values` (rounded once when narrower than f32).
Literal Matrix(PrimitiveType type, int rows, int cols, const std::vector<float>& values) {
  Literal l(hlo::Shape(type, {rows, cols}));
  for (size_t i = 0; i < values.size(); ++i) l.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

/// The values back as floats (exact: every type here is f32 or narrower).
std::vector<float> AsFloats(const Literal& l) {
  std::vector<float> values;
  for (int64_t i = 0; i < l.element_count(); ++i) values.push_back(static_cast<float>(l.GetAsDouble(i)));
  return values;
}

/// MxuMatMul of row-major a (m x k) and b (k x n) at `level`.
std::vector<float> Fast(const Literal& a, const Literal& b, int m, int k, int n,
                        const std::vector<MxuPass>& passes, SimdLevel level) {
  std::vector<int64_t> batch = {0}, a_rows, a_k, b_rows, b_k;
  for (int i = 0; i < m; ++i) a_rows.push_back(int64_t{i} * k);
  for (int kk = 0; kk < k; ++kk) {
    a_k.push_back(kk);
    b_k.push_back(int64_t{kk} * n);
  }
  for (int j = 0; j < n; ++j) b_rows.push_back(j);
  std::vector<float> result(static_cast<size_t>(m) * n);
  MxuMatMul({&a, batch, a_rows, a_k}, {&b, batch, b_rows, b_k}, passes, level, result);
  return result;
}

/// MxuMatMulByTiles through the C++ tile model, the path `--mxu rtl` takes.
std::vector<float> ByTiles(const Literal& a, const Literal& b, int m, int k, int n,
                           const std::vector<MxuPass>& passes) {
  std::vector<int64_t> batch = {0}, a_rows, a_k, b_rows, b_k;
  for (int i = 0; i < m; ++i) a_rows.push_back(int64_t{i} * k);
  for (int kk = 0; kk < k; ++kk) {
    a_k.push_back(kk);
    b_k.push_back(int64_t{kk} * n);
  }
  for (int j = 0; j < n; ++j) b_rows.push_back(j);
  std::vector<float> result(static_cast<size_t>(m) * n);
  AnalyticMxuTile engine;
  MxuMatMulByTiles({&a, batch, a_rows, a_k}, {&b, batch, b_rows, b_k}, passes, engine, result);
  return result;
}

std::vector<SimdLevel> Levels() {
  std::vector<SimdLevel> levels = {SimdLevel::kBaseline};
  if (CpuSupports(SimdLevel::kAvx2)) levels.push_back(SimdLevel::kAvx2);
  return levels;
}

const float kInf = std::numeric_limits<float>::infinity();
/// Edge values: NaN, infinities, signed zeros, subnormals, the smallest
/// normal, values whose products overflow or underflow, a non-zero third piece.
const std::vector<float> kEdgeValues = {
    std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, 0.0f, -0.0f,
    1e-40f,          // f32 subnormal: its bf16 pieces are subnormal too
    -3e-39f,         // subnormal, several pieces
    1.1754944e-38f,  // the smallest normal
    3.0e38f, -2.9e38f,  // products overflow
    1e-30f, 3e-20f,     // products underflow to subnormal or zero
    1.0f + 0x1p-20f,    // a non-zero third piece
    65504.0f};
/// Values whose products are mostly signed zeros (underflow), so the sign of
/// a zero sum depends on the seeding and skipping rules.
const std::vector<float> kZeroish = {0.0f, -0.0f, 1e-30f, -1e-30f, -1.0f - 0x1p-12f, 1e-20f};

/// Deterministic values: full-mantissa floats over a few binades and, with
/// probability `special_share`, one of `specials`.
std::vector<float> Values(size_t count, uint32_t seed, double special_share,
                          const std::vector<float>& specials = kEdgeValues) {
  std::vector<float> values;
  uint32_t state = seed;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state;
  };
  for (size_t i = 0; i < count; ++i) {
    const uint32_t r = next();
    if (static_cast<double>(r >> 8) / 16777216.0 < special_share) {
      values.push_back(specials[next() % specials.size()]);
    } else {
      const float mantissa = static_cast<float>(next() >> 8) / 16777216.0f - 0.5f;
      values.push_back(std::ldexp(mantissa, static_cast<int>(next() % 9) - 4));
    }
  }
  return values;
}

void ExpectBitEqual(const std::vector<float>& expected, const std::vector<float>& actual, int n,
                    const char* what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  int mismatches = 0;
  for (size_t i = 0; i < expected.size() && mismatches < 5; ++i) {
    if (Bits(expected[i]) != Bits(actual[i])) {
      ++mismatches;
      ADD_FAILURE() << what << ": element (" << i / n << ", " << i % n << "): expected "
                    << expected[i] << " (0x" << std::hex << Bits(expected[i]) << "), got "
                    << actual[i] << " (0x" << Bits(actual[i]) << std::dec << ")";
    }
  }
}

struct Size {
  int m, k, n;
};
// 1x1x1; below one register tile; exact tiles; one past a k tile and a
// register tile; several k tiles with ragged edges in every dimension; more
// rows than one cache block (24 panels of 4).
const std::vector<Size> kSizes = {{1, 1, 1},   {3, 5, 7},      {4, 128, 16},  {5, 129, 17},
                                  {13, 300, 33}, {2, 513, 40}, {101, 130, 18}};

void CompareOnAllSizes(PrimitiveType type, double special_share, uint32_t seed,
                       const std::vector<float>& specials = kEdgeValues) {
  for (const std::vector<MxuPass>* passes : {&kDefault, &kHigh, &kHighest}) {
    for (const Size& s : kSizes) {
      const Literal a = Matrix(type, s.m, s.k, Values(size_t(s.m) * s.k, seed, special_share, specials));
      const Literal b = Matrix(type, s.k, s.n, Values(size_t(s.k) * s.n, seed + 1, special_share, specials));
      const std::vector<float> expected =
          Reference(AsFloats(a), AsFloats(b), s.m, s.k, s.n, *passes);
      for (SimdLevel level : Levels()) {
        SCOPED_TRACE(::testing::Message() << s.m << "x" << s.k << "x" << s.n << ", "
                                          << passes->size() << " passes, level "
                                          << static_cast<int>(level));
        ExpectBitEqual(expected, Fast(a, b, s.m, s.k, s.n, *passes, level), s.n, "fast kernel");
      }
      ExpectBitEqual(expected, ByTiles(a, b, s.m, s.k, s.n, *passes), s.n, "tile by tile");
      ++seed;
    }
  }
}

TEST(MxuMatMul, EqualsDocumentedOrderOnRandomF32) { CompareOnAllSizes(PrimitiveType::kF32, 0.0, 1); }

TEST(MxuMatMul, EqualsDocumentedOrderWithNanInfZerosSubnormalsAndOverflow) {
  CompareOnAllSizes(PrimitiveType::kF32, 0.15, 100);
}

TEST(MxuMatMul, EqualsDocumentedOrderWithMostlyEdgeValues) {
  // Sums of mostly zeros, infinities and tiny values: signed zeros and NaNs
  // reach the results, where the seeding and skipping rules matter most.
  CompareOnAllSizes(PrimitiveType::kF32, 0.8, 200);
}

TEST(MxuMatMul, EqualsDocumentedOrderOnSumsOfSignedZeros) {
  CompareOnAllSizes(PrimitiveType::kF32, 1.0, 300, kZeroish);
}

TEST(MxuMatMul, EqualsDocumentedOrderWithSparseInfinitiesMeetingZeroPieces) {
  // Whole register tiles (no padding lanes), a few infinities in the lhs and
  // many bf16-exact rhs values (zero lower pieces): the lower passes must skip
  // inf * 0, which would turn the documented inf results into NaN.
  for (const Size& s : std::vector<Size>{{4, 128, 16}, {8, 256, 32}}) {
    const Literal a = Matrix(PrimitiveType::kF32, s.m, s.k,
                             Values(size_t(s.m) * s.k, 21, 0.004, {kInf, -kInf}));
    const Literal b = Matrix(PrimitiveType::kF32, s.k, s.n,
                             Values(size_t(s.k) * s.n, 22, 0.3, {1.0f, -0.5f, 3.0f}));
    const std::vector<float> expected = Reference(AsFloats(a), AsFloats(b), s.m, s.k, s.n, kHighest);
    ASSERT_TRUE(std::any_of(expected.begin(), expected.end(), [](float x) { return std::isinf(x); }));
    for (SimdLevel level : Levels()) {
      ExpectBitEqual(expected, Fast(a, b, s.m, s.k, s.n, kHighest, level), s.n, "sparse inf");
    }
  }
}

TEST(MxuMatMul, EqualsDocumentedOrderOnBf16Operands) {
  // bf16 values are one piece: only the (0, 0) pass has products.
  for (const Size& s : kSizes) {
    const Literal a = Matrix(PrimitiveType::kBF16, s.m, s.k, Values(size_t(s.m) * s.k, 7, 0.1));
    const Literal b = Matrix(PrimitiveType::kBF16, s.k, s.n, Values(size_t(s.k) * s.n, 8, 0.1));
    const std::vector<float> expected = Reference(AsFloats(a), AsFloats(b), s.m, s.k, s.n, kDefault);
    for (SimdLevel level : Levels()) {
      ExpectBitEqual(expected, Fast(a, b, s.m, s.k, s.n, kDefault, level), s.n, "bf16");
    }
  }
}

TEST(MxuMatMul, SumOfNegativeZeroProductsIsNegativeZero) {
  // Seeded with the first product, not added to +0.
  const Literal a = Matrix(PrimitiveType::kF32, 1, 3, {-1.0f, -2.0f, -3.0f});
  const Literal b = Matrix(PrimitiveType::kF32, 3, 1, {0.0f, 0.0f, 0.0f});
  for (SimdLevel level : Levels()) {
    EXPECT_EQ(Bits(Fast(a, b, 1, 3, 1, kDefault, level)[0]), 0x8000'0000u);
  }
}

TEST(MxuMatMul, LowerPassesSkipZeroPiecesSoInfinityTimesBf16StaysInfinite) {
  // At HIGHEST, inf's lower pieces are 0 and so are 2's: x0*y1 would be inf*0 = NaN.
  const float inf = std::numeric_limits<float>::infinity();
  const Literal a = Matrix(PrimitiveType::kF32, 1, 2, {inf, 1.0f});
  const Literal b = Matrix(PrimitiveType::kF32, 2, 1, {2.0f, 0.0f});
  for (SimdLevel level : Levels()) {
    EXPECT_EQ(Fast(a, b, 1, 2, 1, kHighest, level)[0], inf);
    EXPECT_EQ(Bits(Fast(a, b, 1, 2, 1, kDefault, level)[0]), Bits(inf));
  }
}

TEST(MxuMatMul, NanResultsAreTheCanonicalQuietNan) {
  // inf * 0 gives x86's default NaN (0xFFC00000); a NaN input may carry a sign.
  const float inf = std::numeric_limits<float>::infinity();
  const Literal a = Matrix(PrimitiveType::kF32, 2, 1, {inf, -std::numeric_limits<float>::quiet_NaN()});
  const Literal b = Matrix(PrimitiveType::kF32, 1, 1, {0.0f});
  for (SimdLevel level : Levels()) {
    const std::vector<float> r = Fast(a, b, 2, 1, 1, kDefault, level);
    EXPECT_EQ(Bits(r[0]), 0x7FC0'0000u);
    EXPECT_EQ(Bits(r[1]), 0x7FC0'0000u);
  }
}

TEST(MxuMatMul, EmptyContractionIsPositiveZero) {
  const Literal a(hlo::Shape(PrimitiveType::kF32, {2, 0}));
  const Literal b(hlo::Shape(PrimitiveType::kF32, {0, 3}));
  for (SimdLevel level : Levels()) {
    for (float x : Fast(a, b, 2, 0, 3, kHighest, level)) EXPECT_EQ(Bits(x), 0u);
  }
}

TEST(MxuMatMul, BatchesAndTransposedOperandsFollowTheOffsetsOnAnyNumberOfThreads) {
  // lhs stored [batch][k][m] (transposed), rhs [batch][n][k]; compared with
  // the reference on each batch's row-major copies. 19 columns are two rhs
  // panels (16 and 3), so the threads' shares of the 6 panels split batches
  // unevenly; 101 rows are two cache blocks of lhs rows (96 and 5); 0
  // threads is the product's own choice.
  const int batches = 3, m = 101, k = 140, n = 19;
  const std::vector<float> lhs_values = Values(size_t(batches) * k * m, 11, 0.05);
  const std::vector<float> rhs_values = Values(size_t(batches) * n * k, 12, 0.05);
  Literal lhs(hlo::Shape(PrimitiveType::kF32, {batches, k, m}));
  Literal rhs(hlo::Shape(PrimitiveType::kF32, {batches, n, k}));
  std::copy(lhs_values.begin(), lhs_values.end(), lhs.data<float>().begin());
  std::copy(rhs_values.begin(), rhs_values.end(), rhs.data<float>().begin());
  std::vector<int64_t> lhs_b, rhs_b, lhs_rows, lhs_k, rhs_rows, rhs_k;
  for (int bi = 0; bi < batches; ++bi) {
    lhs_b.push_back(int64_t{bi} * k * m);
    rhs_b.push_back(int64_t{bi} * n * k);
  }
  for (int i = 0; i < m; ++i) lhs_rows.push_back(i);
  for (int kk = 0; kk < k; ++kk) {
    lhs_k.push_back(int64_t{kk} * m);
    rhs_k.push_back(kk);
  }
  for (int j = 0; j < n; ++j) rhs_rows.push_back(int64_t{j} * k);
  std::vector<float> expected;
  for (int bi = 0; bi < batches; ++bi) {
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n);
    for (int i = 0; i < m; ++i) {
      for (int kk = 0; kk < k; ++kk) a[i * k + kk] = lhs_values[(size_t(bi) * k + kk) * m + i];
    }
    for (int kk = 0; kk < k; ++kk) {
      for (int j = 0; j < n; ++j) b[kk * n + j] = rhs_values[(size_t(bi) * n + j) * k + kk];
    }
    const std::vector<float> r = Reference(a, b, m, k, n, kHigh);
    expected.insert(expected.end(), r.begin(), r.end());
  }
  for (SimdLevel level : Levels()) {
    for (int threads : {0, 1, 2, 4, 5, 7}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads");
      std::vector<float> result(expected.size());
      MxuMatMul({&lhs, lhs_b, lhs_rows, lhs_k}, {&rhs, rhs_b, rhs_rows, rhs_k}, kHigh, level,
                result, threads);
      ExpectBitEqual(expected, result, n, "batched");
    }
  }
}

TEST(MxuMatMul, ConcurrentProductsOnManyThreadsAreExact) {
  // Eight threads at once (an SPMD run's devices), each packing 10 MiB of
  // panels: more than all threads together may keep (64 MiB), so some
  // products pack into kept buffers and others into fresh ones. Each must
  // give the bits the same product gives alone (which the tests above
  // compare with the documented order).
  const int m = 4, k = 131072, n = 16;
  std::vector<Literal> lhs, rhs;
  for (int t = 0; t < 8; ++t) {
    lhs.push_back(Matrix(PrimitiveType::kF32, m, k, Values(size_t(m) * k, 100 + t, 0.01)));
    rhs.push_back(Matrix(PrimitiveType::kF32, k, n, Values(size_t(k) * n, 200 + t, 0.01)));
  }
  std::vector<std::vector<float>> concurrent(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back(
        [&, t] { concurrent[t] = Fast(lhs[t], rhs[t], m, k, n, kHigh, BestSimdLevel()); });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 8; ++t) {
    SCOPED_TRACE(::testing::Message() << "thread " << t);
    ExpectBitEqual(Fast(lhs[t], rhs[t], m, k, n, kHigh, BestSimdLevel()), concurrent[t], n,
                   "concurrent");
  }
}

TEST(MxuMatMul, BestLevelIsSupported) { EXPECT_TRUE(CpuSupports(BestSimdLevel())); }

}  // namespace
}  // namespace tpusim::eval
