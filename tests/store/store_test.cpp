// Store: opening and writing.
#include "wattlab/store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/store_fixtures.h"

namespace wattlab {
namespace {

std::string raw_text(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* q = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &q, nullptr) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
    out = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(db);
  return out;
}

void raw_exec(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

std::vector<TimedReading> readings(uint32_t domain, ReadingKind kind, int n, int64_t t0_ns = 0) {
  std::vector<TimedReading> out;
  for (int i = 0; i < n; ++i)
    out.push_back({domain, Reading{t0_ns + i * 1'000'000, kind, 100.0 + i, 2'000}});
  return out;
}

struct OpenRun {
  Store store;
  RunId run;
};

OpenRun open_run(const std::filesystem::path& path, int domains = 2) {
  auto store = Store::open(path);
  EXPECT_TRUE(store.ok()) << store.error().message();
  auto run = store->begin_run(test::sample_run_info());
  EXPECT_TRUE(run.ok());
  std::vector<Domain> d = {test::sample_domain("gpu:0"), test::sample_domain("gpu:0/memory", "gpu:0")};
  d.resize(static_cast<std::size_t>(domains));
  EXPECT_TRUE(store->add_domains(*run, d).ok());
  return {std::move(*store), *run};
}

TEST(StoreOpen, CreatesAWalDatabaseWithVersion) {
  test::TempDir dir;
  auto path = dir.file("runs.db");
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok()) << store.error().message();
    EXPECT_FALSE(store->read_only());
    EXPECT_EQ(store->path(), path);
  }
  EXPECT_EQ(raw_text(path, "PRAGMA journal_mode"), "wal");  // WAL is persistent in the file
  EXPECT_EQ(raw_text(path, "PRAGMA user_version"), std::to_string(Store::kSchemaVersion));
  EXPECT_EQ(raw_text(path, "SELECT value FROM meta WHERE key = 'created_by'").rfind("wattlab ", 0), 0u);
  auto again = Store::open(path, OpenMode::read_only);
  ASSERT_TRUE(again.ok()) << again.error().message();
  EXPECT_TRUE(again->read_only());
}

TEST(StoreOpen, ReadOnlyMissingFileIsNotFound) {
  test::TempDir dir;
  auto store = Store::open(dir.file("absent.db"), OpenMode::read_only);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::not_found);
  EXPECT_FALSE(std::filesystem::exists(dir.file("absent.db")));
}

TEST(StoreOpen, MissingFolderIsNotFound) {
  test::TempDir dir;
  auto store = Store::open(dir.file("no/such/folder/runs.db"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::not_found);
}

TEST(StoreOpen, FileThatIsNotADatabaseIsAClearError) {
  test::TempDir dir;
  auto path = dir.file("notes.txt");
  std::ofstream(path) << "time,power_w\n" << std::string(4096, '1') << "\n";
  for (OpenMode mode : {OpenMode::read_write, OpenMode::read_only}) {
    auto store = Store::open(path, mode);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().kind, ErrorKind::parse);
    EXPECT_NE(store.error().message().find(path.string() + " is not a SQLite database"), std::string::npos)
        << store.error().message();
  }
  EXPECT_EQ(std::filesystem::file_size(path), 13u + 4097u);  // untouched
}

TEST(StoreOpen, NewerSchemaVersionIsASchemaError) {
  test::TempDir dir;
  auto path = dir.file("future.db");
  { ASSERT_TRUE(Store::open(path).ok()); }
  raw_exec(path, "PRAGMA user_version = " + std::to_string(Store::kSchemaVersion + 1));
  for (OpenMode mode : {OpenMode::read_write, OpenMode::read_only}) {
    auto store = Store::open(path, mode);
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().kind, ErrorKind::schema);
    const std::string expected = path.string() + " was written by schema version " +
                                 std::to_string(Store::kSchemaVersion + 1);
    EXPECT_NE(store.error().what.find(expected), std::string::npos) << store.error().what;
    EXPECT_NE(store.error().what.find("; this wattlab reads up to " + std::to_string(Store::kSchemaVersion) +
                                      ": upgrade wattlab"),
              std::string::npos)
        << store.error().what;
  }
}

// Found by fuzz/fuzz_store.cpp (its corpus keeps the input as crash-runs-table-lacks-column): a
// store whose tables lack a column wattlab reads is bad input (parse), not an internal error.
TEST(StoreOpen, ATableThatLacksAColumnIsAParseErrorWhenRead) {
  test::TempDir dir;
  auto path = dir.file("damaged.db");
  { open_run(path); }
  raw_exec(path, "ALTER TABLE runs DROP COLUMN host");
  auto store = Store::open(path, OpenMode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto runs = store->list_runs();
  ASSERT_FALSE(runs.ok());
  EXPECT_EQ(runs.error().kind, ErrorKind::parse);
  EXPECT_NE(runs.error().what.find("no such column: host"), std::string::npos) << runs.error().what;
  auto run = store->load_run(1);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::parse);
}

// Found by the fuzzer (fuzz/corpus/store/crash-window-domains-row-without-window): in a damaged
// file the windows table and its join with window_domains disagree; loading the run is an error
// that says so, not an exception.
TEST(StoreOpen, AWindowResultWithoutItsWindowIsAParseError) {
  const char* data = std::getenv("WATTLAB_TEST_DATA_DIR");
  if (!data) GTEST_SKIP() << "WATTLAB_TEST_DATA_DIR is not set (CTest sets it)";
  const auto file = std::filesystem::path(data) / ".." / ".." / "fuzz" / "corpus" / "store" /
                    "crash-window-domains-row-without-window";
  test::TempDir dir;
  const auto path = dir.file("damaged.db");
  std::filesystem::copy_file(file, path);
  auto store = Store::open(path, OpenMode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto runs = store->list_runs();
  ASSERT_TRUE(runs.ok()) << runs.error().message();
  std::string errors;
  for (const auto& r : *runs)
    if (auto run = store->load_run(r.run_id); !run.ok()) errors += run.error().message() + "\n";
  EXPECT_NE(errors.find("which the windows table does not list"), std::string::npos) << errors;
}

TEST(StoreOpen, EmptyFileReadOnlyIsNotAStore) {
  test::TempDir dir;
  auto path = dir.file("empty.db");
  std::ofstream{path};
  auto store = Store::open(path, OpenMode::read_only);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().kind, ErrorKind::parse);
  EXPECT_NE(store.error().what.find("not a wattlab store"), std::string::npos);
  EXPECT_TRUE(Store::open(path).ok());  // read-write makes it one
}

TEST(StoreWrite, ReadOnlyStoreRefusesWrites) {
  test::TempDir dir;
  auto path = dir.file("runs.db");
  { ASSERT_TRUE(Store::open(path).ok()); }
  auto store = Store::open(path, OpenMode::read_only);
  ASSERT_TRUE(store.ok());
  auto run = store->begin_run(test::sample_run_info());
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(run.error().what.find("read-only"), std::string::npos);
}

TEST(StoreWrite, RunIdsIncreaseAndUnknownRunsAreNotFound) {
  test::TempDir dir;
  auto store = Store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  auto a = store->begin_run(test::sample_run_info());
  auto b = store->begin_run(test::sample_run_info());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(*a, *b);
  const RunId missing = *b + 100;
  EXPECT_EQ(store->end_run(missing, 1, 0).error().kind, ErrorKind::not_found);
  EXPECT_EQ(store->append_readings(missing, readings(0, ReadingKind::power_instant_w, 1)).error().kind,
            ErrorKind::not_found);
  EXPECT_EQ(store->add_window(missing, test::sample_window(1, "w", true)).error().kind, ErrorKind::not_found);
  EXPECT_EQ(store->append_events(missing, std::vector<MeterEvent>{{}}).error().kind, ErrorKind::not_found);
  EXPECT_EQ(store->add_domains(missing, std::vector<Domain>{test::sample_domain("gpu:9")}).error().kind,
            ErrorKind::not_found);
  Status s = store->end_run(missing, 1, 0);
  EXPECT_NE(s.error().what.find("run " + std::to_string(missing)), std::string::npos);
}

TEST(StoreWrite, BatchWithAnUnknownDomainIsRejectedWhole) {
  test::TempDir dir;
  auto [store, run] = open_run(dir.file("runs.db"), 2);
  auto batch = readings(0, ReadingKind::power_instant_w, 10);
  batch.push_back({2, Reading{5, ReadingKind::power_instant_w, 1.0, 0}});  // only 0 and 1 exist
  Status s = store.append_readings(run, batch);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(s.error().what.find("domain index 2"), std::string::npos);
  auto rec = store.load_run(run);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->reading_count, 0);
  auto stored = store.load_readings(run, 0, ReadingKind::power_instant_w, INT64_MIN, INT64_MAX);
  EXPECT_TRUE(stored->empty());
}

