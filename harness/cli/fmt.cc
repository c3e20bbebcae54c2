// `tpusim fmt FILE [-o OUT] [--check]`: print an HLO module in canonical form.
#include <CLI/CLI.hpp>
#include <ostream>

#include "harness/cli/cli.h"
#include "harness/run/module_run.h"
#include "sim/base/file.h"
#include "sim/hlo/printer.h"

namespace tpusim::harness {

CLI::App* AddFmtCommand(CLI::App& app, FmtOptions& options) {
  CLI::App* fmt = app.add_subcommand("fmt", "Print an HLO module in canonical form");
  fmt->add_option("FILE", options.file, "HLO text module to format")->required()->type_name("");
  CLI::Option* output = fmt->add_option(
      "-o,--output", options.output,
      "Write the result to OUT instead of stdout; OUT is replaced atomically (temporary "
      "file, fsync, rename), so OUT may be FILE itself");
  output->option_text("OUT")->check(OutputFile());
  fmt->add_flag("--check", options.check,
                "Write nothing; exit 1 if FILE is not already canonically formatted")
      ->excludes(output);
  fmt->footer(R"(FILE is parsed and verified, then printed as tpusim's printer writes it:
formatting canonical text gives the same bytes again.

Exit codes:
  0  formatted (with --check: FILE is already canonical)
  1  --check: FILE is not canonically formatted
  2  usage error, FILE could not be read, parsed or verified, or OUT could not be written)");
  return fmt;
}

int RunFmt(const FmtOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<std::string> text = ReadFile(options.file);
  if (!text.ok()) {
    PrintError(text.status(), err);
    return kExitInputError;
  }
  StatusOr<std::unique_ptr<hlo::HloModule>> module = ParseAndVerifyModule(*text, options.file);
  if (!module.ok()) {
    PrintError(module.status(), err);
    return kExitInputError;
  }
  const std::string formatted = hlo::PrintModule(**module);

  if (options.check) {
    if (formatted == *text) return kExitOk;
    err << options.file << ": not canonically formatted (to fix: tpusim fmt " << options.file
        << " -o " << options.file << ")\n";
    return kExitCheckFailed;
  }
  if (!options.output.empty()) {
    Status written = WriteFileAtomically(options.output, formatted);
    if (!written.ok()) {
      PrintError(written, err);
      return kExitInputError;
    }
    return kExitOk;
  }
  // main reports a failed write to standard output, once for every command.
  out << formatted;
  return kExitOk;
}

}  // namespace tpusim::harness
