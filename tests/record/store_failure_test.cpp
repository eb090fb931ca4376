// Store failures during a recording, made deterministic by a fault-injecting SQLite VFS: a full
// disk, an I/O error and another writer holding the lock are said when they happen (naming the
// file and SQLite's error), what failed is kept in memory and stored once the store works again,
// a store that never recovers makes end() throw while summary() still holds the whole run, and
// a burst of windows while the store fails is held up to a bound, the rest counted lost, and an
// annotation of a stored window that the store cannot take is a store failure, never a lost window.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/fault_vfs.h"
#include "wattlab/record/recording.h"

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;

class StoreFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    vfs_.clear();
    dir_ = std::filesystem::temp_directory_path() /
           ("wattlab-store-failure-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    vfs_.clear();
    std::filesystem::remove_all(dir_);
  }

  RecordingOptions options(const std::string& db, VirtualClock& clock) {
    RecordingOptions o;
    o.devices.device = "sim";
    o.devices.clock = &clock;
    o.devices.sim_workload = "step 400W 600s";
    o.devices.sim_gain_error = 0;
    o.db = dir_ / db;
    o.on_note = [this](std::string_view n) { notes_.emplace_back(n); };
    return o;
  }

  // The same schedule every time: 2 s, a 3 s window, `fault` set for the middle flushes (or to the
  // end), 2 s more. Returns the run as stored.
  struct Outcome {
    RunRecord stored;
    RunRecord summary;
    StoreHealth health;
    bool threw = false;
    std::string error;
    std::vector<Status> flushes;
  };
  Outcome record(const std::string& db, void (*fault)(test::FaultVfs&), bool recover) {
    VirtualClock clock(1'000 * kS);
    Outcome out;
    Recording rec(options(db, clock));
    rec.start();
    auto advance = [&](int64_t ns) { rec.meter().advance_to(clock.now_ns() + ns); };
    advance(2 * kS);
    out.flushes.push_back(rec.flush());
    if (fault) fault(vfs_);
    const WindowId w = rec.open("step");
    advance(3 * kS);
    rec.close(w);
    advance(2 * kS);
    out.flushes.push_back(rec.flush());
    advance(1 * kS);
    out.flushes.push_back(rec.flush());
    if (recover) vfs_.clear();
    advance(2 * kS);
    out.flushes.push_back(rec.flush());
    try {
      rec.end(0);
    } catch (const WattlabError& e) {
      out.threw = true;
      out.error = e.what();
    }
    vfs_.clear();
    out.health = rec.store_health();
    out.summary = rec.summary();
    auto s = Store::open(dir_ / db, OpenMode::read_only);
    EXPECT_TRUE(s.ok()) << s.error().message();
    auto r = s->load_run(rec.run_id());
    EXPECT_TRUE(r.ok()) << r.error().message();
    out.stored = *r;
    return out;
  }

  test::FaultVfs& vfs_ = test::FaultVfs::install();
  std::filesystem::path dir_;
  std::vector<std::string> notes_;
};

void disk_full(test::FaultVfs& v) { v.write_error = SQLITE_FULL; }
void io_error(test::FaultVfs& v) { v.write_error = SQLITE_IOERR_WRITE; }
void lock_held(test::FaultVfs& v) { v.write_lock_busy = true; }

