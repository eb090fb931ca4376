// The per-process split model on hand-made polls: shares, the idle part, the unattributed part,
// coverage, and an uncertainty always wider (relative to the energy) than the total's.
#include "meter/process_split.h"

#include <gtest/gtest.h>

#include <cmath>

#include "wattlab/core/error.h"

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;

// Polls every second at t = 1..n s, each with the same utilization per pid.
std::vector<ProcessPoll> steady(int n, std::map<unsigned, double> pct) {
  std::vector<ProcessPoll> v;
  for (int k = 1; k <= n; ++k) v.push_back({k * kS, pct});
  return v;
}

SplitInput base() {
  SplitInput in;
  in.t_begin_ns = 0;
  in.t_end_ns = 10 * kS;
  in.energy_j = 3000;
  in.uncertainty_j = 30;
  in.idle_power_w = 100;
  in.idle_power_u95_w = 10;
  in.idle_source = "test";
  in.device_busy_pct = 80;
  in.polls = steady(10, {{11, 60.0}, {22, 20.0}});
  return in;
}

double sum_of(const ProcessSplit& s) {
  double e = s.idle_energy_j + s.unattributed_energy_j;
  for (const auto& p : s.processes) e += p.energy_j;
  return e;
}

TEST(ProcessSplit, SplitsActiveEnergyBySmSecondsAndKeepsIdleApart) {
  const ProcessSplit s = split_energy(base());
  EXPECT_TRUE(s.idle_known);
  EXPECT_DOUBLE_EQ(s.idle_energy_j, 1000);
  EXPECT_DOUBLE_EQ(s.idle_uncertainty_j, 100);
  EXPECT_DOUBLE_EQ(s.active_energy_j, 2000);
  EXPECT_DOUBLE_EQ(s.coverage, 1.0);
  EXPECT_NEAR(s.unattributed_busy_share, 0.0, 1e-12);
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_EQ(s.processes[0].pid, 11u);
  EXPECT_NEAR(s.processes[0].sm_s, 6.0, 1e-9);
  EXPECT_NEAR(s.processes[0].energy_j, 1500, 1e-9);
  EXPECT_NEAR(s.processes[1].energy_j, 500, 1e-9);
  EXPECT_NEAR(sum_of(s), 3000, 1e-9);
  // 0.75 of the total's 30 J and of the idle's 100 J, and 10 % of 1500 J for the proxy.
  EXPECT_NEAR(s.processes[0].uncertainty_j, std::sqrt(22.5 * 22.5 + 75 * 75 + 150 * 150), 1e-9);
}

TEST(ProcessSplit, EveryShareIsRelativelyWiderThanTheTotal) {
  for (double proxy : {0.0, 0.1}) {
    SplitInput in = base();
    in.proxy_rel_u95 = proxy;
    in.idle_power_u95_w = 0;
    const ProcessSplit s = split_energy(in);
    const double total_rel = in.uncertainty_j / in.energy_j;
    for (const auto& p : s.processes) EXPECT_GT(p.uncertainty_j / p.energy_j, total_rel) << p.pid << " " << proxy;
  }
}

TEST(ProcessSplit, BusyTimeNoProcessAccountsForIsUnattributed) {
  SplitInput in = base();
  in.device_busy_pct = 100;  // the processes hold the SMs 80 % of the time
  const ProcessSplit s = split_energy(in);
  EXPECT_NEAR(s.unattributed_busy_share, 0.2, 1e-12);
  EXPECT_NEAR(s.unattributed_energy_j, 400, 1e-9);
  EXPECT_NEAR(s.processes[0].energy_j, 1200, 1e-9);
  EXPECT_NEAR(s.processes[1].energy_j, 400, 1e-9);
  EXPECT_NEAR(sum_of(s), 3000, 1e-9);
  // The unattributed 400 J could be either process's: it widens both.
  EXPECT_GT(s.processes[1].uncertainty_j, 400);
}

TEST(ProcessSplit, UnknownIdleLeavesItInTheShares) {
  SplitInput in = base();
  in.idle_power_w.reset();
  const ProcessSplit s = split_energy(in);
  EXPECT_FALSE(s.idle_known);
  EXPECT_DOUBLE_EQ(s.idle_energy_j, 0);
  EXPECT_NEAR(s.processes[0].energy_j, 2250, 1e-9);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes[0].find("idle power unknown"), std::string::npos);
}

TEST(ProcessSplit, NoProcessMeansAllActiveEnergyIsUnattributed) {
  SplitInput in = base();
  in.polls = steady(10, {});
  const ProcessSplit s = split_energy(in);
  EXPECT_TRUE(s.processes.empty());
  EXPECT_DOUBLE_EQ(s.unattributed_energy_j, 2000);
  EXPECT_NEAR(sum_of(s), 3000, 1e-9);
}

TEST(ProcessSplit, UncoveredTimeWidensEveryShare) {
  SplitInput in = base();
  in.polls = {{6 * kS, {{11, 60.0}, {22, 20.0}}}, {7 * kS, {{11, 60.0}, {22, 20.0}}}};  // [4, 7] s covered
  in.device_busy_pct.reset();
  const ProcessSplit s = split_energy(in);
  EXPECT_NEAR(s.coverage, 0.3, 1e-12);
  EXPECT_NEAR(s.processes[0].energy_j, 1500, 1e-9);  // the covered part stands for the whole
  EXPECT_GT(s.processes[0].uncertainty_j, 0.7 * 2000);
  EXPECT_GT(s.processes[1].uncertainty_j, 0.7 * 2000);
}

TEST(ProcessSplit, UtilizationMovingBetweenPollsWidensTheShare) {
  SplitInput steady_in = base(), moving = base();
  moving.polls.clear();
  for (int k = 1; k <= 10; ++k) moving.polls.push_back({k * kS, {{11, k % 2 ? 90.0 : 30.0}, {22, 20.0}}});
  const ProcessSplit a = split_energy(steady_in), b = split_energy(moving);
  EXPECT_NEAR(b.processes[0].sm_s, 6.0, 1e-9);  // the same mean
  EXPECT_NEAR(b.processes[0].energy_j, a.processes[0].energy_j, 1e-9);
  EXPECT_GT(b.processes[0].uncertainty_j, a.processes[0].uncertainty_j);
}

TEST(ProcessSplit, IdleAboveTheTotalIsClampedAndSaid) {
  SplitInput in = base();
  in.idle_power_w = 400;
  const ProcessSplit s = split_energy(in);
  EXPECT_DOUBLE_EQ(s.idle_energy_j, 3000);
  EXPECT_DOUBLE_EQ(s.active_energy_j, 0);
  for (const auto& p : s.processes) EXPECT_DOUBLE_EQ(p.energy_j, 0);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes[0].find("clamped"), std::string::npos);
}

TEST(ProcessSplit, BadInputIsNamed) {
  SplitInput in = base();
  in.t_end_ns = in.t_begin_ns;
  EXPECT_THROW(split_energy(in), UsageError);
  in = base();
  in.energy_j = -1;
  EXPECT_THROW(split_energy(in), UsageError);
  in = base();
  in.idle_power_w = -5;
  EXPECT_THROW(split_energy(in), UsageError);
  in = base();
  in.polls[0].sm_util_pct[11] = -3;
  try {
    split_energy(in);
    FAIL() << "negative utilization accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("pid 11"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wattlab
