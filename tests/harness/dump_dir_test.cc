// Tests of harness/run/dump_dir: which files of an XLA dump directory are
// after-optimizations modules, and what module name each carries.
#include "harness/run/dump_dir.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace tpusim::harness {
namespace {

/// The module name the file name gives, or "(none)".
std::string ModuleOf(const std::string& file_name) {
  const std::optional<DumpFileName> name = ParseDumpFileName(file_name);
  return name.has_value() ? name->module : "(none)";
}

TEST(DumpFileName, PlatformSuffixesAreNotPartOfTheName) {
  EXPECT_EQ(ModuleOf("module_0007.jit_f.tpu_after_optimizations.txt"), "jit_f");
  EXPECT_EQ(ModuleOf("module_0042.jit_train_step.sm_8.0_gpu_after_optimizations.txt"),
            "jit_train_step");
  EXPECT_EQ(ModuleOf("module_0001.jit_f.cpu_after_optimizations.txt"), "jit_f");
  EXPECT_EQ(ModuleOf("module_0001.jit_f.after_optimizations.txt"), "jit_f");
}

TEST(DumpFileName, NamesMayHoldDots) {
  EXPECT_EQ(ModuleOf("module_0003.SyncTensorsGraph.123.tpu_after_optimizations.txt"),
            "SyncTensorsGraph.123");
  EXPECT_EQ(ModuleOf("module_0003.SyncTensorsGraph.123.after_optimizations.txt"),
            "SyncTensorsGraph.123");
}

TEST(DumpFileName, TheNumberIsRead) {
  const std::optional<DumpFileName> name =
      ParseDumpFileName("module_0042.jit_f.tpu_after_optimizations.txt");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->number, 42);
}

TEST(DumpFileName, OtherDumpFilesAreNotModules) {
  EXPECT_EQ(ModuleOf("module_0001.jit_f.tpu_after_optimizations-buffer-assignment.txt"), "(none)");
  EXPECT_EQ(ModuleOf("module_0001.jit_f.tpu_after_optimizations-memory-usage-report.txt"),
            "(none)");
  EXPECT_EQ(ModuleOf("module_0001.jit_f.tpu_before_optimizations.txt"), "(none)");
  EXPECT_EQ(ModuleOf("module_0001.jit_f.0012.layout-assignment.after_pipeline.txt"), "(none)");
  EXPECT_EQ(ModuleOf("module_0001.jit_f.tpu_after_optimizations.hlo.pb"), "(none)");
  EXPECT_EQ(ModuleOf("jit_f.tpu_after_optimizations.txt"), "(none)");
}

TEST(DumpPairing, SeveralModulesOfOneNamePairInOrderAndTheSurplusStandsAlone) {
  const auto module = [](const std::string& name, int64_t number) {
    return DumpModule{{name, number}, name + "." + std::to_string(number)};
  };
  const DumpPairing pairing = PairDumpModules({module("f", 1), module("f", 5), module("g", 2)},
                                              {module("f", 3), module("h", 1)});
  ASSERT_EQ(pairing.pairs.size(), 4u);
  EXPECT_EQ(pairing.pairs[0].label, "f#1");
  EXPECT_EQ(pairing.pairs[0].before->path, "f.1");
  EXPECT_EQ(pairing.pairs[0].after->path, "f.3");
  EXPECT_EQ(pairing.pairs[1].label, "f#2");
  EXPECT_EQ(pairing.pairs[1].before->path, "f.5");
  EXPECT_FALSE(pairing.pairs[1].after.has_value());
  EXPECT_EQ(pairing.pairs[2].label, "g");
  EXPECT_FALSE(pairing.pairs[2].after.has_value());
  EXPECT_EQ(pairing.pairs[3].label, "h");
  EXPECT_FALSE(pairing.pairs[3].before.has_value());
  ASSERT_EQ(pairing.notes.size(), 1u);
  EXPECT_EQ(pairing.notes[0],
            "2 modules named f before, 1 after: paired in module-number order as f#1..f#2");
}

}  // namespace
}  // namespace tpusim::harness
