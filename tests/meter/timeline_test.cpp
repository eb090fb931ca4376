#include "meter/timeline.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace wattlab {

// An H200-like energy counter (100 ms updates, 1 mJ) and one power reading that shapes it.
Domain counter_and(ReadingKind shape, int64_t update_period_ns, int64_t averaging_window_ns) {
  Domain d;
  d.id = "gpu:0";
  ReadingModel c;
  c.kind = ReadingKind::energy_counter_j;
  c.update_period_ns = 100'000'000;
  c.resolution = 1e-3;
  ReadingModel s;
  s.kind = shape;
  s.update_period_ns = update_period_ns;
  s.averaging_window_ns = averaging_window_ns;
  d.model.readings = {c, s};
  return d;
}

Domain counter_and_samples() { return counter_and(ReadingKind::power_sample_w, 20'000'000, 20'000'000); }

TEST(Timeline, ShapesBetweenCounterPointsWithSamples) {
  Timeline tl(counter_and_samples(), 1024);
  // 0..100 ms at 100 W, 100..200 ms at 300 W, as 20 ms samples.
  for (int64_t t = 20'000'000; t <= 200'000'000; t += 20'000'000)
    tl.add_sample({t, ReadingKind::power_sample_w, t <= 100'000'000 ? 100.0 : 300.0});
  tl.add_counter(1000.0, 0, 1'000'000);
  tl.add_counter(1040.0, 200'000'000, 1'000'000);  // 10 J + 30 J
  const EdgeEstimate e = tl.energy_at(100'000'000);
  ASSERT_TRUE(e.ok && e.covered);
  EXPECT_NEAR(e.energy_j, 10.0, 1e-9);
  EXPECT_EQ(e.estimator, Estimator::counter_samples);
  // Past the newest counter point: provisional.
  EXPECT_FALSE(tl.energy_at(250'000'000).covered);
}

TEST(Timeline, CounterResetIsBridgedAndRecorded) {
  Timeline tl(counter_and_samples(), 1024);
  for (int64_t t = 20'000'000; t <= 400'000'000; t += 20'000'000) tl.add_sample({t, ReadingKind::power_sample_w, 200.0});
  EXPECT_EQ(tl.add_counter(5000.0, 100'000'000, 1'000'000), "");
  EXPECT_EQ(tl.add_counter(5020.0, 200'000'000, 1'000'000), "");
  const std::string ev = tl.add_counter(3.0, 300'000'000, 1'000'000);
  EXPECT_NE(ev.find("went back"), std::string::npos);
  EXPECT_NEAR(tl.energy_at(300'000'000).energy_j, 40.0, 1e-6);  // 20 J bridged from samples
  EXPECT_EQ(tl.resets(0, 400'000'000).size(), 1u);
}

