// `tpusim sweep STUDY --out DIR`: expands a study into points, runs each in
// its own child process (`tpusim scenario-exec`, like `tpusim run`) up to -j
// at once on every rank, appends each result as it finishes, and draws the
// plots when the last point is in.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/suite/process_pool.h"
#include "harness/suite/scenario.h"
#include "harness/suite/scenario_exec.h"
#include "harness/sweep/study.h"
#include "harness/sweep/plots.h"
#include "harness/sweep/ranks.h"
#include "harness/sweep/results.h"
#include "sim/base/file.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// SIGINT/SIGTERM seen: the first stops launching points, the second
/// abandons the running ones.
std::atomic<int> g_interrupts{0};
std::atomic<int> g_signal{0};

void OnInterrupt(int signo) {
  g_signal.store(signo);
  g_interrupts.fetch_add(1);
}

/// Installs OnInterrupt for SIGINT and SIGTERM while alive.
class InterruptHandlers {
 public:
  InterruptHandlers() {
    g_interrupts = 0;
    g_signal = 0;
    struct sigaction action = {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~InterruptHandlers() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  struct sigaction old_int_ = {};
  struct sigaction old_term_ = {};
};

PoolAction InterruptAction() {
  const int n = g_interrupts.load();
  return n == 0   ? PoolAction::kContinue
         : n == 1 ? PoolAction::kStopLaunching
                  : PoolAction::kAbandon;
}

/// "1h02m", "3m05s", "12s".
std::string Duration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, s / 60 % 60);
  } else if (s >= 60) {
    std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%lds", s);
  }
  return buffer;
}

/// The progress of the sweep on stderr: a redrawn bar with the rate and ETA
/// on a terminal, one line per finished point otherwise.
class SweepProgress {
 public:
  SweepProgress(std::ostream& err, size_t total, size_t done)
      : err_(err),
        tty_(isatty(STDERR_FILENO) == 1),
        total_(total),
        done_(done),
        first_(done),
        start_(Clock::now()) {}

  void Finished(const Study& study, const PointResult& result) {
    ++done_;
    if (tty_) return Draw(true);
    std::string params;
    for (size_t a = 0; a < study.axes.size(); ++a) {
      const std::string& label = study.points[static_cast<size_t>(result.index)].labels[a];
      if (!label.empty()) params += " " + study.axes[a] + "=" + label;
    }
    err_ << "[" << done_ << "/" << total_ << "] " << result.status << " point " << result.index
         << params << (result.message.empty() ? "" : ": " + result.message) << '\n';
  }
  /// Redraws the bar: at once when `now`, else at most five times a second.
  void Draw(bool now = false) {
    if (!tty_) return;
    if (!now && Clock::now() - drawn_ < std::chrono::milliseconds(200)) return;
    drawn_ = Clock::now();
    constexpr size_t kWidth = 30;
    const size_t filled = total_ == 0 ? kWidth : done_ * kWidth / total_;
    const double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    const size_t ran = done_ - first_;
    std::string eta = "ETA --";
    if (ran > 0 && seconds > 0) {
      eta = "ETA " +
            Duration(seconds / static_cast<double>(ran) * static_cast<double>(total_ - done_));
    }
    err_ << "\r\033[K[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] "
         << done_ << "/" << total_ << " points, " << Duration(seconds) << ", " << eta << std::flush;
  }
  void End() {
    if (tty_) err_ << "\r\033[K" << std::flush;
  }

 private:
  std::ostream& err_;
  const bool tty_;
  const size_t total_;
  size_t done_;
  const size_t first_;  ///< done before this run (resumed)
  const Clock::time_point start_;
  Clock::time_point drawn_;  ///< when the bar was last drawn
};