TEST_F(StoreFailureTest, AFullDiskThatFreesUpLosesNothingAndSaysSoWhenItHappens) {
  const Outcome ref = record("ref.db", nullptr, false);
  ASSERT_FALSE(ref.threw) << ref.error;
  notes_.clear();
  const Outcome out = record("full.db", disk_full, true);
  EXPECT_FALSE(out.flushes[1].ok()) << "the flush that failed says so";
  EXPECT_TRUE(out.flushes[3].ok()) << "and the one after the store recovered is clean";
  EXPECT_GT(vfs_.refused.load(), 0);
  ASSERT_GE(notes_.size(), 2u);
  EXPECT_NE(notes_[0].find("storing the run failed"), std::string::npos) << notes_[0];
  EXPECT_NE(notes_[0].find((dir_ / "full.db").string()), std::string::npos) << "names the file: " << notes_[0];
  EXPECT_NE(notes_[0].find("full"), std::string::npos) << "names SQLite's error: " << notes_[0];
  EXPECT_NE(notes_[1].find("works again"), std::string::npos) << notes_[1];
  EXPECT_FALSE(out.threw) << out.error;
  EXPECT_GT(out.health.failures, 0u);
  EXPECT_FALSE(out.health.incomplete());
  // Nothing measured is lost: the same readings and the same window as a run without the fault.
  EXPECT_TRUE(out.stored.complete());
  EXPECT_EQ(out.stored.reading_count, ref.stored.reading_count);
  EXPECT_EQ(out.stored.telemetry_count, ref.stored.telemetry_count);
  ASSERT_EQ(out.stored.windows.size(), 1u);
  ASSERT_EQ(ref.stored.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(out.stored.windows[0].domains.at(0).energy_j, ref.stored.windows[0].domains.at(0).energy_j);
  EXPECT_EQ(out.stored.info.tags.count("wattlab.store_lacks"), 0u);
}

TEST_F(StoreFailureTest, AnIoErrorThatPassesLosesNothing) {
  const Outcome ref = record("ref.db", nullptr, false);
  notes_.clear();
  const Outcome out = record("ioerr.db", io_error, true);
  EXPECT_FALSE(out.flushes[1].ok());
  EXPECT_EQ(out.flushes[1].error().kind, ErrorKind::io) << out.flushes[1].error().message();
  EXPECT_FALSE(out.threw) << out.error;
  EXPECT_EQ(out.stored.reading_count, ref.stored.reading_count);
  ASSERT_EQ(out.stored.windows.size(), 1u);
  EXPECT_TRUE(out.stored.windows[0].final);
}

TEST_F(StoreFailureTest, ALockHeldByAnotherWriterPastTheBusyTimeoutDropsNoReading) {
  const Outcome ref = record("ref.db", nullptr, false);
  notes_.clear();
  const Outcome out = record("busy.db", lock_held, true);
  EXPECT_FALSE(out.flushes[1].ok());
  EXPECT_EQ(out.flushes[1].error().kind, ErrorKind::unavailable) << out.flushes[1].error().message();
  ASSERT_FALSE(notes_.empty());
  EXPECT_NE(notes_[0].find("locked"), std::string::npos) << "SQLite's own words: " << notes_[0];
  EXPECT_FALSE(out.threw) << out.error;
  EXPECT_EQ(out.stored.reading_count, ref.stored.reading_count);
  ASSERT_EQ(out.stored.windows.size(), 1u);
}

TEST_F(StoreFailureTest, AStoreThatStaysFullEndsWithAnErrorAndTheSummaryStillHoldsTheEnergy) {
  const Outcome ref = record("ref.db", nullptr, false);
  notes_.clear();
  const Outcome out = record("stays-full.db", disk_full, false);
  ASSERT_TRUE(out.threw);
  EXPECT_NE(out.error.find((dir_ / "stays-full.db").string()), std::string::npos) << out.error;
  EXPECT_NE(out.error.find("readings"), std::string::npos) << out.error;
  EXPECT_TRUE(out.health.incomplete());
  EXPECT_GT(out.health.readings_pending, 0u);
  EXPECT_EQ(out.health.windows_pending, 1u);
  EXPECT_FALSE(out.health.end_stored);
  EXPECT_EQ(std::count_if(notes_.begin(), notes_.end(),
                          [](const std::string& n) { return n.find("storing the run failed") != std::string::npos; }),
            1)
      << "said once per outage, not at every flush";
  // The store holds what it took before the disk filled, and says the run is incomplete.
  EXPECT_FALSE(out.stored.complete());
  EXPECT_TRUE(out.stored.windows.empty());
  // The summary: the end and the window's energy from memory.
  EXPECT_TRUE(out.summary.complete());
  EXPECT_EQ(out.summary.exit_status, 0);
  ASSERT_EQ(out.summary.windows.size(), 1u);
  EXPECT_TRUE(out.summary.windows[0].final);
  EXPECT_DOUBLE_EQ(out.summary.windows[0].domains.at(0).energy_j, ref.stored.windows[0].domains.at(0).energy_j);
  EXPECT_EQ(out.summary.domains.size(), ref.stored.domains.size());
}

TEST_F(StoreFailureTest, ReadingsHeldWhileTheStoreFailsAreBounded) {
  VirtualClock clock(1'000 * kS);
  RecordingOptions o = options("bounded.db", clock);
  o.use_meter = false;
  Recording rec(std::move(o));
  rec.start();
  vfs_.write_error = SQLITE_FULL;
  std::vector<TimedReading> rs(Recording::kMaxPendingReadings / 4);
  for (std::size_t i = 0; i < rs.size(); ++i) {
    rs[i].reading.t_ns = static_cast<int64_t>(i);
    rs[i].reading.kind = ReadingKind::power_instant_w;
  }
  for (int k = 0; k < 5; ++k) (void)rec.append_readings(rs);
  (void)rec.flush();
  const StoreHealth h = rec.store_health();
  EXPECT_EQ(h.readings_pending, Recording::kMaxPendingReadings);
  EXPECT_EQ(h.readings_lost, 5 * rs.size() - Recording::kMaxPendingReadings);
  EXPECT_THROW(rec.end(0), WattlabError);
}

TEST_F(StoreFailureTest, ABurstOfWindowsWhileTheStoreFailsIsHeldBoundedAndWhatIsLostIsSaid) {
  // More windows final together than the recording holds while the store fails: it holds
  // kMaxPendingWindows, counts the rest lost, stores what it held once the store works again,
  // and end() says what the store lacks (wattlab run: exit 74).
  constexpr std::size_t kBurst = Recording::kMaxPendingWindows + 1'000;
  VirtualClock clock(1'000 * kS);
  Recording rec(options("burst.db", clock));
  rec.start();
  rec.meter().advance_to(clock.now_ns() + kS);
  vfs_.write_error = SQLITE_FULL;
  EXPECT_FALSE(rec.flush().ok());  // the readings fail: the store is failing
  std::vector<WindowId> ids;
  for (std::size_t i = 0; i < kBurst; ++i) ids.push_back(rec.open("w"));
  rec.meter().advance_to(clock.now_ns() + kS);
  for (WindowId id : ids) rec.close(id);
  rec.meter().advance_to(clock.now_ns() + 2 * kS);
  EXPECT_EQ(rec.store_health().windows_pending, Recording::kMaxPendingWindows) << "held, bounded";
  EXPECT_FALSE(rec.flush().ok());
  StoreHealth h = rec.store_health();
  EXPECT_EQ(h.windows_pending, Recording::kMaxPendingWindows);
  EXPECT_EQ(h.windows_lost, kBurst - Recording::kMaxPendingWindows);
  vfs_.clear();
  EXPECT_FALSE(rec.flush().ok()) << "stored what was held, but some windows are lost";
  h = rec.store_health();
  EXPECT_EQ(h.windows_pending, 0u);
  EXPECT_EQ(h.windows_lost, kBurst - Recording::kMaxPendingWindows);
  try {
    rec.end(0);
    FAIL() << "a run whose store lacks windows does not end quietly";
  } catch (const WattlabError& e) {
    EXPECT_EQ(e.error().kind, ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find(std::to_string(kBurst - Recording::kMaxPendingWindows) + " windows"),
              std::string::npos)
        << e.what();
  }
  auto s = Store::open(dir_ / "burst.db", OpenMode::read_only);
  ASSERT_TRUE(s.ok());
  auto r = s->load_run(rec.run_id());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->windows.size(), Recording::kMaxPendingWindows);
}

// A window stored, the store failing, then the window annotated: the flush that cannot store the
// annotation fails and says so, nothing is lost, and the annotation is stored once the store works.
TEST_F(StoreFailureTest, AnAnnotationOfAStoredWindowThatFailsIsAStoreFailureStoredOnceTheStoreWorks) {
  VirtualClock clock(1'000 * kS);
  Recording rec(options("annotate.db", clock));
  rec.start();
  rec.meter().advance_to(clock.now_ns() + kS);
  const WindowId w = rec.open("step");
  rec.meter().advance_to(clock.now_ns() + 3 * kS);
  rec.close(w);
  rec.meter().advance_to(clock.now_ns() + 2 * kS);
  ASSERT_TRUE(rec.flush().ok());
  ASSERT_TRUE(notes_.empty());
  // No time passes: no reading or event is due, so only the annotation meets the full disk.
  vfs_.write_error = SQLITE_FULL;
  rec.annotate(w, {{"role", "repeat"}}, {{"tokens", 512}});
  const Status failed = rec.flush();
  ASSERT_FALSE(failed.ok()) << "the flush that could not store the annotation says so";
  EXPECT_GT(vfs_.refused.load(), 0);
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("storing the run failed"), std::string::npos) << notes_[0];
  StoreHealth h = rec.store_health();
  EXPECT_EQ(h.failures, 1u);
  EXPECT_EQ(h.annotations_pending, 1u);
  EXPECT_EQ(h.windows_pending, 0u) << "the window itself is stored";
  EXPECT_EQ(h.windows_lost, 0u);
  EXPECT_TRUE(h.incomplete());
  vfs_.clear();
  EXPECT_TRUE(rec.flush().ok());
  ASSERT_EQ(notes_.size(), 2u);
  EXPECT_NE(notes_[1].find("works again"), std::string::npos) << notes_[1];
  h = rec.store_health();
  EXPECT_EQ(h.annotations_pending, 0u);
  EXPECT_FALSE(h.incomplete());
  rec.end(0);
  auto s = Store::open(dir_ / "annotate.db", OpenMode::read_only);
  ASSERT_TRUE(s.ok());
  auto r = s->load_run(rec.run_id());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->complete());
  ASSERT_EQ(r->windows.size(), 1u);
  EXPECT_EQ(r->windows[0].labels.at("role"), "repeat");
  EXPECT_EQ(r->windows[0].counts.at("tokens"), 512);
}

// The store stays full after the annotation: end() says what the store lacks (wattlab run: exit
// 74), no window is lost, and the summary holds the window with its annotation and energy.
TEST_F(StoreFailureTest, AnAnnotationTheStoreNeverTakesEndsWithAnErrorAndNoWindowLost) {
  VirtualClock clock(1'000 * kS);
  Recording rec(options("annotate-full.db", clock));
  rec.start();
  rec.meter().advance_to(clock.now_ns() + kS);
  const WindowId w = rec.open("step");
  rec.meter().advance_to(clock.now_ns() + 3 * kS);
  rec.close(w);
  rec.meter().advance_to(clock.now_ns() + 2 * kS);
  ASSERT_TRUE(rec.flush().ok());
  vfs_.write_error = SQLITE_FULL;
  rec.annotate(w, {{"role", "repeat"}});
  try {
    rec.end(0);
    FAIL() << "a run whose store lacks an annotation does not end quietly";
  } catch (const WattlabError& e) {
    EXPECT_EQ(e.error().kind, ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("0 windows, the labels and counts of 1 stored windows"), std::string::npos)
        << e.what();
  }
  const StoreHealth h = rec.store_health();
  EXPECT_EQ(h.windows_lost, 0u);
  EXPECT_EQ(h.windows_pending, 0u);
  EXPECT_EQ(h.annotations_pending, 1u);
  const RunRecord summary = rec.summary();
  vfs_.clear();
  ASSERT_EQ(summary.windows.size(), 1u);
  EXPECT_EQ(summary.windows[0].labels.at("role"), "repeat");
  auto s = Store::open(dir_ / "annotate-full.db", OpenMode::read_only);
  ASSERT_TRUE(s.ok());
  auto r = s->load_run(rec.run_id());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->windows.size(), 1u) << "stored before the disk filled, with its energy";
  EXPECT_EQ(r->windows[0].labels.count("role"), 0u);
  EXPECT_DOUBLE_EQ(summary.windows[0].domains.at(0).energy_j, r->windows[0].domains.at(0).energy_j);
  EXPECT_GT(r->windows[0].domains.at(0).energy_j, 0);
}

}  // namespace
}  // namespace wattlab
