// The sampler's schedule on virtual time, without sensors: which interval each reading gets, how
// wake-ups coalesce, how the CPU budget puts dear reads off, and how long a window's end may wait.
#include "meter/scheduler.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

namespace wattlab {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;

ReadingModel model(ReadingKind k, int64_t update_ns, int64_t cost_ns, int64_t max_safe_ns = 0) {
  ReadingModel m;
  m.kind = k;
  m.update_period_ns = update_ns;
  m.read_cost_ns = cost_ns;
  m.max_safe_interval_ns = max_safe_ns;
  return m;
}

// An H200-like domain: a dear counter, the sample buffer, instant power, telemetry, a violation
// counter, and a GPM metric riding along with SM activity.
Domain gpu(int64_t counter_cost_ns = 4 * kMs, int64_t telemetry_cost_ns = 10'000) {
  Domain d;
  d.id = "gpu:0";
  d.model.readings = {model(ReadingKind::energy_counter_j, 100 * kMs, counter_cost_ns),
                      model(ReadingKind::power_sample_w, 20 * kMs, 290'000, 2'400 * kMs),
                      model(ReadingKind::power_instant_w, 100 * kMs, 5'000),
                      model(ReadingKind::sm_clock_mhz, 0, telemetry_cost_ns),
                      model(ReadingKind::power_violation_ns, 0, 600'000),
                      model(ReadingKind::gpm_sm_activity_pct, 0, 200'000),
                      model(ReadingKind::gpm_tensor_activity_pct, 0, 0)};
  d.model.readings.back().read_with = ReadingKind::gpm_sm_activity_pct;
  return d;
}

Task& task(Scheduler& s, ReadingKind k) {
  for (Task& t : s.tasks())
    if (t.kind == k) return t;
  throw std::logic_error("no task");
}

// One read of t that took dur_ns, started when due; returns when it ended.
int64_t read_once(Scheduler& s, Task& t, int64_t dur_ns) {
  const int64_t t0 = t.next_ns;
  s.begin_read(t);
  s.after_plain_read(t, t0);
  s.after_read(t, dur_ns, t0 + dur_ns);
  return t0 + dur_ns;
}

TEST(Scheduler, IntervalsFollowTheOptionsAndTheSensorModel) {
  const MeterOptions opt;
  Scheduler s({gpu()}, opt, 0);
  EXPECT_EQ(task(s, ReadingKind::energy_counter_j).interval_ns, opt.counter_interval_ns);
  ASSERT_NE(task(s, ReadingKind::energy_counter_j).counter, nullptr);
  EXPECT_TRUE(task(s, ReadingKind::energy_counter_j).counter->on_grid()) << "a 4 ms counter is read on its grid";
  EXPECT_EQ(task(s, ReadingKind::power_sample_w).interval_ns, opt.samples_interval_ns);
  // Beside a sample buffer, the instant field is read once per refresh.
  EXPECT_EQ(task(s, ReadingKind::power_instant_w).interval_ns, 100 * kMs);
  EXPECT_EQ(task(s, ReadingKind::sm_clock_mhz).interval_ns, opt.telemetry_interval_ns);
  EXPECT_EQ(task(s, ReadingKind::power_violation_ns).interval_ns, opt.violation_interval_ns);
  // The rider has no task of its own: its lead reads it.
  for (const Task& t : s.tasks()) EXPECT_NE(t.kind, ReadingKind::gpm_tensor_activity_pct);
  ASSERT_EQ(task(s, ReadingKind::gpm_sm_activity_pct).with.size(), 1u);
  EXPECT_EQ(task(s, ReadingKind::gpm_sm_activity_pct).with[0], ReadingKind::gpm_tensor_activity_pct);
  // A cheap counter (RAPL) is read at plain intervals, as densely as power.
  Scheduler cheap({gpu(2'000)}, opt, 0);
  EXPECT_FALSE(task(cheap, ReadingKind::energy_counter_j).counter->on_grid());
  EXPECT_EQ(task(cheap, ReadingKind::energy_counter_j).interval_ns, opt.power_interval_ns);
}

TEST(Scheduler, WakeUpsCoalesceButCountersKeepTheirInstants) {
  Scheduler s({gpu()}, MeterOptions{}, 0);
  Task& tel = task(s, ReadingKind::sm_clock_mhz);
  tel.next_ns = 10 * kS;
  EXPECT_EQ(Scheduler::wake_ns(tel), 10 * kS - Scheduler::kCoalesceNs);
  Task& counter = task(s, ReadingKind::energy_counter_j);
  counter.next_ns = 10 * kS;
  EXPECT_EQ(Scheduler::wake_ns(counter), 10 * kS);
  // A read taken early in a coalesced wake-up keeps its interval from the scheduled instant.
  s.begin_read(tel);
  s.after_plain_read(tel, 10 * kS - 3 * kMs);
  EXPECT_EQ(tel.next_ns, 10 * kS + tel.interval_ns);
}

TEST(Scheduler, TheFirstTaskIsDueFirstAndALostDomainNeverAgain) {
  Scheduler s({gpu()}, MeterOptions{}, 0);
  for (Task& t : s.tasks()) t.next_ns = 5 * kS;
  task(s, ReadingKind::power_instant_w).next_ns = 2 * kS;
  EXPECT_EQ(s.next_task()->kind, ReadingKind::power_instant_w);
  for (Task& t : s.tasks()) s.after_lost(t);
  EXPECT_EQ(s.next_task()->next_ns, INT64_MAX);
}

TEST(Scheduler, AReadDearerThanItsShareIsPutOffAndCounted) {
  // Telemetry alone at 5 ms a read against its 0.2 % share: one read per 2.5 s, not per 200 ms.
  Domain d;
  d.id = "gpu:0";
  d.model.readings = {model(ReadingKind::sm_clock_mhz, 0, 5 * kMs)};
  Scheduler s({d}, MeterOptions{}, 0);
  Task& tel = task(s, ReadingKind::sm_clock_mhz);
  std::vector<int64_t> starts;
  for (int i = 0; i < 12; ++i) {
    starts.push_back(tel.next_ns);
    read_once(s, tel, 5 * kMs);
  }
  const int64_t gap = starts.back() - starts[starts.size() - 2];
  EXPECT_GE(gap, 2'400 * kMs);
  EXPECT_LE(gap, 2'600 * kMs);
  EXPECT_GT(s.stretched_reads(), 5u);
  // Cheap, it keeps its interval.
  d.model.readings[0].read_cost_ns = 10'000;
  Scheduler cheap({d}, MeterOptions{}, 0);
  Task& t = task(cheap, ReadingKind::sm_clock_mhz);
  for (int i = 0; i < 12; ++i) read_once(cheap, t, 10'000);
  EXPECT_EQ(t.next_ns, 12 * t.interval_ns);
  EXPECT_EQ(cheap.stretched_reads(), 0u);
}

TEST(Scheduler, TheSampleBufferIsNeverPutOffPastItsDepth) {
  // 50 ms a read would allow one read per 25 s at 0.2 %: the buffer holds 2.4 s, so it stays read.
  Domain d = gpu();
  d.model.readings[1].read_cost_ns = 50 * kMs;
  Scheduler s({d}, MeterOptions{}, 0);
  Task& samples = task(s, ReadingKind::power_sample_w);
  int64_t start = 0;
  for (int i = 0; i < 10; ++i) {
    start = samples.next_ns;
    read_once(s, samples, 50 * kMs);
    EXPECT_LE(samples.next_ns - start, 2'400 * kMs) << "read " << i;
  }
}

TEST(Scheduler, TheSampleBuffersFloorComesOffTheTotalBeforeItIsShared) {
  // Eight boards whose sample buffer costs 0.5 ms a read and must be read every 1.19 s (the
  // simulated H200's): the buffers use 0.34 % of a core however far the budget puts them off, so
  // the counters share at most 3/4 of what is left of the 0.8 %, not 3/4 of all of it.
  constexpr double kFloor = 503'000.0 / (1'190.0 * kMs);
  std::vector<Domain> boards;
  for (int i = 0; i < 8; ++i) {
    Domain d = gpu();
    d.id = "gpu:" + std::to_string(i);
    for (ReadingModel& m : d.model.readings)
      if (m.kind == ReadingKind::power_sample_w) {
        m.read_cost_ns = 503'000;
        m.max_safe_interval_ns = 1'190 * kMs;
      }
    boards.push_back(d);
  }
  const MeterOptions opt;
  Scheduler s(boards, opt, 0);
  double counters = 0;
  for (const Task& t : s.tasks()) {
    if (t.kind == ReadingKind::energy_counter_j) counters += t.budget.rate();
    if (t.kind == ReadingKind::power_sample_w) {
      EXPECT_GE(t.budget.rate(), 0.999 * kFloor) << "never below its floor";
    }
  }
  EXPECT_GT(counters, 0);
  EXPECT_LE(counters, 0.75 * (opt.sampler_cpu_share - 8 * kFloor) * 1.001);
}

TEST(Scheduler, APreemptedReadIsPaidForWithTheCpuItUsed) {
  // A violation counter read (0.6 ms, 0.2 % of a core, every second) held up 60 ms by other
  // processes on the same cores: charged its whole duration, it put the reading off by 30 s; the
  // thread CPU it used (on real time) pays 0.6 ms, and the next read comes at its interval.
  Scheduler clock_only({gpu()}, MeterOptions{}, 0), with_cpu({gpu()}, MeterOptions{}, 0);
  Task& a = task(clock_only, ReadingKind::power_violation_ns);
  Task& b = task(with_cpu, ReadingKind::power_violation_ns);
  for (auto [s, t, cpu_ns] : {std::tuple{&clock_only, &a, int64_t{-1}}, std::tuple{&with_cpu, &b, 600'000L}}) {
    t->next_ns = 0;
    s->begin_read(*t);
    s->after_plain_read(*t, 0);
    s->after_read(*t, 60 * kMs, 60 * kMs, cpu_ns);
  }
  EXPECT_GT(a.next_ns, 20 * kS) << "the duration is paid: in debt for ~30 s";
  EXPECT_EQ(b.next_ns, 1 * kS) << "0.6 ms paid: at its interval";
  // The mean cost, which times reads, is the duration's either way.
  EXPECT_EQ(a.budget.cost_ns(), b.budget.cost_ns());
  EXPECT_EQ(b.budget.charged_ns(), 600'000);
  // The CPU never pays more than the duration (a read's CPU taken with the step around it).
  Task& c = task(with_cpu, ReadingKind::sm_clock_mhz);
  const int64_t t0 = c.next_ns;
  with_cpu.begin_read(c);
  with_cpu.after_plain_read(c, t0);
  with_cpu.after_read(c, 10'000, t0 + 10'000, 50'000);
  EXPECT_EQ(c.budget.charged_ns(), 10'000);
}

TEST(Scheduler, AWindowEndWaitsFourOfTheSlowestCounterIntervals) {
  Scheduler s({gpu()}, MeterOptions{}, 0);
  EXPECT_EQ(s.end_timeout_ns(), 4 * kS);
  // A counter at 12 ms a read (a bracket every 5th read) at its 0.6 % share: every 2.4 s.
  Scheduler dear({gpu(12 * kMs)}, MeterOptions{}, 0);
  EXPECT_NEAR(static_cast<double>(dear.end_timeout_ns()), 4 * 2.4e9, 0.01e9);
  // A read held up for 100 ms puts the counter's budget in debt for ~10 s: the wait grows with it.
  Task& c = task(dear, ReadingKind::energy_counter_j);
  // Two reads across an update lock the grid: start-up is over, and reads are paid for.
  c.counter->on_read({0.0, 10 * kMs, 12 * kMs, 16 * kMs, 12e6});
  c.counter->on_read({1.0, 22 * kMs, 12 * kMs, 28 * kMs, 12e6});
  ASSERT_FALSE(c.probe_free());
  dear.begin_read(c);
  dear.after_counter_read(c, CounterNext{std::nullopt, 1'100 * kMs, 0, true});
  dear.after_read(c, 100 * kMs, 100 * kMs);
  EXPECT_GT(c.next_ns, 10 * kS);
  EXPECT_GE(dear.end_timeout_ns(), 4 * (c.next_ns - 100 * kMs));
}

TEST(Scheduler, TheGovernorTakesTheThreadsOtherCpuOffTheReads) {
  const MeterOptions opt;
  Scheduler s({gpu()}, opt, 0);
  s.start_governor(0, 0);
  EXPECT_EQ(s.read_cpu_share(), 0.0) << "nothing observed yet";
  // 60 s in which the thread spent 0.2 % of a core and no read was charged: its CPU outside the
  // reads is 0.2 %, so the reads may use what is left of its 0.9 %: 0.7 %.
  s.observe_thread_cpu(60 * kS, 120 * kMs);
  EXPECT_NEAR(s.rest_cpu_share(), 0.002, 1e-9);
  EXPECT_NEAR(s.read_cpu_share(), opt.sampler_thread_cpu_share - 0.002, 1e-9);
  // A thread that spends 0.5 %: never less than half of the reads' 0.8 %.
  s.observe_thread_cpu(120 * kS, 600 * kMs);
  EXPECT_NEAR(s.read_cpu_share(), 0.5 * opt.sampler_cpu_share, 1e-9);
}

}  // namespace
}  // namespace wattlab
