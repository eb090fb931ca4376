// A run with more windows than the meter keeps finished results for (65,536): on the virtual
// clock, 70,000 windows closed one after another, 70,000 open at once, and 100,000 open at once
// that all become final together are all measured and stored, with the recording's memory bounded
// by the windows still waiting to be stored; a window annotated after it was stored, once the
// meter no longer keeps its result, keeps its energy and gets its annotation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "wattlab/record/recording.h"

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr int kWindows = 70'000;

class ManyWindowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("wattlab-many-windows-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RecordingOptions options() {
    RecordingOptions o;
    o.devices.device = "sim";
    o.devices.clock = &clock_;
    o.devices.sim_workload = "step 400W 100000s";
    o.devices.sim_gain_error = 0;
    o.db = dir_ / "many.db";
    o.meter.power_interval_ns = 100'000'000;  // fewer readings per window: the test stays fast
    o.on_note = [this](std::string_view n) { notes_.emplace_back(n); };
    return o;
  }
  RunRecord load(RunId id) {
    auto s = Store::open(dir_ / "many.db", OpenMode::read_only);
    EXPECT_TRUE(s.ok());
    auto r = s->load_run(id);
    EXPECT_TRUE(r.ok()) << r.error().message();
    return *r;
  }
  // Every window is stored once, final, with 400 W x its length (the constant simulated power)
  // within 5 %.
  void expect_all_stored(const RunRecord& r, std::size_t n) {
    ASSERT_EQ(r.windows.size(), n);
    std::vector<WindowId> ids;
    for (const WindowResult& w : r.windows) ids.push_back(w.id);
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "each window once";
    std::size_t final = 0, right = 0;
    for (const WindowResult& w : r.windows) {
      final += w.final;
      const DomainEnergy& d = w.domains.at(0);
      // The estimator's accuracy is tested elsewhere; here: each window has its own energy.
      const double truth_j = 400.0 * w.dur_s();
      right += std::abs(d.energy_j - truth_j) <= 0.05 * truth_j;
    }
    EXPECT_EQ(final, n);
    EXPECT_EQ(right, n);
  }

  VirtualClock clock_{1'000 * kS};
  std::filesystem::path dir_;
  std::vector<std::string> notes_;
};

TEST_F(ManyWindowsTest, SeventyThousandWindowsClosedInTurnAreAllStored) {
  Recording rec(options());
  rec.start();
  rec.meter().advance_to(clock_.now_ns() + kS);
  // Marks-like windows with explicit edges, 2 ms each, and a flush every 10 virtual seconds.
  const int64_t t0 = clock_.now_ns();
  for (int i = 0; i < kWindows; ++i) {
    const int64_t a = t0 + i * 2 * kMs;
    rec.add_window("step", a, a + 2 * kMs, {}, {{"tokens", 1}});
    if (i % 50 == 49) {
      rec.meter().advance_to(a + 2 * kMs);
      if (i % 5000 == 4999) {
        ASSERT_TRUE(rec.flush().ok());
      }
    }
  }
  rec.end(0);
  EXPECT_TRUE(notes_.empty()) << notes_.front();
  EXPECT_FALSE(rec.store_health().incomplete());
  const RunRecord r = load(rec.run_id());
  EXPECT_TRUE(r.complete());
  expect_all_stored(r, kWindows);
  EXPECT_EQ(r.windows.back().counts.at("tokens"), 1);
}

TEST_F(ManyWindowsTest, SeventyThousandWindowsOpenAtOnceAreAllStored) {
  Recording rec(options());
  rec.start();
  rec.meter().advance_to(clock_.now_ns() + kS);
  std::vector<WindowId> ids;
  ids.reserve(kWindows);
  for (int i = 0; i < kWindows; ++i) ids.push_back(rec.open("nested"));
  rec.meter().advance_to(clock_.now_ns() + 2 * kS);
  // Closed oldest first (each close finds its window at once), 10,000 at a time with a flush
  // between.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    rec.close(ids[i]);
    if (i % 10'000 == 9'999) {
      rec.meter().advance_to(clock_.now_ns() + kS);
      ASSERT_TRUE(rec.flush().ok());
    }
  }
  rec.end(0);
  EXPECT_TRUE(notes_.empty()) << notes_.front();
  const RunRecord r = load(rec.run_id());
  expect_all_stored(r, kWindows);
}

