// The per-process split model on hand-made polls and utilization samples: shares, the idle part,
// the unattributed part, coverage, every sample over its own period, and an uncertainty always
// wider (relative to the energy) than the total's.
#include "meter/process_split.h"

#include <gtest/gtest.h>

#include <cmath>

#include "wattlab/core/error.h"

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;

// Polls every second at t = 1..n s listing the pids, and a sample per pid per second over (k-1, k] s
// with the same utilization.
void steady(SplitInput& in, int n, const std::map<unsigned, double>& pct) {
  in.polls.clear();
  in.samples.clear();
  for (int k = 1; k <= n; ++k) {
    ProcessPoll p{k * kS, {}};
    for (const auto& [pid, v] : pct) {
      p.pids.insert(pid);
      in.samples.push_back({pid, (k - 1) * kS, k * kS, v});
    }
    in.polls.push_back(p);
  }
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
  steady(in, 10, {{11, 60.0}, {22, 20.0}});
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
  steady(in, 10, {});
  const ProcessSplit s = split_energy(in);
  EXPECT_TRUE(s.processes.empty());
  EXPECT_DOUBLE_EQ(s.unattributed_energy_j, 2000);
  EXPECT_NEAR(sum_of(s), 3000, 1e-9);
}

TEST(ProcessSplit, UncoveredTimeWidensEveryShare) {
  SplitInput in = base();
  in.polls = {{6 * kS, {11, 22}}, {7 * kS, {11, 22}}};  // [4, 7] s covered
  in.samples = {{11, 5 * kS, 7 * kS, 60.0}, {22, 5 * kS, 7 * kS, 20.0}};
  in.device_busy_pct.reset();
  const ProcessSplit s = split_energy(in);
  EXPECT_NEAR(s.coverage, 0.3, 1e-12);
  EXPECT_NEAR(s.processes[0].energy_j, 1500, 1e-9);  // the sampled part stands for the whole
  EXPECT_GT(s.processes[0].uncertainty_j, 0.7 * 2000);
  EXPECT_GT(s.processes[1].uncertainty_j, 0.7 * 2000);
}

// A sample whose period straddles the interval's edge counts the part of its period inside, and
// widens the share: the process may have been busy on either side.
TEST(ProcessSplit, ASampleAcrossAnEdgeWidensTheShare) {
  SplitInput aligned = base(), shifted = base();
  shifted.samples.clear();
  for (int k = 0; k <= 10; ++k) {
    shifted.samples.push_back({11, k * kS - kS / 2, k * kS + kS / 2, 60.0});
    shifted.samples.push_back({22, k * kS - kS / 2, k * kS + kS / 2, 20.0});
  }
  const ProcessSplit a = split_energy(aligned), b = split_energy(shifted);
  EXPECT_NEAR(b.processes[0].sm_s, 6.0, 1e-9);  // half of the first and of the last sample
  EXPECT_NEAR(b.processes[0].energy_j, a.processes[0].energy_j, 1e-9);
  EXPECT_GT(b.processes[0].uncertainty_j, a.processes[0].uncertainty_j);
}

// NVML keeps one sample per process per sample period and none for a period with zero
// utilization. Two loads periodic over five 100 ms periods (A busy in three, B in one) polled
// every 500 ms: the newest sample at each poll is always the same phase (A 100 %, B none), but
// every sample over its own period gives the loads' SM time, 3 : 1.
TEST(ProcessSplit, EverySampleCountsOverItsOwnPeriod) {
  SplitInput in = base();
  in.polls.clear();
  in.samples.clear();
  constexpr int64_t kPeriod = kS / 10;
  for (int64_t j = 1; j <= 100; ++j) {
    if (j % 5 < 3) in.samples.push_back({11, (j - 1) * kPeriod, j * kPeriod, 100.0});
    if (j % 5 == 3) in.samples.push_back({22, (j - 1) * kPeriod, j * kPeriod, 100.0});
    if (j % 5 == 0) in.polls.push_back({j * kPeriod, {11, 22}});
  }
  in.device_busy_pct = 80;
  const ProcessSplit s = split_energy(in);
  ASSERT_EQ(s.processes.size(), 2u);
  EXPECT_NEAR(s.processes[0].sm_s, 6.0, 1e-9);
  EXPECT_NEAR(s.processes[1].sm_s, 2.0, 1e-9);
  EXPECT_NEAR(s.processes[0].energy_j / s.processes[1].energy_j, 3.0, 1e-9);
  EXPECT_NEAR(s.unattributed_energy_j, 0, 1e-9);
  EXPECT_NEAR(sum_of(s), 3000, 1e-9);
}

// Two processes with SM time: the split says their shares are indicative only (the driver's
// per-process utilization does not follow each one's work on shared GPUs); one alone: no such note.
TEST(ProcessSplit, ProcessesSharingTheGpuAreSaidToBeIndicative) {
  auto has_note = [](const ProcessSplit& s) {
    for (const auto& n : s.notes)
      if (n.find("2 processes used the SMs") != std::string::npos && n.find("indicative only") != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(has_note(split_energy(base())));
  SplitInput alone = base();
  steady(alone, 10, {{11, 60.0}});
  EXPECT_FALSE(has_note(split_energy(alone)));
  SplitInput listed = base();
  steady(listed, 10, {{11, 60.0}, {22, 0.0}});  // listed, but without SM time
  EXPECT_FALSE(has_note(split_energy(listed)));
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
  in.samples[0].sm_util_pct = -3;
  try {
    split_energy(in);
    FAIL() << "negative utilization accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("pid 11"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wattlab
