// The estimator for a domain with only a trailing-average power reading (gpu:N/memory on an
// H200): synthetic readings of a known boxcar average, and the simulated memory domain on the
// virtual clock against its ground truth.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "meter/average_power.h"
#include "sim_fixture.h"
#include "core/units.h"

namespace wattlab::testing {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

ReadingModel average_model() {
  ReadingModel m;
  m.kind = ReadingKind::power_average_w;
  m.update_period_ns = 100 * kMs;
  m.averaging_window_ns = kS;
  return m;
}

// Reads every 100 ms at `read_phase` after each update of a 1 s boxcar average of `power`
// (integrated on a 1 ms grid), from t = 0 to `until`.
RingBuffer<Reading> boxcar_reads(const std::function<double(int64_t)>& power, int64_t until,
                                 int64_t read_phase = 30 * kMs, const std::function<bool(int64_t)>& skip = {}) {
  RingBuffer<Reading> r(4096);
  for (int64_t u = kS; u + read_phase <= until; u += 100 * kMs) {
    if (skip && skip(u)) continue;
    double e = 0;
    for (int64_t t = u - kS; t < u; t += kMs) e += power(t) * 1e-3;
    r.push(Reading{u + read_phase, ReadingKind::power_average_w, e / 1.0, 9000});
  }
  return r;
}

double true_energy(const std::function<double(int64_t)>& power, int64_t a, int64_t b) {
  double e = 0;
  for (int64_t t = a; t < b; t += kMs) e += power(t) * 1e-3;
  return e;
}

TEST(AveragePower, ConstantPowerIsExactAndTight) {
  auto p = [](int64_t) { return 40.0; };
  const auto r = boxcar_reads(p, 20 * kS);
  for (double len_s : {0.05, 0.3, 1.0, 4.0, 10.0}) {
    const int64_t a = 3 * kS + 17 * kMs, b = a + static_cast<int64_t>(len_s * 1e9);
    const AverageEstimate e = integrate_average(r, average_model(), a, b);
    ASSERT_TRUE(e.ok) << len_s << e.why;
    EXPECT_TRUE(e.covered);
    EXPECT_FALSE(e.issue) << e.why;
    EXPECT_NEAR(e.energy_j, 40.0 * len_s, 1e-6) << len_s;
    EXPECT_LT(e.u_j, 1e-6 + 1e-3 * e.energy_j) << len_s;
  }
}

TEST(AveragePower, StepInsideTheWindowIsCoveredByTheUncertainty) {
  // 37 W, then 122 W from t = 5 s (the H200's memory domain idle and under copies).
  auto p = [](int64_t t) { return t < 5 * kS ? 37.0 : 122.0; };
  const auto r = boxcar_reads(p, 20 * kS);
  int inside = 0, n = 0;
  for (int64_t a = 3 * kS; a < 7 * kS; a += 73 * kMs) {
    for (double len_s : {0.2, 0.7, 2.0, 5.0}) {
      const int64_t b = a + static_cast<int64_t>(len_s * 1e9);
      const AverageEstimate e = integrate_average(r, average_model(), a, b);
      ASSERT_TRUE(e.ok);
      const double truth = true_energy(p, a, b);
      ++n;
      // 1e-9 J: the rounding of the two sums where the power is steady around the window (U = 0).
      inside += std::abs(e.energy_j - truth) <= 2 * e.u_j + 1e-9;
    }
  }
  EXPECT_EQ(inside, n);
}

TEST(AveragePower, ShortWindowAtAStepSaysItHasNoHonestEstimate) {
  auto p = [](int64_t t) { return t < 5 * kS ? 5.0 : 122.0; };
  const auto r = boxcar_reads(p, 20 * kS);
  const AverageEstimate e = integrate_average(r, average_model(), 5 * kS - 10 * kMs, 5 * kS + 10 * kMs);
  ASSERT_TRUE(e.ok);
  ASSERT_TRUE(e.issue);
  EXPECT_EQ(*e.issue, IssueCode::shorter_than_average);
  EXPECT_GE(2 * e.u_j, e.energy_j);
}

TEST(AveragePower, MissingReadsAndUncoveredEdgesAreSaid) {
  auto p = [](int64_t) { return 60.0; };
  const auto gap = boxcar_reads(p, 20 * kS, 30 * kMs, [](int64_t u) { return u > 6 * kS && u < 7 * kS; });
  const AverageEstimate g = integrate_average(gap, average_model(), 5 * kS, 8 * kS);
  EXPECT_FALSE(g.ok);
  ASSERT_TRUE(g.issue);
  EXPECT_EQ(*g.issue, IssueCode::average_gap);

  const auto r = boxcar_reads(p, 10 * kS);
  const AverageEstimate early = integrate_average(r, average_model(), 0, kS);  // before the first reading's lag
  EXPECT_FALSE(early.ok);
  EXPECT_EQ(early.issue, IssueCode::no_estimate);
  // Final only once the readings reach the end's ramp and slope baseline: 1.25 s / 2 + 0.25 s.
  EXPECT_TRUE(average_covers_end(r, average_model(), 8 * kS));
  EXPECT_FALSE(average_covers_end(r, average_model(), 9 * kS));
  const AverageEstimate late = integrate_average(r, average_model(), 8 * kS, static_cast<int64_t>(9.2 * kS));
  EXPECT_TRUE(late.ok);
  EXPECT_FALSE(late.covered);
}

// The simulated memory domain (SimConfig::memory_domain) on the virtual clock.
sim::SimConfig with_memory(std::string workload) {
  sim::SimConfig c = exact_board(std::move(workload));
  c.memory_domain = true;
  return c;
}

const DomainEnergy& memory_of(const WindowResult& r) {
  for (const auto& d : r.domains)
    if (d.domain_id == "gpu:0/memory") return d;
  throw std::runtime_error("no gpu:0/memory in the result");
}

TEST(AveragePower, SimMemoryDomainConstantPowerExactWithinU) {
  SimMeter m(with_memory("step 300W 60s; loop"));
  ASSERT_EQ(m.meter->domains().size(), 2u);
  EXPECT_EQ(m.meter->domains()[1].parent, "gpu:0");
  double t_s = 3.0;
  for (double len_s : {0.1, 0.6, 2.0, 10.0}) {
    const WindowResult r = m.window(t_s, t_s + len_s);
    t_s += len_s + 3.0;
    ASSERT_TRUE(r.final);
    const DomainEnergy& d = memory_of(r);
    ASSERT_TRUE(d.available) << len_s << ": " << (d.issues.empty() ? "" : d.issues[0]);
    EXPECT_EQ(d.estimator, Estimator::integrated_average);
    const double truth = m.gpu->true_memory_energy_j(0, r.t_begin_ns, r.t_end_ns);
    EXPECT_NEAR(d.energy_j, truth, d.uncertainty_j + 1e-3) << len_s;
    EXPECT_LT(d.uncertainty_j, 0.1 * truth) << len_s;
    // A part of the board's power: less than the board's energy over the same window.
    EXPECT_LT(d.energy_j, r.domains[0].energy_j);
  }
}

TEST(AveragePower, SimMemoryDomainStepsAreCoveredByU) {
  SimMeter m(with_memory("idle 3s; step 650W 3s; idle 2s; loop"));
  m.meter->advance_to(m.t0() + 70 * kS);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> start(2.0, 60.0), len(0.2, 6.0);
  std::vector<WindowId> ids;
  for (int i = 0; i < 300; ++i) {
    const double a = start(rng);
    ids.push_back(m.meter->add_window("w", m.t0() + SimMeter::s_to_ns(a), m.t0() + SimMeter::s_to_ns(a + len(rng))));
  }
  m.meter->advance_to(m.clock.now_ns() + kS);
  int available = 0, inside = 0, short_issue = 0;
  for (WindowId id : ids) {
    const WindowResult r = m.meter->wait_result(id);
    ASSERT_TRUE(r.final);
    const DomainEnergy& d = memory_of(r);
    if (!d.available) {
      ASSERT_FALSE(d.issue_codes.empty());
      short_issue += d.issue_codes[0] == IssueCode::shorter_than_average;
      continue;
    }
    ++available;
    inside += std::abs(d.energy_j - m.gpu->true_memory_energy_j(0, r.t_begin_ns, r.t_end_ns)) <= d.uncertainty_j;
  }
  EXPECT_GE(available, 280);
  EXPECT_EQ(available + short_issue, 300);
  EXPECT_GE(inside, available * 95 / 100) << inside << " of " << available;
}

TEST(AveragePower, SimMemoryDomainShortWindowAtAStep) {
  SimMeter m(with_memory("idle 3s; step 650W 3s; loop"));
  // 20 ms across the idle -> load step at 3 s: the average cannot place it.
  const WindowResult r = m.window(2.99, 3.01);
  const DomainEnergy& d = memory_of(r);
  const double truth = m.gpu->true_memory_energy_j(0, r.t_begin_ns, r.t_end_ns);
  if (d.available) {
    EXPECT_LE(std::abs(d.energy_j - truth), d.uncertainty_j);
  } else {
    ASSERT_FALSE(d.issue_codes.empty());
    EXPECT_EQ(d.issue_codes[0], IssueCode::shorter_than_average);
  }
}

}  // namespace
}  // namespace wattlab::testing
