#include "harness/suite/suite_run.h"

#include <fnmatch.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "harness/report/exit.h"
#include "harness/suite/process_pool.h"
#include "harness/suite/scenario.h"
#include "harness/suite/scenario_exec.h"
#include "harness/suite/suite_report.h"
#include "harness/sweep/study.h"
#include "harness/validate/suite.h"
#include "sim/base/file.h"

namespace tpusim::harness {
namespace {

namespace fs = std::filesystem;

/// A scenario file: *.yaml or *.yml, but not a study (*.study.yaml, run by
/// `tpusim sweep`) nor a validation suite (*.validation.yaml, run by `tpusim
/// validate`), so both may sit among the scenarios.
bool IsScenarioFile(const fs::path& path) {
  const std::string name = path.filename().string();
  return (path.extension() == ".yaml" || path.extension() == ".yml") &&
         !name.ends_with(kStudySuffix) && !name.ends_with(kValidationSuiteSuffix);
}

/// Every scenario file under `paths`, sorted within each directory.
StatusOr<std::vector<std::string>> Discover(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  // A file reached twice (a path given twice, or a file inside a directory
  // also given) runs once, not as two scenarios of one name.
  std::set<fs::path> seen;
  const auto add = [&](const std::string& file) {
    std::error_code ec;
    if (seen.insert(fs::weakly_canonical(file, ec)).second) files.push_back(file);
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) {
      add(path);
    } else if (fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(path, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file() && IsScenarioFile(it->path()))
          found.push_back(it->path().string());
      }
      if (ec) return InvalidArgument(path + ": error: cannot list directory: " + ec.message());
      // Among other paths, an empty one would pass unnoticed (a suite
      // directory misspelled, or moved).
      if (found.empty() && paths.size() > 1) {
        return InvalidArgument(path + ": error: no scenario (*.yaml) file in this directory");
      }
      std::sort(found.begin(), found.end());
      for (const std::string& file : found) add(file);
    } else {
      return InvalidArgument(path + ": error: no such file or directory");
    }
  }
  return files;
}

/// The golden store of a suite: the nearest directory named `golden` in or
/// above the first of `paths` (a scenario file's directory, or a suite
/// directory), as git finds `.git`; else `golden` in the current directory.
std::string SuiteGoldenDir(const std::vector<std::string>& paths) {
  std::error_code ec;
  if (!paths.empty()) {
    fs::path dir = fs::absolute(paths.front(), ec).lexically_normal();
    if (!fs::is_directory(dir, ec)) dir = dir.parent_path();
    for (; !dir.empty(); dir = dir.parent_path()) {
      if (fs::is_directory(dir / "golden", ec)) return (dir / "golden").string();
      if (dir == dir.root_path()) break;
    }
  }
  return "golden";
}

/// The last `lines` lines of the file, for a crashed child's report.
std::string Tail(const std::string& path, size_t lines) {
  StatusOr<std::string> text = ReadFile(path);
  if (!text.ok() || text->empty()) return "";
  std::string s = *text;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  size_t pos = s.size();
  for (size_t n = 0; n < lines && pos != std::string::npos && pos > 0; ++n) {
    pos = s.rfind('\n', pos - 1);
  }
  return pos == std::string::npos ? s : s.substr(pos + 1);
}

/// The result of a scenario whose child did not report one.
ScenarioResult CrashedResult(const Scenario& scenario, const ProcessOutcome& outcome,
                             double timeout, const std::string& log) {
  ScenarioResult result;
  result.name = scenario.name;
  result.file = scenario.file;
  result.status = ScenarioStatus::kFail;
  result.seconds = outcome.seconds;
  result.messages.push_back("the simulator " + outcome.Describe(timeout) +
                            " before reporting a result");
  const std::string tail = Tail(log, 5);
  if (!tail.empty()) result.messages.push_back("last output: " + tail);
  return result;
}

/// The result of a scenario the run stopped, or never started, on `signo`.
ScenarioResult Interrupted(const Scenario& scenario, int signo) {
  ScenarioResult result;
  result.name = scenario.name;
  result.file = scenario.file;
  result.status = ScenarioStatus::kError;
  result.messages.push_back(std::string("not run to the end: tpusim run was interrupted (") +
                            (signo == SIGINT ? "SIGINT" : "SIGTERM") + ")");
  return result;
}

}  // namespace

