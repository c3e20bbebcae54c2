// Speed of the evaluator's dot (TPU numerics, bit-exact) against OpenBLAS
// cblas_sgemm on one core, at square sizes 512, 1024 and 2048 (issue 3, point 6).
//
//   <build>/bin/gemm_bench [--benchmark_filter=/1024]
//
// Ours runs a one-instruction HLO module `dot(a, b)` through eval::Evaluator,
// so it includes everything a user pays: splitting into bf16 pieces, packing,
// the kernel and writing the result Literal. Three forms: f32 operands at
// DEFAULT (1 MXU pass) and at HIGHEST (6 passes), and bf16 operands with an
// f32 result (1 pass). Every benchmark counts 2*M*N*K flops, whatever the
// passes do, so GFLOP/s compare the work of the same matrix product;
// `vs_openblas` is the rate divided by the rate of the OpenBLAS benchmark of
// the same size, which runs first (its last repetition). Rates are per CPU
// second of the process, so a product that borrows idle hardware threads
// (MxuMatMul does, above about 2^24 products) is charged for all of them:
// the ratio compares one core's work with one core's. OpenBLAS is pinned to
// one thread.
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/eval/evaluator.h"
#include "sim/hlo/parser.h"
#include "sim/value/literal.h"

namespace tpusim::eval {
namespace {

using hlo::PrimitiveType;
using value::Literal;

/// CPU seconds of the process, every thread's.
double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// GFLOP/s of OpenBLAS per size, set by BM_OpenBlas, read by ours.
std::map<int64_t, double>& OpenBlasRate() {
  static std::map<int64_t, double> rates;
  return rates;
}

double Flops(int64_t n) { return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n); }

/// Deterministic values in [-1, 1) with full f32 mantissas.
std::vector<float> Values(int64_t count, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(count));
  uint32_t state = seed;
  for (float& x : values) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;
  }
  return values;
}

Literal SquareMatrix(PrimitiveType type, int64_t n, uint32_t seed) {
  Literal l(hlo::Shape(type, {n, n}));
  const std::vector<float> values = Values(n * n, seed);
  for (int64_t i = 0; i < n * n; ++i) l.SetFromDouble(i, values[static_cast<size_t>(i)]);
  return l;
}

/// Sets the GFLOP/s counter (and vs_openblas for ours) from the CPU time of
/// the timed loop.
void ReportRate(benchmark::State& state, int64_t n, double cpu_seconds, bool is_openblas) {
  const double rate = Flops(n) * static_cast<double>(state.iterations()) / cpu_seconds * 1e-9;
  state.counters["GFLOP/s"] = rate;
  if (is_openblas) {
    OpenBlasRate()[n] = rate;
  } else if (auto it = OpenBlasRate().find(n); it != OpenBlasRate().end()) {
    state.counters["vs_openblas"] = rate / it->second;
  }
}

void BM_OpenBlas(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<float> a = Values(n * n, 1), b = Values(n * n, 2);
  std::vector<float> c(static_cast<size_t>(n * n));
  const int ni = static_cast<int>(n);
  const double start = ProcessCpuSeconds();
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni,
                b.data(), ni, 0.0f, c.data(), ni);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  ReportRate(state, n, ProcessCpuSeconds() - start, true);
}

/// Our dot on n x n operands of `type` at `precision`, through the evaluator.
void BM_Ours(benchmark::State& state, PrimitiveType type, const char* precision) {
  const int64_t n = state.range(0);
  const std::string t = type == PrimitiveType::kBF16 ? "bf16" : "f32";
  const std::string dims = "[" + std::to_string(n) + "," + std::to_string(n) + "]";
  const std::string text = "HloModule gemm\nENTRY e {\n  a = " + t + dims + " parameter(0)\n  b = " +
                           t + dims + " parameter(1)\n  ROOT d = f32" + dims +
                           " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
                           "operand_precision={" +
                           precision + "," + precision + "}\n}\n";
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(text);
  if (!module.ok()) return state.SkipWithError(module.status().message().c_str());
  const std::vector<Literal> args = {SquareMatrix(type, n, 1), SquareMatrix(type, n, 2)};
  const Evaluator evaluator;
  const double start = ProcessCpuSeconds();
  for (auto _ : state) {
    StatusOr<Literal> out = evaluator.Evaluate(**module, args);
    if (!out.ok()) return state.SkipWithError(out.status().message().c_str());
    benchmark::DoNotOptimize(out);
  }
  ReportRate(state, n, ProcessCpuSeconds() - start, false);
}

}  // namespace
}  // namespace tpusim::eval

int main(int argc, char** argv) {
  using namespace tpusim::eval;
  openblas_set_num_threads(1);
  for (int64_t n : {512, 1024, 2048}) {
    benchmark::RegisterBenchmark("OpenBlasSgemm", BM_OpenBlas)
        ->Arg(n)
        ->Unit(benchmark::kMillisecond);
    struct Form {
      const char* name;
      tpusim::hlo::PrimitiveType type;
      const char* precision;
    };
    for (const Form& form : {Form{"DotF32Default", tpusim::hlo::PrimitiveType::kF32, "default"},
                             Form{"DotF32Highest", tpusim::hlo::PrimitiveType::kF32, "highest"},
                             Form{"DotBf16", tpusim::hlo::PrimitiveType::kBF16, "default"}}) {
      benchmark::RegisterBenchmark(form.name, BM_Ours, form.type, form.precision)
          ->Arg(n)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
