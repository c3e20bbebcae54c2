#include "harness/suite/process_pool.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

extern char** environ;

namespace tpusim::harness {

namespace {

std::atomic<int> g_interrupts{0};
std::atomic<int> g_signal{0};

void OnInterrupt(int signo) {
  g_signal.store(signo);
  g_interrupts.fetch_add(1);
}

}  // namespace

InterruptWatch::InterruptWatch() {
  g_interrupts = 0;
  g_signal = 0;
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

InterruptWatch::~InterruptWatch() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int InterruptWatch::count() const { return g_interrupts.load(); }

int InterruptWatch::signal() const { return g_signal.load(); }

PoolAction InterruptWatch::Patient() const {
  const int n = count();
  return n == 0   ? PoolAction::kContinue
         : n == 1 ? PoolAction::kStopLaunching
                  : PoolAction::kAbandon;
}

std::string SelfPath() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "/proc/self/exe" : self.string();
}
namespace {

using Clock = std::chrono::steady_clock;

struct Running {
  size_t index = 0;
  pid_t pid = 0;
  Clock::time_point start;
  bool killed_for_timeout = false;
};

/// Starts `job` with stdout and stderr into its log file.
ProcessOutcome Spawn(const ProcessJob& job, pid_t& pid) {
  ProcessOutcome outcome;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, job.log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& arg : job.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    outcome.error = "cannot start " + job.argv[0] + ": " + std::strerror(rc);
    return outcome;
  }
  outcome.spawned = true;
  return outcome;
}

}  // namespace

std::string ProcessOutcome::Describe(double timeout_seconds) const {
  if (!spawned) return error;
  if (timed_out) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "timed out after %g s", timeout_seconds);
    return buffer;
  }
  if (signal != 0) {
    const char* name = sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) +
           (name != nullptr ? " (SIG" + std::string(name) + ")" : "");
  }
  return "exited with code " + std::to_string(exit_code);
}

std::vector<ProcessOutcome> RunProcesses(
    const std::vector<ProcessJob>& jobs, int parallel, const std::function<void(size_t)>& on_start,
    const std::function<void(size_t, const ProcessOutcome&)>& on_finish,
    const std::function<PoolAction()>& poll) {
  std::vector<ProcessOutcome> outcomes(jobs.size());
  for (ProcessOutcome& outcome : outcomes) outcome.error = "not started";
  std::vector<Running> running;
  size_t next = 0;
  size_t end = jobs.size();  // jobs from here on are not started
  bool abandoned = false;
  if (parallel < 1) parallel = 1;
  while (next < end || !running.empty()) {
    const PoolAction action = poll ? poll() : PoolAction::kContinue;
    if (action != PoolAction::kContinue) end = next;
    if (action == PoolAction::kAbandon && !abandoned) {
      for (const Running& r : running) kill(r.pid, SIGTERM);
      abandoned = true;
    }
    while (next < end && static_cast<int>(running.size()) < parallel) {
      const size_t index = next++;
      pid_t pid = 0;
      outcomes[index] = Spawn(jobs[index], pid);
      if (on_start) on_start(index);
      if (!outcomes[index].spawned) {
        if (on_finish) on_finish(index, outcomes[index]);
        continue;
      }
      running.push_back({index, pid, Clock::now(), false});
    }
    bool reaped = false;
    for (size_t i = 0; i < running.size();) {
      Running& r = running[i];
      const double elapsed = std::chrono::duration<double>(Clock::now() - r.start).count();
      const double timeout = jobs[r.index].timeout_seconds;
      if (!r.killed_for_timeout && timeout > 0 && elapsed > timeout) {
        kill(r.pid, SIGKILL);
        r.killed_for_timeout = true;
      }
      int status = 0;
      const pid_t done = waitpid(r.pid, &status, WNOHANG);
      if (done != r.pid) {
        ++i;
        continue;
      }
      ProcessOutcome& outcome = outcomes[r.index];
      outcome.seconds = elapsed;
      outcome.timed_out = r.killed_for_timeout;
      if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
      if (on_finish) on_finish(r.index, outcome);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      reaped = true;
    }
    if (!reaped && !running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return outcomes;
}

}  // namespace tpusim::harness