TEST(Timeline, AStaleCounterValueIsBridgedAndItsCatchUpGivesTheCountersOwnValuesBack) {
  // 200 W throughout; the counter read at 1.0 s returns the value it had at 0.7 s (stuck), and at
  // 1.5 s it has caught up.
  Timeline tl(counter_and_samples(), 1024);
  for (int64_t t = 20'000'000; t <= 2'000'000'000; t += 20'000'000) tl.add_sample({t, ReadingKind::power_sample_w, 200.0});
  EXPECT_EQ(tl.add_counter(1000.0, 0, 1'000'000), "");
  EXPECT_EQ(tl.add_counter(1100.0, 500'000'000, 1'000'000), "");
  EXPECT_NE(tl.add_counter(1140.0, 1'000'000'000, 1'000'000).find("reset between reads"), std::string::npos);
  EXPECT_NEAR(tl.energy_at(1'000'000'000).energy_j, 200.0, 1e-6);  // bridged with the samples
  EXPECT_EQ(tl.add_counter(1300.0, 1'500'000'000, 1'000'000), "");
  EXPECT_EQ(tl.add_counter(1400.0, 2'000'000'000, 1'000'000), "");
  // From the catch-up on, the counter's own values: not the bridge's 60 J on top of them.
  EXPECT_NEAR(tl.energy_at(1'500'000'000).energy_j, 300.0, 1e-6);
  EXPECT_NEAR(tl.energy_at(2'000'000'000).energy_j, 400.0, 1e-6);
  const auto r = tl.resets(0, 2'000'000'000);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].stale && !r[0].caught_up);
  EXPECT_TRUE(r[1].caught_up && r[1].t_ns == 1'500'000'000);
}

TEST(Timeline, AHiddenResetStaysBridgedWhenTheNextStepHoldsWhatThePowerDrew) {
  Timeline tl(counter_and_samples(), 1024);
  for (int64_t t = 20'000'000; t <= 1'500'000'000; t += 20'000'000) tl.add_sample({t, ReadingKind::power_sample_w, 200.0});
  tl.add_counter(1000.0, 0, 1'000'000);
  tl.add_counter(1100.0, 500'000'000, 1'000'000);
  tl.add_counter(1140.0, 1'000'000'000, 1'000'000);  // reset at 0.8 s: 40 J since, climbed back over 1100 J
  tl.add_counter(1240.0, 1'500'000'000, 1'000'000);
  EXPECT_NEAR(tl.energy_at(1'500'000'000).energy_j, 300.0, 1e-6);
  const auto r = tl.resets(0, 1'500'000'000);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].stale);
}

TEST(Timeline, ARepeatedSampleFromANoisyBufferIsLeftOut) {
  Timeline tl(counter_and_samples(), 1024);
  int64_t t = 0;
  auto noisy = [](int64_t i) { return 200.0 + static_cast<double>((i * 7919) % 13) * 0.37 - 2.2; };
  for (int64_t i = 0; i < 300; ++i) tl.add_sample({t += 20'000'000, ReadingKind::power_sample_w, noisy(i)});
  const int64_t stuck_from = t;
  for (int i = 0; i < 10; ++i) tl.add_sample({t += 20'000'000, ReadingKind::power_sample_w, noisy(299)});
  const int64_t stuck_to = t;
  for (int64_t i = 0; i < 20; ++i) tl.add_sample({t += 20'000'000, ReadingKind::power_sample_w, noisy(i)});
  EXPECT_TRUE(tl.integrate_power(stuck_from - 1'000'000'000, stuck_from).ok);
  EXPECT_FALSE(tl.integrate_power(stuck_from + 40'000'000, stuck_to).ok) << "a stuck spell is a hole, not a flat stretch";
  EXPECT_TRUE(tl.integrate_power(stuck_to + 60'000'000, t).ok);
}

// An H100's idle samples sit on a few values 0.08-0.32 W apart and repeat a third of the time,
// in runs of up to 7 (docs/results/h100-checks/per-process-4.tgz, runs.db): after a load, whose
// noisy samples set the noise, chance still explains such runs, so they are measurements and the
// buffer keeps covering the time; a long run still is a stuck buffer.
TEST(Timeline, RepeatsThatChanceExplainsAreKept) {
  Timeline tl(counter_and_samples(), 4096);
  uint64_t x = 12345;
  auto next = [&] { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
  int64_t t = 0;
  for (int i = 0; i < 1000; ++i)  // a load: every sample new, setting the noise
    tl.add_sample({t += 20'000'000, ReadingKind::power_sample_w, 400.0 + static_cast<double>(next() % 100000) * 1e-4});
  const int64_t idle_from = t;
  const double levels[] = {72.539, 72.861, 73.183, 73.567, 73.889};
  double v = levels[2];
  for (int i = 0; i < 200; ++i) {
    if (next() % 3 != 0) v = levels[next() % 5];  // a third of the time, the same again
    tl.add_sample({t += 20'000'000, ReadingKind::power_sample_w, v});
  }
  EXPECT_TRUE(tl.integrate_power(idle_from + 1'500'000'000, t - 100'000'000).ok)
      << "repeats that chance explains left a hole";
  const int64_t stuck_from = t;
  for (int i = 0; i < 40; ++i) tl.add_sample({t += 20'000'000, ReadingKind::power_sample_w, v});
  const int64_t stuck_to = t;
  tl.add_sample({t += 20'000'000, ReadingKind::power_sample_w, v == levels[0] ? levels[1] : levels[0]});
  EXPECT_FALSE(tl.integrate_power(stuck_from + 400'000'000, stuck_to).ok) << "40 equal samples are a stuck buffer";
}

TEST(Timeline, WithoutShapeFallsBackToLinearWithHonestUncertainty) {
  Domain d = counter_and_samples();
  d.model.readings.pop_back();  // no samples
  Timeline tl(d, 1024);
  tl.add_counter(0.0, 0, 1'000'000);
  tl.add_counter(100.0, 1'000'000'000, 1'000'000);
  const EdgeEstimate e = tl.energy_at(500'000'000);
  EXPECT_EQ(e.estimator, Estimator::counter);
  EXPECT_NEAR(e.energy_j, 50.0, 1e-9);
  EXPECT_GT(e.u_shape_j, 20.0);  // the 100 J could have fallen on either side
}

TEST(Timeline, UnevenSampleSpacingStillShapes) {
  // The H200's buffer: nominally 20 ms, but gaps of 22-45 ms are common. A short gap is held back
  // to the previous sample; a long one (here 100 ms) stays a hole.
  Timeline tl(counter_and_samples(), 1024);
  int64_t t = 0;
  for (int64_t gap_ms : {20, 43, 17, 25, 20, 31, 20, 24})
    tl.add_sample({t += gap_ms * 1'000'000, ReadingKind::power_sample_w, 200.0});
  tl.add_counter(0.0, 0, 1'000'000);
  tl.add_counter(40.0, 200'000'000, 1'000'000);  // 200 ms at 200 W
  const EdgeEstimate e = tl.energy_at(100'000'000);
  ASSERT_TRUE(e.ok && e.covered);
  EXPECT_EQ(e.estimator, Estimator::counter_samples);
  EXPECT_NEAR(e.energy_j, 20.0, 1e-9);
  tl.add_sample({t += 100'000'000, ReadingKind::power_sample_w, 200.0});
  tl.add_counter(80.0, 400'000'000, 1'000'000);
  EXPECT_NE(tl.energy_at(250'000'000).estimator, Estimator::counter_samples);
}

TEST(Timeline, InstantPowerShapeIsShiftedByItsAge) {
  // Counter and instant power only. The instant value refreshes every 100 ms with the mean of the
  // 25 ms before the refresh (NVML's field on A100/H100/H200), so a read sees a value ~62.5 ms old.
  Timeline tl(counter_and(ReadingKind::power_instant_w, 100'000'000, 25'000'000), 1024);
  // 100 W until 500 ms, then 300 W. Read every 20 ms from 0 to 1200 ms.
  auto power = [](int64_t t_ns) { return t_ns < 500'000'000 ? 100.0 : 300.0; };
  for (int64_t t = 0; t <= 1'200'000'000; t += 20'000'000) {
    const int64_t refresh = t / 100'000'000 * 100'000'000;
    // The mean over [refresh - 25 ms, refresh]: the step at 500 ms falls on a refresh boundary.
    tl.add_instant({t, ReadingKind::power_instant_w, power(refresh - 1)});
  }
  tl.add_counter(0.0, 0, 1'000'000);
  tl.add_counter(200.0, 1'000'000'000, 1'000'000);  // 50 J + 150 J
  const EdgeEstimate e = tl.energy_at(500'000'000);
  ASSERT_TRUE(e.ok && e.covered);
  EXPECT_EQ(e.estimator, Estimator::counter_instant);
  // Truth 50 J. Held from read to read without the shift, the step shows up 100-120 ms late in
  // the shape and the edge read 54.3 J; shifted, within 3 J.
  EXPECT_NEAR(e.energy_j, 50.0, 3.0) << e.energy_j;
}

}  // namespace wattlab
