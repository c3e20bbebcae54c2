// `tpusim check FILE...`: parse and verify HLO modules.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <utility>

#include "harness/cli/cli.h"
#include "harness/run/module_run.h"
#include "sim/base/file.h"

namespace tpusim::harness {
namespace {

/// What XLA writes beside a module's HLO in a dump directory (--xla_dump_to)
/// under the module's own name, by file name ending; a glob such as
/// `*after_optimizations*.txt` picks them up with the modules.
constexpr std::pair<std::string_view, std::string_view> kXlaDumpReports[] = {
    {"-buffer-assignment.txt", "XLA's buffer assignment"},
    {"-memory-usage-report.txt", "XLA's memory usage report"},
};

/// The kind of XLA report `file` is, or "" for a file to check.
std::string_view XlaDumpReport(std::string_view file) {
  for (const auto& [ending, what] : kXlaDumpReports) {
    if (file.ends_with(ending)) return what;
  }
  return "";
}

}  // namespace

CLI::App* AddCheckCommand(CLI::App& app, CheckOptions& options) {
  CLI::App* check = app.add_subcommand("check", "Parse and verify HLO modules");
  check->add_option("FILE", options.files, "HLO text module(s) to check")
      ->required()
      ->type_name("");
  check->add_flag("-v,--verbose", options.verbose,
                  "Also print 'FILE: ok (N computations, M instructions)' for each good module");
  check->footer(R"(Errors go to stderr, one report per bad file: FILE:LINE:COL: error: WHAT; a
parse error adds the source line and a caret. Every file is checked even after an error. XLA's
reports beside the modules in a dump directory (*-buffer-assignment.txt,
*-memory-usage-report.txt) are skipped with a note on stderr.

Exit codes:
  0  every module parsed and verified
  2  usage error, or a file could not be read, parsed or verified)");
  return check;
}

int RunCheck(const CheckOptions& options, std::ostream& out, std::ostream& err) {
  int exit_code = kExitOk;
  for (const std::string& file : options.files) {
    if (const std::string_view report = XlaDumpReport(file); !report.empty()) {
      err << file << ": skipped: " << report << ", not an HLO module\n";
      continue;
    }
    StatusOr<std::string> text = ReadFile(file);
    if (!text.ok()) {
      PrintError(text.status(), err);
      exit_code = kExitInputError;
      continue;
    }
    StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseAndVerifyModule(*text, file);
    if (!module.ok()) {
      PrintError(module.status(), err);
      exit_code = kExitInputError;
      continue;
    }
    if (options.verbose) {
      int64_t instructions = 0;
      for (const auto& computation : (*module)->computations()) {
        instructions += computation->instruction_count();
      }
      const size_t computations = (*module)->computations().size();
      out << file << ": ok (" << computations
          << (computations == 1 ? " computation, " : " computations, ") << instructions
          << (instructions == 1 ? " instruction)\n" : " instructions)\n");
    }
  }
  out.flush();
  return exit_code;
}

}  // namespace tpusim::harness
