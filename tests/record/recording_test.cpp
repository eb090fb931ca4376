// The run lifecycle on the simulated GPU and the virtual clock: begin, flush, windows stored as
// they become final, end on success, on failure (never ended) and on a stop request from another
// thread, and a store that fails saying so.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "record/host.h"
#include "wattlab/record/recording.h"

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("wattlab-recording-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = dir_ / "t.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The simulated GPU at a constant 400 W, exact gain, on the virtual clock, stored in db_.
  RecordingOptions sim_options() {
    RecordingOptions o;
    o.devices.device = "sim";
    o.devices.clock = &clock_;
    o.devices.sim_workload = "step 400W 600s";
    o.devices.sim_gain_error = 0;
    o.db = db_;
    o.command = {"python", "train.py"};
    o.tags = {{"model", "m"}};
    o.on_note = [this](std::string_view n) { notes_.emplace_back(n); };
    return o;
  }
  RunRecord load(RunId id) {
    auto s = Store::open(db_, OpenMode::read_only);
    EXPECT_TRUE(s.ok());
    auto r = s->load_run(id);
    EXPECT_TRUE(r.ok()) << r.error().message();
    return *r;
  }
  void advance(Recording& rec, int64_t dur_ns) { rec.meter().advance_to(clock_.now_ns() + dur_ns); }

  VirtualClock clock_{1'000 * kS};
  std::filesystem::path dir_, db_;
  std::vector<std::string> notes_;
};

TEST_F(RecordingTest, BeginsTheRunWithWhatWasOpenedAndWhoRanIt) {
  Recording rec(sim_options());
  EXPECT_TRUE(rec.simulated());
  EXPECT_EQ(rec.domain_count(), 1u);
  ASSERT_EQ(rec.opened().statuses.size(), 1u);
  EXPECT_TRUE(rec.opened().statuses[0].loaded);
  EXPECT_TRUE(rec.start());
  ASSERT_GT(rec.run_id(), 0);
  EXPECT_EQ(rec.start_t_ns(), 1'000 * kS);
  const RunRecord r = load(rec.run_id());
  EXPECT_EQ(r.info.command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(r.info.host, host_name());
  EXPECT_FALSE(r.info.host.empty());
  EXPECT_TRUE(r.info.simulated);
  EXPECT_EQ(r.info.device_selection, "sim");
  ASSERT_EQ(r.info.devices.size(), 1u);
  EXPECT_EQ(r.info.devices[0].backend, "sim");
  EXPECT_FALSE(r.info.devices[0].properties.empty());
  EXPECT_EQ(r.info.tags.at("model"), "m");
  ASSERT_EQ(r.domains.size(), 1u);
  EXPECT_EQ(r.domains[0].id, "gpu:0");
  EXPECT_FALSE(r.complete());
  EXPECT_EQ(r.info.start_t_ns, 1'000 * kS);
}

TEST_F(RecordingTest, FlushStoresReadingsAndAClosedWindowBeforeTheEnd) {
  Recording rec(sim_options());
  rec.start();
  advance(rec, 1 * kS);
  const WindowId w = rec.open("step");
  advance(rec, 3 * kS);
  rec.close(w);
  advance(rec, 3 * kS / 2);  // the timeline covers the window's end: its result is final
  ASSERT_TRUE(rec.flush().ok());
  RunRecord mid = load(rec.run_id());
  EXPECT_FALSE(mid.complete());
  ASSERT_EQ(mid.windows.size(), 1u) << "a closed window must reach the store before end(): a killed run keeps it";
  EXPECT_EQ(mid.windows[0].name, "step");
  EXPECT_TRUE(mid.windows[0].final);
  ASSERT_EQ(mid.windows[0].domains.size(), 1u);
  const DomainEnergy& d = mid.windows[0].domains[0];
  EXPECT_NEAR(d.energy_j, 400.0 * 3, d.uncertainty_j + 1e-6);
  {
    auto s = Store::open(db_, OpenMode::read_only);
    auto runs = s->list_runs();
    ASSERT_TRUE(runs.ok());
    EXPECT_GT(runs->back().reading_count, 10);
  }
  rec.end(0);
  const RunRecord end = load(rec.run_id());
  EXPECT_TRUE(end.complete());
  EXPECT_EQ(end.exit_status, 0);
  ASSERT_EQ(end.windows.size(), 1u) << "stored again at the end, not twice";
  EXPECT_DOUBLE_EQ(end.windows[0].domains[0].energy_j, d.energy_j);
  EXPECT_TRUE(notes_.empty());
}

TEST_F(RecordingTest, EndStoresTrackedWindowsWithTheirLatestAnnotations) {
  Recording rec(sim_options());
  rec.start();
  advance(rec, 1 * kS);
  const WindowId whole = rec.open("whole");
  const int64_t a = clock_.now_ns();
  advance(rec, 2 * kS);
  // A window with past edges, closed at once: it becomes final (and stored) before `whole`.
  const WindowId part = rec.add_window("part", a, a + kS, {{"phase", "steady"}}, {{"tokens", 100}});
  advance(rec, 2 * kS);
  ASSERT_TRUE(rec.flush().ok());
  ASSERT_EQ(load(rec.run_id()).windows.size(), 1u);
  rec.close(whole);
  rec.annotate(whole, {{"phase", "whole"}}, {{"requests", 4}});
  rec.annotate(part, {}, {{"tokens", 120}});
  EXPECT_EQ(rec.result(part).counts.at("tokens"), 120);
  rec.end(0);
  // In the order their results became final (memory stays bounded: nothing is held for the end);
  // `part`, annotated after it was stored, is stored again with its new counts.
  const RunRecord r = load(rec.run_id());
  ASSERT_EQ(r.windows.size(), 2u);
  EXPECT_EQ(r.windows[1].name, "whole");
  EXPECT_EQ(r.windows[1].labels.at("phase"), "whole");
  EXPECT_EQ(r.windows[1].counts.at("requests"), 4);
  EXPECT_TRUE(r.windows[1].final) << "virtual time: end() advances until the result is final";
  EXPECT_EQ(r.windows[0].name, "part");
  EXPECT_EQ(r.windows[0].labels.at("phase"), "steady");
  EXPECT_EQ(r.windows[0].counts.at("tokens"), 120);
  // The summary lists them in the order they were opened.
  const RunRecord sum = rec.summary();
  ASSERT_EQ(sum.windows.size(), 2u);
  EXPECT_EQ(sum.windows[0].name, "whole");
}

TEST_F(RecordingTest, EndClosesAWindowLeftOpenAndSaysSo) {
  Recording rec(sim_options());
  rec.start();
  advance(rec, 1 * kS);
  rec.open("never closed");
  advance(rec, 2 * kS);
  rec.end(3);
  const RunRecord r = load(rec.run_id());
  EXPECT_EQ(r.exit_status, 3);
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_TRUE(r.windows[0].final);
  EXPECT_NEAR(r.windows[0].dur_s(), 2.0, 1e-9);
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_NE(notes_[0].find("'never closed' was still open"), std::string::npos) << notes_[0];
}

TEST_F(RecordingTest, ARecordingDestroyedWithoutEndEndsItsRunAsFailed) {
  RunId id = 0;
  {
    Recording rec(sim_options());
    rec.start();
    id = rec.run_id();
    advance(rec, 2 * kS);
  }  // e.g. the command threw
  const RunRecord r = load(id);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.exit_status, Recording::kAbandonedStatus);
}

TEST_F(RecordingTest, AStopRequestFromAnotherThreadEndsTheRunOnceWithItsStatus) {
  Recording rec(sim_options());
  rec.start();
  advance(rec, 1 * kS);
  rec.open("work");
  advance(rec, 2 * kS);
  // A signal watcher: the owner is still "working" and calls end() later itself.
  std::thread watcher([&] { rec.end(128 + 2); });
  watcher.join();
  EXPECT_TRUE(rec.ended());
  const TimedReading late{0, Reading{}};
  EXPECT_FALSE(rec.append_readings({&late, 1}).ok()) << "nothing is taken after the end";
  rec.end(0);  // the owner's own end: the first status stays
  const RunRecord r = load(rec.run_id());
  EXPECT_EQ(r.exit_status, 130);
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.windows[0].name, "work");
}

TEST_F(RecordingTest, AStoreThatFailsReportsItsErrorInsteadOfSwallowingIt) {
  Recording rec(sim_options());
  rec.start();
  advance(rec, 2 * kS);
  // Another process breaks the database under the recording.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "ALTER TABLE readings RENAME TO readings_gone", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const Status st = rec.flush();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("readings"), std::string::npos) << st.error().message();
  advance(rec, 2 * kS);
  EXPECT_FALSE(rec.flush().ok());
  ASSERT_EQ(notes_.size(), 1u) << "said once, not at every flush";
  EXPECT_NE(notes_[0].find("storing the run failed"), std::string::npos) << notes_[0];
  EXPECT_THROW(rec.end(0), WattlabError);
  // The end itself still reached the store.
  const RunRecord r = load(rec.run_id());
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.exit_status, 0);
}

TEST_F(RecordingTest, AFailingStoreAtTheStartThrows) {
  std::filesystem::create_directories(db_);  // a folder where the database file should be
  {
    Recording rec(sim_options());
    EXPECT_THROW(rec.start(), WattlabError);
  }
  EXPECT_TRUE(notes_.empty()) << "no run was begun, so there is none to end: " << notes_.front();
}

TEST_F(RecordingTest, ARunTheStoreRefusesToBeginThrowsAndLeavesNothingToEnd) {
  ASSERT_TRUE(Store::open(db_).ok());  // a wattlab store, opened read-only below
  RecordingOptions o = sim_options();
  auto read_only = Store::open(db_, OpenMode::read_only);
  ASSERT_TRUE(read_only.ok());
  o.store = &*read_only;
  {
    Recording rec(std::move(o));
    EXPECT_THROW(rec.start(), WattlabError);
  }
  EXPECT_TRUE(notes_.empty()) << notes_.front();
}

TEST_F(RecordingTest, ABadDeviceSelectionIsAUsageError) {
  RecordingOptions o = sim_options();
  o.devices.sim_workload = "jump 3s";
  EXPECT_THROW(Recording{o}, UsageError);
  o = sim_options();
  o.devices.device = "quantum";
  EXPECT_THROW(Recording{o}, UsageError);
}

TEST_F(RecordingTest, WithoutAStoreItOnlyMeasures) {
  RecordingOptions o = sim_options();
  o.db.clear();
  Recording rec(std::move(o));
  rec.start();
  EXPECT_FALSE(rec.storing());
  EXPECT_EQ(rec.run_id(), 0);
  advance(rec, 1 * kS);
  const WindowId w = rec.open("w");
  advance(rec, 2 * kS);
  rec.close(w);
  rec.end(0);
  EXPECT_NEAR(rec.result(w).domains.at(0).energy_j, 800.0, 20.0);
  EXPECT_FALSE(std::filesystem::exists(db_));
}

TEST_F(RecordingTest, WithoutAMeterItStoresTheReadingsTheCallerHandsIn) {
  RecordingOptions o = sim_options();
  o.use_meter = false;
  Recording rec(std::move(o));
  ASSERT_EQ(rec.sensors().size(), 1u);
  rec.start();
  EXPECT_EQ(rec.sensors().size(), 1u) << "the caller keeps the sensors";
  std::vector<TimedReading> rs;
  for (int64_t i = 0; i < 25000; ++i) {  // past the bound: stored at once, without a flush
    Reading r;
    r.t_ns = clock_.now_ns() + i * 1'000'000;
    r.kind = ReadingKind::power_instant_w;
    r.value = 400;
    rs.push_back({0, r});
  }
  ASSERT_TRUE(rec.append_readings(rs).ok());
  {
    auto s = Store::open(db_, OpenMode::read_only);
    EXPECT_EQ(s->list_runs()->back().reading_count, 25000);
  }
  WindowResult w;
  w.id = 1;
  w.name = "characterize:idle gpu:0";
  w.final = true;
  rec.store_window(w);
  rec.set_tag("characterize.json", "{}");
  rec.end(0);
  const RunRecord r = load(rec.run_id());
  EXPECT_EQ(r.windows.size(), 1u);
  EXPECT_EQ(r.info.tags.at("characterize.json"), "{}");
  EXPECT_EQ(r.exit_status, 0);
}

TEST_F(RecordingTest, AttachedToAMeterItDoesNotOwnItLeavesTheMeterRunning) {
  BackendOptions b;
  b.device = "sim";
  b.clock = &clock_;
  b.sim_workload = "step 400W 600s";
  OpenedSensors opened = open_sensors(b);
  std::vector<DeviceProperties> devices;
  for (const auto& s : opened.sensors) devices.push_back({s->backend(), s->properties()});
  Meter meter(std::move(opened.sensors), clock_);
  RecordingOptions o;
  o.devices.device = "sim";
  o.db = db_;
  o.tags = {{"gemm.executor", "SIMULATED"}};
  Recording rec(meter, devices, true, std::move(o));
  rec.start();
  meter.advance_to(clock_.now_ns() + 3 * kS);
  rec.end(0);
  meter.advance_to(clock_.now_ns() + kS);  // still the owner's to drive
  const RunRecord r = load(rec.run_id());
  EXPECT_TRUE(r.info.simulated);
  EXPECT_EQ(r.info.tags.at("gemm.executor"), "SIMULATED");
  ASSERT_EQ(r.info.devices.size(), 1u);
  EXPECT_EQ(r.domains.size(), meter.domains().size());
  auto s = Store::open(db_, OpenMode::read_only);
  EXPECT_GT(s->list_runs()->back().reading_count, 10) << "the end flushes the meter's readings";
}

TEST_F(RecordingTest, OnRealTimeTheSamplerAndTheFlushThreadRunUntilTheEnd) {
  RecordingOptions o = sim_options();
  o.devices.clock = nullptr;  // the monotonic clock: the sampler and the flush threads run
  o.cpu_cost_tags = true;
  Recording rec(std::move(o));
  ASSERT_TRUE(rec.start());
  const WindowId w = rec.open("w");
  rec.close(w);
  rec.end(0);  // waits for the window's final result
  const RunRecord r = load(rec.run_id());
  EXPECT_EQ(r.exit_status, 0);
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_TRUE(r.windows[0].final);
  EXPECT_EQ(r.info.tags.count("wattlab.sampler_cpu_pct"), 1u);
  auto s = Store::open(db_, OpenMode::read_only);
  EXPECT_GT(s->list_runs()->back().reading_count, 0);
}

}  // namespace
}  // namespace wattlab
