// The meter on real time: sampler thread, windows from several threads, RAII windows, stop.
#include "wattlab/meter/meter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "sensors/sim/sim_gpu.h"
#include "sim_fixture.h"

namespace wattlab {

std::unique_ptr<Meter> real_time_meter(MeterOptions opt = {}) {
  sim::SimConfig c;
  c.workload = "step 300W 60s; loop";
  c.gain_error = 0;
  c.read_costs = false;
  std::vector<SensorPtr> s;
  s.push_back(std::make_unique<sim::SimGpu>(c, MonotonicClock::instance()));
  opt.counter_interval_ns = 200'000'000;
  opt.samples_interval_ns = 200'000'000;
  return std::make_unique<Meter>(std::move(s), MonotonicClock::instance(), opt);
}

TEST(Meter, WindowsFromManyThreadsGetResults) {
  auto m = real_time_meter();
  m->start();
  std::vector<std::thread> threads;
  std::vector<WindowId> ids(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      ScopedWindow w(*m, "thread-" + std::to_string(i));
      ids[i] = w.id();
      std::this_thread::sleep_for(std::chrono::milliseconds(150));  // real work stands here
    });
  for (auto& t : threads) t.join();
  for (WindowId id : ids) {
    const WindowResult r = m->wait_result(id, std::chrono::seconds(10));
    EXPECT_TRUE(r.final);
    ASSERT_EQ(r.domains.size(), 1u);
    EXPECT_TRUE(r.domains[0].simulated);
    // The board draws exactly 300 W: the estimate must hold the truth within its own uncertainty.
    const DomainEnergy& d = r.domains[0];
    EXPECT_NEAR(d.energy_j, 300.0 * r.dur_s(), d.uncertainty_j + 1e-3) << d.estimator;
    EXPECT_LT(d.uncertainty_j, 0.5 * d.energy_j);
  }
  std::vector<TimedReading> out;
  EXPECT_GT(m->drain_readings(out), 10u);
  m->stop();
}

TEST(Meter, TheSamplerThreadHandsEveryResultToTheSink) {
  auto m = real_time_meter();
  std::vector<WindowId> got;  // written by the sampler thread, read after stop() joined it
  m->set_result_sink([&](std::span<const std::shared_ptr<const WindowResult>> rs) {
    for (const auto& r : rs) {
      EXPECT_TRUE(r->final);
      got.push_back(r->id);
    }
  });
  m->start();
  std::vector<WindowId> ids;
  for (int i = 0; i < 50; ++i) ids.push_back(m->open("w"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (WindowId id : ids) m->close(id);
  for (WindowId id : ids) EXPECT_TRUE(m->wait_result(id, std::chrono::seconds(10)).final);
  m->stop();  // hands over what is left, then joins
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, ids) << "each result once";
}

TEST(Meter, NestedAndOverlappingWindows) {
  auto m = real_time_meter();
  m->start();
  const WindowId outer = m->open("outer");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const WindowId inner = m->open("inner");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  m->close(outer);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  m->close(inner);
  const auto ro = m->wait_result(outer, std::chrono::seconds(10));
  const auto ri = m->wait_result(inner, std::chrono::seconds(10));
  EXPECT_LT(ro.t_begin_ns, ri.t_begin_ns);
  EXPECT_LT(ro.t_end_ns, ri.t_end_ns);
  EXPECT_EQ(ro.name, "outer");
  EXPECT_THROW(m->close(999), std::invalid_argument);
  m->stop();
}

TEST(Meter, StopsPromptlyAndVirtualClockRefusesStart) {
  auto m = real_time_meter();
  m->start();
  const auto t0 = std::chrono::steady_clock::now();
  m->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  VirtualClock vc;
  std::vector<SensorPtr> none;
  Meter vm(std::move(none), vc);
  EXPECT_THROW(vm.start(), std::logic_error);
}

}  // namespace wattlab

namespace wattlab::testing {
namespace {

TEST(MeterMemory, OnlyTheNewestFinishedResultsAreKept) {
  MeterOptions opt;
  opt.finished_window_capacity = 4;
  SimMeter m(exact_board("step 300W 60s"), opt);
  m.meter->advance_to(m.t0() + 5'000'000'000);
  std::vector<WindowId> ids;
  for (int i = 0; i < 10; ++i)
    ids.push_back(m.meter->add_window("w", m.t0() + 1'000'000'000 + i * 100'000'000, m.t0() + 2'000'000'000));
  const WindowId open = m.meter->open("still-open");
  m.meter->advance_to(m.clock.now_ns() + 3'000'000'000);
  for (int i = 0; i < 6; ++i) EXPECT_FALSE(m.meter->result(ids[i]).has_value()) << i;
  for (int i = 6; i < 10; ++i) EXPECT_TRUE(m.meter->result(ids[i]).has_value()) << i;
  EXPECT_THROW(m.meter->wait_result(ids[0]), std::invalid_argument);
  // An open window is never dropped, however many finish after it.
  for (int i = 0; i < 10; ++i) m.meter->add_window("later", m.t0() + 3'000'000'000, m.t0() + 4'000'000'000);
  m.meter->advance_to(m.clock.now_ns() + 3'000'000'000);
  m.meter->close(open);
  m.meter->advance_to(m.clock.now_ns() + 3'000'000'000);
  const auto r = m.meter->result(open);
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->domains.at(0).energy_j, 300.0 * r->dur_s(), 0.01 * 300.0 * r->dur_s());
}

TEST(MeterMemory, ASinkGetsEveryResultHoweverManyBecomeFinalTogether) {
  MeterOptions opt;
  opt.finished_window_capacity = 4;
  SimMeter m(exact_board("step 300W 60s"), opt);
  std::vector<std::shared_ptr<const WindowResult>> got;
  std::size_t calls = 0;
  m.meter->set_result_sink([&](std::span<const std::shared_ptr<const WindowResult>> rs) {
    ++calls;
    got.insert(got.end(), rs.begin(), rs.end());
  });
  m.meter->advance_to(m.t0() + 2'000'000'000);
  // 1,000 windows open at once, closed within one counter period: final together.
  std::vector<WindowId> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back(m.meter->open("w"));
  m.meter->advance_to(m.clock.now_ns() + 1'000'000'000);
  for (WindowId id : ids) {
    m.meter->close(id);
    m.meter->advance_to(m.clock.now_ns() + 100'000);
  }
  m.meter->advance_to(m.clock.now_ns() + 3'000'000'000);
  ASSERT_EQ(got.size(), ids.size()) << "each result once, none dropped";
  EXPECT_GT(calls, 1u) << "handed over a few at a time, not all at once";
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i]->id, ids[i]) << "in the order they became final (by end)";
    EXPECT_TRUE(got[i]->final);
    const double truth_j = m.truth(*got[i]);
    EXPECT_NEAR(got[i]->domains.at(0).energy_j, truth_j, 0.01 * truth_j) << i;
  }
  // The meter itself still keeps only the newest finished_window_capacity, for result().
  EXPECT_FALSE(m.meter->result(ids.front()).has_value());
  EXPECT_TRUE(m.meter->result(ids.back()).has_value());
  // Once cleared, the sink is no longer called.
  m.meter->set_result_sink({});
  const WindowId later = m.meter->open("later");
  m.meter->close(later);
  m.meter->advance_to(m.clock.now_ns() + 3'000'000'000);
  EXPECT_TRUE(m.meter->result(later).has_value());
  EXPECT_EQ(got.size(), ids.size());
}

}  // namespace
}  // namespace wattlab::testing
