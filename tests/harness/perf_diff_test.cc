// The performance comparison of `tpusim diff`: per-instruction costs paired
// through the structural matching, sorted by time change; totals including
// collective bytes; percent changes.
#include "harness/diff/perf_diff.h"

#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <string_view>

#include "sim/hlo/parser.h"
#include "tests/hlo/find_instruction.h"

namespace tpusim::harness {
namespace {

constexpr char kModule[] = R"(HloModule m, replica_count=2

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[256]) -> f32[256] {
  %p = f32[256]{0} parameter(0)
  %n = f32[256]{0} negate(%p)
  %negate.2 = f32[256]{0} negate(%n)
  %copy.1 = f32[256]{0} copy(%negate.2)
  ROOT %ar = f32[256]{0} all-reduce(%copy.1), replica_groups={{0,1}}, to_apply=%add
}
)";

// The records of one module stand for both runs; `matched` pairs them.
timing::OpRecord Op(const hlo::HloModule& module, std::string_view name, int64_t cycles,
                    int64_t hbm_bytes) {
  timing::OpRecord op;
  op.instruction = test::FindInstruction(module, name);
  op.cycles = cycles;
  op.hbm_bytes = hbm_bytes;
  return op;
}

TEST(ComparePerformance, PairsInstructionsThroughTheMatchingAndSortsByTimeChange) {
  const auto module = hlo::ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status().message();
  timing::TimingResult before;
  before.cycles = 300;
  before.time_us = 3;
  before.hbm_bytes = 2048;
  const hlo::HloModule& m = **module;
  before.ops = {Op(m, "n", 100, 2048), Op(m, "ar", 200, 0)};
  timing::TimingResult after = before;
  after.cycles = 900;
  after.time_us = 9;
  after.hbm_bytes = 4096;
  // Renamed negate, twice in a loop; a new copy; the all-reduce unchanged.
  after.ops = {Op(m, "negate.2", 150, 1024), Op(m, "negate.2", 150, 1024),
               Op(m, "copy.1", 400, 2048), Op(m, "ar", 200, 0)};
  const hlo::HloInstruction* n = test::FindInstruction(m, "n");
  const hlo::HloInstruction* negate = test::FindInstruction(m, "negate.2");
  const hlo::HloInstruction* copy = test::FindInstruction(m, "copy.1");
  const hlo::HloInstruction* ar = test::FindInstruction(m, "ar");
  const std::map<const hlo::HloInstruction*, const hlo::HloInstruction*> matched = {
      {n, negate}, {ar, ar}};

  const PerformanceDiff diff = ComparePerformance(before, after, matched);
  ASSERT_EQ(diff.instructions.size(), 3u);
  EXPECT_EQ(diff.instructions[0].after, copy);  // +400 cycles, added
  EXPECT_EQ(diff.instructions[0].before, nullptr);
  EXPECT_EQ(diff.instructions[0].delta_cycles(), 400);
  EXPECT_EQ(diff.instructions[1].before, n);  // +200 cycles over both executions
  EXPECT_EQ(diff.instructions[1].after, negate);
  EXPECT_EQ(diff.instructions[1].after_cycles, 300);
  EXPECT_EQ(diff.instructions[1].delta_hbm_bytes(), 0);
  EXPECT_EQ(diff.instructions[2].before, ar);
  EXPECT_EQ(diff.instructions[2].delta_cycles(), 0);

  EXPECT_EQ(diff.before.cycles, 300);
  EXPECT_EQ(diff.after.hbm_bytes, 4096);
  // The executed all-reduce delivers f32[256]: 1 KiB. ICI bytes are not modelled.
  EXPECT_EQ(diff.before.collective_bytes, 1024);
  EXPECT_FALSE(diff.before.ici_bytes.has_value());
}

// Names are unique only within a computation: a loop body's %n and the
// entry's %n are two instructions, each with its own cost and match (by
// name, their cycles were summed into one row and paired once).
TEST(ComparePerformance, InstructionsOfOneNameInTwoComputationsStayApart) {
  const auto module = hlo::ParseHloModule(R"(HloModule m

%body (x: f32[64]) -> f32[64] {
  %x = f32[64]{0} parameter(0)
  ROOT %n = f32[64]{0} negate(%x)
}

ENTRY %main (p: f32[64]) -> f32[64] {
  %p = f32[64]{0} parameter(0)
  %c = f32[64]{0} call(%p), to_apply=%body
  ROOT %n = f32[64]{0} negate(%c)
}
)");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const hlo::HloInstruction* in_body = (*module)->FindComputation("body")->root();
  const hlo::HloInstruction* in_entry = (*module)->entry()->root();
  ASSERT_NE(in_body, in_entry);
  const auto op = [](const hlo::HloInstruction* instruction, int64_t cycles) {
    timing::OpRecord record;
    record.instruction = instruction;
    record.cycles = cycles;
    return record;
  };
  timing::TimingResult before;
  before.ops = {op(in_body, 10), op(in_entry, 20)};
  timing::TimingResult after;
  after.ops = {op(in_body, 10), op(in_entry, 50)};
  const std::map<const hlo::HloInstruction*, const hlo::HloInstruction*> matched = {
      {in_body, in_body}, {in_entry, in_entry}};

  const PerformanceDiff diff = ComparePerformance(before, after, matched);
  ASSERT_EQ(diff.instructions.size(), 2u);
  EXPECT_EQ(diff.instructions[0].before, in_entry);  // +30 cycles
  EXPECT_EQ(diff.instructions[0].delta_cycles(), 30);
  EXPECT_EQ(diff.instructions[1].before, in_body);
  EXPECT_EQ(diff.instructions[1].delta_cycles(), 0);
}

TEST(PercentChange, IsRelativeToBefore) {
  EXPECT_DOUBLE_EQ(PercentChange(200, 250), 25.0);
  EXPECT_DOUBLE_EQ(PercentChange(200, 150), -25.0);
  EXPECT_DOUBLE_EQ(PercentChange(0, 0), 0.0);
  EXPECT_EQ(PercentChange(0, 5), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace tpusim::harness