TEST(StoreWrite, DomainsAppendInMeterOrder) {
  test::TempDir dir;
  auto [store, run] = open_run(dir.file("runs.db"), 1);
  ASSERT_TRUE(store.add_domains(run, std::vector<Domain>{test::sample_domain("cpu:0/package")}).ok());
  // Index 1 is now valid, index 2 still is not.
  EXPECT_TRUE(store.append_readings(run, readings(1, ReadingKind::power_average_w, 1)).ok());
  EXPECT_FALSE(store.append_readings(run, readings(2, ReadingKind::power_average_w, 1)).ok());
  auto rec = store.load_run(run);
  ASSERT_EQ(rec->domains.size(), 2u);
  EXPECT_EQ(rec->domains[1].id, "cpu:0/package");
}

TEST(StoreWrite, ManyReadingsInOneBatchSplitIntoReadingsAndTelemetry) {
  test::TempDir dir;
  auto path = dir.file("runs.db");
  auto [store, run] = open_run(path, 2);
  constexpr int kN = 250'000;
  std::vector<TimedReading> batch;
  batch.reserve(2 * kN);
  for (int i = 0; i < kN; ++i) {
    batch.push_back({static_cast<uint32_t>(i % 2), Reading{i * 1000, ReadingKind::power_instant_w, i * 0.5, 7}});
    batch.push_back({0, Reading{i * 1000 + 1, ReadingKind::sm_clock_mhz, 1980.0, 3}});
  }
  ASSERT_TRUE(store.append_readings(run, batch).ok());
  auto rec = store.load_run(run);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->reading_count, kN);
  EXPECT_EQ(rec->telemetry_count, kN);
  EXPECT_EQ(raw_text(path, "SELECT count(*) FROM readings"), std::to_string(kN));
  EXPECT_EQ(raw_text(path, "SELECT count(*) FROM telemetry"), std::to_string(kN));
  EXPECT_EQ(raw_text(path, "SELECT count(DISTINCT kind) FROM telemetry"), "1");
  EXPECT_EQ(raw_text(path, "SELECT kind FROM telemetry LIMIT 1"), "sm_clock_mhz");
  auto gpu1 = store.load_readings(run, 1, ReadingKind::power_instant_w, INT64_MIN, INT64_MAX);
  ASSERT_TRUE(gpu1.ok());
  ASSERT_EQ(gpu1->size(), static_cast<std::size_t>(kN / 2));
  EXPECT_EQ(gpu1->front().t_ns, 1000);
  EXPECT_DOUBLE_EQ(gpu1->back().value, (kN - 1) * 0.5);
}

