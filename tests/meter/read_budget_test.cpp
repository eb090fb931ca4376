// The pieces of the sampler's CPU budget that need no sensor: how the total read share is split
// between the counter, power readings and telemetry, and the real-time governor that lowers that
// total by what the sampler thread spends outside its reads.
#include "meter/read_budget.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;

TEST(BudgetGroupScales, UnderTheTotalNothingIsScaled) {
  const auto f = budget_group_scales(0.005, 0.001, 0.001, 0, 0.008);
  EXPECT_EQ(f[0], 1.0);
  EXPECT_EQ(f[1], 1.0);
  EXPECT_EQ(f[2], 1.0);
}

TEST(BudgetGroupScales, TelemetryGoesFirstThenPower) {
  // Counter 0.5%, power 0.1%, telemetry 0.4% of a total 0.8%: telemetry gets 0.2%.
  auto f = budget_group_scales(0.005, 0.001, 0.004, 0, 0.008);
  EXPECT_EQ(f[0], 1.0);
  EXPECT_EQ(f[1], 1.0);
  EXPECT_NEAR(f[2], 0.5, 1e-12);
  // Power alone over what the counter leaves: telemetry keeps a fifth of the rest, power the remainder.
  f = budget_group_scales(0.005, 0.004, 0.001, 0, 0.008);
  EXPECT_EQ(f[0], 1.0);
  EXPECT_NEAR(f[2], 0.6, 1e-12);  // 0.2 x 0.3% of 0.1%
  EXPECT_NEAR(f[1], (0.003 - 0.0006) / 0.004, 1e-12);
}

TEST(BudgetGroupScales, TheCounterKeepsThreeQuartersAtMost) {
  // The default shares (counter 0.6% of 0.8%) leave the counter alone...
  auto f = budget_group_scales(0.006, 0.0005, 0.002, 0, 0.008);
  EXPECT_EQ(f[0], 1.0);
  // ...a lowered total (the governor's) scales it to 3/4 of the total, and the others share the rest.
  f = budget_group_scales(0.006, 0.0005, 0.002, 0, 0.006);
  EXPECT_NEAR(f[0], 0.0045 / 0.006, 1e-12);
  const double rest = 0.006 - 0.0045;
  EXPECT_NEAR(0.006 * f[0] + 0.0005 * f[1] + 0.002 * f[2], 0.006, 1e-12);
  EXPECT_NEAR(0.002 * f[2], rest - 0.0005, 1e-12);
}

TEST(BudgetGroupScales, TheExtrasGiveWayBeforeTelemetry) {
  // The H200 run of 22:16Z (rep): reads may use 0.65 %, the counter (7.5 ms at 0.82/s) wants 0.62 %,
  // power 0.03 %, telemetry (cheap readings and GPM) 0.13 %, extras (violation counters, memory
  // used) 0.41 %. The counter gets 3/4; the extras a tenth of the rest; telemetry the remainder
  // after the power readings, which keep theirs.
  const double total = 0.0065;
  const auto f = budget_group_scales(0.0062, 0.0003, 0.0013, 0.0041, total);
  const double rest = total - 0.75 * total;
  EXPECT_NEAR(0.0062 * f[0], 0.75 * total, 1e-12);
  EXPECT_NEAR(0.0041 * f[3], 0.1 * rest, 1e-12);
  EXPECT_NEAR(f[1], 1.0, 1e-12);
  EXPECT_NEAR(0.0013 * f[2], 0.9 * rest - 0.0003, 1e-12);
  // With room to spare the extras keep what the others leave.
  const auto g = budget_group_scales(0.004, 0.0003, 0.0013, 0.0041, 0.008);
  EXPECT_EQ(g[2], 1.0);
  EXPECT_NEAR(0.0041 * g[3], 0.008 - 0.004 - 0.0003 - 0.0013, 1e-12);
}

TEST(WaterLevel, CheapReadingsKeepTheirRatesAndTheDearOnesShareTheRest) {
  // Everything fits: no level.
  std::vector<double> use{0.0001, 0.0002, 0.0003};
  EXPECT_TRUE(std::isinf(water_level(use, 0.001)));
  // The H200 telemetry of 2026-12-03 in shares of a core: eleven cheap readings (~8 us at 5/s,
  // 0.004 %) and four dear ones (GPM ~0.2 ms at 5/s, 0.1 %), 0.09 % for all of them.
  use.assign(11, 0.00004);
  for (int i = 0; i < 4; ++i) use.push_back(0.001);
  const double l = water_level(use, 0.0009);
  EXPECT_NEAR(l, (0.0009 - 11 * 0.00004) / 4, 1e-12);
  EXPECT_GT(l, 0.00004);  // the cheap ones are under it: untouched
  // Equal uses: the same as scaling every one by budget / total.
  use.assign(5, 0.001);
  EXPECT_NEAR(water_level(use, 0.002), 0.0004, 1e-12);
  // A budget of nothing: level 0.
  use.assign(3, 0.001);
  EXPECT_EQ(water_level(use, 0.0), 0.0);
}

