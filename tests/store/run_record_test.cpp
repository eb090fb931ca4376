#include "wattlab/store/run_record.h"

#include <gtest/gtest.h>

namespace wattlab {
namespace {

TEST(RunRecord, Iso8601UtcWithMilliseconds) {
  using namespace std::chrono;
  EXPECT_EQ(utc_iso8601(system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
  // 2025-06-01T12:34:56.789Z
  system_clock::time_point t{seconds{1748781296} + milliseconds{789} + microseconds{999}};
  EXPECT_EQ(utc_iso8601(t), "2025-06-01T12:34:56.789Z");  // truncated, not rounded up
}

TEST(RunRecord, StateAndDuration) {
  RunSummary s;
  s.info.start_t_ns = 2'000'000'000;
  EXPECT_EQ(s.state(), "incomplete");
  EXPECT_FALSE(s.dur_s().has_value());
  s.end_t_ns = 4'500'000'000;
  EXPECT_EQ(s.state(), "complete");
  EXPECT_DOUBLE_EQ(*s.dur_s(), 2.5);
}

}  // namespace
}  // namespace wattlab
