// The meter's live state, fed read outcomes by hand: health, events, the flusher's queue, the
// sampler's lateness and the running energy of each domain.
#include "meter/live_state.h"

#include <gtest/gtest.h>

#include <vector>

namespace wattlab {
namespace {

constexpr int64_t kMs = 1'000'000;

Domain domain(bool counter) {
  Domain d;
  d.id = counter ? "gpu:0" : "gpu:1";
  if (counter) {
    ReadingModel c;
    c.kind = ReadingKind::energy_counter_j;
    c.update_period_ns = 100 * kMs;
    d.model.readings.push_back(c);
  }
  ReadingModel p;
  p.kind = ReadingKind::power_instant_w;
  p.update_period_ns = 20 * kMs;
  d.model.readings.push_back(p);
  return d;
}

DomainTimelines timelines() {
  DomainTimelines tl;
  tl.domains = {domain(true), domain(false)};
  for (const Domain& d : tl.domains) tl.timelines.emplace_back(d, 1024);
  tl.states.resize(2);
  tl.any_counter = true;
  return tl;
}

Reading instant(int64_t t_ns, double w) { return {t_ns, ReadingKind::power_instant_w, w}; }

TEST(LiveState, ReadsFillHealthTimelineAndTheFlushersQueue) {
  DomainTimelines tl = timelines();
  LiveState live(tl.domains, 1 << 10, 0);
  const std::vector<Reading> r = {instant(10 * kMs, 50)};
  EXPECT_EQ(live.record(1, ReadingKind::power_instant_w, Status{}, 10 * kMs, r, tl.timelines[1], tl.states[1]),
            LiveState::Outcome::ok);
  const MeterSnapshot s = live.snapshot(tl, 20 * kMs);
  const ReadingHealth& h = s.domains[1].health(ReadingKind::power_instant_w);
  EXPECT_EQ(h.reads_ok, 1u);
  EXPECT_EQ(h.last_ok_ns, 10 * kMs);
  ASSERT_TRUE(h.latest.has_value());
  EXPECT_EQ(h.latest->value, 50);
  std::vector<TimedReading> out;
  EXPECT_EQ(live.drain_readings(out), 1u);
  EXPECT_EQ(out[0].domain_index, 1u);
  EXPECT_EQ(live.drain_readings(out), 0u);
}

TEST(LiveState, AStreakOfFailuresIsOneEventAndItsEndAnother) {
  DomainTimelines tl = timelines();
  LiveState live(tl.domains, 1 << 10, 0);
  const Status failed = Error{ErrorKind::io, "scripted failure", {}, 0};
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(live.record(0, ReadingKind::power_instant_w, failed, i * kMs, {}, tl.timelines[0], tl.states[0]),
              LiveState::Outcome::failed);
  live.record(0, ReadingKind::power_instant_w, Status{}, 5 * kMs, {}, tl.timelines[0], tl.states[0]);
  ASSERT_EQ(live.events().size(), 2u);
  EXPECT_EQ(live.events()[0].kind, "read_error");
  EXPECT_EQ(live.events()[0].domain_id, "gpu:0");
  EXPECT_EQ(live.events()[1].kind, "recovered");
  EXPECT_EQ(live.events()[1].message, "reads work again after 3 failure(s)");
  EXPECT_EQ(tl.timelines[0].failures(ReadingKind::power_instant_w, 0, 10 * kMs), 3u);
  const Status lost = Error{ErrorKind::device_lost, "gone", {}, 0};
  EXPECT_EQ(live.record(0, ReadingKind::power_instant_w, lost, 7 * kMs, {}, tl.timelines[0], tl.states[0]),
            LiveState::Outcome::lost);
  EXPECT_TRUE(tl.states[0].lost);
  EXPECT_EQ(tl.states[0].lost_at_ns, 7 * kMs);
  EXPECT_EQ(live.events().back().kind, "device_lost");
}

TEST(LiveState, TheFlushersQueueDropsTheOldestQuarterWhenFull) {
  DomainTimelines tl = timelines();
  LiveState live(tl.domains, 8, 0);
  for (int i = 1; i <= 10; ++i) {
    const std::vector<Reading> r = {instant(i * kMs, i)};
    live.record(1, ReadingKind::power_instant_w, Status{}, i * kMs, r, tl.timelines[1], tl.states[1]);
  }
  std::vector<TimedReading> out;
  ASSERT_EQ(live.drain_readings(out), 8u);
  EXPECT_EQ(out.front().reading.value, 3.0);
  EXPECT_EQ(out.back().reading.value, 10.0);
}

TEST(LiveState, LatenessIsCountedFromTheSecondReadOn) {
  DomainTimelines tl = timelines();
  LiveState live(tl.domains, 8, 0);
  const int64_t late = 3 * kMs;
  live.count_read(0, 2 * kMs, nullptr);
  live.count_read(100 * kMs, 2 * kMs, &late);
  const MeterSnapshot s = live.snapshot(tl, 200 * kMs);
  EXPECT_EQ(s.sampler.reads, 1u);
  EXPECT_EQ(s.sampler.read_ns, 4 * kMs);
  EXPECT_EQ(s.sampler.lateness_max_ns, 3 * kMs);
  EXPECT_EQ(s.sampler.lateness_counts[6], 1u);  // 2.5-5 ms
  EXPECT_EQ(s.sampler.newest_read_ns, 100 * kMs);
}

TEST(LiveState, EnergyNowFromTheCounterOrTheIntegratedPower) {
  DomainTimelines tl = timelines();
  LiveState live(tl.domains, 1 << 10, 0);
  tl.timelines[0].add_counter(500.0, 0, kMs);
  tl.timelines[0].add_counter(520.0, 100 * kMs, kMs);
  MeterSnapshot s = live.snapshot(tl, 150 * kMs);
  EXPECT_TRUE(s.domains[0].energy_ok);
  EXPECT_EQ(s.domains[0].energy_j, 20.0);
  EXPECT_EQ(s.domains[0].energy_estimator, "counter");
  EXPECT_FALSE(s.domains[1].energy_ok) << "no power read yet";
  // Power past the newest counter point extends it; a domain without a counter integrates its power.
  for (int64_t t = 20 * kMs; t <= 200 * kMs; t += 20 * kMs) {
    tl.timelines[0].add_instant(instant(t, 200));
    tl.timelines[1].add_instant(instant(t, 100));
  }
  s = live.snapshot(tl, 200 * kMs);
  EXPECT_EQ(s.domains[0].energy_estimator, "counter+integrated(instant)");
  EXPECT_GT(s.domains[0].energy_t_ns, 100 * kMs);
  EXPECT_GT(s.domains[0].energy_j, 20.0);
  EXPECT_TRUE(s.domains[1].energy_ok);
  EXPECT_EQ(s.domains[1].energy_estimator, "integrated(instant)");
  EXPECT_NEAR(s.domains[1].energy_j, 100.0 * 0.18, 1e-9);  // 20..200 ms
}

TEST(LiveState, EnergyNowReachesAsFarAsTheSampleBufferWhereTheInstantPowerHasAHole) {
  // A counter, a 20 ms sample buffer and the instant field. The budget put the instant reads off
  // past two refreshes: they leave a hole after the counter point, and the newest of them is
  // newer than the sample buffer's end. The energy then reaches the samples' end, not only the
  // counter point.
  Domain d = domain(true);
  d.model.readings[1].update_period_ns = 100 * kMs;  // the instant field, NVML's refresh
  ReadingModel samples;
  samples.kind = ReadingKind::power_sample_w;
  samples.update_period_ns = 20 * kMs;
  d.model.readings.push_back(samples);
  DomainTimelines tl;
  tl.domains = {d};
  tl.timelines.emplace_back(d, 1024);
  tl.states.resize(1);
  tl.any_counter = true;
  Timeline& t = tl.timelines[0];
  LiveState live(tl.domains, 1 << 10, 0);
  for (int64_t s = 20 * kMs; s <= 1'200 * kMs; s += 20 * kMs) t.add_sample({s, ReadingKind::power_sample_w, 300.0});
  t.add_counter(1000.0, 0, kMs);
  t.add_counter(1030.0, 100 * kMs, kMs);
  t.add_instant(instant(150 * kMs, 300.0));
  t.add_instant(instant(1'400 * kMs, 300.0));  // 1.25 s later: a hole, past the samples' end
  const MeterSnapshot s = live.snapshot(tl, 1'500 * kMs);
  ASSERT_TRUE(s.domains[0].energy_ok);
  EXPECT_EQ(s.domains[0].energy_t_ns, 1'200 * kMs);
  EXPECT_EQ(s.domains[0].energy_estimator, "counter+integrated(samples)");
  EXPECT_NEAR(s.domains[0].energy_j, 30.0 + 300.0 * 1.1, 1e-6);  // 100 ms .. 1.2 s at 300 W
}

}  // namespace
}  // namespace wattlab
