// The exporter's intervals waiting for their data: taken in time order once their data is in,
// never one before an earlier one, and taken anyway once they have waited the longest wait.
#include "cli/pending_intervals.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace wattlab::cli {
namespace {

constexpr int64_t kMs = 1'000'000;

TEST(PendingIntervals, TakesIntervalsInOrderOnceTheirDataIsIn) {
  PendingIntervals p(10'000 * kMs);
  p.add(0, 500 * kMs);
  p.add(500 * kMs, 1000 * kMs);
  p.add(1000 * kMs, 1500 * kMs);
  int64_t data_until_ns = 400 * kMs;
  auto ready = [&](int64_t, int64_t t1) { return t1 <= data_until_ns; };
  EXPECT_TRUE(p.take(1500 * kMs, ready).empty());
  EXPECT_EQ(p.size(), 3u);
  data_until_ns = 1200 * kMs;
  const auto two = p.take(2000 * kMs, ready);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].t_begin_ns, 0);
  EXPECT_EQ(two[1].t_end_ns, 1000 * kMs);
  EXPECT_FALSE(two[1].waited_out);
  EXPECT_EQ(p.size(), 1u);
}

TEST(PendingIntervals, ALaterReadyIntervalWaitsForAnEarlierOne) {
  PendingIntervals p(10'000 * kMs);
  p.add(0, 500 * kMs);
  p.add(500 * kMs, 1000 * kMs);
  EXPECT_TRUE(p.take(1000 * kMs, [](int64_t t0, int64_t) { return t0 > 0; }).empty());
  EXPECT_EQ(p.size(), 2u);
}

TEST(PendingIntervals, AnIntervalThatWaitedTheLongestWaitIsTakenAnyway) {
  PendingIntervals p(2000 * kMs);
  p.add(0, 500 * kMs);
  p.add(500 * kMs, 1000 * kMs);
  auto never = [](int64_t, int64_t) { return false; };
  EXPECT_TRUE(p.take(2400 * kMs, never).empty());
  const auto one = p.take(2600 * kMs, never);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_TRUE(one[0].waited_out);
  EXPECT_EQ(one[0].t_end_ns, 500 * kMs);
  p.add(1000 * kMs, 1000 * kMs);  // empty: not added
  EXPECT_EQ(p.size(), 1u);
}

}  // namespace
}  // namespace wattlab::cli
