// Speed of the MXU tile models on the same tiles: the C++ tile model
// (eval::AnalyticMxuTile, the loop the fast kernel is checked against), the
// fast kernel (MxuMatMul, what `--mxu analytic` runs) and the Verilated RTL
// array (rtl::RtlMxuTile, `--mxu rtl`). Each iteration multiplies one k x n
// weight tile (k = n = the array size) by m = 128 streamed bf16 rows;
// items/s counts multiply-adds. docs/performance.md records the ratios.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "sim/eval/mxu_matmul.h"
#include "sim/eval/mxu_tile.h"
#include "sim/rtl/rtl_mxu_tile.h"
#include "sim/value/float_formats.h"
#include "sim/value/literal.h"

namespace {

using tpusim::eval::MxuTileShape;

constexpr int64_t kRows = 128;

/// bf16 values in [-1, 1), deterministic.
std::vector<float> Values(int64_t count, uint32_t seed) {
  std::vector<float> values;
  for (int64_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    const float x = static_cast<float>(seed >> 8) / 8388608.0f - 1.0f;
    values.push_back(tpusim::value::Bf16ToFloat(tpusim::value::Bf16FromFloat(x)));
  }
  return values;
}

void RunTiles(benchmark::State& state, tpusim::eval::MxuTileEngine& engine) {
  const int64_t size = state.range(0);
  const MxuTileShape shape{kRows, size, size};
  const std::vector<float> weights = Values(size * size, 1), activations = Values(kRows * size, 2);
  std::vector<float> sums(static_cast<size_t>(kRows * size));
  for (auto _ : state) {
    std::fill(sums.begin(), sums.end(), -0.0f);
    engine.MultiplyBf16(shape, weights, activations, false, sums);
    benchmark::DoNotOptimize(sums.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows * size * size);
}

void BM_AnalyticTile(benchmark::State& state) {
  tpusim::eval::AnalyticMxuTile engine;
  RunTiles(state, engine);
}

void BM_RtlTile(benchmark::State& state) {
  tpusim::rtl::RtlMxuTile engine(static_cast<int>(state.range(0)));
  RunTiles(state, engine);
}

/// The same product through the fast kernel, as `--mxu analytic` runs it.
void BM_FastKernel(benchmark::State& state) {
  const int64_t size = state.range(0);
  tpusim::value::Literal a(tpusim::hlo::Shape(tpusim::hlo::PrimitiveType::kBF16, {kRows, size}));
  tpusim::value::Literal b(tpusim::hlo::Shape(tpusim::hlo::PrimitiveType::kBF16, {size, size}));
  const std::vector<float> av = Values(kRows * size, 2), bv = Values(size * size, 1);
  for (int64_t i = 0; i < a.element_count(); ++i) a.SetFromDouble(i, av[static_cast<size_t>(i)]);
  for (int64_t i = 0; i < b.element_count(); ++i) b.SetFromDouble(i, bv[static_cast<size_t>(i)]);
  std::vector<int64_t> batch = {0}, a_rows, a_k, b_rows, b_k;
  for (int64_t i = 0; i < kRows; ++i) a_rows.push_back(i * size);
  for (int64_t k = 0; k < size; ++k) {
    a_k.push_back(k);
    b_k.push_back(k * size);
    b_rows.push_back(k);
  }
  const std::vector<tpusim::eval::MxuPass> passes = {{0, 0}};
  std::vector<float> result(static_cast<size_t>(kRows * size));
  for (auto _ : state) {
    tpusim::eval::MxuMatMul({&a, batch, a_rows, a_k}, {&b, batch, b_rows, b_k}, passes,
                            tpusim::eval::BestSimdLevel(), result);
    benchmark::DoNotOptimize(result.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows * size * size);
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int size : tpusim::rtl::MxuArraySizes()) b->Arg(size);
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_FastKernel)->Apply(Sizes);
BENCHMARK(BM_AnalyticTile)->Apply(Sizes);
BENCHMARK(BM_RtlTile)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();
