// The `tpusim` command line: one Add*Command/Run* pair per subcommand.
//
// main.cc builds the CLI11 app, lets each subcommand register its options into
// a plain options struct, parses, and calls Run* for the subcommand that was
// given. Run* functions write only to the streams passed in and return an
// ExitCode; they never exit the process.
#ifndef TPUSIM_HARNESS_CLI_CLI_H_
#define TPUSIM_HARNESS_CLI_CLI_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "harness/collective/collective_bench.h"
#include "harness/report/exit.h"
#include "harness/run/run_spec.h"
#include "harness/suite/suite_run.h"
#include "harness/sweep/sweep_run.h"
#include "sim/base/status.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace tpusim::harness {

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
  std::string file;  ///< module to run
  std::string mode;  ///< values | timing | full; empty: full with --chip, else values
  std::string chip;  ///< preset name or YAML path; empty: no timing
  std::vector<std::string> overrides;  ///< -p key.path=value, applied to the preset in order
  std::string models_dir;  ///< where preset names resolve; AddExecCommand sets the default
  std::string json;        ///< write the metrics as JSON here; empty: do not
  std::string trace;       ///< write a Perfetto trace here; empty: do not
  int64_t top = 20;        ///< rows of the op profile table
  std::vector<std::string> trip_counts;  ///< NAME=N for while loops the program does not bound
  int64_t default_trip_count = 1;        ///< for other loops of unknown trip count
  std::vector<std::string> branches;     ///< N for every conditional, NAME=N for those named NAME
  std::string inputs = "seed:0";         ///< "seed:N" or a directory of param_<N>.npy
  std::string out;                       ///< write outputs as .npy here; empty: do not write
  std::string numerics = "tpu";          ///< "tpu" or "ieee"
  /// "analytic" (the fast C++ MXU kernel) or "rtl" (dot and convolution
  /// products through the Verilated 128x128 array; builds with TPUSIM_RTL only)
  std::string mxu = "analytic";
  std::string max_memory;                   ///< a byte count ("8GiB"); empty: half the physical RAM
  std::string elided_constants = "seeded";  ///< "seeded" or "error"
  std::optional<int64_t> replicas;          ///< default: the module's replica_count
  std::optional<int64_t> partitions;        ///< default: the module's num_partitions
  /// Network that times collectives (short form or YAML file); empty: none,
  /// collectives cost only their local work.
  std::string topology;
  std::string algorithm = "auto";  ///< ici::AlgorithmName spellings
  std::string placement;  ///< the network devices the module runs on ("0-7"); empty: 0, 1, ...
  /// FILE[@DEVICES]: modules timed on the network at the same time, sharing its links.
  std::vector<std::string> other_jobs;
  LoopLimits limits;  ///< --max-while-iterations, --max-loop-work, ...
};
/// Adds the `exec` subcommand to `app`; parsing fills `options`.
CLI::App* AddExecCommand(CLI::App& app, ExecOptions& options);
/// kExitInputError for every failure: bad options or inputs, an unsupported
/// operation, a run over the memory limit.
int RunExec(const ExecOptions& options, std::ostream& out, std::ostream& err);

