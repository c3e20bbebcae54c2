// The HTML report's charts (harness/suite_report, harness/svg_chart) and the
// scenario result JSON that carries what they draw.
#include "harness/suite/suite_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/suite/scenario_exec.h"
#include "harness/report/svg_chart.h"

namespace tpusim::harness {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// A passing scenario on a network of `nodes` chips in a ring.
ScenarioResult RingScenario(int nodes) {
  ScenarioResult r;
  r.name = "ring";
  r.file = "ring.yaml";
  r.status = ScenarioStatus::kPass;
  r.metrics = {{"time_us", 10}, {"ici_bytes", 4096}, {"link_utilisation", 0.5}};
  r.golden_metrics = {{"time_us", 8}};
  r.op_time_us = {{"all-reduce", 7}, {"fusion", 3}};
  for (int n = 0; n < nodes; ++n) {
    r.network_nodes.push_back("chip " + std::to_string(n));
    r.links.push_back({n, (n + 1) % nodes, n == 0 ? 0.5 : 0.25});
  }
  return r;
}

TEST(SuiteHtml, DrawsGoldenOpTimeAndAHeatmapCellPerLink) {
  const std::string html = SuiteHtml({RingScenario(4)}, "traces");
  EXPECT_THAT(html, HasSubstr(">10 us</text>"));  // this run
  EXPECT_THAT(html, HasSubstr(">8 us</text>"));   // its golden
  EXPECT_THAT(html, HasSubstr("<title>all-reduce: 7 us</title>"));
  EXPECT_THAT(html, HasSubstr("<title>chip 0 → chip 1: 0.5</title>"));
  EXPECT_THAT(html, HasSubstr("<title>chip 3 → chip 0: 0.25</title>"));
  EXPECT_THAT(html, Not(HasSubstr("chip 0 → chip 2")));  // no such link: a grey cell
  EXPECT_THAT(html, HasSubstr("busy 50.0% of the run"));
}

TEST(SvgChart, PerRowScalesDrawASmallRowAsWideAsALargeOne) {
  const std::vector<BarRow> rows = {{"big", {{1000, "#111111"}, {500, "#222222"}}},
                                    {"small", {{1, "#333333"}, {2, "#444444"}}}};
  const std::string shared = HorizontalBarChart("t", rows, "us");
  EXPECT_THAT(shared, HasSubstr("width=\"420.0\" height=\"10.0\" fill=\"#111111\""));
  EXPECT_THAT(shared, HasSubstr("width=\"1.0\" height=\"10.0\" fill=\"#333333\""));  // 1 px
  const std::string per_row = HorizontalBarChart("t", rows, "us", {}, BarScale::kPerRow);
  EXPECT_THAT(per_row, HasSubstr("width=\"210.0\" height=\"10.0\" fill=\"#333333\""));
  EXPECT_THAT(per_row, HasSubstr("width=\"420.0\" height=\"10.0\" fill=\"#444444\""));
  EXPECT_THAT(per_row, HasSubstr(">1 us</text>"));  // labels stay absolute
  EXPECT_THAT(per_row, HasSubstr("t (each row to its own scale)"));
  const std::string stacked = StackedBarChart("s", {"big", "small"}, {{900, 100}, {1, 1}},
                                              {{"#555555", "a"}, {"#666666", "b"}}, "us",
                                              BarScale::kPerRow);
  EXPECT_THAT(stacked, HasSubstr("width=\"210.0\" height=\"12.0\" fill=\"#666666\""));
}

TEST(SuiteHtml, LargeNetworksAreDrawnInBlocksOfNodes) {
  // 130 nodes: blocks of 3 (at most 64 cells a side), each cell the busiest
  // link between two blocks.
  const std::string html = SuiteHtml({RingScenario(130)}, "traces");
  EXPECT_THAT(html, HasSubstr("<title>chip 0 .. chip 2 → chip 0 .. chip 2: 0.5</title>"));
  EXPECT_THAT(html, HasSubstr("<title>chip 0 .. chip 2 → chip 3 .. chip 5: 0.25</title>"));
  EXPECT_THAT(html, HasSubstr(">chip 126 .. chip 128</text>"));  // the 43rd of 44 blocks
  EXPECT_THAT(html, HasSubstr("<title>chip 129 → chip 0 .. chip 2: 0.25</title>"));  // the last
}

TEST(SuiteJUnit, ClassnamesHaveNoDotsAndTimedScenariosCarryTheirMetrics) {
  ScenarioResult failed = RingScenario(2);
  failed.name = "v1.2";
  failed.file = "suites/release.2026/v1.2.yaml";
  failed.status = ScenarioStatus::kFail;
  failed.messages = {"time_us: 10 is above the maximum 9"};
  failed.metrics = {{"time_us", 0.1}, {"cycles", 150000}};
  ScenarioResult values;
  values.name = "values";
  values.file = "values.yaml";
  values.status = ScenarioStatus::kPass;
  const std::string xml = SuiteJUnit({RingScenario(2), failed, values});
  EXPECT_THAT(xml, HasSubstr("classname=\"ring\""));
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"v1.2\" classname=\"suites/release_2026/v1_2\""));
  // Metrics in name order, each the shortest decimal that reads back exactly.
  EXPECT_THAT(xml, HasSubstr("      <properties>\n"
                             "        <property name=\"cycles\" value=\"150000\"/>\n"
                             "        <property name=\"time_us\" value=\"0.1\"/>\n"
                             "      </properties>\n"
                             "      <failure message=\"time_us: 10 is above the maximum 9\""));
  EXPECT_THAT(xml, HasSubstr("<property name=\"link_utilisation\" value=\"0.5\"/>"));
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"values\" classname=\"values\" time=\"0.000\"/>"));
}

