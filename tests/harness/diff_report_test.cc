// The verdict and report of `tpusim diff` at scale: one headline clause per
// output whatever the device count, and ulps only where they mean something.
#include "harness/diff/diff_report.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/hlo/parser.h"

namespace tpusim::harness {
namespace {

/// One compared output of 3,141 elements, `beyond` of them beyond tolerance.
OutputComparison Output(const std::string& name, int64_t beyond, double max_abs, uint64_t max_ulp) {
  OutputComparison o;
  o.name = name;
  o.before_shape = o.after_shape = "f32[3141]";
  o.compared = true;
  o.elements = 3141;
  o.differing = beyond;
  o.beyond_tolerance = beyond;
  o.max_abs_error = max_abs;
  o.max_rel_error = max_abs / 2;
  o.max_ulp = max_ulp;
  return o;
}

/// A values-only report of these outputs.
DiffReport Values(std::vector<OutputComparison> outputs) {
  DiffReport report;
  report.values_run = true;
  report.outputs = std::move(outputs);
  return report;
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(DiffReport, EightDevicesOutputsAreOneHeadlineClause) {
  std::vector<OutputComparison> outputs;
  for (int d = 0; d < 8; ++d) {
    const std::string device = "device_" + std::to_string(d) + "/";
    outputs.push_back(Output(device + "output_0", 2000 + d, 0.1 * (d + 1), 2'080'527'360));
    outputs.push_back(Output(device + "output_1", 0, 0, 0));
  }
  const DiffReport report = Values(outputs);
  const Verdict verdict = Judge(report, DiffSpec{});
  EXPECT_TRUE(verdict.failed);
  // The elements beyond tolerance summed over devices, the worst error of any.
  EXPECT_NE(
      verdict.headline.find(
          "output_0 on 8/8 devices: 16,028 of 25,128 elements beyond tolerance (max abs 0.8,"),
      std::string::npos)
      << verdict.headline;
  EXPECT_EQ(Occurrences(verdict.headline, "output_0"), 1u) << verdict.headline;
  EXPECT_EQ(verdict.headline.find("output_1"), std::string::npos) << verdict.headline;
  EXPECT_EQ(verdict.headline.find("device_"), std::string::npos) << verdict.headline;
  EXPECT_LT(verdict.headline.size(), 200u) << verdict.headline;

  // Each device keeps its row in the numerics section.
  std::ostringstream out;
  PrintDiffReport(report, verdict, DiffSpec{}, out);
  for (int d = 0; d < 8; ++d) {
    EXPECT_NE(out.str().find("device_" + std::to_string(d) + "/output_0"), std::string::npos)
        << out.str();
  }
}

TEST(DiffReport, OutputsFailingOnSomeDevicesSayHowMany) {
  const DiffReport report =
      Values({Output("device_0/output_0", 5, 0.5, 9), Output("device_1/output_0", 0, 0, 0),
              Output("device_2/output_0", 7, 0.25, 12), Output("device_3/output_0", 0, 0, 0)});
  const Verdict verdict = Judge(report, DiffSpec{});
  EXPECT_NE(verdict.headline.find("output_0 on 2/4 devices: 12 of 6,282 elements beyond"),
            std::string::npos)
      << verdict.headline;
}

TEST(DiffReport, OutputCountNotesOfEveryDeviceAreOneHeadlineClause) {
  DiffReport report = Values({});
  for (int d = 0; d < 4; ++d) {
    report.output_count_notes.push_back("device_" + std::to_string(d) +
                                        "/outputs: 2 before, 3 after");
  }
  const Verdict verdict = Judge(report, DiffSpec{});
  EXPECT_TRUE(verdict.failed);
  EXPECT_NE(verdict.headline.find("outputs: 2 before, 3 after on 4 devices"), std::string::npos)
      << verdict.headline;
  EXPECT_EQ(Occurrences(verdict.headline, "before, 3 after"), 1u) << verdict.headline;
}

TEST(DiffReport, UlpsAreInWordsAndOnlyWhereTheyMeanSomething) {
  // Close values: a distance in ulps says how close.
  const DiffReport close = Values({Output("output_0", 3, 2e-7, 12)});
  const Verdict close_verdict = Judge(close, DiffSpec{});
  EXPECT_NE(close_verdict.headline.find("output_0: 3 of 3,141 elements beyond tolerance (max abs "
                                        "2e-07, max rel 1e-07, within 12 ulp)"),
            std::string::npos)
      << close_verdict.headline;
  std::ostringstream close_out;
  PrintDiffReport(close, close_verdict, DiffSpec{}, close_out);
  EXPECT_NE(close_out.str().find("within 12 ulp"), std::string::npos) << close_out.str();

  // Wrong values: billions of ulps mean nothing; the absolute and relative
  // errors stand alone.
  const DiffReport wrong = Values({Output("output_0", 3, 0.712, 2'080'527'360)});
  const Verdict wrong_verdict = Judge(wrong, DiffSpec{});
  EXPECT_EQ(wrong_verdict.headline.find("ulp"), std::string::npos) << wrong_verdict.headline;
  EXPECT_NE(wrong_verdict.headline.find("max abs 0.712"), std::string::npos)
      << wrong_verdict.headline;
  std::ostringstream wrong_out;
  PrintDiffReport(wrong, wrong_verdict, DiffSpec{}, wrong_out);
  EXPECT_EQ(wrong_out.str().find("2080527360"), std::string::npos) << wrong_out.str();
  EXPECT_EQ(wrong_out.str().find("2,080,527,360"), std::string::npos) << wrong_out.str();
  EXPECT_EQ(wrong_out.str().find("within"), std::string::npos) << wrong_out.str();
}

// The headline names the devices compared; the numerics section gives why.
// NaN on one side only has no size of error: the headline counts those
// elements and gives the errors of the others, if any.
TEST(DiffReport, NanMismatchesAreNamedInTheHeadline) {
  OutputComparison nan = Output("output_0", 127, 0, 0);
  nan.nan_mismatches = 127;
  nan.max_ulp.reset();
  const Verdict all_nan = Judge(Values({nan}), DiffSpec{});
  EXPECT_TRUE(all_nan.failed);
  EXPECT_NE(all_nan.headline.find(
                "output_0: 127 of 3,141 elements beyond tolerance (127 NaN against a number)"),
            std::string::npos)
      << all_nan.headline;
  OutputComparison some = Output("output_0", 130, 0.5, 2'080'527'360);
  some.nan_mismatches = 127;
  const Verdict mixed = Judge(Values({some}), DiffSpec{});
  EXPECT_NE(mixed.headline.find("130 of 3,141 elements beyond tolerance (127 NaN against a "
                                "number; the others max abs 0.5, max rel 0.25)"),
            std::string::npos)
      << mixed.headline;
}

// A structural change fails the gate (--structure fail) and is CHANGED
// unless the outputs or the costs got worse: removing a relayout copy that
// made the program faster is a change to review, not a regression.
TEST(DiffReport, AStructuralChangeAloneIsChangedNotARegression) {
  DiffReport report = Values({Output("output_0", 0, 0, 0)});
  report.structure.changes.push_back(
      {ChangeKind::kRemoved, "removed: copy f32[8]{0} at before.hlo:3:3", nullptr, nullptr});
  const Verdict changed = Judge(report, DiffSpec{});
  EXPECT_TRUE(changed.failed);
  EXPECT_EQ(changed.headline.rfind("CHANGED: -1 copy f32[8]{0} -- outputs within tolerance", 0), 0u)
      << changed.headline;
  report.outputs = {Output("output_0", 3, 0.5, 9)};
  const Verdict worse = Judge(report, DiffSpec{});
  EXPECT_EQ(worse.headline.rfind("REGRESSION: -1 copy f32[8]{0} -- output_0: 3 of", 0), 0u)
      << worse.headline;
}

TEST(DiffReport, DeviceSubsetHeadlineNamesTheDevicesAndTheReportWhy) {
  DiffReport report = Values({Output("device_0/output_0", 0, 0, 0)});
  report.values_subset = DeviceSubset{"values on 2 of 4 devices (0, 2)", "too big: 192 KiB"};
  const Verdict verdict = Judge(report, DiffSpec{});
  EXPECT_NE(verdict.headline.find("values on 2 of 4 devices (0, 2)"), std::string::npos)
      << verdict.headline;
  EXPECT_EQ(verdict.headline.find("too big"), std::string::npos) << verdict.headline;
  std::ostringstream out;
  PrintDiffReport(report, verdict, DiffSpec{}, out);
  EXPECT_NE(out.str().find("numerics: values on 2 of 4 devices (0, 2): too big: 192 KiB\n"),
            std::string::npos)
      << out.str();
}

// An instruction whose cost did not change is no "top instruction by time
// change", in the text or the JSON.
TEST(DiffReport, TopInstructionsAreTheChangedOnesInTextAndJson) {
  auto module = hlo::ParseHloModule(
      "HloModule m\nENTRY e {\n  p = f32[8] parameter(0)\n  n = f32[8] negate(p)\n"
      "  ROOT x = f32[8] exponential(n)\n}\n",
      "m.hlo");
  ASSERT_TRUE(module.ok()) << module.status().message();
  const hlo::HloComputation& entry = *(*module)->entry();
  DiffReport report;
  report.timing_run = true;
  const hlo::HloInstruction* x = entry.root();
  const hlo::HloInstruction* n = x->operand(0);
  report.performance.instructions = {{x, x, 100, 140, 0, 0}, {n, n, 50, 50, 64, 64}};
  const Verdict verdict = Judge(report, DiffSpec{});
  std::ostringstream out;
  PrintDiffReport(report, verdict, DiffSpec{}, out);
  EXPECT_NE(out.str().find("%x (exponential)"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("%n (negate)"), std::string::npos) << out.str();
  const std::string json = DiffReportJson(report, verdict, DiffSpec{}, 0);
  EXPECT_NE(json.find("\"opcode\": \"exponential\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"opcode\": \"negate\""), std::string::npos) << json;
}

}  // namespace
}  // namespace tpusim::harness
