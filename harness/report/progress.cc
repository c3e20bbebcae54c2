#include "harness/report/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <utility>

#include "sim/base/units.h"

namespace tpusim::harness {

ProgressLine::ProgressLine(std::string label, const std::atomic<int64_t>* counter, std::string unit)
    : label_(std::move(label)), counter_(counter), unit_(std::move(unit)) {
  if (isatty(STDERR_FILENO) == 1) thread_ = std::thread([this] { Run(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_requested_.notify_one();
  thread_.join();
}

void ProgressLine::Run() {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  bool drawn = false;
  // The first redraw waits a second, so that short runs show nothing.
  std::chrono::milliseconds next(1000);
  while (!stop_requested_.wait_for(lock, next, [this] { return stop_; })) {
    next = std::chrono::milliseconds(500);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::fprintf(stderr, "\r\033[K%s: %.1f s, %s %s", label_.c_str(), seconds,
                 FormatGrouped(counter_->load(std::memory_order_relaxed)).c_str(), unit_.c_str());
    std::fflush(stderr);
    drawn = true;
  }
  if (drawn) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }
}

}  // namespace tpusim::harness
