#include "core/energy_math.h"

#include <gtest/gtest.h>

#include <vector>

namespace wattlab {

TEST(CounterStep, ForwardWrapAndReset) {
  auto s = counter_step(10, 25);
  EXPECT_DOUBLE_EQ(s.delta, 15);
  EXPECT_FALSE(s.wrapped || s.reset);
  s = counter_step(90, 5, 100);  // wrapped at 100
  EXPECT_DOUBLE_EQ(s.delta, 15);
  EXPECT_TRUE(s.wrapped);
  s = counter_step(90, 5);  // no range: a reset
  EXPECT_DOUBLE_EQ(s.delta, 5);
  EXPECT_TRUE(s.reset);
}

TEST(Integrate, PartialPiecesAndGaps) {
  std::vector<PowerPiece> p{{0, 100, 10.0}, {100, 200, 20.0}, {300, 400, 5.0}};
  auto r = integrate(p, 50, 350);
  // 50 ns at 10 W + 100 ns at 20 W + 50 ns at 5 W, gap 200..300 not covered
  EXPECT_NEAR(r.energy_j, (50 * 10.0 + 100 * 20.0 + 50 * 5.0) * 1e-9, 1e-18);
  EXPECT_EQ(r.covered_ns, 200);
  EXPECT_EQ(integrate(p, 500, 600).covered_ns, 0);
  EXPECT_EQ(integrate(p, 60, 60).energy_j, 0);
}

TEST(ShapedInterpolate, FollowsTheShapeNotTime) {
  // All the power is in the second half: the cumulative value at the midpoint stays at p0.
  std::vector<PowerPiece> shape{{0, 50, 0.0}, {50, 100, 100.0}};
  CumulativePoint p0{0, 10.0}, p1{100, 20.0};
  EXPECT_DOUBLE_EQ(shaped_interpolate(p0, p1, shape, 50), 10.0);
  EXPECT_DOUBLE_EQ(shaped_interpolate(p0, p1, shape, 75), 15.0);
  // Without a covering shape: linear in time.
  std::vector<PowerPiece> partial{{0, 40, 1.0}};
  EXPECT_DOUBLE_EQ(shaped_interpolate(p0, p1, partial, 25), 12.5);
  EXPECT_DOUBLE_EQ(shaped_interpolate(p0, p1, shape, -5), 10.0);
  EXPECT_DOUBLE_EQ(shaped_interpolate(p0, p1, shape, 500), 20.0);
}

TEST(Stats, MeanStddevRss) {
  std::vector<double> xs{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(mean(xs), 2.5);
  EXPECT_NEAR(stddev(xs), 1.2909944487, 1e-9);
  EXPECT_DOUBLE_EQ(rss({3, 4}), 5);
  EXPECT_EQ(mean(std::span<const double>{}), 0);
}

}  // namespace wattlab
