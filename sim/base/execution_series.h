// What each execution of one instruction saw, in execution order, kept as
// runs of equal values: a loop whose inner trip count or ragged-dot groups
// never change costs one entry however many times it runs, and one whose
// values change every iteration (a scan over layers) keeps each of them.
#ifndef TPUSIM_SIM_BASE_EXECUTION_SERIES_H_
#define TPUSIM_SIM_BASE_EXECUTION_SERIES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tpusim {

template <typename T>
class ExecutionSeries {
 public:
  /// Executions [previous run's end, end) saw `value`.
  struct Run {
    int64_t end = 0;
    T value{};
    bool operator==(const Run&) const = default;
  };

  /// Changes kept at most; past them the series stops following changes and
  /// later executions count as the last run's value, so that a pathological
  /// loop cannot exhaust memory through its record.
  static constexpr size_t kMaxRuns = size_t{1} << 20;

  ExecutionSeries() = default;
  /// Every execution sees `value`.
  explicit ExecutionSeries(T value) { Append(std::move(value)); }

  /// Records that the next `count` (>= 1) executions saw `value`.
  void Append(T value, int64_t count = 1) {
    if (!runs_.empty() && (runs_.back().value == value || runs_.size() >= kMaxRuns)) {
      runs_.back().end += count;
      return;
    }
    runs_.push_back(Run{executions() + count, std::move(value)});
  }

  bool empty() const { return runs_.empty(); }
  /// Executions recorded.
  int64_t executions() const { return runs_.empty() ? 0 : runs_.back().end; }
  /// True when every execution saw one value.
  bool constant() const { return runs_.size() <= 1; }
  const std::vector<Run>& runs() const { return runs_; }

  /// What execution `execution` (counted from 0) saw; executions past the
  /// last recorded one see the last value. The series must not be empty.
  const T& At(int64_t execution) const {
    const auto run = std::upper_bound(runs_.begin(), runs_.end(), execution,
                                      [](int64_t e, const Run& r) { return e < r.end; });
    return run == runs_.end() ? runs_.back().value : run->value;
  }

  bool operator==(const ExecutionSeries&) const = default;

 private:
  std::vector<Run> runs_;
};

/// The executions at which any of `series` takes a new value, from 0, in
/// order: the starts of the stretches in which all of them hold still.
template <typename T>
std::vector<int64_t> ChangePoints(const std::vector<const ExecutionSeries<T>*>& series) {
  std::vector<int64_t> starts{0};
  for (const ExecutionSeries<T>* one : series) {
    const auto& runs = one->runs();
    for (size_t r = 0; r + 1 < runs.size(); ++r) starts.push_back(runs[r].end);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  return starts;
}

/// How many executions the stretch at `starts[k]` (ChangePoints) covers; the
/// last, whose value holds for every execution after it, counts once.
inline int64_t StretchLength(const std::vector<int64_t>& starts, size_t k) {
  return k + 1 < starts.size() ? starts[k + 1] - starts[k] : 1;
}

}  // namespace tpusim

#endif  // TPUSIM_SIM_BASE_EXECUTION_SERIES_H_
