#include "core/ring_buffer.h"

#include <gtest/gtest.h>

namespace wattlab {

TEST(RingBuffer, KeepsNewestAndCountsDropped) {
  RingBuffer<int> r(3);
  EXPECT_TRUE(r.empty());
  for (int i = 1; i <= 5; ++i) r.push(i);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_TRUE(r.full());
  EXPECT_EQ(r.dropped(), 2u);
  EXPECT_EQ(r.front(), 3);
  EXPECT_EQ(r[1], 4);
  EXPECT_EQ(r.back(), 5);
  r.pop_front();
  EXPECT_EQ(r.front(), 4);
  EXPECT_EQ(r.size(), 2u);
  r.push(6);
  EXPECT_EQ(r.back(), 6);
  EXPECT_EQ(r.dropped(), 2u);
}

TEST(RingBuffer, RejectsZeroCapacityAndEmptyPop) {
  EXPECT_THROW(RingBuffer<int>(0), std::invalid_argument);
  RingBuffer<int> r(1);
  EXPECT_THROW(r.pop_front(), std::out_of_range);
}

TEST(RingBuffer, MemoryStaysBoundedOverManyPushes) {
  RingBuffer<double> r(1000);
  for (int i = 0; i < 1'000'000; ++i) r.push(i);
  EXPECT_EQ(r.size(), 1000u);
  EXPECT_EQ(r.capacity(), 1000u);
  EXPECT_EQ(r.front(), 999000.0);
  EXPECT_EQ(r.dropped(), 999000u);
}

}  // namespace wattlab
