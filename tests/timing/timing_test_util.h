// Helpers for timing tests: parse inline HLO, load presets by name, find an
// instruction's record.
#ifndef TPUSIM_TESTS_TIMING_TIMING_TEST_UTIL_H_
#define TPUSIM_TESTS_TIMING_TIMING_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/arch/chip_config.h"
#include "sim/arch/preset_loader.h"
#include "sim/hlo/module.h"
#include "sim/hlo/parser.h"
#include "sim/timing/timing.h"

namespace tpusim::timing {

inline std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(*m) : nullptr;
}

inline arch::ChipConfig Preset(const std::string& name,
                               const std::vector<std::string>& overrides = {}) {
  auto c = arch::LoadChipPreset(name, TPUSIM_MODELS_DIR, overrides);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : arch::ChipConfig{};
}

/// `name` as the roofline machine the scaling book analyses [SB]: the
/// mechanisms calibrated on silicon (docs/validation.md) switched off, i.e.
/// HBM at its published peak, no pipeline ends or steps, no program launch,
/// f16 free of conversions and extra passes; then `overrides`.
inline arch::ChipConfig IdealPreset(const std::string& name,
                                    const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> all = {"hbm.efficiency_percent=100", "vmem.pipeline_block=0B",
                                  "overhead.pipeline_step=0",      "overhead.program_launch=0",
                                  "vpu.f16_load_ops=0",            "vpu.f16_store_ops=0",
                                  "mxu.f16_passes=0",              "ici.efficiency_percent=100",
                                  "ici.collective_latency=0us"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return Preset(name, all);
}

/// SimulateBatch's results when every job was timed, else the first job's
/// error: for tests whose jobs must all run.
inline StatusOr<std::vector<TimingResult>> AllTimed(std::vector<StatusOr<TimingResult>> batch) {
  std::vector<TimingResult> results;
  for (StatusOr<TimingResult>& r : batch) {
    if (!r.ok()) return r.status();
    results.push_back(std::move(*r));
  }
  return results;
}

/// A scalar f32 add, the to_apply of the reductions in test modules.
inline constexpr char kAdd[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

/// The instruction of `module` named `name` (the first, in computation
/// order), or nullptr.
inline const hlo::HloInstruction* Named(const hlo::HloModule& module, const std::string& name) {
  for (const auto& computation : module.computations()) {
    for (const auto& inst : computation->instructions()) {
      if (inst->name() == name) return inst.get();
    }
  }
  return nullptr;
}

/// The record of instruction `name` in `ops` (a test failure when absent).
inline const OpRecord& Op(const std::vector<OpRecord>& ops, const std::string& name) {
  for (const OpRecord& op : ops) {
    if (op.instruction->name() == name) return op;
  }
  ADD_FAILURE() << "no op " << name;
  static const OpRecord none;
  return none;
}

/// The preset names in models/.
inline std::vector<std::string> PresetNames() {
  auto names = arch::ListPresets(TPUSIM_MODELS_DIR);
  EXPECT_TRUE(names.ok());
  return names.ok() ? *names : std::vector<std::string>{};
}

}  // namespace tpusim::timing

#endif  // TPUSIM_TESTS_TIMING_TIMING_TEST_UTIL_H_
