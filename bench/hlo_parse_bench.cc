// Speed and memory of the HLO text frontend on the four largest corpus modules:
// parse, print and verify, one benchmark per module and stage.
//
// Reports bytes_per_second of HLO text (the file's size, for every stage), and
// for parsing the heap it needs: `peak_heap_ratio` is the most heap held at any
// moment during one parse divided by the file size (the text itself is not
// counted: the caller owns it), `module_heap_ratio` what the finished module
// keeps. Targets (issue 2): at least 100 MB/s on one core, peak below 10x.
//
//   <build>/bin/hlo_parse_bench [--benchmark_filter=Parse]
//
// Heap is measured by replacing the global operator new/delete of this program
// with counting wrappers (malloc_usable_size gives each block's size). The
// counters are plain integers: the benchmarks run on one thread.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "sim/base/file.h"
#include "sim/hlo/parser.h"
#include "sim/hlo/printer.h"
#include "sim/hlo/verifier.h"

// --- heap accounting ---------------------------------------------------------

namespace {

/// Bytes of heap currently held through operator new, and the most since the
/// last ResetPeak().
int64_t g_heap_current = 0;
int64_t g_heap_peak = 0;

void* CountedAlloc(std::size_t size, std::size_t alignment) {
  if (size == 0) size = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(size);
  } else if (posix_memalign(&p, alignment, size) != 0) {
    p = nullptr;
  }
  if (p != nullptr) {
    g_heap_current += static_cast<int64_t>(malloc_usable_size(p));
    g_heap_peak = std::max(g_heap_peak, g_heap_current);
  }
  return p;
}

void CountedFree(void* p) noexcept {
  if (p == nullptr) return;
  g_heap_current -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

void* CountedAllocOrThrow(std::size_t size, std::size_t alignment) {
  void* p = CountedAlloc(size, alignment);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return CountedAllocOrThrow(n, 0); }
void* operator new[](std::size_t n) { return CountedAllocOrThrow(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) {
  return CountedAllocOrThrow(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return CountedAllocOrThrow(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return CountedAlloc(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return CountedAlloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return CountedAlloc(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return CountedAlloc(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { CountedFree(p); }
void operator delete[](void* p) noexcept { CountedFree(p); }
void operator delete(void* p, std::size_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::size_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { CountedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { CountedFree(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { CountedFree(p); }

// --- benchmarks --------------------------------------------------------------

namespace tpusim::hlo {
namespace {

namespace fs = std::filesystem;

/// One corpus module held in memory.
struct Module {
  std::string name;  ///< file name, e.g. keras_dlrm_train_step.hlo
  std::string path;  ///< for parse error messages
  std::string text;
};

/// The `count` largest .hlo files of the corpus, largest first.
std::vector<Module> LargestModules(size_t count) {
  std::vector<std::pair<uintmax_t, fs::path>> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(TPUSIM_CORPUS_DIR, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".hlo") files.emplace_back(e.file_size(), e.path());
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<Module> modules;
  for (size_t i = 0; i < files.size() && i < count; ++i) {
    StatusOr<std::string> text = ReadFile(files[i].second.string());
    if (!text.ok()) continue;
    modules.push_back({files[i].second.filename().string(), files[i].second.string(), std::move(*text)});
  }
  return modules;
}

std::unique_ptr<HloModule> ParseOrNull(const Module& m, benchmark::State& state) {
  StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(m.text, m.path);
  if (!parsed.ok()) {
    state.SkipWithError(parsed.status().message().c_str());
    return nullptr;
  }
  return std::move(parsed).value();
}

/// Rates are bytes of HLO text per second, whatever the benchmark does with it.
void SetFileBytesProcessed(benchmark::State& state, const Module& m) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(m.text.size()));
}

void BM_Parse(benchmark::State& state, const Module& m) {
  // Heap of one parse, measured once outside the timed loop.
  const int64_t before = g_heap_current;
  g_heap_peak = g_heap_current;
  std::unique_ptr<HloModule> module = ParseOrNull(m, state);
  if (module == nullptr) return;
  const int64_t peak = g_heap_peak - before;
  const int64_t kept = g_heap_current - before;
  const int64_t instructions = module->instruction_count();
  module.reset();

  for (auto _ : state) {
    StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(m.text, m.path);
    benchmark::DoNotOptimize(parsed);
    // Parsing is text to IR; freeing the IR is timed separately (ParseAndFree).
    state.PauseTiming();
    if (parsed.ok()) parsed->reset();
    state.ResumeTiming();
  }
  const double size = static_cast<double>(m.text.size());
  SetFileBytesProcessed(state, m);
  state.counters["file_KiB"] = size / 1024;
  state.counters["instructions"] = static_cast<double>(instructions);
  state.counters["peak_heap_ratio"] = static_cast<double>(peak) / size;
  state.counters["module_heap_ratio"] = static_cast<double>(kept) / size;
}

/// Parse plus destroying the module: what a process that parses and exits pays.
void BM_ParseAndFree(benchmark::State& state, const Module& m) {
  for (auto _ : state) {
    StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(m.text, m.path);
    benchmark::DoNotOptimize(parsed);
  }
  SetFileBytesProcessed(state, m);
}

void BM_Print(benchmark::State& state, const Module& m) {
  std::unique_ptr<HloModule> module = ParseOrNull(m, state);
  if (module == nullptr) return;
  size_t printed = 0;
  for (auto _ : state) {
    std::string text = PrintModule(*module);
    printed = text.size();
    benchmark::DoNotOptimize(text);
  }
  SetFileBytesProcessed(state, m);
  state.counters["printed_ratio"] = static_cast<double>(printed) / static_cast<double>(m.text.size());
}

void BM_Verify(benchmark::State& state, const Module& m) {
  std::unique_ptr<HloModule> module = ParseOrNull(m, state);
  if (module == nullptr) return;
  if (Status s = VerifyModule(*module); !s.ok()) return state.SkipWithError(s.message().c_str());
  for (auto _ : state) {
    Status s = VerifyModule(*module);
    benchmark::DoNotOptimize(s);
  }
  SetFileBytesProcessed(state, m);
}

}  // namespace
}  // namespace tpusim::hlo

int main(int argc, char** argv) {
  using namespace tpusim::hlo;
  // Kept alive until the end: the benchmarks refer to the modules.
  static const std::vector<Module> modules = LargestModules(4);
  if (modules.empty()) {
    std::fprintf(stderr, "hlo_parse_bench: error: no .hlo files in %s\n", TPUSIM_CORPUS_DIR);
    return 2;
  }
  struct Kind {
    const char* prefix;
    void (*run)(benchmark::State&, const Module&);
  };
  for (const Kind& kind : {Kind{"Parse/", BM_Parse}, Kind{"ParseAndFree/", BM_ParseAndFree},
                           Kind{"Print/", BM_Print}, Kind{"Verify/", BM_Verify}}) {
    for (const Module& m : modules) {
      benchmark::RegisterBenchmark((kind.prefix + m.name).c_str(), kind.run, std::cref(m))
          ->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
