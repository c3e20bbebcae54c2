// `tpusim run PATH...` and the hidden `tpusim scenario-exec` it starts per
// scenario: their options and the calls (harness/suite/suite_run.h,
// harness/suite/scenario_exec.h).
#include <CLI/CLI.hpp>

#include <ostream>

#include "harness/cli/cli.h"
#include "harness/suite/scenario_exec.h"
#include "harness/suite/suite_run.h"

namespace tpusim::harness {

CLI::App* AddRunCommand(CLI::App& app, RunOptions& options) {
  CLI::App* run = app.add_subcommand(
      "run", "Run scenario files (docs/scenarios.md), each in its own process, and check them");
  run->add_option("PATH", options.paths,
                  "Scenario files, or directories searched recursively for *.yaml")
      ->required()
      ->type_name("");
  run->add_option("-j,--jobs", options.jobs, "Scenarios run at once")
      ->option_text("N")
      ->check(PositiveNumber())
      ->capture_default_str();
  run->add_option("--filter", options.filter, "Run only scenarios whose name matches GLOB")
      ->option_text("GLOB");
  run->add_flag("--update-golden", options.update_golden,
                "Write each scenario's golden (outputs, metrics, stamp) instead of comparing");
  run->add_option("--json", options.json, "Write the suite report as JSON to OUT")
      ->option_text("OUT")
      ->check(OutputFile());
  run->add_option("--junit", options.junit, "Write a JUnit XML report to OUT")
      ->option_text("OUT")
      ->check(OutputFile());
  run->add_option("--report", options.report,
                  "Write an HTML report (DIR/index.html, charts inline) and each timed "
                  "scenario's Perfetto trace (DIR/traces/NAME.json) into DIR")
      ->option_text("DIR");
  run->add_flag("--github-annotations", options.github_annotations,
                "After the table, print a GitHub Actions annotation (::error, or ::warning "
                "when stale) for each scenario that did not pass, at the file and line its "
                "message names");
  run->add_option("--golden-dir", options.golden_dir,
                  "Root of the golden store. Default: the nearest directory named golden in "
                  "or above the first path given (so the suite finds its goldens from any "
                  "directory), else ./golden")
      ->option_text("DIR");
  AddModelsDirOption(*run, options.models_dir);
  run->add_option("--timeout", options.timeout,
                  "How long a scenario may run (30s, 500ms, 2min, or seconds), unless it sets "
                  "`timeout`, before it is killed "
                  "and failed")
      ->option_text("DURATION")
      ->transform(Duration())
      ->check(PositiveNumber())
      ->capture_default_str();
  run->footer(R"(Exit codes:
  0  every scenario passed
  1  a scenario failed: a check, a stale or missing golden, a crash or a timeout
  2  usage error, or a scenario or its module could not be loaded)");
  return run;
}

CLI::App* AddScenarioExecCommand(CLI::App& app, ScenarioExecOptions& options) {
  CLI::App* exec = app.add_subcommand("scenario-exec", "Run one scenario for 'tpusim run'");
  exec->group("");  // internal: not listed in --help
  exec->add_option("SCENARIO", options.scenario)->required();
  exec->add_option("--result", options.result)->required();
  exec->add_option("--golden-dir", options.golden_dir)->required();
  exec->add_option("--models-dir", options.models_dir)->required();
  exec->add_option("--trace", options.trace);
  exec->add_flag("--update-golden", options.update_golden);
  return exec;
}

int RunRun(const RunOptions& options, std::ostream& out, std::ostream& err) {
  return RunSuite(options, out, err);
}

}  // namespace tpusim::harness