/// `tpusim diff BEFORE AFTER --chip NAME [...]`: run two compilations of one
/// program on the same inputs and chip and report what changed: structure,
/// outputs, time and bytes.
struct DiffOptions {
  std::string before;                  ///< the reference module
  std::string after;                   ///< the module compared against it
  std::string mode = "full";           ///< full | timing (no values) | values (no timing)
  std::string chip;                    ///< preset name or YAML path; required unless mode is values
  std::vector<std::string> overrides;  ///< -p key.path=value, applied to the preset in order
  std::string models_dir;          ///< where preset names resolve; AddDiffCommand sets the default
  std::string inputs = "seed:0";   ///< "seed:N" or a directory of param_<N>.npy
  std::string numerics = "tpu";    ///< "tpu" or "ieee"
  std::string max_memory;          ///< a byte count ("8GiB"); empty: half the physical RAM
  std::string json;                ///< write the whole comparison as JSON here; empty: do not
  double rtol = 1e-3;              ///< relative tolerance of an output element
  double atol = 1e-5;              ///< absolute tolerance of an output element
  std::optional<int64_t> max_ulp;  ///< an element within this many ulps passes too
  /// "TYPE:KEY=VALUE,...": a tolerance for outputs of one element type
  std::vector<std::string> type_tolerances;
  std::string time_tolerance = "2%";   ///< largest change of total time that passes
  std::string bytes_tolerance = "1%";  ///< largest change of HBM bytes that passes
  std::string collective_tolerance = "2%";  ///< largest change of the collectives' time
  std::string ici_tolerance;   ///< largest change of ICI bytes; empty: reported, not gated
  std::string link_tolerance;  ///< largest change of the busiest link's bytes; empty: not gated
  std::string structure = "fail";  ///< "fail": a structural change exits 1; "report": only listed
  int64_t top = 10;                ///< instructions listed by time change
  std::string topology;            ///< short form or YAML file; empty: device 0 alone
  std::string topology_after;      ///< AFTER's network when it differs; empty: `topology`
  std::string algorithm = "auto";  ///< collective algorithm on `topology`
  LoopLimits limits;               ///< --max-while-iterations, --max-loop-work, ...
};
/// Adds the `diff` subcommand to `app`; parsing fills `options`.
CLI::App* AddDiffCommand(CLI::App& app, DiffOptions& options);
/// kExitOk when nothing changed beyond the thresholds, kExitCheckFailed when
/// something did, kExitInputError for bad options, files, modules or inputs.
int RunDiff(const DiffOptions& options, std::ostream& out, std::ostream& err);

/// `tpusim collective --op OP (--bytes N | --sweep LO:HI) --chip NAME --topology T ...`:
/// time one collective on an interconnect and print an nccl-tests-like table.
struct CollectiveOptions {
  std::string op;                      ///< all-reduce, all-gather, ... (ici::CollectiveKindName)
  CollectiveSizeOptions sizes;         ///< --bytes, --sweep or -b/-e/-f
  int64_t ngpus = 0;           ///< -g N: one group of devices 0..N-1; 0: --groups or every chip
  std::string format = "table";  ///< table | nccl-tests
  std::string datatype = "float";  ///< nccl-tests' element type, for its count column
  std::string chip;                    ///< preset name or YAML path (its ICI figures)
  std::vector<std::string> overrides;  ///< -p key.path=value
  std::string models_dir;              ///< AddCollectiveCommand sets the default
  std::string topology;                ///< short form or YAML file
  std::string algorithm = "auto";      ///< ici::AlgorithmName spellings
  std::string groups;                  ///< "0,1;2,3"; empty: one group of every device
  std::string json;                    ///< write rows as JSON here; empty: do not
  bool allow_large = false;            ///< run past the transfer and device-step limits
};
/// Adds the `collective` subcommand to `app`; parsing fills `options`.
CLI::App* AddCollectiveCommand(CLI::App& app, CollectiveOptions& options);
/// kExitInputError for bad options, presets, topologies or groups.
int RunCollective(const CollectiveOptions& options, std::ostream& out, std::ostream& err);

/// `tpusim run PATH...`: run every scenario found, each in its own child
/// process (harness/suite/suite_run.h).
/// Adds the `run` subcommand to `app`; parsing fills `options`.
CLI::App* AddRunCommand(CLI::App& app, RunOptions& options);
/// kExitCheckFailed when a scenario failed (a check, a stale golden, a crash
/// or timeout); kExitInputError when one could not be loaded or run.
int RunRun(const RunOptions& options, std::ostream& out, std::ostream& err);

/// `tpusim sweep STUDY --out DIR [-j N] [--resume]`: run every point of a
/// study (docs/sweeps.md), each in its own child process like `tpusim run`,
/// into DIR's results files, plots and index.html. Under an MPI launcher the
/// ranks share the points and rank 0 writes the results.
/// Adds the `sweep` subcommand to `app`; parsing fills `options`.
CLI::App* AddSweepCommand(CLI::App& app, SweepOptions& options);
/// kExitOk when every point ran, kExitCheckFailed when a point failed (an
/// error, a crash, a timeout), kExitInputError for a bad study or results
/// directory, 128 + N when signal N (SIGINT, SIGTERM) interrupted the sweep.
int RunSweep(const SweepOptions& options, std::ostream& out, std::ostream& err);