TEST_F(ManyWindowsTest, AHundredThousandWindowsThatBecomeFinalTogetherAreAllStored) {
  constexpr std::size_t kBurst = 100'000;
  static_assert(kBurst > MeterOptions{}.finished_window_capacity, "more than the meter keeps");
  Recording rec(options());
  rec.start();
  rec.meter().advance_to(clock_.now_ns() + kS);
  std::vector<WindowId> ids;
  ids.reserve(kBurst);
  for (std::size_t i = 0; i < kBurst; ++i) ids.push_back(rec.open("nested"));
  rec.meter().advance_to(clock_.now_ns() + 2 * kS);
  // All closed within 10 ms, well inside one counter period (1 s), with no flush until all are
  // final: the meter makes them final in one pass and hands each over as it does.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    rec.close(ids[i]);
    if (i % 10'000 == 9'999) rec.meter().advance_to(clock_.now_ns() + kMs);
  }
  rec.meter().advance_to(clock_.now_ns() + 2 * kS);
  EXPECT_TRUE(rec.meter().result(ids.back()).has_value());
  EXPECT_FALSE(rec.meter().result(ids.front()).has_value()) << "the meter no longer keeps the oldest";
  EXPECT_EQ(rec.store_health().windows_pending, kBurst) << "the recording holds every result until it is stored";
  ASSERT_TRUE(rec.flush().ok());
  // Bounded memory: once stored, no result is held, and the recording forgets stored windows
  // past the newest kKeepStoredWindows.
  const StoreHealth h = rec.store_health();
  EXPECT_EQ(h.windows_pending, 0u);
  EXPECT_EQ(h.windows_lost, 0u);
  EXPECT_EQ(rec.windows_tracked(), Recording::kKeepStoredWindows);
  rec.end(0);
  EXPECT_TRUE(notes_.empty()) << notes_.front();
  EXPECT_FALSE(rec.store_health().incomplete());
  const RunRecord r = load(rec.run_id());
  EXPECT_TRUE(r.complete());
  expect_all_stored(r, kBurst);
}

TEST_F(ManyWindowsTest, AWindowStoredLongAgoCanNoLongerBeAnnotated) {
  Recording rec(options());
  rec.start();
  rec.meter().advance_to(clock_.now_ns() + kS);
  const int64_t t0 = clock_.now_ns();
  const WindowId first = rec.add_window("first", t0, t0 + kMs);
  const std::size_t n = Recording::kKeepStoredWindows + 10;
  for (std::size_t i = 0; i < n; ++i) {
    rec.add_window("w", t0, t0 + kMs);
    if (i % 10'000 == 0) {
      rec.meter().advance_to(clock_.now_ns() + kS);
      ASSERT_TRUE(rec.flush().ok());
    }
  }
  rec.meter().advance_to(clock_.now_ns() + kS);
  ASSERT_TRUE(rec.flush().ok());
  try {
    rec.annotate(first, {{"k", "v"}});
    FAIL() << "a window forgotten after it was stored is not silently dropped";
  } catch (const WattlabError& e) {
    EXPECT_EQ(e.error().kind, ErrorKind::not_found);
  }
  rec.end(0);
}

TEST_F(ManyWindowsTest, AWindowAnnotatedAfterTheMeterDroppedItsResultIsStoredWithItsEnergy) {
  static_assert(kWindows > MeterOptions{}.finished_window_capacity, "more than the meter keeps");
  Recording rec(options());
  rec.start();
  rec.meter().advance_to(clock_.now_ns() + kS);
  const int64_t t_first = clock_.now_ns();
  const WindowId first = rec.add_window("first", t_first, t_first + 10 * kMs, {{"phase", "steady"}}, {{"tokens", 1}});
  rec.meter().advance_to(clock_.now_ns() + 2 * kS);
  ASSERT_TRUE(rec.flush().ok());
  const RunRecord before = load(rec.run_id());
  ASSERT_EQ(before.windows.size(), 1u);
  const double energy_j = before.windows[0].domains.at(0).energy_j;
  EXPECT_GT(energy_j, 0);
  // 70,000 newer windows become final (held by the recording, not stored yet): the meter keeps
  // only the newest 65,536 results, so the first one's is gone there.
  const int64_t t0 = clock_.now_ns();
  for (int i = 0; i < kWindows; ++i) {
    const int64_t a = t0 + i * 2 * kMs;
    rec.add_window("step", a, a + 2 * kMs);
    if (i % 50 == 49) rec.meter().advance_to(a + 2 * kMs);
  }
  rec.meter().advance_to(clock_.now_ns() + 2 * kS);
  ASSERT_FALSE(rec.meter().result(first).has_value()) << "the meter no longer keeps the first result";
  // The run's role, known only now (infer serve-bench).
  rec.annotate(first, {{"phase", "warm"}, {"role", "repeat"}}, {{"tokens", 512}});
  ASSERT_TRUE(rec.flush().ok());
  StoreHealth h = rec.store_health();
  EXPECT_EQ(h.annotations_pending, 0u);
  EXPECT_EQ(h.windows_pending, 0u);
  // Annotated again after that flush: stored once more at the end.
  rec.annotate(first, {}, {{"requests", 8}});
  rec.end(0);
  EXPECT_TRUE(notes_.empty()) << notes_.front();
  h = rec.store_health();
  EXPECT_FALSE(h.incomplete());
  EXPECT_EQ(h.windows_lost, 0u);
  EXPECT_EQ(h.failures, 0u);
  const RunRecord r = load(rec.run_id());
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.exit_status, 0);
  expect_all_stored(r, kWindows + 1);
  const auto it = std::find_if(r.windows.begin(), r.windows.end(), [&](const WindowResult& w) { return w.id == first; });
  ASSERT_NE(it, r.windows.end());
  EXPECT_EQ(it->name, "first");
  EXPECT_EQ(it->labels, (std::map<std::string, std::string>{{"phase", "warm"}, {"role", "repeat"}}));
  EXPECT_EQ(it->counts, (std::map<std::string, double>{{"tokens", 512}, {"requests", 8}}));
  EXPECT_EQ(it->domains.at(0).energy_j, energy_j) << "the energy stored before, unchanged";
  EXPECT_TRUE(it->final);
}

}  // namespace
}  // namespace wattlab
