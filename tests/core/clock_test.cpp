#include "wattlab/core/clock.h"

#include <gtest/gtest.h>

namespace wattlab {

TEST(VirtualClock, MovesOnlyWhenTold) {
  VirtualClock c(100);
  EXPECT_EQ(c.now_ns(), 100);
  c.advance_ns(50);
  EXPECT_EQ(c.now_ns(), 150);
  c.sleep_until_ns(1000);
  EXPECT_EQ(c.now_ns(), 1000);
  c.sleep_until_ns(10);  // never back
  EXPECT_EQ(c.now_ns(), 1000);
  c.spend_ns(5);
  EXPECT_EQ(c.now_ns(), 1005);
  EXPECT_TRUE(c.is_virtual());
}

TEST(VirtualClock, RejectsGoingBack) {
  VirtualClock c(100);
  EXPECT_THROW(c.advance_ns(-1), std::invalid_argument);
  EXPECT_THROW(c.set_ns(99), std::invalid_argument);
  c.set_ns(200);
  EXPECT_EQ(c.now_ns(), 200);
}

TEST(MonotonicClock, IsMonotonicAndSpendsTime) {
  auto& c = MonotonicClock::instance();
  const int64_t a = c.now_ns();
  c.spend_ns(100'000);
  const int64_t b = c.now_ns();
  EXPECT_GE(b - a, 100'000);
  EXPECT_FALSE(c.is_virtual());
}

}  // namespace wattlab
