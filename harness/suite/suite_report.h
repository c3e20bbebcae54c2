// Reports of a `tpusim run` suite: the terminal summary table, JSON and JUnit
// XML (the Ant/Jenkins format CI systems read; tests/harness/junit.xsd).
#ifndef TPUSIM_HARNESS_SUITE_SUITE_REPORT_H_
#define TPUSIM_HARNESS_SUITE_SUITE_REPORT_H_

#include <iosfwd>
#include <string>
#include <vector>

#include "harness/suite/scenario_exec.h"

namespace tpusim::harness {

/// One row per scenario (status, seconds, name, first message) and a totals line.
void PrintSuiteTable(const std::vector<ScenarioResult>& results, std::ostream& out);

/// {"tpusim_version", "passed", "failed", "stale", "errors", "scenarios": [result...]}.
std::string SuiteJson(const std::vector<ScenarioResult>& results);

/// One <testsuite name="tpusim"> with one <testcase> per scenario: <failure>
/// for fail and stale, <error> for error, each carrying every message.
std::string SuiteJUnit(const std::vector<ScenarioResult>& results);

/// GitHub Actions workflow commands, one line per scenario that did not pass:
/// `::error` for fail and error, `::warning` for stale, at the location its
/// first located message names (FILE:LINE:COL:) or else at the scenario file,
/// titled with the scenario's name and status and carrying every message, so
/// the run's page and the pull request's diff show them where they arose.
std::string SuiteGithubAnnotations(const std::vector<ScenarioResult>& results);

/// A self-contained XHTML page: the counts; inline SVG charts of each
/// scenario's wall time, simulated time against its golden, simulated time by
/// opcode, HBM bytes against golden, and for multi-chip scenarios ICI bytes and
/// a link-utilisation heatmap; and a table of every scenario (status, metrics,
/// messages) linking `TRACE_DIR/NAME.json`, its Perfetto trace, when it was
/// timed.
std::string SuiteHtml(const std::vector<ScenarioResult>& results, const std::string& trace_dir);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_SUITE_REPORT_H_
