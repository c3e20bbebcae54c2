#include "harness/sweep/sweep_run.h"

#include <unistd.h>

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

#include "harness/suite/process_pool.h"
#include "harness/suite/scenario.h"
#include "harness/suite/scenario_exec.h"
#include "harness/sweep/plots.h"
#include "harness/sweep/ranks.h"
#include "harness/sweep/results.h"
#include "harness/sweep/study.h"
#include "sim/base/file.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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
/// interrupted (`interrupted`) and the child died of it (the point runs again
/// on --resume).
std::optional<PointResult> ResultOf(const StudyPoint& point, const ProcessJob& job,
                                    const std::string& result_file, const ProcessOutcome& outcome,
                                    const std::string& points_dir, bool interrupted) {
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
  } else if (interrupted && outcome.signal != 0 && !outcome.timed_out) {
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
StatusOr<std::vector<int64_t>> PendingPoints(const SweepOptions& options, const Study& study,
                                             std::optional<ResultsDir>& results) {
  TPUSIM_ASSIGN_OR_RETURN(ResultsDir opened, ResultsDir::Open(options.out, study, options.resume));
  results.emplace(std::move(opened));
  std::vector<bool> done(study.points.size(), false);
  for (const PointResult& r : results->done()) done[static_cast<size_t>(r.index)] = true;
  std::vector<int64_t> pending;
  for (size_t i = 0; i < done.size(); ++i) {
    if (!done[i]) pending.push_back(static_cast<int64_t>(i));
  }
  return pending;
}

}  // namespace

StatusOr<SweepOutcome> RunStudy(const SweepOptions& options, std::ostream& err) {
  SweepRanks ranks;
  const bool leader = ranks.rank() == 0;
  SweepOutcome outcome;
  outcome.rank_zero = leader;
  StatusOr<Study> loaded = LoadStudy(options.study, options.models_dir);
  if (!loaded.ok()) {
    if (!leader) outcome.end = SweepOutcome::End::kReportedByRankZero;
    return leader ? StatusOr<SweepOutcome>(loaded.status()) : outcome;
  }
  const Study& study = *loaded;
  outcome.name = study.name;
  outcome.points = study.points.size();
  std::optional<ResultsDir> results;
  Status pending_error = Status::Ok();
  std::optional<std::vector<int64_t>> pending;
  if (leader) {
    StatusOr<std::vector<int64_t>> listed = PendingPoints(options, study, results);
    if (listed.ok()) pending = std::move(*listed);
    pending_error = listed.status();
  }
  pending = ranks.SharePending(pending);
  if (!pending.has_value()) {
    if (!leader) outcome.end = SweepOutcome::End::kReportedByRankZero;
    return leader ? StatusOr<SweepOutcome>(pending_error) : outcome;
  }

  // This rank's share, and where it keeps the points' files: DIR/points on
  // rank 0, a scratch directory on the others (DIR may not be shared).
  std::string points_dir = (fs::path(options.out) / "points").string();
  if (!leader) {
    const char* tmp = getenv("TMPDIR");
    points_dir =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tpusim_sweep.XXXXXX";
    if (mkdtemp(points_dir.data()) == nullptr) {
      ranks.SendDone();
      return InvalidArgument("tpusim sweep: error: cannot create a scratch directory " + points_dir);
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
      ranks.SendDone();
      return s;
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

  const InterruptWatch interrupts;
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
  const auto on_finish = [&](size_t i, const ProcessOutcome& finished) {
    std::optional<PointResult> result =
        ResultOf(*mine[i], jobs[i], result_files[i], finished, points_dir, interrupts.count() > 0);
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
    return write_error.ok() ? interrupts.Patient() : PoolAction::kAbandon;
  };
  if (leader) progress.Draw();
  RunProcesses(jobs, static_cast<int>(options.jobs), nullptr, on_finish, poll);
  outcome.signal = interrupts.signal();
  if (!leader) {
    ranks.SendDone();
    fs::remove_all(points_dir, ec);
    outcome.end = interrupts.count() > 0 ? SweepOutcome::End::kInterrupted
                  : failed               ? SweepOutcome::End::kPointFailed
                                         : SweepOutcome::End::kEveryPointRan;
    return outcome;
  }
  while (!ranks.OthersDone()) {
    receive();
    progress.Draw();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  progress.End();
  TPUSIM_RETURN_IF_ERROR(write_error);
  outcome.done = results->done().size();
  if (outcome.done < study.points.size()) {
    outcome.end = outcome.signal == 0 ? SweepOutcome::End::kRanksStoppedEarly
                                      : SweepOutcome::End::kInterrupted;
    return outcome;
  }
  TPUSIM_RETURN_IF_ERROR(results->Finish());
  for (const PointResult& r : results->done()) failed = failed || r.status != "ok";
  TPUSIM_RETURN_IF_ERROR(WriteSweepReport(options.out, study, results->done()));
  for (const PointResult& r : results->done()) outcome.ok += r.status == "ok" ? 1 : 0;
  outcome.end = failed ? SweepOutcome::End::kPointFailed : SweepOutcome::End::kEveryPointRan;
  return outcome;
}

}  // namespace tpusim::harness
