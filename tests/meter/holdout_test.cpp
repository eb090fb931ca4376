// Re-estimation from recorded readings and the hold-out check, on the simulated GPU (virtual clock).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "sim_fixture.h"
#include "meter/holdout.h"
#include "meter/replay.h"

namespace wattlab::testing {
namespace {

constexpr int64_t kS = 1'000'000'000;

HoldoutWindow row(double error_j, double u95_j, std::string level = "cap", double dur_s = 0.5) {
  HoldoutWindow w;
  w.level = std::move(level);
  w.dur_s = dur_s;
  w.length_class = length_class(dur_s);
  w.truth_j = 100;
  w.energy_j = 100 + error_j;
  w.u95_j = u95_j;
  return w;
}

TEST(Holdout, WilsonIntervalMatchesTheFormula) {
  double lo = 0, hi = 0;
  wilson95(7, 10, lo, hi);
  EXPECT_NEAR(lo, 0.3968, 1e-4);
  EXPECT_NEAR(hi, 0.8922, 1e-4);
  wilson95(0, 10, lo, hi);
  EXPECT_NEAR(lo, 0.0, 1e-12);
  EXPECT_NEAR(hi, 0.2775, 1e-4);
  wilson95(20, 20, lo, hi);
  EXPECT_NEAR(lo, 0.8389, 1e-4);
  EXPECT_NEAR(hi, 1.0, 1e-12);
}

TEST(Holdout, CellsCountWindowsInsideTheirOwnU95) {
  // Ten windows at one level: |error| / U95 = 0.1, 0.2, ..., 1.0 inside (the bound itself counts),
  // then 1.5, 2.0 and 3.0 outside; a second level with one window outside.
  std::vector<HoldoutWindow> w;
  for (int i = 1; i <= 7; ++i) w.push_back(row(-0.1 * i * 4.0, 4.0));
  w.push_back(row(6.0, 4.0));
  w.push_back(row(-8.0, 4.0));
  w.push_back(row(12.0, 4.0));
  w.push_back(row(1.0, 0.0, "idle", 2.0));
  const auto cells = summarize_holdout(w);
  ASSERT_EQ(cells.size(), 3u);  // 0.4-1 s cap, 1-3 s idle, then all (one level per class: no class "all")
  const HoldoutCell& cap = cells[0];
  EXPECT_EQ(cap.length_class, "0.4-1 s");
  EXPECT_EQ(cap.level, "cap");
  EXPECT_EQ(cap.n, 10u);
  EXPECT_EQ(cap.inside, 7u);
  EXPECT_DOUBLE_EQ(cap.share, 0.7);
  EXPECT_NEAR(cap.wilson_lo, 0.3968, 1e-4);
  EXPECT_NEAR(cap.median_ratio, 0.55, 1e-12);  // (0.5 + 0.6) / 2
  EXPECT_NEAR(cap.p95_ratio, 3.0, 1e-12);      // nearest rank: the 10th of 10
  EXPECT_EQ(cells[1].level, "idle");
  EXPECT_EQ(cells[1].inside, 0u);
  EXPECT_TRUE(std::isinf(cells[1].p95_ratio));  // an error against a U95 of 0
  EXPECT_EQ(cells.back().length_class, "all");
  EXPECT_EQ(cells.back().n, 11u);
  EXPECT_EQ(cells.back().inside, 7u);
}

// A simulated run read at every counter update (as meter_validate --counter-interval-ms 100).
struct Recorded {
  SimMeter m;
  std::vector<TimedReading> readings;
  std::vector<WindowResult> live;
  explicit Recorded(const char* workload)
      : m(exact_board(workload, 3), [] {
          MeterOptions o;
          o.counter_interval_ns = 100'000'000;
          o.counter_cpu_share = 0;
          o.sampler_cpu_share = 0;
          return o;
        }()) {
    m.meter->advance_to(m.t0() + 60 * kS);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> start(3.0, 50.0);
    const double lengths[] = {0.05, 0.25, 0.6, 2.0, 5.0};
    std::vector<WindowId> ids;
    for (int i = 0; i < 100; ++i) {
      const double a = start(rng), len = lengths[i % 5];
      ids.push_back(m.meter->add_window("w" + std::to_string(i), m.t0() + SimMeter::s_to_ns(a),
                                        m.t0() + SimMeter::s_to_ns(a + len)));
    }
    m.meter->advance_to(m.clock.now_ns() + kS);
    for (WindowId id : ids) {
      live.push_back(m.meter->wait_result(id));
      live.back().labels["level"] = live.back().name < "w5" ? "low" : "high";
    }
    m.meter->drain_readings(readings);
  }
};

TEST(Replay, AllReadingsGiveTheLiveResultsBack) {
  Recorded rec("idle 2s; step 450W 3s; periodic 690W 120W period=80ms duty=0.5 3s; loop");
  std::vector<WindowSpan> spans;
  for (const auto& r : rec.live) spans.push_back({r.id, r.name, r.t_begin_ns, r.t_end_ns});
  const auto again = reestimate_windows(rec.m.meter->domains(), rec.readings, spans);
  ASSERT_EQ(again.size(), rec.live.size());
  for (std::size_t i = 0; i < again.size(); ++i) {
    ASSERT_TRUE(again[i].final);
    const DomainEnergy& x = again[i].domains[0];
    const DomainEnergy& y = rec.live[i].domains[0];
    EXPECT_EQ(x.estimator, y.estimator) << again[i].name;
    EXPECT_NEAR(x.energy_j, y.energy_j, 1e-6 * y.energy_j + 1e-9) << again[i].name;
    EXPECT_NEAR(x.uncertainty_j, y.uncertainty_j, 1e-6 * y.uncertainty_j + 1e-9) << again[i].name;
  }
  // Hiding every counter point leaves the timeline without its counter.
  ReplayOptions hide_all;
  hide_all.hide_counter_point = [](const PlacedCounterPoint&) { return true; };
  const auto none = reestimate_windows(rec.m.meter->domains(), rec.readings, spans, hide_all);
  EXPECT_NE(none[0].domains[0].estimator.kind, rec.live[0].domains[0].estimator.kind);
}

TEST(Holdout, SimulatedRunCoverageAndTruth) {
  Recorded rec("idle 2s; step 450W 3s; periodic 690W 120W period=80ms duty=0.5 3s; gemm 0.95 3s; loop");
  const HoldoutResult r = holdout(rec.m.meter->domains(), rec.readings, rec.live);
  EXPECT_NEAR(r.point_spacing_s, 0.1, 0.01);
  EXPECT_EQ(r.keep_every, 10);
  EXPECT_EQ(r.candidates, 100u);
  ASSERT_GE(r.windows.size(), 60u);
  std::size_t inside = 0;
  for (const HoldoutWindow& w : r.windows) {
    // The truth is the counter's delta between two updates: the simulator's energy between them.
    const double sim_j = rec.m.gpu->true_energy_j(w.t_begin_ns, w.t_end_ns);
    EXPECT_NEAR(w.truth_j, sim_j, w.truth_u95_j + 0.01) << w.name;
    inside += std::abs(w.energy_j - w.truth_j) <= std::hypot(w.u95_j, w.truth_u95_j);
    EXPECT_GE(w.dur_s, 0.05);
  }
  const HoldoutCell& all = r.cells.back();
  EXPECT_EQ(all.n, r.windows.size());
  EXPECT_EQ(all.inside, inside);
  EXPECT_GE(all.share, 0.9);
  std::ostringstream csv;
  write_holdout_csv(csv, r);
  const std::string text = csv.str();
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), r.windows.size() + 1);
  // The hidden updates matter: kept as they are, the windows' edges would sit on counter points.
  HoldoutOptions end_only;
  end_only.hide_begin = false;
  EXPECT_FALSE(holdout(rec.m.meter->domains(), rec.readings, rec.live, end_only).windows.empty());
  EXPECT_THROW(holdout(rec.m.meter->domains(), rec.readings, {}), std::invalid_argument);
}

}  // namespace
}  // namespace wattlab::testing
