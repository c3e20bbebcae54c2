// Throughput of the evaluator's elementwise kernels (issue 3, point 6): a loop
// fusion computing tanh(exp(x * y + x)) over two arrays of 2^22 elements, in
// f32 and in bf16, run through eval::Evaluator as a program would be.
//
//   <build>/bin/elementwise_bench
//
// bytes_per_second counts the fusion's boundary traffic, as an accelerator's
// HBM would see it: two operands read and one result written, each
// 2^22 elements of the element type. Every intermediate array of the fused
// computation is materialised by the evaluator but not counted. Rates are per
// CPU second (Google Benchmark's default).
#include <benchmark/benchmark.h>

#include <cstdint>
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

constexpr int64_t kElements = int64_t{1} << 22;

/// The fusion over arrays of `type` ("f32" or "bf16").
std::string ChainHlo(const std::string& type) {
  const std::string s = type + "[" + std::to_string(kElements) + "]";
  return "HloModule chain\n"
         "fused (p0: " + s + ", p1: " + s + ") -> " + s + " {\n"
         "  p0 = " + s + " parameter(0)\n"
         "  p1 = " + s + " parameter(1)\n"
         "  m = " + s + " multiply(p0, p1)\n"
         "  a = " + s + " add(m, p0)\n"
         "  e = " + s + " exponential(a)\n"
         "  ROOT t = " + s + " tanh(e)\n"
         "}\n"
         "ENTRY e {\n"
         "  x = " + s + " parameter(0)\n"
         "  y = " + s + " parameter(1)\n"
         "  ROOT f = " + s + " fusion(x, y), kind=kLoop, calls=fused\n"
         "}\n";
}

/// Deterministic values in [-2, 2), so exp neither overflows nor flushes.
Literal Operand(PrimitiveType type, uint32_t seed) {
  Literal l(hlo::Shape(type, {kElements}));
  uint32_t state = seed;
  for (int64_t i = 0; i < kElements; ++i) {
    state = state * 1664525u + 1013904223u;
    l.SetFromDouble(i, static_cast<double>(state >> 8) / 4194304.0 - 2.0);
  }
  return l;
}

void BM_Chain(benchmark::State& state, PrimitiveType type) {
  const std::string name = type == PrimitiveType::kBF16 ? "bf16" : "f32";
  StatusOr<std::unique_ptr<hlo::HloModule>> module = hlo::ParseHloModule(ChainHlo(name));
  if (!module.ok()) return state.SkipWithError(module.status().message().c_str());
  const std::vector<Literal> args = {Operand(type, 1), Operand(type, 2)};
  const Evaluator evaluator;
  for (auto _ : state) {
    StatusOr<Literal> out = evaluator.Evaluate(**module, args);
    if (!out.ok()) return state.SkipWithError(out.status().message().c_str());
    benchmark::DoNotOptimize(out);
  }
  const int64_t element_bytes = type == PrimitiveType::kBF16 ? 2 : 4;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 3 * kElements * element_bytes);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kElements);
}

}  // namespace
}  // namespace tpusim::eval

int main(int argc, char** argv) {
  using namespace tpusim::eval;
  benchmark::RegisterBenchmark("FusedMulAddExpTanh/f32", BM_Chain, tpusim::hlo::PrimitiveType::kF32)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("FusedMulAddExpTanh/bf16", BM_Chain, tpusim::hlo::PrimitiveType::kBF16)
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