TEST(StoreWrite, EmptyBatchesAreFine) {
  test::TempDir dir;
  auto [store, run] = open_run(dir.file("runs.db"));
  EXPECT_TRUE(store.append_readings(run, {}).ok());
  EXPECT_TRUE(store.append_events(run, {}).ok());
}

TEST(StoreWrite, SameWindowIdReplacesTheProvisionalResult) {
  test::TempDir dir;
  auto [store, run] = open_run(dir.file("runs.db"));
  WindowResult provisional = test::sample_window(7, "step", false);
  provisional.domains[0].energy_j = 1.0;
  ASSERT_TRUE(store.add_window(run, provisional).ok());
  ASSERT_TRUE(store.add_window(run, test::sample_window(8, "other", true)).ok());
  WindowResult final_result = test::sample_window(7, "step", true);
  final_result.domains.resize(1);
  ASSERT_TRUE(store.add_window(run, final_result).ok());
  auto rec = store.load_run(run);
  ASSERT_TRUE(rec.ok());
  ASSERT_EQ(rec->windows.size(), 2u);
  EXPECT_EQ(rec->window_count, 2);
  const WindowResult& w = rec->windows[1].id == 7 ? rec->windows[1] : rec->windows[0];
  EXPECT_TRUE(w.final);
  ASSERT_EQ(w.domains.size(), 1u);
  EXPECT_DOUBLE_EQ(w.domains[0].energy_j, 123.456);
}

