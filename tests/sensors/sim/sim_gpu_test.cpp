#include "sensors/sim/sim_gpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace wattlab::sim {

SimConfig quiet(std::string workload) {
  SimConfig c;
  c.workload = std::move(workload);
  c.gain_error = 0;
  c.noise_w = 0;
  return c;
}

double read1(SimGpu& g, ReadingKind k, std::size_t d = 0) {
  std::vector<Reading> out;
  EXPECT_TRUE(g.read(d, k, out).ok());
  return out.at(0).value;
}

TEST(SimGpu, DomainsAreLabelledSimulated) {
  VirtualClock clock;
  SimConfig c;
  c.gpus = 3;
  SimGpu g(c, clock);
  ASSERT_EQ(g.domains().size(), 3u);
  for (const auto& d : g.domains()) {
    EXPECT_TRUE(d.simulated);
    EXPECT_NE(d.name.find("SIMULATED"), std::string::npos);
    EXPECT_TRUE(d.model.supports(ReadingKind::energy_counter_j));
  }
  EXPECT_EQ(g.domains()[2].id, "gpu:2");
  // Boards differ in gain (drawn from the seed, within ±3%).
  std::set<double> gains{g.gain(0), g.gain(1), g.gain(2)};
  EXPECT_EQ(gains.size(), 3u);
  for (double x : gains) EXPECT_NEAR(x, 1.0, 0.03);
}

TEST(SimGpu, CounterUpdatesOnlyEvery100msAndCostsItsReadTime) {
  VirtualClock clock(1'000'000'000);
  auto c = quiet("step 500W 10s");
  c.read_costs = true;
  SimGpu g(c, clock);
  const int64_t phase = g.grid_phase_ns(0);
  clock.set_ns(clock.now_ns() + phase + 110'000'000);  // just after an update
  const int64_t before = clock.now_ns();
  const double e1 = read1(g, ReadingKind::energy_counter_j);
  EXPECT_EQ(clock.now_ns() - before, 4'200'000);  // the H200's counter read cost, on virtual time
  clock.advance_ns(50'000'000);
  const double e2 = read1(g, ReadingKind::energy_counter_j);
  EXPECT_DOUBLE_EQ(e1, e2);  // same 100 ms period: same value
  clock.advance_ns(50'000'000);
  const double e3 = read1(g, ReadingKind::energy_counter_j);
  EXPECT_NEAR(e3 - e2, 50.0, 1e-3 + 1e-9);  // one update at 500 W = 50 J
}

TEST(SimGpu, InstantPowerSeesOnly25msOfEvery100ms) {
  VirtualClock clock;
  // On 25 ms, off 75 ms, in step with nothing: the instant reading sees either the on or off part.
  auto c = quiet("periodic 700W 100W period=100ms duty=0.25 10s");
  c.read_costs = false;
  SimGpu g(c, clock);
  std::set<long> seen;
  for (int i = 0; i < 50; ++i) {
    clock.advance_ns(100'000'000);
    seen.insert(std::lround(read1(g, ReadingKind::power_instant_w)));
  }
  // The true mean is 250 W; the instant reading aliases to a fixed phase and never shows it.
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_NE(*seen.begin(), 250);
  clock.advance_ns(2'000'000'000);
  EXPECT_NEAR(read1(g, ReadingKind::power_average_w), 250.0, 1.0);
}

TEST(SimGpu, SampleBufferHandsOutEachSampleOnce) {
  VirtualClock clock;
  auto c = quiet("step 300W 20s");
  c.read_costs = false;
  SimGpu g(c, clock);
  clock.advance_ns(5'000'000'000);
  std::vector<Reading> out;
  ASSERT_TRUE(g.read(0, ReadingKind::power_sample_w, out).ok());
  EXPECT_EQ(out.size(), 119u);  // buffer depth
  const int64_t last = out.back().t_ns;
  out.clear();
  clock.advance_ns(100'000'000);
  ASSERT_TRUE(g.read(0, ReadingKind::power_sample_w, out).ok());
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out.front().t_ns, last + 20'000'000);
  for (const auto& r : out) EXPECT_NEAR(r.value, 300.0, 1e-9);
}

TEST(SimGpu, FaultsAppearAsErrors) {
  VirtualClock clock;
  auto c = quiet("step 300W 20s");
  c.faults = "read-error energy_counter_j 1s-2s; counter-reset 3s; gpu-lost 5s";
  c.read_costs = false;
  SimGpu g(c, clock);
  std::vector<Reading> out;
  clock.set_ns(1'500'000'000);
  auto st = g.read(0, ReadingKind::energy_counter_j, out);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(g.read(0, ReadingKind::power_instant_w, out).ok());
  clock.set_ns(2'900'000'000);
  const double before = read1(g, ReadingKind::energy_counter_j);
  clock.set_ns(3'300'000'000);
  const double after = read1(g, ReadingKind::energy_counter_j);
  EXPECT_LT(after, before);  // the counter went back
  clock.set_ns(5'000'000'000);
  st = g.read(0, ReadingKind::power_instant_w, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::device_lost);
}

TEST(SimGpu, CapShowsInTelemetry) {
  VirtualClock clock;
  auto c = quiet("cap 500W; gemm 1.0 10s");
  c.read_costs = false;
  SimGpu g(c, clock);
  clock.set_ns(2'000'000'000);
  EXPECT_EQ(read1(g, ReadingKind::clock_event_reasons), 0x4);
  EXPECT_LT(read1(g, ReadingKind::sm_clock_mhz), 1980);
  EXPECT_NEAR(read1(g, ReadingKind::power_violation_ns), 1.9e9, 0.11e9);
  EXPECT_DOUBLE_EQ(read1(g, ReadingKind::power_limit_w), 500);
  EXPECT_GT(read1(g, ReadingKind::gpm_tensor_activity_pct), 90);
}

}  // namespace wattlab::sim
