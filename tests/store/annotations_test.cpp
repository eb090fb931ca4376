// Store: run tags and window counts/labels (schema version 2), annotating stored windows, and the
// v1 -> v2 migration.
#include <sqlite3.h>
#include <gtest/gtest.h>

#include "store/store_fixtures.h"
#include "report/run_json.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

void raw_exec(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

WindowResult annotated_window(WindowId id) {
  WindowResult w;
  w.id = id;
  w.name = "steady";
  w.t_begin_ns = 2'000'000'000;
  w.t_end_ns = 5'000'000'000;
  w.final = true;
  w.domains = {test::sample_energy("gpu:0")};
  w.counts = {{"tokens", 51200}, {"requests", 100}};
  w.labels = {{"model", "llama-8b"}, {"engine", "bf16"}};
  return w;
}

TEST(StoreAnnotations, TagsCountsAndLabelsRoundTrip) {
  test::TempDir dir;
  auto store = Store::open(dir.file("a.db"));
  ASSERT_TRUE(store.ok()) << store.error().what;
  RunInfo info = test::sample_run_info();
  info.tags = {{"model", "llama-8b"}, {"batch", "64"}};
  auto run = store->begin_run(info);
  ASSERT_TRUE(run.ok());
  Domain d = test::sample_domain("gpu:0");
  ASSERT_TRUE(store->add_domains(*run, std::span(&d, 1)).ok());
  ASSERT_TRUE(store->add_window(*run, annotated_window(1)).ok());
  ASSERT_TRUE(store->set_run_tag(*run, "batch", "128").ok());  // replaces
  ASSERT_TRUE(store->set_run_tag(*run, "gpu_count", "1").ok());

  auto loaded = store->load_run(*run);
  ASSERT_TRUE(loaded.ok()) << loaded.error().what;
  EXPECT_EQ(loaded->info.tags, (std::map<std::string, std::string>{
                                   {"model", "llama-8b"}, {"batch", "128"}, {"gpu_count", "1"}}));
  ASSERT_EQ(loaded->windows.size(), 1u);
  EXPECT_EQ(loaded->windows[0].counts, annotated_window(1).counts);
  EXPECT_EQ(loaded->windows[0].labels, annotated_window(1).labels);

  const auto json = report::run_to_json(*loaded);
  EXPECT_EQ(json["tags"]["batch"], "128");
  EXPECT_EQ(json["windows"][0]["counts"]["tokens"], 51200.0);
  EXPECT_EQ(json["windows"][0]["labels"]["engine"], "bf16");
}

TEST(StoreAnnotations, ReplacingAWindowReplacesItsAnnotations) {
  test::TempDir dir;
  auto store = Store::open(dir.file("a.db"));
  ASSERT_TRUE(store.ok());
  auto run = store->begin_run(test::sample_run_info());
  Domain d = test::sample_domain("gpu:0");
  ASSERT_TRUE(store->add_domains(*run, std::span(&d, 1)).ok());
  ASSERT_TRUE(store->add_window(*run, annotated_window(7)).ok());
  WindowResult again = annotated_window(7);
  again.counts = {{"tokens", 999}};
  again.labels.clear();
  ASSERT_TRUE(store->add_window(*run, again).ok());
  auto loaded = store->load_run(*run);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->windows.size(), 1u);
  EXPECT_EQ(loaded->windows[0].counts, (std::map<std::string, double>{{"tokens", 999}}));
  EXPECT_TRUE(loaded->windows[0].labels.empty());
}