TEST(StoreWrite, EstimatorColumnsHoldTheirSpellingAndAnUnknownOneIsRefused) {
  test::TempDir dir;
  const auto path = dir.file("runs.db");
  RunId run = 0;
  const EstimatorUsed edges = EstimatorUsed::edges(Estimator::counter_integrated_instant, Estimator::counter_samples);
  {
    auto [store, r] = open_run(path);
    run = r;
    WindowResult w = test::sample_window(1, "w", true);
    w.domains[0].estimator = edges;
    ASSERT_TRUE(store.add_window(run, w).ok());
    auto rec = store.load_run(run);
    ASSERT_TRUE(rec.ok()) << rec.error().message();
    EXPECT_EQ(rec->windows.at(0).domains.at(0).estimator, edges);
  }
  EXPECT_EQ(raw_text(path, "SELECT estimator FROM window_domains WHERE position = 0"),
            "counter+integrated(instant)|counter+samples");
  EXPECT_EQ(raw_text(path, "SELECT cross_check_estimator FROM window_domains WHERE position = 0"),
            "integrated(instant)");
  raw_exec(path, "UPDATE window_domains SET estimator = 'counter+guesswork' WHERE position = 0");
  auto store = Store::open(path, OpenMode::read_only);
  ASSERT_TRUE(store.ok());
  auto rec = store->load_run(run);
  ASSERT_FALSE(rec.ok());
  EXPECT_EQ(rec.error().kind, ErrorKind::parse);
  EXPECT_NE(rec.error().message().find("window_domains.estimator"), std::string::npos) << rec.error().message();
  EXPECT_NE(rec.error().message().find("'counter+guesswork'"), std::string::npos) << rec.error().message();
}

// The CLI appends from a flusher thread while the main thread adds windows and events.
TEST(StoreWrite, ConcurrentWritersShareOneStore) {
  test::TempDir dir;
  // Members, not a structured binding: the threads' lambdas capture the store.
  OpenRun opened = open_run(dir.file("runs.db"));
  Store& store = opened.store;
  const RunId run = opened.run;
  constexpr int kBatches = 50;
  constexpr int kPerBatch = 200;
  std::thread flusher([&, r = run] {
    for (int b = 0; b < kBatches; ++b)
      ASSERT_TRUE(store.append_readings(r, readings(b % 2, ReadingKind::power_instant_w, kPerBatch, b)).ok());
  });
  std::thread windows([&, r = run] {
    for (int i = 0; i < kBatches; ++i) {
      ASSERT_TRUE(store.add_window(r, test::sample_window(static_cast<WindowId>(i), "w", true)).ok());
      ASSERT_TRUE(store.append_events(r, std::vector<MeterEvent>{{i, "gpu:0", "power_instant_w", "read_error", "x"}})
                      .ok());
    }
  });
  flusher.join();
  windows.join();
  auto rec = store.load_run(run);
  ASSERT_TRUE(rec.ok());
  EXPECT_EQ(rec->reading_count, kBatches * kPerBatch);
  EXPECT_EQ(rec->windows.size(), static_cast<std::size_t>(kBatches));
  EXPECT_EQ(rec->events.size(), static_cast<std::size_t>(kBatches));
}

TEST(StoreWrite, EndRunCompletesTheRun) {
  test::TempDir dir;
  auto [store, run] = open_run(dir.file("runs.db"));
  EXPECT_FALSE(store.load_run(run)->complete());
  ASSERT_TRUE(store.end_run(run, 4'000'000'000, 3).ok());
  auto rec = store.load_run(run);
  EXPECT_TRUE(rec->complete());
  EXPECT_EQ(rec->state(), "complete");
  EXPECT_EQ(rec->end_t_ns, 4'000'000'000);
  EXPECT_EQ(rec->exit_status, 3);
  EXPECT_DOUBLE_EQ(*rec->dur_s(), 3.0);
}

// A command's arguments and a window's issues are bytes, not always UTF-8: the run is stored
// anyway, with U+FFFD for the bytes that are not.
TEST(StoreWrite, TextThatIsNotUtf8IsStoredWithReplacementCharacters) {
  test::TempDir dir;
  auto store = Store::open(dir.file("runs.db"));
  ASSERT_TRUE(store.ok());
  RunInfo info = test::sample_run_info();
  info.command = {"echo", "a\xff" "b"};
  auto run = store->begin_run(info);
  ASSERT_TRUE(run.ok()) << run.error().message();
  ASSERT_TRUE(store->add_domains(*run, std::vector<Domain>{test::sample_domain("gpu:0")}).ok());
  WindowResult w = test::sample_window(1, "w", true);
  for (auto& d : w.domains) d.issues = {"bad \xc3"};
  ASSERT_TRUE(store->add_window(*run, w).ok());
  auto rec = store->load_run(*run);
  ASSERT_TRUE(rec.ok()) << rec.error().message();
  EXPECT_EQ(rec->info.command.at(1), "a\xef\xbf\xbd" "b");
  ASSERT_FALSE(rec->windows.empty());
  ASSERT_FALSE(rec->windows[0].domains.empty());
  EXPECT_EQ(rec->windows[0].domains[0].issues.at(0), "bad \xef\xbf\xbd");
}

}  // namespace
}  // namespace wattlab
