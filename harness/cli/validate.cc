// `tpusim validate [SUITE] [--family F] [--chip C] [--json OUT] [--report DIR] [-j N]`:
// time every published measurement of a validation suite and report the
// model's error against silicon (docs/validation.md).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <ostream>

#include "harness/cli/cli.h"
#include "harness/validate/validation.h"
#include "harness/validate/validation_report.h"
#include "harness/validate/workload_hlo.h"
#include "sim/base/file.h"

namespace tpusim::harness {

CLI::App* AddValidateCommand(CLI::App& app, ValidateOptions& options) {
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Time the workloads of published TPU measurements and report tpusim's error against them "
      "(docs/validation.md)");
  options.suite = DefaultValidationSuite();
  validate->add_option("SUITE", options.suite, "The suite file; default: " + options.suite)
      ->type_name("");
  validate->add_option("--family", options.families, "Run only this family (repeatable)")
      ->option_text("NAME");
  validate->add_option("--chip", options.chips, "Run only the families on this preset (repeatable)")
      ->option_text("PRESET");
  validate
      ->add_option("-p,--param", options.overrides,
                   "Override a preset field for every chip, e.g. -p overhead.kernel_start=0 "
                   "(repeatable; docs/presets.md)")
      ->option_text("KEY=VALUE");
  validate->add_option("--json", options.json, "Write every row and family as JSON to OUT")
      ->option_text("OUT")
      ->check(OutputFile());
  validate
      ->add_option("--report", options.report,
                   "Write an HTML report with the predicted-against-measured scatter to "
                   "DIR/index.html")
      ->option_text("DIR");
  validate->add_option("--worst", options.worst, "Rows listed by largest |error|")
      ->option_text("N")
      ->check(NonNegativeNumber())
      ->capture_default_str();
  validate->add_option("-j,--jobs", options.jobs, "Timing processes run at once")
      ->option_text("N")
      ->check(PositiveNumber())
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  CLI::Option* hlo =
      validate
          ->add_option("--hlo", options.hlo,
                       "Print the HLO module generated for the row with this id, and stop")
          ->option_text("ID");
  // It runs nothing: an option about the run beside it would be ignored.
  for (const char* run_only :
       {"--family", "--chip", "--param", "--json", "--report", "--worst", "--jobs"}) {
    hlo->excludes(validate->get_option(run_only));
  }
  AddModelsDirOption(*validate, options.models_dir);
  validate->footer(R"(Exit codes:
  0  every family's mean absolute error is within the bound its suite file states
  1  a family's error is over its bound, or some of its rows could not be timed
  2  usage error, or the suite, a measurement file or a preset could not be loaded)");
  return validate;
}

int RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err) {
  StatusOr<ValidationSuite> suite = LoadValidationSuite(options.suite);
  if (!suite.ok()) {
    PrintError(suite.status(), err);
    return kExitInputError;
  }
  if (!options.hlo.empty()) {
    for (const ValidationFamily& family : suite->families) {
      StatusOr<std::vector<Measurement>> rows = LoadMeasurements(family.file);
      if (!rows.ok()) {
        PrintError(rows.status(), err);
        return kExitInputError;
      }
      for (const Measurement& m : *rows) {
        if (m.id != options.hlo) continue;
        StatusOr<Workload> workload = WorkloadFor(m);
        if (!workload.ok()) {
          PrintError(workload.status(), err);
          return kExitInputError;
        }
        out << workload->hlo_text;
        return kExitOk;
      }
    }
    err << "tpusim validate: error: no row with id '" << options.hlo << "' in " << options.suite
        << "\n";
    return kExitInputError;
  }
  ValidationOptions run;
  run.families = options.families;
  run.chips = options.chips;
  run.overrides = options.overrides;
  run.models_dir = options.models_dir;
  run.jobs = static_cast<int>(options.jobs);
  if (isatty(STDERR_FILENO) == 1) {
    run.progress = [&err](int64_t done, int64_t all) {
      err << "\rvalidate: " << done << "/" << all << " rows timed" << (done == all ? "\n" : "")
          << std::flush;
    };
  }
  StatusOr<ValidationResult> result = RunValidation(*suite, run);
  if (!result.ok()) {
    PrintError(result.status(), err);
    return kExitInputError;
  }
  PrintValidationTables(*result, static_cast<int>(options.worst), out);
  if (!options.json.empty()) {
    if (Status s = WriteFileAtomically(options.json, ValidationJson(*result)); !s.ok()) {
      PrintError(s, err);
      return kExitInputError;
    }
  }
  if (!options.report.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.report, ec);
    const std::string page = (std::filesystem::path(options.report) / "index.html").string();
    if (Status s =
            WriteFileAtomically(page, ValidationHtml(*result, static_cast<int>(options.worst)));
        !s.ok()) {
      PrintError(s, err);
      return kExitInputError;
    }
  }
  for (const FamilyStats& f : result->families) {
    if (f.failed()) return kExitCheckFailed;
  }
  return kExitOk;
}

}  // namespace tpusim::harness
