// The counter grid's start-up probe from a hint: where the instant power field refreshes (found
// with reads of ~9 us) says where the counter publishes on the simulated H200, so two or three
// counter reads of 4.2 ms lock the grid; where the field refreshes off the counter's grid, the
// probe sees no change at the hinted instant and probes coarsely as without a hint. Either way
// the windows keep their accuracy.
#include <gtest/gtest.h>

#include <cmath>

#include "meter/refresh_hint.h"
#include "sensors/sim/sim_gpu.h"
#include "wattlab/meter/meter.h"

namespace wattlab {
namespace {

TEST(RefreshHint, BracketsTheFirstChangeBetweenReadsAStepApart) {
  RefreshHint h(100'000'000);
  int64_t t = 1'000'000'000;
  // The field publishes at 1.037 s: the reads before see 5, the reads after see 6.
  while (h.searching()) {
    const double v = t < 1'037'000'000 ? 5.0 : 6.0;
    const int64_t next = h.on_read(v, t);
    if (h.searching()) {
      EXPECT_EQ(next, t + RefreshHint::kStepNs);
      t = next;
    }
  }
  ASSERT_TRUE(h.bracket().has_value());
  EXPECT_LT(h.bracket()->lo_ns, 1'037'000'000);
  EXPECT_GE(h.bracket()->hi_ns, 1'037'000'000);
  EXPECT_EQ(h.bracket()->hi_ns - h.bracket()->lo_ns, RefreshHint::kStepNs);
}

TEST(RefreshHint, AChangeAcrossAHeldUpReadIsNoHintAndAFieldThatHoldsGivesUp) {
  RefreshHint h(100'000'000);
  h.on_read(5.0, 0);
  h.on_read(6.0, RefreshHint::kMaxGapNs + 1);  // changed, but across a gap too wide to say where
  EXPECT_TRUE(h.searching());
  EXPECT_FALSE(h.bracket().has_value());
  int64_t t = RefreshHint::kMaxGapNs + 1;
  int reads = 0;
  while (h.searching()) t = h.on_read(6.0, t), ++reads;
  EXPECT_FALSE(h.bracket().has_value());
  EXPECT_LE(reads, RefreshHint::kGiveUpPeriods * 100'000'000 / RefreshHint::kStepNs + 2);
}

// The simulated H200; with off_grid_ns != 0 its instant power field refreshes off_grid_ns after
// each of the counter's updates instead of with them. Counts the counter's reads.
class Board final : public Sensor {
 public:
  Board(std::unique_ptr<sim::SimGpu> inner, int64_t off_grid_ns) : inner_(std::move(inner)), off_grid_ns_(off_grid_ns) {}
  std::string backend() const override { return inner_->backend(); }
  const std::vector<Domain>& domains() const override { return inner_->domains(); }
  Status read(std::size_t d, ReadingKind kind, std::vector<Reading>& out) override {
    if (kind == ReadingKind::energy_counter_j) ++counter_reads;
    const std::size_t before = out.size();
    Status st = inner_->read(d, kind, out);
    if (kind == ReadingKind::power_instant_w && off_grid_ns_ != 0 && st.ok() && out.size() > before) {
      // A value that steps once per period, off_grid_ns after the counter's update.
      const int64_t period = inner_->domains().at(d).model.find(kind)->update_period_ns;
      const int64_t t = out.back().t_ns - inner_->origin_ns() - inner_->grid_phase_ns(d) - off_grid_ns_;
      out.back().value = 300.0 + static_cast<double>((t - ((t % period) + period) % period) / period);
    }
    return st;
  }
  int counter_reads = 0;

 private:
  std::unique_ptr<sim::SimGpu> inner_;
  int64_t off_grid_ns_;
};

struct ProbeRun {
  int startup_reads = 0;  // counter reads in the first 0.5 s
  double window_u_j = 0;  // 95 % uncertainty of a 2 s window at 5-7 s
  double window_err_j = 0;
};

ProbeRun run(uint64_t seed, int64_t off_grid_ns) {
  VirtualClock clock{1'000'000'000};
  sim::SimConfig c;
  c.workload = "gemm 0.95 30s; loop";
  c.gain_error = 0;
  c.seed = seed;  // also the counter's update phase
  auto g = std::make_unique<sim::SimGpu>(c, clock);
  sim::SimGpu* gpu = g.get();
  auto s = std::make_unique<Board>(std::move(g), off_grid_ns);
  Board* board = s.get();
  std::vector<SensorPtr> v;
  v.push_back(std::move(s));
  MeterOptions o;
  o.counter_probe_hint = MeterOptions::ProbeHint::always;
  Meter meter(std::move(v), clock, o);
  const int64_t t0 = clock.now_ns();
  meter.advance_to(t0 + 500'000'000);
  ProbeRun r;
  r.startup_reads = board->counter_reads;
  meter.advance_to(t0 + 9'000'000'000);
  const WindowResult w = meter.estimate(t0 + 5'000'000'000, t0 + 7'000'000'000);
  r.window_u_j = w.domains.at(0).uncertainty_j;
  r.window_err_j = w.domains.at(0).energy_j - gpu->true_energy_j(w.t_begin_ns, w.t_end_ns);
  return r;
}

TEST(MeterProbeHint, OnTheCountersGridTheProbeTakesAFewReads) {
  for (uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
    const ProbeRun r = run(seed, 0);
    // Two or three probe reads lock the grid (8-12 without the hint); the 0.5 s holds no other.
    EXPECT_LE(r.startup_reads, 3) << "seed " << seed;
    EXPECT_GE(r.startup_reads, 2) << "seed " << seed;
    EXPECT_LE(std::abs(r.window_err_j), r.window_u_j) << "seed " << seed;
  }
}

TEST(MeterProbeHint, OffTheCountersGridTheProbeFallsBackAndStillLocks) {
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    const ProbeRun on = run(seed, 0);
    const ProbeRun off = run(seed, 50'000'000);
    // The hinted reads find no change (twice: the first try may have come late), then the coarse
    // probe and the narrowing run as without a hint.
    EXPECT_GT(off.startup_reads, on.startup_reads) << "seed " << seed;
    EXPECT_LE(off.startup_reads, 18) << "seed " << seed;
    EXPECT_LE(std::abs(off.window_err_j), off.window_u_j) << "seed " << seed;
    // The grid locks as well as the probe without a hint does (3.1-3.3 J here, against 1.25-1.29 J
    // from the hint); a lock on a coarse bracket would leave the window many times wider.
    EXPECT_LE(off.window_u_j, 3.0 * on.window_u_j) << "seed " << seed;
  }
}

TEST(MeterProbeHint, EightBoardsEachLockWithAFewReadsThoughTheirProbesCollide) {
  // Eight boards on one sampler: a board's hinted reads that would start while another board's
  // counter is being read are put off a period instead of coming too late.
  VirtualClock clock{1'000'000'000};
  sim::SimConfig c;
  c.workload = "gemm 0.95 30s; loop";
  c.gpus = 8;
  c.seed = 11;
  auto s = std::make_unique<Board>(std::make_unique<sim::SimGpu>(c, clock), 0);
  Board* board = s.get();
  std::vector<SensorPtr> v;
  v.push_back(std::move(s));
  MeterOptions o;
  o.counter_probe_hint = MeterOptions::ProbeHint::always;
  Meter meter(std::move(v), clock, o);
  meter.advance_to(clock.now_ns() + 1'000'000'000);
  // 2-3 reads a board; without the put-off, late first reads fell back to the coarse probe.
  EXPECT_LE(board->counter_reads, 8 * 4);
  EXPECT_GE(board->counter_reads, 8 * 2);
}

}  // namespace
}  // namespace wattlab
