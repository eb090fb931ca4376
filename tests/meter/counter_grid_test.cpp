#include "meter/counter_grid.h"

#include <gtest/gtest.h>

namespace wattlab {

TEST(CounterGrid, LocksOnABracketAndTracksAnOffNominalPeriod) {
  // True grid: 100.2 ms period, phase 37 ms. Nominal 100 ms.
  const int64_t T = 100'200'000, phase = 37'000'000;
  CounterGrid g(100'000'000);
  EXPECT_FALSE(g.locked());
  for (int k = 0; k < 60; k += 5) {
    const int64_t u = phase + k * T;
    g.add_bracket(u - 3'000'000, u + 1'000'000);
  }
  EXPECT_TRUE(g.locked());
  EXPECT_NEAR(static_cast<double>(g.period_ns()), static_cast<double>(T), 200'000);
  const int64_t u70 = phase + 70 * T;
  EXPECT_NEAR(static_cast<double>(g.update_at_or_before(u70 + 10'000'000)), static_cast<double>(u70), 4'000'000);
  EXPECT_LE(g.uncertainty_ns(), 2'000'000);
  g.unlock();
  EXPECT_FALSE(g.locked());
}

}  // namespace wattlab