int RunSuite(const RunOptions& options, std::ostream& out, std::ostream& err) {
  // A CI job cancelled (SIGINT, SIGTERM) stops its scenarios at once: a
  // scenario takes seconds to run again, and one left running would write
  // goldens after the job ended. Watched from the start, so that a signal
  // while the scenarios load still ends in the reports.
  const InterruptWatch interrupts;
  StatusOr<std::vector<std::string>> files = Discover(options.paths);
  if (!files.ok()) {
    PrintError(files.status(), err);
    return kExitInputError;
  }
  // Load every scenario here first: malformed ones are reported precisely and
  // not run; the others still run.
  std::vector<ScenarioResult> results;
  std::vector<Scenario> scenarios;
  std::map<std::string, std::string> names;  // name -> file, to refuse duplicates
  for (const std::string& file : *files) {
    StatusOr<Scenario> scenario = LoadScenario(file, options.models_dir);
    // One that does not load is reported whatever the filter: its name is
    // unknown, and a gate must not lose a scenario whose module a release
    // renamed.
    if (scenario.ok() && !options.filter.empty() &&
        fnmatch(options.filter.c_str(), scenario->name.c_str(), 0) != 0) {
      continue;
    }
    if (scenario.ok()) {
      if (auto [it, inserted] = names.emplace(scenario->name, file); !inserted) {
        scenario =
            InvalidArgument(file + ": error: key path `name`: scenario name '" + scenario->name +
                            "' is also used by " + it->second + " (names the golden directory)");
      }
    }
    if (!scenario.ok()) {
      PrintError(scenario.status(), err);
      ScenarioResult bad;
      bad.name = fs::path(file).stem().string();
      bad.file = file;
      bad.status = ScenarioStatus::kError;
      bad.messages.push_back(scenario.status().message());
      results.push_back(std::move(bad));
      continue;
    }
    scenarios.push_back(std::move(*scenario));
  }
  // Nothing to run is a mistake (an empty directory, a mistyped --filter),
  // never a passing suite.
  if (scenarios.empty() && results.empty()) {
    err << "tpusim run: error: no scenario to run: "
        << (files->empty() ? "no *.yaml file found in the paths given"
                           : "--filter " + Quote(options.filter) + " matches none of the " +
                                 std::to_string(files->size()) + " scenario file(s)")
        << '\n';
    return kExitInputError;
  }

  // Results and logs of the children; removed when the run ends.
  const char* tmp = getenv("TMPDIR");
  std::string scratch =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tpusim_run.XXXXXX";
  if (mkdtemp(scratch.data()) == nullptr) {
    err << "tpusim run: error: cannot create a scratch directory " << scratch << '\n';
    return kExitInputError;
  }
  const std::string self = SelfPath();
  const std::string golden_dir =
      options.golden_dir.empty() ? SuiteGoldenDir(options.paths) : options.golden_dir;
  if (!options.report.empty()) {
    std::error_code ec;
    fs::create_directories(fs::path(options.report) / "traces", ec);
    if (ec) {
      err << options.report << ": error: cannot create directory: " << ec.message() << '\n';
      return kExitInputError;
    }
  }
  std::vector<ProcessJob> jobs;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    ProcessJob job;
    const std::string stem = scratch + "/" + std::to_string(i);
    job.argv = {
        self,           "scenario-exec",    scenarios[i].file, "--result",        stem + ".json",
        "--golden-dir", golden_dir,         "--models-dir",    options.models_dir};
    if (options.update_golden) job.argv.push_back("--update-golden");
    if (!options.report.empty()) {
      job.argv.push_back("--trace");
      job.argv.push_back(
          (fs::path(options.report) / "traces" / (scenarios[i].name + ".json")).string());
    }
    job.log_file = stem + ".log";
    job.timeout_seconds =
        scenarios[i].timeout_seconds > 0 ? scenarios[i].timeout_seconds : options.timeout;
    jobs.push_back(std::move(job));
  }

  const bool tty = isatty(STDERR_FILENO) != 0;
  std::set<size_t> active;
  size_t finished = 0;
  const auto draw = [&] {
    if (!tty || active.empty()) return;
    std::string names_running;
    for (size_t i : active) names_running += " " + scenarios[i].name;
    std::string line = "[" + std::to_string(finished) + "/" + std::to_string(jobs.size()) +
                       "] running:" + names_running;
    if (line.size() > 100) line = line.substr(0, 97) + "...";
    err << "\r\033[K" << line << std::flush;
  };
  std::vector<ScenarioResult> ran(scenarios.size());
  std::vector<bool> reported(scenarios.size(), false);
  const auto on_start = [&](size_t i) {
    active.insert(i);
    draw();
  };
  const auto on_finish = [&](size_t i, const ProcessOutcome& outcome) {
    active.erase(i);
    ++finished;
    StatusOr<std::string> text = ReadFile(jobs[i].argv[4]);
    StatusOr<ScenarioResult> result = outcome.spawned && outcome.exit_code == 0 && text.ok()
                                          ? ResultFromJson(*text, jobs[i].argv[4])
                                          : StatusOr<ScenarioResult>(InvalidArgument("no result"));
    reported[i] = true;
    if (result.ok()) {
      result->seconds = outcome.seconds;
      ran[i] = std::move(*result);
    } else if (interrupts.count() > 0 && outcome.signal != 0 && !outcome.timed_out) {
      ran[i] = Interrupted(scenarios[i], interrupts.signal());
    } else {
      ran[i] = CrashedResult(scenarios[i], outcome, jobs[i].timeout_seconds, jobs[i].log_file);
    }
    if (tty) err << "\r\033[K";
    err << "[" << finished << "/" << jobs.size() << "] " << ScenarioStatusName(ran[i].status) << ' ' << ran[i].name
        << '\n';
    draw();
  };
  // With --update-golden, the scenarios that write their own golden run
  // first: one that compares with another's (`golden: NAME`) must read the
  // golden this run writes, not race it.
  std::vector<size_t> writers, readers;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const bool reads_other = scenarios[i].golden != scenarios[i].name;
    (options.update_golden && reads_other ? readers : writers).push_back(i);
  }
  for (const std::vector<size_t>& phase : {writers, readers}) {
    std::vector<ProcessJob> batch;
    for (size_t i : phase) batch.push_back(jobs[i]);
    RunProcesses(
        batch, static_cast<int>(options.jobs), [&](size_t k) { on_start(phase[k]); },
        [&](size_t k, const ProcessOutcome& outcome) { on_finish(phase[k], outcome); },
        [&] { return interrupts.count() > 0 ? PoolAction::kAbandon : PoolAction::kContinue; });
  }
  for (size_t i = 0; i < scenarios.size(); ++i) {
    if (!reported[i]) ran[i] = Interrupted(scenarios[i], interrupts.signal());
  }
  if (tty) err << "\r\033[K" << std::flush;
  std::error_code ec;
  fs::remove_all(scratch, ec);

  results.insert(results.end(), ran.begin(), ran.end());
  PrintSuiteTable(results, out);
  if (options.github_annotations) out << SuiteGithubAnnotations(results);
  int code = kExitOk;
  for (const ScenarioResult& r : results) {
    if (r.status == ScenarioStatus::kError) code = kExitInputError;
    if (r.status != ScenarioStatus::kPass && code == kExitOk) code = kExitCheckFailed;
  }
  // The shell's code for a run a signal ended (130, 143); the reports below
  // still say what ran.
  if (interrupts.count() > 0) code = 128 + interrupts.signal();
  if (!options.json.empty()) {
    if (Status s = WriteFileAtomically(options.json, SuiteJson(results)); !s.ok()) {
      PrintError(s, err);
      code = kExitInputError;
    }
  }
  if (!options.report.empty()) {
    const std::string index = (fs::path(options.report) / "index.html").string();
    if (Status s = WriteFileAtomically(index, SuiteHtml(results, "traces")); !s.ok()) {
      PrintError(s, err);
      code = kExitInputError;
    }
  }
  if (!options.junit.empty()) {
    if (Status s = WriteFileAtomically(options.junit, SuiteJUnit(results)); !s.ok()) {
      PrintError(s, err);
      code = kExitInputError;
    }
  }
  return code;
}

}  // namespace tpusim::harness