TEST(StoreAnnotations, AnnotatingStoredWindowsSetsTheirLabelsAndCountsAndKeepsTheirEnergy) {
  test::TempDir dir;
  auto store = Store::open(dir.file("a.db"));
  ASSERT_TRUE(store.ok()) << store.error().what;
  auto run = store->begin_run(test::sample_run_info());
  ASSERT_TRUE(run.ok());
  Domain d = test::sample_domain("gpu:0");
  ASSERT_TRUE(store->add_domains(*run, std::span(&d, 1)).ok());
  ASSERT_TRUE(store->add_windows(*run, std::vector{annotated_window(1), annotated_window(2)}).ok());

  const std::vector<WindowAnnotation> notes = {
      {1, {{"role", "repeat"}, {"engine", "fp8"}}, {{"tokens", 7}}},  // replaces engine and tokens
      {2, {{"role", "pilot"}}, {}},
  };
  ASSERT_TRUE(store->annotate_windows(*run, notes).ok());
  auto loaded = store->load_run(*run);
  ASSERT_TRUE(loaded.ok()) << loaded.error().what;
  ASSERT_EQ(loaded->windows.size(), 2u);
  const WindowResult& w1 = loaded->windows[0];
  EXPECT_EQ(w1.labels, (std::map<std::string, std::string>{{"model", "llama-8b"}, {"engine", "fp8"}, {"role", "repeat"}}));
  EXPECT_EQ(w1.counts, (std::map<std::string, double>{{"tokens", 7}, {"requests", 100}}));
  ASSERT_EQ(w1.domains.size(), 1u);
  EXPECT_EQ(w1.domains[0].energy_j, annotated_window(1).domains[0].energy_j);
  EXPECT_EQ(w1.t_end_ns, annotated_window(1).t_end_ns);
  EXPECT_TRUE(w1.final);
  EXPECT_EQ(loaded->windows[1].labels.at("role"), "pilot");
  EXPECT_EQ(loaded->windows[1].counts, annotated_window(2).counts);

  // A window not stored: not_found, and nothing of the batch is stored (one transaction).
  const std::vector<WindowAnnotation> partly = {{1, {{"role", "changed"}}, {}}, {99, {{"role", "x"}}, {}}};
  const Status st = store->annotate_windows(*run, partly);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::not_found);
  EXPECT_NE(st.error().what.find("window 99"), std::string::npos) << st.error().what;
  loaded = store->load_run(*run);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->windows[0].labels.at("role"), "repeat");
  EXPECT_EQ(store->annotate_windows(*run + 1, notes).error().kind, ErrorKind::not_found);
}

TEST(StoreAnnotations, TagOfAnUnknownRunIsNotFound) {
  test::TempDir dir;
  auto store = Store::open(dir.file("a.db"));
  ASSERT_TRUE(store.ok());
  auto s = store->set_run_tag(42, "k", "v");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::not_found);
}

// A file written by schema version 1: drop the v2 tables and set the version back.
void make_version_1(const std::filesystem::path& path) {
  raw_exec(path,
           "DROP TABLE run_tags; DROP TABLE window_counts; DROP TABLE window_labels;"
           "UPDATE meta SET value = '1' WHERE key = 'schema_version'; PRAGMA user_version = 1;");
}

TEST(StoreAnnotations, VersionOneFileReadsReadOnlyAndMigratesReadWrite) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  RunId run = 0;
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok());
    run = *store->begin_run(test::sample_run_info());
    Domain d = test::sample_domain("gpu:0");
    ASSERT_TRUE(store->add_domains(run, std::span(&d, 1)).ok());
    WindowResult w = annotated_window(1);
    w.counts.clear();
    w.labels.clear();
    ASSERT_TRUE(store->add_window(run, w).ok());
  }
  make_version_1(path);
  {
    auto ro = Store::open(path, OpenMode::read_only);
    ASSERT_TRUE(ro.ok()) << ro.error().what;
    auto loaded = ro->load_run(run);
    ASSERT_TRUE(loaded.ok()) << loaded.error().what;
    EXPECT_TRUE(loaded->info.tags.empty());
    EXPECT_EQ(loaded->windows.size(), 1u);
  }
  auto rw = Store::open(path);
  ASSERT_TRUE(rw.ok()) << rw.error().what;
  ASSERT_TRUE(rw->set_run_tag(run, "model", "m").ok());
  auto loaded = rw->load_run(run);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->info.tags.at("model"), "m");
}

}  // namespace
}  // namespace wattlab