/// The result of a point whose child finished; nullopt when the sweep was
/// interrupted and the child died of it (the point runs again on --resume).
std::optional<PointResult> ResultOf(const StudyPoint& point, const ProcessJob& job,
                                    const std::string& result_file, const ProcessOutcome& outcome,
                                    const std::string& points_dir) {
  PointResult result;
  result.index = point.index;
  result.key = point.key;
  StatusOr<std::string> text = ReadFile(result_file);
  StatusOr<ScenarioResult> child = outcome.spawned && outcome.exit_code == 0 && text.ok()
                                       ? ResultFromJson(*text, result_file)
                                       : StatusOr<ScenarioResult>(InvalidArgument("no result"));
  if (child.ok()) {
    result.status = child->status == ScenarioStatus::kPass ? "ok" : "error";
    result.metrics = child->metrics;
    for (const std::string& m : child->messages) {
      result.message += (result.message.empty() ? "" : "; ") + m;
    }
  } else if (g_interrupts.load() > 0 && outcome.signal != 0 && !outcome.timed_out) {
    return std::nullopt;
  } else if (!outcome.spawned) {
    if (outcome.error == "not started") return std::nullopt;
    result.status = "error";
    result.message = outcome.error;
  } else {
    result.status = outcome.timed_out ? "timeout" : "crashed";
    result.message =
        "the simulator " + outcome.Describe(job.timeout_seconds) + " before reporting a result";
  }
  // Where this rank kept the point's files is no part of the result.
  for (size_t at; (at = result.message.find(points_dir)) != std::string::npos;) {
    result.message.replace(at, points_dir.size(), "points");
  }
  for (char& c : result.message) {
    if (c == '\n') c = ' ';
  }
  return result;
}

