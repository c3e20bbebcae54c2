#include "sim/base/execution_series.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace tpusim {
namespace {

TEST(ExecutionSeries, RepeatedValuesShareOneRunAndLaterExecutionsSeeTheLast) {
  ExecutionSeries<int64_t> trips;
  EXPECT_TRUE(trips.empty());
  for (int i = 0; i < 1000; ++i) trips.Append(7);
  EXPECT_EQ(trips.runs().size(), 1u);
  EXPECT_TRUE(trips.constant());
  EXPECT_EQ(trips.executions(), 1000);
  EXPECT_EQ(trips.At(0), 7);
  EXPECT_EQ(trips.At(999), 7);
  EXPECT_EQ(trips.At(5000), 7);
  // Equal series saw equal values in equally many executions.
  EXPECT_NE(trips, ExecutionSeries<int64_t>(7));
}

TEST(ExecutionSeries, EachExecutionSeesWhatItRecorded) {
  ExecutionSeries<std::vector<int64_t>> shares;
  shares.Append({4, 0});
  shares.Append({4, 0});
  shares.Append({1, 3});
  shares.Append({2, 2});
  ASSERT_EQ(shares.runs().size(), 3u);
  EXPECT_FALSE(shares.constant());
  EXPECT_EQ(shares.executions(), 4);
  EXPECT_EQ(shares.At(0), (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(shares.At(1), (std::vector<int64_t>{4, 0}));
  EXPECT_EQ(shares.At(2), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(shares.At(3), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(shares.At(9), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(shares.runs()[1].end, 3);
}

TEST(ExecutionSeries, PastItsLimitOfChangesLaterExecutionsCountAsTheLastRun) {
  ExecutionSeries<int64_t> series;
  const int64_t appended = static_cast<int64_t>(ExecutionSeries<int64_t>::kMaxRuns) + 10;
  for (int64_t e = 0; e < appended; ++e) series.Append(e);
  EXPECT_EQ(series.runs().size(), ExecutionSeries<int64_t>::kMaxRuns);
  EXPECT_EQ(series.executions(), appended);
  const int64_t last = static_cast<int64_t>(ExecutionSeries<int64_t>::kMaxRuns) - 1;
  EXPECT_EQ(series.At(last - 1), last - 1);
  EXPECT_EQ(series.At(appended - 1), last);
}

TEST(ExecutionSeries, ChangePointsAreWhereAnySeriesTakesANewValue) {
  ExecutionSeries<int64_t> a;
  a.Append(1, 3);  // executions 0-2
  a.Append(2, 5);  // 3-7
  ExecutionSeries<int64_t> b;
  b.Append(9, 5);  // 0-4
  b.Append(8);     // 5
  b.Append(9, 2);  // 6-7
  EXPECT_EQ(a.executions(), 8);
  EXPECT_EQ(b.At(5), 8);
  EXPECT_EQ(ChangePoints<int64_t>({&a, &b}), (std::vector<int64_t>{0, 3, 5, 6}));
  EXPECT_EQ(ChangePoints<int64_t>({&a}), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(ChangePoints<int64_t>({}), (std::vector<int64_t>{0}));
}

}  // namespace
}  // namespace tpusim
