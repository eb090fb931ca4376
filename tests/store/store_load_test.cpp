// Store: reading runs back.
#include <gtest/gtest.h>

#include "store/store_fixtures.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

void expect_same(const TelemetrySummary& a, const TelemetrySummary& b) {
  EXPECT_EQ(a.mean_sm_clock_mhz, b.mean_sm_clock_mhz);
  EXPECT_EQ(a.mean_mem_clock_mhz, b.mean_mem_clock_mhz);
  EXPECT_EQ(a.mean_temperature_c, b.mean_temperature_c);
  EXPECT_EQ(a.temperature_begin_c, b.temperature_begin_c);
  EXPECT_EQ(a.temperature_end_c, b.temperature_end_c);
  EXPECT_EQ(a.mean_utilization_gpu_pct, b.mean_utilization_gpu_pct);
  EXPECT_EQ(a.power_capped_fraction, b.power_capped_fraction);
  EXPECT_EQ(a.thermal_capped_fraction, b.thermal_capped_fraction);
  EXPECT_EQ(a.mean_sm_activity_pct, b.mean_sm_activity_pct);
  EXPECT_EQ(a.mean_sm_occupancy_pct, b.mean_sm_occupancy_pct);
  EXPECT_EQ(a.mean_tensor_activity_pct, b.mean_tensor_activity_pct);
  EXPECT_EQ(a.mean_dram_bw_pct, b.mean_dram_bw_pct);
  EXPECT_EQ(a.power_limit_w, b.power_limit_w);
  EXPECT_EQ(a.max_memory_used_bytes, b.max_memory_used_bytes);
  EXPECT_EQ(a.clock_event_reasons_seen, b.clock_event_reasons_seen);
}

void expect_same(const DomainEnergy& a, const DomainEnergy& b) {
  EXPECT_EQ(a.domain_id, b.domain_id);
  EXPECT_EQ(a.simulated, b.simulated);
  EXPECT_EQ(a.available, b.available);
  EXPECT_EQ(a.energy_j, b.energy_j);  // exact: REAL is a double
  EXPECT_EQ(a.uncertainty_j, b.uncertainty_j);
  EXPECT_EQ(a.systematic_j, b.systematic_j);
  EXPECT_EQ(a.mean_power_w, b.mean_power_w);
  EXPECT_EQ(a.peak_power_w, b.peak_power_w);
  EXPECT_EQ(a.estimator, b.estimator);
  EXPECT_EQ(a.cross_check_j, b.cross_check_j);
  EXPECT_EQ(a.cross_check_estimator, b.cross_check_estimator);
  EXPECT_EQ(a.readings_used, b.readings_used);
  EXPECT_EQ(a.issues, b.issues);
  expect_same(a.telemetry, b.telemetry);
}

void expect_same(const Domain& a, const Domain& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.vendor, b.vendor);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.uuid, b.uuid);
  EXPECT_EQ(a.scope, b.scope);
  EXPECT_EQ(a.simulated, b.simulated);
  EXPECT_EQ(a.parent, b.parent);
  EXPECT_EQ(a.model.gain_tolerance, b.model.gain_tolerance);
  EXPECT_EQ(a.model.source, b.model.source);
  ASSERT_EQ(a.model.readings.size(), b.model.readings.size());
  for (std::size_t i = 0; i < a.model.readings.size(); ++i) EXPECT_EQ(a.model.readings[i].kind, b.model.readings[i].kind);
}

