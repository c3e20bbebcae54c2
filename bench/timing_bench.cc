// Speed of the timing model: simulated instructions per second on corpus
// modules, with the transaction-level engine (timing::SimulateBatch) or with
// the same work on per-cycle clocked SystemC processes (--clocked), which
// checks that both reach the same cycle count.
//
//   timing_bench [--chip NAME] [--repeat N] [--clocked] [--table] MODULE.hlo...
//
// SystemC runs once per process, so each invocation times one engine: the
// TLM run batches every module `repeat` times into one SimulateBatch; the
// clocked run builds one clocked core per module. Lowering (HLO to unit work,
// no SystemC) is timed separately. See docs/performance.md.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/clocked_engine.h"
#include "sim/arch/preset_loader.h"
#include "sim/base/file.h"
#include "sim/hlo/parser.h"
#include "sim/timing/program.h"
#include "sim/timing/report.h"
#include "sim/timing/timing.h"

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "timing_bench: %s\n", message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tpusim;
  std::string chip_name = "tpu-v5e";
  int repeat = 10;
  bool clocked = false;
  bool table = false;  // print each module's op profile after the TLM run
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--chip" && i + 1 < argc) {
      chip_name = argv[++i];
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (a == "--clocked") {
      clocked = true;
    } else if (a == "--table") {
      table = true;
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty() || repeat < 1)
    return Fail(
        "usage: timing_bench [--chip NAME] [--repeat N] [--clocked] [--table] MODULE.hlo...");
  auto chip = arch::LoadChipPreset(chip_name, TPUSIM_MODELS_DIR);
  if (!chip.ok()) return Fail(std::string(chip.status().message()));

  std::vector<std::unique_ptr<hlo::HloModule>> modules;
  for (const std::string& p : paths) {
    auto text = ReadFile(p);
    if (!text.ok()) return Fail(std::string(text.status().message()));
    auto m = hlo::ParseHloModule(*text, p);
    if (!m.ok()) return Fail(std::string(m.status().message()));
    modules.push_back(std::move(*m));
  }

  std::printf("%-45s %10s %12s\n", "module", "steps", "lower us");
  std::vector<timing::Program> programs;
  for (const auto& m : modules) {
    const auto t0 = std::chrono::steady_clock::now();
    constexpr int kLowerings = 20;
    for (int i = 0; i < kLowerings; ++i) {
      auto p = timing::LowerModule(*m, *chip, {});
      if (!p.ok()) return Fail(std::string(p.status().message()));
      if (i == 0) programs.push_back(std::move(*p));
    }
    const double lower_us = Seconds(t0) / kLowerings * 1e6;
    std::printf("%-45.45s %10zu %12.1f\n", m->name().c_str(), programs.back().steps.size(),
                lower_us);
  }

  if (clocked) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int64_t> cycles = bench::RunClocked(programs, *chip);
    const double s = Seconds(t0);
    int64_t steps = 0;
    int64_t total_cycles = 0;
    for (size_t i = 0; i < programs.size(); ++i) {
      steps += static_cast<int64_t>(programs[i].steps.size());
      total_cycles += cycles[i];
      std::printf("clocked %-37.37s %14lld cycles\n", modules[i]->name().c_str(),
                  static_cast<long long>(cycles[i]));
    }
    std::printf(
        "clocked engine: %lld instructions, %lld cycles in %.3f s: %.0f instructions/s, %.3g "
        "cycles/s\n",
        static_cast<long long>(steps), static_cast<long long>(total_cycles), s, steps / s,
        total_cycles / s);
    return 0;
  }

  std::vector<timing::SimulationJob> jobs;
  for (int r = 0; r < repeat; ++r) {
    for (const auto& m : modules) jobs.push_back({m.get(), &*chip, {}});
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto timed = timing::SimulateBatch(jobs);
  const double s = Seconds(t0);
  std::vector<timing::TimingResult> results;
  for (const auto& r : timed) {
    if (!r.ok()) return Fail(std::string(r.status().message()));
    results.push_back(*r);
  }
  int64_t steps = 0;
  for (const auto& r : results) steps += static_cast<int64_t>(r.ops.size());
  for (size_t i = 0; i < modules.size(); ++i) {
    std::printf("tlm %-41.41s %14lld cycles\n", modules[i]->name().c_str(),
                static_cast<long long>(results[i].cycles));
    if (table) std::printf("%s\n", timing::FormatOpTable(results[i], 12).c_str());
  }
  std::printf(
      "tlm engine (lowering included): %zu runs, %lld instructions in %.3f s: %.0f "
      "instructions/s\n",
      jobs.size(), static_cast<long long>(steps), s, steps / s);
  return 0;
}
