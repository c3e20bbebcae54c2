// `tpusim sweep STUDY --out DIR`: its options, the call that runs the study
// (harness/sweep/sweep_run.h), and what its end prints and exits with.
#include <CLI/CLI.hpp>

#include <ostream>

#include "harness/cli/cli.h"
#include "harness/sweep/sweep_run.h"

namespace tpusim::harness {

CLI::App* AddSweepCommand(CLI::App& app, SweepOptions& options) {
  CLI::App* sweep = app.add_subcommand(
      "sweep",
      "Run a what-if study (docs/sweeps.md): every point of its grid or list, each in its own "
      "process, into DIR/results.csv and DIR/results.jsonl, with plots and DIR/index.html");
  sweep->add_option("STUDY", options.study, "The study file (*.study.yaml)")
      ->required()
      ->type_name("");
  sweep->add_option("--out", options.out, "The results directory (created when missing)")
      ->option_text("DIR")
      ->required();
  sweep->add_option("-j,--jobs", options.jobs, "Points run at once (on each MPI rank)")
      ->option_text("N")
      ->check(PositiveNumber())
      ->capture_default_str();
  sweep->add_flag("--resume", options.resume,
                  "Continue the sweep in DIR: skip the points it holds, run the rest");
  AddModelsDirOption(*sweep, options.models_dir);
  sweep
      ->add_option("--timeout", options.timeout,
                   "How long a point may run (30s, 500ms, 2min, or seconds), unless its scenario "
                   "sets `timeout`, before it is "
                   "killed and recorded as a timeout")
      ->option_text("DURATION")
      ->transform(Duration())
      ->check(PositiveNumber())
      ->capture_default_str();
  sweep->footer(R"(Files in DIR:
  results.jsonl  one JSON line per point: index, point (its key), params, status,
                 metrics, message; appended and fsynced as each point finishes
  results.csv    the same as a table; both rewritten in point order at the end
  study.json     the study's stamp: --resume refuses results of another study
  points/        each point's scenario (KEY.yaml) and its run's log (KEY.log)
  plots/*.svg    the study's plots; index.html shows them with the results

Interrupting: SIGINT or SIGTERM starts no more points, lets the running ones
finish and be recorded, and exits; a second signal stops the running points
(they run again on --resume). After any interruption, SIGKILL included,
'tpusim sweep STUDY --out DIR --resume' runs exactly the points missing.

MPI: 'mpirun -n K tpusim sweep ...' (or srun --mpi=pmix) splits the points
across the ranks; rank 0 writes the same files a single process would.

Exit codes:
  0    every point ran
  1    a point failed: its scenario did not run, the simulator crashed or timed out
  2    usage error, a malformed study, or a results directory of another study
  130  interrupted by SIGINT, 143 by SIGTERM: resume with --resume)");
  return sweep;
}

int RunSweep(const SweepOptions& options, std::ostream& out, std::ostream& err) {
  const StatusOr<SweepOutcome> ran = RunStudy(options, err);
  if (!ran.ok()) {
    PrintError(ran.status(), err);
    return kExitInputError;
  }
  const SweepOutcome& outcome = *ran;
  switch (outcome.end) {
    case SweepOutcome::End::kEveryPointRan:
    case SweepOutcome::End::kPointFailed:
      if (outcome.rank_zero) {
        out << outcome.name << ": " << outcome.points << " point(s), " << outcome.ok << " ok, "
            << outcome.points - outcome.ok << " failed; results in " << options.out
            << "/results.csv, plots in " << options.out << "/index.html\n";
      }
      return outcome.end == SweepOutcome::End::kPointFailed ? kExitCheckFailed : kExitOk;
    case SweepOutcome::End::kInterrupted:
      if (outcome.rank_zero) {
        out << "interrupted: " << outcome.done << " of " << outcome.points
            << " points done; continue with: tpusim sweep " << options.study << " --out "
            << options.out << " --resume\n";
      }
      return 128 + outcome.signal;
    case SweepOutcome::End::kRanksStoppedEarly:
      err << "tpusim sweep: error: " << outcome.points - outcome.done
          << " point(s) were not run (an MPI rank stopped early); run again with --resume\n";
      return kExitCheckFailed;
    case SweepOutcome::End::kReportedByRankZero:
      return kExitInputError;
  }
  return kExitInputError;  // unreachable: every End returns above
}

}  // namespace tpusim::harness
