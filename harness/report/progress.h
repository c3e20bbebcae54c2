// A live progress line for long runs on a terminal: a thread redraws
// "LABEL: 12.3 s, 4,567,890 UNIT" (instructions, sizes timed) on stderr twice a second while a
// run counts its work, and erases it when the run ends. Nothing is drawn when
// stderr is not a terminal, so logs and pipes see plain output only.
#ifndef TPUSIM_HARNESS_REPORT_PROGRESS_H_
#define TPUSIM_HARNESS_REPORT_PROGRESS_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace tpusim::harness {

class ProgressLine {
 public:
  /// Starts drawing when stderr is a terminal; `counter` (the work done, in
  /// `unit`) must outlive this.
  ProgressLine(std::string label, const std::atomic<int64_t>* counter, std::string unit);
  /// Stops drawing and erases the line.
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void Run();

  const std::string label_;
  const std::atomic<int64_t>* const counter_;
  const std::string unit_;  ///< what counter_ counts, e.g. "instructions"
  std::mutex mutex_;
  std::condition_variable stop_requested_;
  bool stop_ = false;
  std::thread thread_;  ///< not started when stderr is not a terminal
};

}  // namespace tpusim::harness

#endif  // TPUSIM_HARNESS_REPORT_PROGRESS_H_
