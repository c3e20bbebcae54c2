// `tpusim`: the command-line driver. Parses the command line with CLI11 and
// dispatches to the subcommand's Run* function (harness/cli/cli.h).
#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/commit.h"
#include "harness/suite/scenario_exec.h"
#include "harness/version.h"

namespace {

constexpr char kFooter[] = R"(Exit codes:
  0  success
  1  a check failed (fmt --check: the file is not canonically formatted; diff: a
     change beyond the thresholds; run: a scenario failed; sweep: a point failed;
     validate: a family's error is over its bound)
  2  usage or input error: bad command line, unreadable file, parse or verify error
  130, 143  sweep: interrupted by SIGINT or SIGTERM (continue it with --resume)

Run 'tpusim SUBCOMMAND --help' for the options of a subcommand.)";

/// "tpusim[ SUBCOMMAND]: error: WHAT" plus where to find help, for CLI11 parse errors.
std::string FailureMessage(const CLI::App* app, const CLI::Error& e) {
  std::string command = "tpusim";
  for (const CLI::App* sub : app->get_subcommands()) command += " " + sub->get_name();
  std::string what = e.what();
  // A word where the subcommand goes is one misspelt, not an extra argument.
  const std::vector<std::string> extras = app->remaining();
  if (app->get_subcommands().empty() && !extras.empty() && !extras.front().starts_with('-')) {
    std::string known;
    for (const CLI::App* sub : app->get_subcommands({})) {
      if (sub->get_group().empty()) continue;  // the internal scenario-exec
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    what = "unknown subcommand '" + extras.front() + "' (known: " + known + ")";
  }
  return command + ": error: " + what + "\nRun '" + command + " --help' for more information.\n";
}

/// `code`, or kExitInputError when standard output could not take what was
/// written to it (a full disk, /dev/full, a closed pipe): a report that did
/// not arrive is a failure, never exit 0.
int WithStdoutChecked(int code) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_errno = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return code;
  std::cerr << "tpusim: error: cannot write standard output"
            << (flush_errno != 0 ? std::string(": ") + std::strerror(flush_errno) : std::string())
            << '\n';
  return tpusim::harness::kExitInputError;
}

}  // namespace

int main(int argc, char** argv) {
  namespace harness = tpusim::harness;

  CLI::App app(
      "tpusim: a cycle-approximate simulator of Google TPU pods that runs the HLO "
      "modules XLA compiled.",
      "tpusim");
  harness::StateDefaultsInHelp(app);
  app.set_help_flag("-h,--help", "Print this help and exit");
  app.set_version_flag("--version",
                       "tpusim " + std::string(tpusim::kVersion) + " (commit " +
                           std::string(tpusim::kCommit) + ")",
                       "Print the version and the commit it was built from "
                       "('tpusim X.Y.Z (commit HASH)') and exit");
  app.require_subcommand(0, 1);  // none: handled below, so unknown words are reported as such
  app.footer(kFooter);
  app.failure_message(FailureMessage);

  harness::CheckOptions check_options;
  CLI::App* check = harness::AddCheckCommand(app, check_options);
  harness::FmtOptions fmt_options;
  CLI::App* fmt = harness::AddFmtCommand(app, fmt_options);
  harness::ExecOptions exec_options;
  CLI::App* exec = harness::AddExecCommand(app, exec_options);
  harness::DiffOptions diff_options;
  CLI::App* diff = harness::AddDiffCommand(app, diff_options);
  harness::PresetsOptions presets_options;
  CLI::App* presets = harness::AddPresetsCommand(app, presets_options);
  harness::CollectiveOptions collective_options;
  CLI::App* collective = harness::AddCollectiveCommand(app, collective_options);
  harness::RunOptions run_options;
  CLI::App* run = harness::AddRunCommand(app, run_options);
  harness::SweepOptions sweep_options;
  CLI::App* sweep = harness::AddSweepCommand(app, sweep_options);
  harness::ValidateOptions validate_options;
  CLI::App* validate = harness::AddValidateCommand(app, validate_options);
  harness::ScenarioExecOptions scenario_exec_options;
  CLI::App* scenario_exec = harness::AddScenarioExecCommand(app, scenario_exec_options);
  harness::CheckIntegerOptions(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0 once printed; every other parse error is a
    // usage error.
    const int code = app.exit(e);
    return code == 0 ? WithStdoutChecked(harness::kExitOk) : harness::kExitInputError;
  }

  auto dispatch = [&]() -> int {
    if (check->parsed()) return harness::RunCheck(check_options, std::cout, std::cerr);
    if (fmt->parsed()) return harness::RunFmt(fmt_options, std::cout, std::cerr);
    if (exec->parsed()) return harness::RunExec(exec_options, std::cout, std::cerr);
    if (diff->parsed()) return harness::RunDiff(diff_options, std::cout, std::cerr);
    if (presets->parsed()) return harness::RunPresets(presets_options, std::cout, std::cerr);
    if (collective->parsed()) {
      return harness::RunCollective(collective_options, std::cout, std::cerr);
    }
    if (run->parsed()) return harness::RunRun(run_options, std::cout, std::cerr);
    if (sweep->parsed()) return harness::RunSweep(sweep_options, std::cout, std::cerr);
    if (validate->parsed()) return harness::RunValidate(validate_options, std::cout, std::cerr);
    if (scenario_exec->parsed()) {
      return harness::RunScenarioExec(scenario_exec_options, std::cerr);
    }
    std::cerr << "tpusim: error: a subcommand is required\nRun 'tpusim --help' for more "
                 "information.\n";
    return harness::kExitInputError;
  };
  int code = harness::kExitInputError;
  try {
    code = dispatch();
  } catch (const std::exception& e) {
    std::cerr << "tpusim: internal error: " << e.what() << '\n';
  }
  return WithStdoutChecked(code);
}
