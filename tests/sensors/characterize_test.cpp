// wattlab sensors --characterize on the simulated GPU and the virtual clock: the measured update
// period, buffer spacing, read cost and counter/instant disagreement must match what the sim is
// configured with, i.e. the characterization really measures.
#include "sensors/characterize.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sensors/sim/sim_gpu.h"
#include "core/units.h"

namespace wattlab {
namespace {

CharacterizeOptions quick() {
  CharacterizeOptions o;
  o.idle_max_ns = 4 * kNsPerS;
  o.poll_ns = kNsPerS;
  o.load_ns = 6 * kNsPerS;
  return o;
}

sim::SimConfig quiet_idle() {
  sim::SimConfig c;
  c.workload = "idle 3600s";
  c.gain_error = 0;
  c.noise_w = 0.5;
  return c;
}

const ReadingCharacter& row(const DomainCharacter& d, ReadingKind k) {
  for (const auto& r : d.readings)
    if (r.kind == k) return r;
  throw std::runtime_error("no row");
}

const AgreementRow& agree(const DomainCharacter& d, ReadingKind k) {
  for (const auto& r : d.load.rows)
    if (r.kind == k) return r;
  throw std::runtime_error("no agreement row");
}

DomainCharacter run(sim::SimGpu& gpu, VirtualClock& clock, const std::string& load_script, CharacterizeOptions o = quick()) {
  auto load = make_sim_load(gpu, 0, load_script);
  EXPECT_NE(load, nullptr);
  std::vector<CharacterizeTarget> t{{&gpu, 0, load.get(), ""}};
  auto out = characterize(t, clock, o);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

TEST(Characterize, MeasuresWhatTheSimIsConfiguredWith) {
  for (int64_t period_ms : {100, 50}) {
    VirtualClock clock(1'000 * kNsPerS);
    sim::SimConfig c = quiet_idle();
    c.update_period_ns = period_ms * kNsPerMs;
    c.sample_spacing_ns = period_ms / 5 * kNsPerMs;
    c.sample_window_ns = c.sample_spacing_ns;
    sim::SimGpu gpu(c, clock);
    const DomainCharacter d = run(gpu, clock, "step 600W 3600s");
    SCOPED_TRACE(period_ms);
    EXPECT_TRUE(d.simulated);
    // Update period: within one counter read (4.2 ms) of the configured period.
    for (ReadingKind k : {ReadingKind::energy_counter_j, ReadingKind::power_instant_w, ReadingKind::power_average_w}) {
      const auto& r = row(d, k);
      EXPECT_GE(r.update_period_ns.n, 5u) << to_string(k);
      EXPECT_NEAR(r.update_period_ns.median, static_cast<double>(c.update_period_ns), 4.5e6) << to_string(k);
    }
    // Read cost: the sim spends its configured costs on the (virtual) caller's thread.
    EXPECT_NEAR(row(d, ReadingKind::energy_counter_j).read_cost_ns.median, 4.2e6, 1e3);
    EXPECT_NEAR(row(d, ReadingKind::power_instant_w).read_cost_ns.p99, 8.8e3, 1e3);
    // Sample buffer: spacing of its own timestamps, and its depth (119 deep) after the idle phase.
    const auto& s = row(d, ReadingKind::power_sample_w);
    EXPECT_NEAR(s.sample_spacing_ns.median, static_cast<double>(c.sample_spacing_ns), 1e3);
    EXPECT_EQ(s.depth_samples, 119u);
    EXPECT_FALSE(s.depth_is_lower_bound);
    // Idle: 75 W, settled at once.
    EXPECT_TRUE(d.idle.settled);
    EXPECT_NEAR(d.idle.power_w, 75.0, 0.5);
    ASSERT_TRUE(d.idle.counter_power_w);
    EXPECT_NEAR(*d.idle.counter_power_w, 75.0, 0.5);
    // Steady load: the counter sees 600 W, and instant power agrees with it.
    ASSERT_TRUE(d.load.ran) << d.load.skipped;
    ASSERT_TRUE(d.load.skipped.empty()) << d.load.skipped;
    EXPECT_NEAR(d.load.counter_power_w, 600.0, 1.0);
    EXPECT_NEAR(agree(d, ReadingKind::power_instant_w).diff_pct, 0.0, 0.3);
    EXPECT_NEAR(agree(d, ReadingKind::power_sample_w).diff_pct, 0.0, 0.3);
  }
}

// Periodic work at the sensor's own period: the instant reading sees the same 25 ms of every
// 100 ms, so its integral is off by what those 25 ms hold. The expected value is computed from the
// sim's ground truth and its update grid, independently of the characterization.
TEST(Characterize, CounterInstantDisagreementMatchesTheDutyCycle) {
  VirtualClock clock(1'000 * kNsPerS);
  sim::SimConfig c = quiet_idle();
  c.noise_w = 0;
  sim::SimGpu gpu(c, clock);
  const DomainCharacter d = run(gpu, clock, "periodic 700W 100W period=100ms duty=0.3 3600s");
  ASSERT_TRUE(d.load.skipped.empty()) << d.load.skipped;
  const int64_t a = d.load.t_a_ns, b = d.load.t_b_ns;
  const int64_t T = c.update_period_ns, W = c.instant_window_ns;
  // Updates u = origin + phase + kT inside (a, b]: each instant value stands for the T before it.
  const int64_t grid0 = gpu.origin_ns() + gpu.grid_phase_ns(0);
  double instant_j = 0;
  for (int64_t u = grid0 + ((a - grid0) / T + 1) * T; u <= b; u += T)
    instant_j += gpu.true_energy_j(0, u - W, u) / ns_to_s(W) * ns_to_s(T);
  const double true_j = gpu.true_energy_j(0, a, b);
  const double expected_pct = 100 * (instant_j - true_j) / true_j;
  const auto& inst = agree(d, ReadingKind::power_instant_w);
  ASSERT_TRUE(inst.available) << inst.reason;
  EXPECT_GT(std::abs(expected_pct), 5.0) << "the chosen load must show the duty-cycle bias";
  EXPECT_NEAR(inst.diff_pct, expected_pct, 1.5);
  // The counter itself is right, and the dense sample buffer (20 ms windows, every 20 ms) agrees.
  EXPECT_NEAR(d.load.counter_j, true_j, 0.005 * true_j);
  EXPECT_NEAR(agree(d, ReadingKind::power_sample_w).diff_pct, 0.0, 1.0);
}

TEST(Characterize, WithoutALoadSaysWhyAndStillMeasures) {
  VirtualClock clock(1'000 * kNsPerS);
  sim::SimGpu gpu(quiet_idle(), clock);
  std::vector<CharacterizeTarget> t{{&gpu, 0, nullptr, "built without CUDA"}};
  const auto out = characterize(t, clock, quick());
  EXPECT_FALSE(out[0].load.ran);
  EXPECT_EQ(out[0].load.skipped, "built without CUDA");
  EXPECT_TRUE(out[0].idle.measured);
  EXPECT_NEAR(row(out[0], ReadingKind::energy_counter_j).update_period_ns.median, 100e6, 4.5e6);
}

TEST(Characterize, StatsOfASeries) {
  const Stats s = stats_of({5, 1, 3, 2, 4});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_NEAR(s.p90, 4.6, 1e-12);
  EXPECT_EQ(stats_of({}).n, 0u);
}

}  // namespace
}  // namespace wattlab