/// `tpusim validate [SUITE] [--family F] [--chip C] [-p K=V] [--json OUT] [--report DIR]`:
/// time the workloads of published TPU measurements and report the error.
struct ValidateOptions {
  std::string suite;                   ///< the suite file; AddValidateCommand sets the default
  std::vector<std::string> families;   ///< run only these families; empty: all
  std::vector<std::string> chips;      ///< run only the families on these presets; empty: all
  std::vector<std::string> overrides;  ///< -p key.path=value, applied to every preset
  std::string json;                    ///< write rows and statistics as JSON here; empty: do not
  std::string report;                  ///< write DIR/index.html here; empty: do not
  int64_t worst = 10;                  ///< rows listed by largest |error|
  int64_t jobs = 2;                    ///< timing processes at once
  std::string models_dir;              ///< AddValidateCommand sets the default
  std::string hlo;                     ///< print the module generated for this row id and stop
};
/// Adds the `validate` subcommand to `app`; parsing fills `options`.
CLI::App* AddValidateCommand(CLI::App& app, ValidateOptions& options);
/// kExitCheckFailed when a family's MAPE is over its bound; kExitInputError for
/// a bad suite, measurement file, preset or filter.
int RunValidate(const ValidateOptions& options, std::ostream& out, std::ostream& err);

struct ScenarioExecOptions;
/// The hidden `scenario-exec` subcommand `tpusim run` starts per scenario.
CLI::App* AddScenarioExecCommand(CLI::App& app, ScenarioExecOptions& options);

/// The chip presets' directory when --models-dir is not given: $TPUSIM_MODELS_DIR
/// when set; else, for an installed binary (PREFIX/bin/tpusim),
/// PREFIX/share/tpusim/models; else the source checkout's models/ that the
/// build compiled in. Computed once per process.
const std::string& DefaultModelsDir();

/// Adds `--models-dir DIR` to `command`, setting `models_dir` to
/// DefaultModelsDir until the option is given; `what` leads its help.
void AddModelsDirOption(CLI::App& command, std::string& models_dir,
                        const std::string& what = "Where preset names are looked up");

/// The validation suite `tpusim validate` runs by default: as DefaultModelsDir,
/// PREFIX/share/tpusim/validation/tpu.validation.yaml for an installed binary,
/// else the source checkout's scenarios/validation/.
std::string DefaultValidationSuite();

/// The --algorithm choices, for help: every ici::Algorithm's spelling, auto
/// first with what it means.
std::string CollectiveAlgorithmChoices();

/// Makes `app`'s help, and that of the subcommands added after, end each
/// option's description with its default (from capture_default_str) unless
/// the description states it.
void StateDefaultsInHelp(CLI::App& app);

/// Checks for options that must be above zero (--jobs, --top, --timeout) or
/// not below it (--branch, --rtol): "must be positive, got '0'", "must be at
/// least 0, got '-1'". CLI11's PositiveNumber and NonNegativeNumber name their
/// range instead, the largest double in 300 digits; use these.
const CLI::Validator& PositiveNumber();
const CLI::Validator& NonNegativeNumber();

/// A transform for a duration option (--timeout): "30s", "500ms", "2min" or
/// bare seconds, as a scenario's `timeout` reads them (ParseSeconds), into
/// seconds; check PositiveNumber after it.
const CLI::Validator& Duration();

/// A check for options whose empty value would read as the option left out
/// (--topology ""): "must not be empty".
const CLI::Validator& NonEmpty();

/// A check for options naming a file to write (-o, --json, --trace): "-"
/// would otherwise create a file named "-" where a user expects standard
/// output, which /dev/stdout writes instead.
const CLI::Validator& OutputFile();

/// Makes every integer option of `app` and its subcommands read its value as
/// a decimal number (`--top 010` is 10, not CLI11's octal 8) and refuse one
/// outside int64_t ("--top: '99999999999999999999' is out of range ...");
/// called once every subcommand's options are added.
void CheckIntegerOptions(CLI::App& app);

/// Adds --max-memory, which sets `max_memory` (a byte count; empty: the
/// default), to a command that computes values (exec, diff).
void AddMaxMemoryOption(CLI::App& command, std::string& max_memory);

/// Adds --max-while-iterations, --max-loop-work and --max-executed-instructions,
/// which set `limits`, to a command that runs modules (exec, diff).
void AddLoopLimitOptions(CLI::App& command, LoopLimits& limits);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_CLI_CLI_H_
