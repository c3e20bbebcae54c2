// The `tpusim` command line: one Add*Command/Run* pair per subcommand.
//
// main.cc builds the CLI11 app, lets each subcommand register its options into
// a plain options struct, parses, and calls Run* for the subcommand that was
// given. Run* functions write only to the streams passed in and return an
// ExitCode; they never exit the process.
#ifndef TPUSIM_HARNESS_CLI_H_
#define TPUSIM_HARNESS_CLI_H_

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/status.h"
#include "sim/hlo/module.h"

namespace CLI {
class App;
}  // namespace CLI

namespace tpusim::harness {

/// Process exit codes, the same for every subcommand (DESIGN.md).
enum ExitCode : int {
  kExitOk = 0,           ///< success
  kExitCheckFailed = 1,  ///< a check on the input failed (e.g. `fmt --check`)
  kExitInputError = 2,   ///< bad usage, unreadable file, parse or verify error
};

/// `tpusim check FILE...`: parse and verify each module.
struct CheckOptions {
  std::vector<std::string> files;  ///< modules to check, in the order given
  bool verbose = false;            ///< print "FILE: ok (...)" for each good module
};
/// Adds the `check` subcommand to `app`; parsing fills `options`.
CLI::App* AddCheckCommand(CLI::App& app, CheckOptions& options);
/// Checks every file even after an error; kExitInputError if any failed.
int RunCheck(const CheckOptions& options, std::ostream& out, std::ostream& err);

/// `tpusim fmt FILE [-o OUT] [--check]`: print a module in canonical form.
struct FmtOptions {
  std::string file;    ///< module to format
  std::string output;  ///< write here (atomically) instead of `out`; empty: `out`
  bool check = false;  ///< only report whether `file` is already canonical
};
/// Adds the `fmt` subcommand to `app`; parsing fills `options`.
CLI::App* AddFmtCommand(CLI::App& app, FmtOptions& options);
/// kExitCheckFailed when `check` is set and the file is not canonical.
int RunFmt(const FmtOptions& options, std::ostream& out, std::ostream& err);

/// `tpusim presets [--models-dir DIR]`: list chip presets with headline figures.
struct PresetsOptions {
  std::string models_dir;  ///< where the *.yaml presets are; AddPresetsCommand sets the default
};
/// Adds the `presets` subcommand to `app`; parsing fills `options`.
CLI::App* AddPresetsCommand(CLI::App& app, PresetsOptions& options);
/// Prints one row per preset; kExitInputError if any failed to load (after the others).
int RunPresets(const PresetsOptions& options, std::ostream& out, std::ostream& err);

/// `tpusim exec FILE [--inputs seed:N|DIR] [--out DIR] [--chip NAME] [--mode M] ...`:
/// run a module on every device and summarise (and optionally write) its
/// outputs, and/or time it on a chip.
struct ExecOptions {
  std::string file;                   ///< module to run
  std::string mode;                   ///< values | timing | full; empty: full with --chip, else values
  std::string chip;                   ///< preset name or YAML path; empty: no timing
  std::vector<std::string> overrides;  ///< -p key.path=value, applied to the preset in order
  std::string models_dir;             ///< where preset names resolve; AddExecCommand sets the default
  std::string json;                   ///< write the metrics as JSON here; empty: do not
  std::string trace;                  ///< write a Perfetto trace here; empty: do not
  int64_t top = 20;                   ///< rows of the op profile table
  std::vector<std::string> trip_counts;  ///< NAME=N for while loops the program does not bound
  int64_t default_trip_count = 1;     ///< for other loops of unknown trip count
  int64_t branch = 0;                 ///< branch every conditional takes in timing
  std::string inputs = "seed:0";      ///< "seed:N" or a directory of param_<N>.npy
  std::string out;                    ///< write outputs as .npy here; empty: do not write
  std::string numerics = "tpu";       ///< "tpu" or "ieee"
  /// "analytic" (the fast C++ MXU kernel) or "rtl" (dot and convolution
  /// products through the Verilated 128x128 array; builds with TPUSIM_RTL only)
  std::string mxu = "analytic";
  std::string max_memory;             ///< a byte count ("8GiB"); empty: half the physical RAM
  std::string elided_constants = "seeded";  ///< "seeded" or "error"
  std::optional<int64_t> replicas;    ///< default: the module's replica_count
  std::optional<int64_t> partitions;  ///< default: the module's num_partitions
};
/// Adds the `exec` subcommand to `app`; parsing fills `options`.
CLI::App* AddExecCommand(CLI::App& app, ExecOptions& options);
/// kExitInputError for every failure: bad options or inputs, an unsupported
/// operation, a run over the memory limit.
int RunExec(const ExecOptions& options, std::ostream& out, std::ostream& err);

/// ParseHloModule then VerifyModule; `filename` appears in error messages.
StatusOr<std::unique_ptr<hlo::HloModule>> ParseAndVerifyModule(std::string_view text,
                                                               std::string_view filename);

/// Writes a failed status's message to `err` verbatim, ending it with a newline.
void PrintError(const Status& status, std::ostream& err);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_CLI_H_
