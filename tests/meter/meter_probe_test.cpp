// The counter grid's start-up probe: coarse steps, then reads back to back across the bracket one
// period later; a read held up during probing (the H200's first reads under load took up to 104 ms)
// must not leave the grid locked only that well.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "meter/counter_tracker.h"
#include "sensors/sim/sim_gpu.h"
#include "wattlab/meter/meter.h"

namespace wattlab {
namespace {

// The simulated H200 whose energy-counter reads are held up before they read (a read that
// blocks) by hold_ns(n, now): n counts the counter reads from 1, now is when the read starts.
class HeldUpCounter final : public Sensor {
 public:
  HeldUpCounter(std::unique_ptr<sim::SimGpu> inner, Clock& clock, std::function<int64_t(int, int64_t)> hold_ns)
      : inner_(std::move(inner)), clock_(clock), hold_ns_(std::move(hold_ns)) {}
  std::string backend() const override { return inner_->backend(); }
  const std::vector<Domain>& domains() const override { return inner_->domains(); }
  Status read(std::size_t d, ReadingKind kind, std::vector<Reading>& out) override {
    if (kind == ReadingKind::energy_counter_j) {
      const int64_t held = hold_ns_(++counter_reads, clock_.now_ns());
      if (held > 0) {
        ++held_reads;
        clock_.spend_ns(held);
      }
    }
    return inner_->read(d, kind, out);
  }
  int counter_reads = 0;
  int held_reads = 0;

 private:
  std::unique_ptr<sim::SimGpu> inner_;
  Clock& clock_;
  std::function<int64_t(int, int64_t)> hold_ns_;
};

struct ProbeRun {
  int startup_reads = 0;   // counter reads in the first 0.5 s
  double window_u_j = 0;   // 95 % uncertainty of a 2 s window at 5-7 s
  double window_err_j = 0;
};

ProbeRun run(int held_read, int64_t held_ns, uint64_t seed) {
  VirtualClock clock{1'000'000'000};
  sim::SimConfig c;
  c.workload = "gemm 0.95 30s; loop";
  c.gain_error = 0;
  c.seed = seed;  // also the counter's update phase
  auto g = std::make_unique<sim::SimGpu>(c, clock);
  sim::SimGpu* gpu = g.get();
  auto s = std::make_unique<HeldUpCounter>(std::move(g), clock,
                                           [=](int n, int64_t) { return n == held_read ? held_ns : 0; });
  HeldUpCounter* sensor = s.get();
  std::vector<SensorPtr> v;
  v.push_back(std::move(s));
  Meter meter(std::move(v), clock);
  const int64_t t0 = clock.now_ns();
  meter.advance_to(t0 + 500'000'000);
  ProbeRun r;
  r.startup_reads = sensor->counter_reads;
  meter.advance_to(t0 + 9'000'000'000);
  const WindowResult w = meter.estimate(t0 + 5'000'000'000, t0 + 7'000'000'000);
  r.window_u_j = w.domains.at(0).uncertainty_j;
  r.window_err_j = w.domains.at(0).energy_j - gpu->true_energy_j(w.t_begin_ns, w.t_end_ns);
  return r;
}

TEST(MeterProbe, StartUpTakesFewReadsAndAHeldUpReadDoesNotWidenTheGrid) {
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    const ProbeRun clean = run(0, 0, seed);
    // Coarse steps of 20 ms then back to back across the bracket: at most ~12 reads of 4.2 ms
    // (back to back from the start it was up to 25).
    EXPECT_LE(clean.startup_reads, 14) << "seed " << seed;
    EXPECT_LE(std::abs(clean.window_err_j), clean.window_u_j) << "seed " << seed;
    for (int held : {2, 3, 5}) {
      const ProbeRun h = run(held, 45'000'000, seed);
      EXPECT_LE(h.window_u_j, 1.5 * clean.window_u_j + 0.5)
          << "seed " << seed << ", read " << held << " held up 45 ms: U " << h.window_u_j << " J vs "
          << clean.window_u_j << " J";
      EXPECT_LE(std::abs(h.window_err_j), h.window_u_j) << "seed " << seed << ", read " << held;
    }
  }
}

TEST(MeterProbe, SlowReadsAtStartUpAreFreeOnlyForAFewReadsThenWaitForTheBudget) {
  for (uint64_t seed : {1, 2, 3}) {
    VirtualClock clock{1'000'000'000};
    sim::SimConfig c;
    c.workload = "gemm 0.95 30s; loop";
    c.gain_error = 0;
    c.seed = seed;
    auto g = std::make_unique<sim::SimGpu>(c, clock);
    sim::SimGpu* gpu = g.get();
    const int64_t t0 = clock.now_ns();
    // 30 ms a read for the first 3 s: back to back and uncharged, that was 3 s / 30 ms = 100 reads.
    auto s = std::make_unique<HeldUpCounter>(
        std::move(g), clock, [=](int, int64_t now_ns) -> int64_t { return now_ns < t0 + 3'000'000'000 ? 30'000'000 : 0; });
    HeldUpCounter* sensor = s.get();
    std::vector<SensorPtr> v;
    v.push_back(std::move(s));
    Meter meter(std::move(v), clock);
    meter.advance_to(t0 + 3'000'000'000);
    // The free reads, then what 0.6 % of a core buys at 30 ms a read (a read's savings at start
    // and about one more a second while the sampler's own overhead is small).
    EXPECT_LE(sensor->held_reads, CounterTracker::kFreeProbeReads + 6) << "seed " << seed;
    EXPECT_GE(sensor->held_reads, CounterTracker::kFreeProbeReads) << "seed " << seed;
    // Once reads are fast again the probe locks the grid, and a window after it is right.
    meter.advance_to(t0 + 30'000'000'000);
    const WindowResult w = meter.estimate(t0 + 20'000'000'000, t0 + 22'000'000'000);
    const double err_j = w.domains.at(0).energy_j - gpu->true_energy_j(w.t_begin_ns, w.t_end_ns);
    EXPECT_LE(std::abs(err_j), w.domains.at(0).uncertainty_j) << "seed " << seed;
    EXPECT_LE(w.domains.at(0).uncertainty_j, 0.01 * w.domains.at(0).energy_j)
        << "seed " << seed << ": the counter anchors the window again";
  }
}

}  // namespace
}  // namespace wattlab
