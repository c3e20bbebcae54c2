// `tpusim check FILE...`: parse and verify HLO modules.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>

#include "harness/cli/cli.h"
#include "harness/run/module_run.h"
#include "sim/base/file.h"

namespace tpusim::harness {

CLI::App* AddCheckCommand(CLI::App& app, CheckOptions& options) {
  CLI::App* check = app.add_subcommand("check", "Parse and verify HLO modules");
  check->add_option("FILE", options.files, "HLO text module(s) to check")
      ->required()
      ->type_name("");
  check->add_flag("-v,--verbose", options.verbose,
                  "Also print 'FILE: ok (N computations, M instructions)' for each good module");
  check->footer(R"(Errors go to stderr, one report per bad file: FILE:LINE:COL: error: WHAT, then
the source line and a caret. Every file is checked even after an error.

Exit codes:
  0  every module parsed and verified
  2  usage error, or a file could not be read, parsed or verified)");
  return check;
}

int RunCheck(const CheckOptions& options, std::ostream& out, std::ostream& err) {
  int exit_code = kExitOk;
  for (const std::string& file : options.files) {
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
      out << file << ": ok (" << (*module)->computations().size() << " computations, "
          << instructions << " instructions)\n";
    }
  }
  out.flush();
  return exit_code;
}

}  // namespace tpusim::harness