TEST(StoreLoad, WholeRunRoundTrips) {
  test::TempDir dir;
  auto path = dir.file("runs.db");
  const RunInfo info = test::sample_run_info();
  const std::vector<Domain> domains = {test::sample_domain("gpu:0"), test::sample_domain("gpu:0/memory", "gpu:0")};
  const std::vector<WindowResult> windows = {test::sample_window(3, "forward", true),
                                             test::sample_window(1, "backward", false)};
  const std::vector<MeterEvent> events = {{2'500'000'000, "gpu:0", "energy_counter_j", "counter_reset", "went back"},
                                          {2'100'000'000, "gpu:0", "power_instant_w", "read_error", "code 3"}};
  RunId run = 0;
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok());
    auto r = store->begin_run(info);
    ASSERT_TRUE(r.ok());
    run = *r;
    ASSERT_TRUE(store->add_domains(run, domains).ok());
    std::vector<TimedReading> batch = {{0, {10, ReadingKind::energy_counter_j, 5.0, 4'000'000}},
                                       {1, {11, ReadingKind::power_instant_w, 50.0, 2'000}},
                                       {0, {12, ReadingKind::temperature_c, 40.0, 1'000}}};
    ASSERT_TRUE(store->append_readings(run, batch).ok());
    for (const auto& w : windows) ASSERT_TRUE(store->add_window(run, w).ok());
    ASSERT_TRUE(store->append_events(run, events).ok());
    ASSERT_TRUE(store->end_run(run, 9'000'000'000, 0).ok());
  }
  auto store = Store::open(path, OpenMode::read_only);
  ASSERT_TRUE(store.ok());
  auto rec = store->load_run(run);
  ASSERT_TRUE(rec.ok()) << rec.error().message();

  EXPECT_EQ(rec->run_id, run);
  EXPECT_EQ(rec->info.command, info.command);
  EXPECT_EQ(rec->info.host, info.host);
  EXPECT_EQ(rec->info.start_utc, info.start_utc);
  EXPECT_EQ(rec->info.start_t_ns, info.start_t_ns);
  EXPECT_EQ(rec->info.simulated, true);
  EXPECT_EQ(rec->info.device_selection, "sim");
  ASSERT_EQ(rec->info.devices.size(), 1u);
  EXPECT_EQ(rec->info.devices[0].properties, info.devices[0].properties);
  EXPECT_FALSE(rec->wattlab_version.empty());
  EXPECT_EQ(rec->end_t_ns, 9'000'000'000);
  EXPECT_EQ(rec->exit_status, 0);
  EXPECT_EQ(rec->reading_count, 2);
  EXPECT_EQ(rec->telemetry_count, 1);

  ASSERT_EQ(rec->domains.size(), 2u);
  for (std::size_t i = 0; i < domains.size(); ++i) expect_same(rec->domains[i], domains[i]);

  ASSERT_EQ(rec->windows.size(), 2u);  // in the order added, not by id
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const auto& got = rec->windows[i];
    EXPECT_EQ(got.id, windows[i].id);
    EXPECT_EQ(got.name, windows[i].name);
    EXPECT_EQ(got.t_begin_ns, windows[i].t_begin_ns);
    EXPECT_EQ(got.t_end_ns, windows[i].t_end_ns);
    EXPECT_EQ(got.final, windows[i].final);
    ASSERT_EQ(got.domains.size(), windows[i].domains.size());
    for (std::size_t d = 0; d < got.domains.size(); ++d) expect_same(got.domains[d], windows[i].domains[d]);
  }

  ASSERT_EQ(rec->events.size(), 2u);  // in time order
  EXPECT_EQ(rec->events[0].kind, "read_error");
  EXPECT_EQ(rec->events[0].t_ns, 2'100'000'000);
  EXPECT_EQ(rec->events[1].reading, "energy_counter_j");
  EXPECT_EQ(rec->events[1].message, "went back");
}

TEST(StoreLoad, EmptyStoreHasNoLatestRun) {
  test::TempDir dir;
  auto store = Store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto latest = store->latest_run_id();
  ASSERT_FALSE(latest.ok());
  EXPECT_EQ(latest.error().kind, ErrorKind::not_found);
  EXPECT_TRUE(store->list_runs()->empty());
  auto missing = store->load_run(1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::not_found);
  EXPECT_NE(missing.error().what.find("run 1 is not in"), std::string::npos);
}

TEST(StoreLoad, ListAndLatest) {
  test::TempDir dir;
  auto store = Store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  RunInfo a = test::sample_run_info();
  a.host = "a";
  RunInfo b = test::sample_run_info();
  b.host = "b";
  auto ra = store->begin_run(a);
  auto rb = store->begin_run(b);
  ASSERT_TRUE(store->end_run(*ra, 5, 0).ok());
  ASSERT_TRUE(store->add_window(*rb, test::sample_window(1, "w", true)).ok());
  EXPECT_EQ(*store->latest_run_id(), *rb);
  auto runs = store->list_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].info.host, "a");
  EXPECT_EQ((*runs)[0].state(), "complete");
  EXPECT_EQ((*runs)[0].window_count, 0);
  EXPECT_EQ((*runs)[1].info.host, "b");
  EXPECT_EQ((*runs)[1].state(), "incomplete");
  EXPECT_EQ((*runs)[1].window_count, 1);
  EXPECT_FALSE((*runs)[1].dur_s().has_value());
}

TEST(StoreLoad, ReadingsByDomainKindAndInclusiveRange) {
  test::TempDir dir;
  auto store = Store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto run = *store->begin_run(test::sample_run_info());
  auto other = *store->begin_run(test::sample_run_info());
  std::vector<Domain> d = {test::sample_domain("gpu:0"), test::sample_domain("gpu:1")};
  ASSERT_TRUE(store->add_domains(run, d).ok());
  ASSERT_TRUE(store->add_domains(other, d).ok());
  std::vector<TimedReading> batch;
  for (int64_t t = 100; t >= 0; t -= 10) {  // stored out of order: loads come back sorted
    batch.push_back({0, {t, ReadingKind::power_instant_w, static_cast<double>(t), 1}});
    batch.push_back({1, {t, ReadingKind::power_instant_w, -1.0, 1}});
    batch.push_back({0, {t, ReadingKind::power_average_w, -2.0, 1}});
    batch.push_back({0, {t, ReadingKind::sm_clock_mhz, 1000.0 + static_cast<double>(t), 1}});
  }
  ASSERT_TRUE(store->append_readings(run, batch).ok());
  ASSERT_TRUE(store->append_readings(other, batch).ok());

  auto got = store->load_readings(run, 0, ReadingKind::power_instant_w, 20, 50);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 4u);  // 20, 30, 40, 50
  for (std::size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ((*got)[i].t_ns, 20 + 10 * static_cast<int64_t>(i));
    EXPECT_EQ((*got)[i].value, static_cast<double>((*got)[i].t_ns));
    EXPECT_EQ((*got)[i].kind, ReadingKind::power_instant_w);
    EXPECT_EQ((*got)[i].read_dur_ns, 1);
  }
  auto clocks = store->load_readings(run, 0, ReadingKind::sm_clock_mhz, 0, 0);
  ASSERT_TRUE(clocks.ok());
  ASSERT_EQ(clocks->size(), 1u);
  EXPECT_EQ((*clocks)[0].value, 1000.0);
  EXPECT_TRUE(store->load_readings(run, 1, ReadingKind::sm_clock_mhz, 0, 1000)->empty());
  auto none = store->load_readings(run, 2, ReadingKind::power_instant_w, 0, 1000);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::not_found);
  EXPECT_EQ(store->load_readings(other + 1, 0, ReadingKind::power_instant_w, 0, 1).error().kind,
            ErrorKind::not_found);
}

// wattlab report reads while wattlab run writes: WAL lets it see each committed batch.
TEST(StoreLoad, ReaderSeesCommittedBatchesOfALiveWriter) {
  test::TempDir dir;
  auto path = dir.file("runs.db");
  auto writer = Store::open(path);
  ASSERT_TRUE(writer.ok());
  auto run = *writer->begin_run(test::sample_run_info());
  auto reader = Store::open(path, OpenMode::read_only);
  ASSERT_TRUE(reader.ok());
  // The reader asks before the domains exist; it must not remember "no domains".
  EXPECT_FALSE(reader->load_readings(run, 0, ReadingKind::power_instant_w, 0, 10).ok());
  ASSERT_TRUE(writer->add_domains(run, std::vector<Domain>{test::sample_domain("gpu:0")}).ok());
  for (int batch = 1; batch <= 3; ++batch) {
    std::vector<TimedReading> r = {{0, {batch, ReadingKind::power_instant_w, 1.0, 0}}};
    ASSERT_TRUE(writer->append_readings(run, r).ok());
    auto seen = reader->load_readings(run, 0, ReadingKind::power_instant_w, 0, 10);
    ASSERT_TRUE(seen.ok()) << seen.error().message();
    EXPECT_EQ(seen->size(), static_cast<std::size_t>(batch));
    EXPECT_EQ(reader->load_run(run)->reading_count, batch);
  }
}

}  // namespace
}  // namespace wattlab