TEST(SuiteGithubAnnotations, OneCommandPerScenarioThatDidNotPassAtItsLocation) {
  ScenarioResult failed;
  failed.name = "mlp, v5e";
  failed.file = "suite/mlp.yaml";
  failed.status = ScenarioStatus::kFail;
  failed.messages = {"time_us: 10 is above the maximum 9", "hbm_bytes: +100% (golden 50%)"};
  ScenarioResult stale = failed;
  stale.status = ScenarioStatus::kStale;
  stale.messages = {};
  ScenarioResult broken;
  broken.name = "broken";
  broken.file = "suite/broken.yaml";
  broken.status = ScenarioStatus::kError;
  broken.messages = {"suite/m.hlo:12:7: error: expected ']'"};
  EXPECT_EQ(SuiteGithubAnnotations({RingScenario(2), failed, stale, broken}),
            "::error file=suite/mlp.yaml,title=tpusim scenario mlp%2C v5e%3A FAIL::"
            "time_us: 10 is above the maximum 9%0Ahbm_bytes: +100%25 (golden 50%25)\n"
            "::warning file=suite/mlp.yaml,title=tpusim scenario mlp%2C v5e%3A STALE::stale\n"
            "::error file=suite/m.hlo,line=12,col=7,title=tpusim scenario broken%3A ERROR::"
            "suite/m.hlo:12:7: error: expected ']'\n");
  EXPECT_EQ(SuiteGithubAnnotations({RingScenario(2)}), "");
}

TEST(ScenarioResultJson, RoundTripsTheReportData) {
  const ScenarioResult r = RingScenario(3);
  const StatusOr<ScenarioResult> back = ResultFromJson(ResultToJson(r), "result.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->golden_metrics, r.golden_metrics);
  EXPECT_EQ(back->op_time_us, r.op_time_us);
  EXPECT_EQ(back->network_nodes, r.network_nodes);
  ASSERT_EQ(back->links.size(), 3u);
  EXPECT_EQ(back->links[2].from, 2);
  EXPECT_EQ(back->links[2].to, 0);
  EXPECT_EQ(back->links[2].utilisation, 0.25);
  EXPECT_EQ(back->status, r.status);

  // A child's result with a status no scenario has is malformed, not a pass.
  std::string text = ResultToJson(r);
  const std::string status = "\"status\": \"" + std::string(ScenarioStatusName(r.status)) + "\"";
  ASSERT_NE(text.find(status), std::string::npos) << text;
  text.replace(text.find(status), status.size(), "\"status\": \"passed\"");
  const StatusOr<ScenarioResult> odd = ResultFromJson(text, "result.json");
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(odd.status().message(),
              HasSubstr("result.json: error: malformed scenario result: status 'passed'"));
}

TEST(SvgChart, EscapesTextAndShadesByValue) {
  EXPECT_EQ(XmlEscape("a<b & \"c\"\x01"), "a&lt;b &amp; &quot;c&quot;?");
  const std::string svg =
      HeatmapChart("links", "to", {"a", "b"}, "from", {"a", "b"}, {{0.0, 1.0}, {std::nullopt, 0.5}});
  EXPECT_THAT(svg, HasSubstr("<title>links</title>"));
  EXPECT_THAT(svg, HasSubstr("fill=\"#b71c1c\"><title>a → b: 1</title>"));  // the largest: dark red
  EXPECT_THAT(svg, HasSubstr("fill=\"#ffffff\"><title>a → a: 0</title>"));  // zero: white
  EXPECT_THAT(svg, HasSubstr("fill=\"#f2f2f2\"/>"));                         // absent
  EXPECT_THAT(svg, HasSubstr(">0.5</text>"));  // two columns: values written in the cells
}

}  // namespace
}  // namespace tpusim::harness
