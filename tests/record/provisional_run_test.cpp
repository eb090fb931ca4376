// The energy of a run that never ended, from its stored readings (provisional_run.h), on the
// simulated GPU (virtual clock).
#include "record/provisional_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "meter/sim_fixture.h"

namespace wattlab::testing {
namespace {

constexpr int64_t kS = 1'000'000'000;

struct KilledRun {
  std::filesystem::path dir;
  SimMeter m{exact_board("idle 1s; step 450W 2s; loop")};
  std::vector<TimedReading> readings;

  KilledRun() {
    dir = std::filesystem::temp_directory_path() / ("wattlab-provisional-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    m.meter->advance_to(m.t0() + 3 * kS);
    m.meter->drain_readings(readings);
  }
  ~KilledRun() { std::filesystem::remove_all(dir); }

  int64_t last_t_ns(ReadingKind kind) const {
    int64_t t = INT64_MIN;
    for (const auto& r : readings)
      if (r.reading.kind == kind) t = std::max(t, r.reading.t_ns);
    return t;
  }

  // Stores `kept` as a run that never ended and loads it with its provisional window.
  RunRecord store_and_load(const std::vector<TimedReading>& kept) const {
    auto store = Store::open(dir / "k.db");
    EXPECT_TRUE(store.ok());
    RunInfo info;
    info.command = {"killed"};
    info.simulated = true;
    const RunId run = store->begin_run(info).value();
    EXPECT_TRUE(store->add_domains(run, m.meter->domains()).ok());
    EXPECT_TRUE(store->append_readings(run, kept).ok());
    RunRecord rec = store->load_run(run).value();
    EXPECT_FALSE(rec.complete());
    EXPECT_TRUE(add_provisional_run_window(*store, rec).ok());
    return rec;
  }
};

const WindowResult* so_far(const RunRecord& rec) {
  for (const auto& w : rec.windows)
    if (w.name == kProvisionalRunWindow) return &w;
  return nullptr;
}

TEST(ProvisionalRun, EveryReadingGivesTheEnergyOverTheCounterSpan) {
  KilledRun k;
  const RunRecord rec = k.store_and_load(k.readings);
  const WindowResult* w = so_far(rec);
  ASSERT_NE(w, nullptr);
  EXPECT_FALSE(w->final);
  ASSERT_TRUE(w->domains[0].available) << w->domains[0].issues.size();
  EXPECT_GE(w->t_end_ns, k.last_t_ns(ReadingKind::energy_counter_j) - 200'000'000);
  const double truth_j = k.m.gpu->true_energy_j(w->t_begin_ns, w->t_end_ns);
  EXPECT_NEAR(w->domains[0].energy_j, truth_j, w->domains[0].uncertainty_j + 1e-3 * truth_j);
}

// A SIGKILL may leave the counter's newest read stored without the power readings after it (they
// come from other reads, stored in another flush): the window ends where the evidence does, and
// still has its energy.
TEST(ProvisionalRun, ACounterReadNewerThanEveryPowerReadingLeavesTheEnergyAvailable) {
  KilledRun k;
  const int64_t counter_last_ns = k.last_t_ns(ReadingKind::energy_counter_j);
  std::vector<TimedReading> kept;
  for (const auto& r : k.readings) {
    const bool power = r.reading.kind == ReadingKind::power_sample_w || r.reading.kind == ReadingKind::power_instant_w;
    if (!power || r.reading.t_ns < counter_last_ns - 400'000'000) kept.push_back(r);
  }
  const RunRecord rec = k.store_and_load(kept);
  const WindowResult* w = so_far(rec);
  ASSERT_NE(w, nullptr);
  for (const auto& d : rec.windows.back().domains) EXPECT_TRUE(d.available) << d.domain_id;
  EXPECT_GT(w->t_end_ns - w->t_begin_ns, kS) << "it spans the readings up to the newest power reading";
  const double truth_j = k.m.gpu->true_energy_j(w->t_begin_ns, w->t_end_ns);
  EXPECT_NEAR(w->domains[0].energy_j, truth_j, w->domains[0].uncertainty_j + 1e-3 * truth_j);
}

TEST(ProvisionalRun, AnEndedRunGetsNoProvisionalWindow) {
  KilledRun k;
  auto store = Store::open(k.dir / "e.db");
  ASSERT_TRUE(store.ok());
  const RunId run = store->begin_run(RunInfo{}).value();
  ASSERT_TRUE(store->add_domains(run, k.m.meter->domains()).ok());
  ASSERT_TRUE(store->append_readings(run, k.readings).ok());
  ASSERT_TRUE(store->end_run(run, k.m.clock.now_ns(), 0).ok());
  RunRecord rec = store->load_run(run).value();
  ASSERT_TRUE(add_provisional_run_window(*store, rec).ok());
  EXPECT_EQ(so_far(rec), nullptr);
}

}  // namespace
}  // namespace wattlab::testing