TEST(WaterLevel, AReadThatDeliversSeveralReadingsWeighsAsMany) {
  // Ten cheap readings (0.004 %) and NVML's GPM read (0.1 %: one sample, four metrics), 0.05 % for
  // all: the GPM read gets four times the level the others are held to.
  std::vector<std::pair<double, double>> use(10, {0.00004, 1.0});
  use.emplace_back(0.001, 4.0);
  const double l = water_level(use, 0.0005);
  EXPECT_NEAR(10 * std::min(0.00004, l) + std::min(0.001, 4 * l), 0.0005, 1e-12);
  EXPECT_NEAR(l, 0.0005 / 14, 1e-12);  // every reading over the level: 10 + 4 shares
  // Unweighted the cheap ones fit under the level and the GPM read gets only what they leave.
  std::vector<double> plain(10, 0.00004);
  plain.push_back(0.001);
  EXPECT_NEAR(water_level(plain, 0.0005), 0.0005 - 10 * 0.00004, 1e-12);
  EXPECT_GT(4 * l, 0.0005 - 10 * 0.00004);
}

TEST(ThreadCpuGovernor, OffOrNotStartedLeavesTheReadShare) {
  ThreadCpuGovernor off(0.0, 0.008);
  off.start(0, 0);
  off.observe(60 * kS, 60 * kS / 10, 0);  // 10% of a core outside reads
  EXPECT_EQ(off.read_share(), 0.008);
  ThreadCpuGovernor no_budget(0.009, 0.0);  // the read budget turned off stays off
  no_budget.start(0, 0);
  no_budget.observe(60 * kS, 60 * kS / 10, 0);
  EXPECT_EQ(no_budget.read_share(), 0.0);
  ThreadCpuGovernor idle(0.009, 0.008);
  idle.observe(60 * kS, 60 * kS / 10, 0);  // never started (virtual time)
  EXPECT_EQ(idle.read_share(), 0.008);
}

TEST(ThreadCpuGovernor, TheRestComesOffTheReads) {
  // Reads at 0.6 %, 0.25 % of a core besides: under the 0.9 % target, so only the rest comes off.
  ThreadCpuGovernor g(0.009, 0.008);
  g.start(5 * kS, 2'000'000);
  const int64_t span = 60 * kS;
  auto cpu = [&](double share) { return 2'000'000 + static_cast<int64_t>(share * static_cast<double>(span)); };
  g.observe(5 * kS + span, cpu(0.0085), static_cast<int64_t>(0.006 * span));
  EXPECT_NEAR(g.rest_share(), 0.0025, 1e-9);
  EXPECT_EQ(g.excess_share(), 0.0);
  EXPECT_NEAR(g.read_share(), 0.009 - 0.0025, 1e-9);
  // A cheap rest leaves the configured share; a dear one stops at half of it.
  g.observe(5 * kS + span, cpu(0.0061), static_cast<int64_t>(0.006 * span));
  EXPECT_EQ(g.read_share(), 0.008);
  g.observe(5 * kS + span, cpu(0.03), static_cast<int64_t>(0.008 * span));
  EXPECT_EQ(g.read_share(), 0.004);
}

TEST(ThreadCpuGovernor, AnExcessOverTheTargetIsPaidBack) {
  // The H200 host of 2026-12-03, 18:38Z: reads charged 0.715 %, the thread at 1.05 %: 0.15 % over
  // 67 s is ~0.1 s too much, paid back over the next 10 s on top of the rest.
  ThreadCpuGovernor g(0.009, 0.008);
  g.start(0, 0);
  const int64_t span = 67 * kS;
  const auto at = [&](double share) { return static_cast<int64_t>(share * static_cast<double>(span)); };
  g.observe(span, at(0.0105), at(0.00715));
  EXPECT_NEAR(g.rest_share(), 0.00335, 1e-9);
  EXPECT_NEAR(g.excess_share(), (0.0105 - 0.009) * 67 / 10, 1e-9);
  EXPECT_EQ(g.read_share(), 0.004);  // down to the floor
  // A little over: the excess takes its share off what the rest leaves.
  g.observe(span, at(0.0091), at(0.006));
  EXPECT_NEAR(g.read_share(), 0.009 - 0.0031 - 0.0001 * 6.7, 1e-9);
}

TEST(ThreadCpuGovernor, TheFirstSecondsAreAveragedOverTen) {
  // The counter grid's start-up probe (16 reads of ~4.6 ms, not charged) in the first second: a
  // rate over 1 s would read 7.4% and floor the reads; over 10 s it is 0.74%.
  ThreadCpuGovernor g(0.009, 0.008);
  g.start(0, 0);
  g.observe(kS, 74'000'000, 0);
  EXPECT_NEAR(g.rest_share(), 0.0074, 1e-12);
  g.observe(100 * kS, 74'000'000 + 100'000'000, 0);  // later: 0.174 s over 100 s
  EXPECT_NEAR(g.rest_share(), 0.00174, 1e-12);
  EXPECT_NEAR(g.read_share(), 0.009 - 0.00174, 1e-12);
}

}  // namespace
}  // namespace wattlab