/// Rank 0's side: opens the results directory and lists the points left.
std::optional<std::vector<int64_t>> PendingPoints(const SweepOptions& options, const Study& study,
                                                  std::optional<ResultsDir>& results,
                                                  std::ostream& err) {
  StatusOr<ResultsDir> opened = ResultsDir::Open(options.out, study, options.resume);
  if (!opened.ok()) {
    PrintError(opened.status(), err);
    return std::nullopt;
  }
  results.emplace(std::move(*opened));
  std::vector<bool> done(study.points.size(), false);
  for (const PointResult& r : results->done()) done[static_cast<size_t>(r.index)] = true;
  std::vector<int64_t> pending;
  for (size_t i = 0; i < done.size(); ++i) {
    if (!done[i]) pending.push_back(static_cast<int64_t>(i));
  }
  return pending;
}

}  // namespace

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
                   "Seconds a point may run (unless its scenario sets `timeout`) before it is "
                   "killed and recorded as a timeout")
      ->option_text("SECONDS")
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
  SweepRanks ranks;
  const bool leader = ranks.rank() == 0;
  StatusOr<Study> loaded = LoadStudy(options.study, options.models_dir);
  if (!loaded.ok()) {
    if (leader) PrintError(loaded.status(), err);
    return kExitInputError;
  }
  const Study& study = *loaded;
  std::optional<ResultsDir> results;
  std::optional<std::vector<int64_t>> pending;
  if (leader) pending = PendingPoints(options, study, results, err);
  pending = ranks.SharePending(pending);
  if (!pending.has_value()) return kExitInputError;

  // This rank's share, and where it keeps the points' files: DIR/points on
  // rank 0, a scratch directory on the others (DIR may not be shared).
  std::string points_dir = (fs::path(options.out) / "points").string();
  if (!leader) {
    const char* tmp = getenv("TMPDIR");
    points_dir =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tpusim_sweep.XXXXXX";
    if (mkdtemp(points_dir.data()) == nullptr) {
      err << "tpusim sweep: error: cannot create a scratch directory " << points_dir << '\n';
      ranks.SendDone();
      return kExitInputError;
    }
  }
  points_dir = fs::absolute(points_dir).string();
  std::error_code ec;
  fs::create_directories(points_dir, ec);
  std::vector<const StudyPoint*> mine;
  std::vector<ProcessJob> jobs;
  std::vector<std::string> result_files;
  const std::string self = SelfPath();
  for (size_t i = 0; i < pending->size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(ranks.size())) != ranks.rank()) continue;
    const StudyPoint& point = study.points[static_cast<size_t>((*pending)[i])];
    const std::string stem = points_dir + "/" + point.key;
    if (Status s = WriteFileAtomically(stem + ".yaml", point.scenario_text); !s.ok()) {
      PrintError(s, err);
      ranks.SendDone();
      return kExitInputError;
    }
    StatusOr<Scenario> scenario = ParseScenario(point.scenario_text, stem + ".yaml");
    ProcessJob job;
    job.argv = {self,           "scenario-exec", stem + ".yaml", "--result",        stem + ".json",
                "--golden-dir", points_dir,      "--models-dir", options.models_dir};
    job.log_file = stem + ".log";
    job.timeout_seconds = scenario.ok() && scenario->timeout_seconds > 0 ? scenario->timeout_seconds
                                                                         : options.timeout;
    mine.push_back(&point);
    jobs.push_back(std::move(job));
    result_files.push_back(stem + ".json");
  }

  InterruptHandlers handlers;
  const size_t already = leader ? results->done().size() : 0;
  SweepProgress progress(err, study.points.size(), already);
  Status write_error = Status::Ok();
  bool failed = false;
  // Rank 0 records a result (its own or another rank's).
  const auto record = [&](const PointResult& result) {
    failed = failed || result.status != "ok";
    if (!write_error.ok()) return;
    write_error = results->Append(result);
    progress.Finished(study, result);
  };
  const auto receive = [&] {
    for (const std::string& line : ranks.Receive()) {
      StatusOr<PointResult> result = ResultFromJsonLine(study, line, "an MPI rank's result");
      if (result.ok()) {
        record(*result);
      } else if (write_error.ok()) {
        write_error = result.status();
      }
    }
  };
  const auto on_finish = [&](size_t i, const ProcessOutcome& outcome) {
    std::optional<PointResult> result =
        ResultOf(*mine[i], jobs[i], result_files[i], outcome, points_dir);
    if (!result.has_value()) return;
    if (leader) {
      record(*result);
    } else {
      failed = failed || result->status != "ok";
      ranks.SendResult(ResultJsonLine(study, *result));
    }
  };
  const auto poll = [&] {
    if (leader) {
      receive();
      progress.Draw();
    }
    // A results file that cannot be written stops the sweep like a signal.
    return write_error.ok() ? InterruptAction() : PoolAction::kAbandon;
  };
  if (leader) progress.Draw();
  RunProcesses(jobs, static_cast<int>(options.jobs), nullptr, on_finish, poll);
  if (!leader) {
    ranks.SendDone();
    fs::remove_all(points_dir, ec);
    return g_interrupts.load() > 0 ? 128 + g_signal.load() : failed ? kExitCheckFailed : kExitOk;
  }
  while (!ranks.OthersDone()) {
    receive();
    progress.Draw();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  progress.End();
  if (!write_error.ok()) {
    PrintError(write_error, err);
    return kExitInputError;
  }
  const size_t done = results->done().size();
  if (done < study.points.size() && g_signal.load() == 0) {
    err << "tpusim sweep: error: " << study.points.size() - done
        << " point(s) were not run (an MPI rank stopped early); run again with --resume\n";
    return kExitCheckFailed;
  }
  if (done < study.points.size()) {
    out << "interrupted: " << done << " of " << study.points.size()
        << " points done; continue with: tpusim sweep " << options.study << " --out " << options.out
        << " --resume\n";
    return 128 + g_signal.load();
  }
  if (Status s = results->Finish(); !s.ok()) {
    PrintError(s, err);
    return kExitInputError;
  }
  for (const PointResult& r : results->done()) failed = failed || r.status != "ok";
  if (Status s = WriteSweepReport(options.out, study, results->done()); !s.ok()) {
    PrintError(s, err);
    return kExitInputError;
  }
  size_t ok = 0;
  for (const PointResult& r : results->done()) ok += r.status == "ok" ? 1 : 0;
  out << study.name << ": " << study.points.size() << " point(s), " << ok << " ok, "
      << study.points.size() - ok << " failed; results in " << options.out
      << "/results.csv, plots in " << options.out << "/index.html\n";
  return failed ? kExitCheckFailed : kExitOk;
}

}  // namespace tpusim::harness
