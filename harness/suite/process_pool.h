// Runs child processes, up to N at once, each with a timeout: the suite
// runner's engine (`tpusim run` runs each scenario in its own process, since
// SystemC cannot restart and a crash must fail one scenario, not the suite).
#ifndef TPUSIM_HARNESS_SUITE_PROCESS_POOL_H_
#define TPUSIM_HARNESS_SUITE_PROCESS_POOL_H_

#include <signal.h>

#include <functional>
#include <string>
#include <vector>

namespace tpusim::harness {

struct ProcessJob {
  std::vector<std::string> argv;  ///< argv[0] is the program's path
  std::string log_file;           ///< the child's stdout and stderr go here
  double timeout_seconds = 0;     ///< killed (SIGKILL) after this long; 0: never
};

struct ProcessOutcome {
  bool spawned = false;  ///< false: posix_spawn failed (`error` says why)
  bool timed_out = false;
  int exit_code = -1;  ///< when it exited
  int signal = 0;      ///< when a signal ended it (SIGKILL after a timeout)
  double seconds = 0;  ///< wall time
  std::string error;
  /// "exited with code 2", "killed by signal 11 (SIGSEGV)", "timed out after 5 s":
  /// what the process did, after "the simulator".
  std::string Describe(double timeout_seconds) const;
};

/// What RunProcesses does next, as its `poll` callback decides (a runner that
/// was asked to stop, e.g. by SIGTERM).
enum class PoolAction {
  kContinue,       ///< go on starting jobs
  kStopLaunching,  ///< start no more jobs; wait for the running ones
  kAbandon,        ///< start no more; SIGTERM the running ones and wait for them
};

/// SIGINT and SIGTERM counted while alive (the handlers it replaced come back
/// after): how a runner of child processes learns it was asked to stop.
/// One alive at a time.
class InterruptWatch {
 public:
  InterruptWatch();
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  int count() const;   ///< signals seen
  int signal() const;  ///< the last one seen, 0 before any
  /// A runner whose jobs are worth finishing: the first signal stops
  /// launching, the second abandons the running jobs.
  PoolAction Patient() const;

 private:
  struct sigaction old_int_ = {};
  struct sigaction old_term_ = {};
};

/// The path of the running `tpusim` binary, for starting its child processes.
std::string SelfPath();

/// Runs `jobs` with at most `parallel` alive at once, in order of index, and
/// returns their outcomes by index. `on_start` and `on_finish` are called on
/// this thread as each job starts and ends (for progress display). `poll`,
/// when given, is called on this thread on every turn of the wait loop (at
/// least every few milliseconds); jobs it keeps from starting keep the
/// outcome `spawned == false` with `error` "not started", and get no callback.
std::vector<ProcessOutcome> RunProcesses(
    const std::vector<ProcessJob>& jobs, int parallel, const std::function<void(size_t)>& on_start,
    const std::function<void(size_t, const ProcessOutcome&)>& on_finish,
    const std::function<PoolAction()>& poll = nullptr);

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_SUITE_PROCESS_POOL_H_
