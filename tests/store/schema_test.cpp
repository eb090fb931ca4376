#include "store/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/store_fixtures.h"

namespace wattlab::store_detail {
namespace {

constexpr int kRw = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

TEST(Schema, CreatesVersionedSchemaInWalMode) {
  test::TempDir dir;
  auto db = sqlite::Db::open(dir.file("s.db").string(), kRw);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(prepare_schema(*db, false, "9.9.9").ok());
  EXPECT_EQ(*db->query_int64("PRAGMA user_version"), kSchemaVersion);
  EXPECT_EQ(*db->query_text("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(*db->query_int64("PRAGMA synchronous"), 1);  // NORMAL
  EXPECT_EQ(*db->query_text("SELECT value FROM meta WHERE key = 'created_by'"), "wattlab 9.9.9");
  EXPECT_EQ(*db->query_text("SELECT value FROM meta WHERE key = 'schema_version'"), std::to_string(kSchemaVersion));
  for (const char* table : {"runs", "domains", "readings", "telemetry", "windows", "window_domains", "events"}) {
    auto n = db->query_int64(std::string("SELECT count(*) FROM sqlite_schema WHERE type='table' AND name='") + table +
                             "'");
    EXPECT_EQ(*n, 1) << table;
  }
  // Opening again is a no-op.
  ASSERT_TRUE(prepare_schema(*db, false, "9.9.9").ok());
}

TEST(Schema, RangeQueryOfReadingsUsesTheIndex) {
  test::TempDir dir;
  auto db = sqlite::Db::open(dir.file("s.db").string(), kRw);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(prepare_schema(*db, false, "0").ok());
  for (const char* table : {"readings", "telemetry"}) {
    auto plan = db->prepare(std::string("EXPLAIN QUERY PLAN SELECT t_ns, value FROM ") + table +
                            " WHERE run_id = 1 AND domain_index = 0 AND kind = 'x' AND t_ns BETWEEN 5 AND 9"
                            " ORDER BY t_ns");
    ASSERT_TRUE(plan.ok());
    std::string detail;
    while (*plan->step()) detail += plan->text(3) + "\n";
    EXPECT_NE(detail.find("USING INDEX " + std::string(table)), std::string::npos) << detail;
    EXPECT_EQ(detail.find("TEMP B-TREE"), std::string::npos) << "sorted by the index, not afterwards: " << detail;
  }
}

TEST(Schema, NewerVersionIsASchemaErrorAndTheFileIsUntouched) {
  test::TempDir dir;
  auto path = dir.file("new.db").string();
  {
    auto db = sqlite::Db::open(path, kRw);
    ASSERT_TRUE(prepare_schema(*db, false, "0.1.0").ok());
    ASSERT_TRUE(db->exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1)).ok());
    ASSERT_TRUE(db->exec("PRAGMA journal_mode = DELETE").ok());
  }
  auto db = sqlite::Db::open(path, kRw);
  Status s = prepare_schema(*db, false, "0.1.0");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::schema);
  EXPECT_EQ(s.error().vendor_code, kSchemaVersion + 1);
  EXPECT_NE(s.error().what.find(path + " was written by schema version " + std::to_string(kSchemaVersion + 1)),
            std::string::npos)
      << s.error().what;
  EXPECT_NE(s.error().what.find("this wattlab reads up to " + std::to_string(kSchemaVersion) + ": upgrade wattlab"),
            std::string::npos)
      << s.error().what;
  EXPECT_EQ(*db->query_text("PRAGMA journal_mode"), "delete");  // not switched to WAL
}

TEST(Schema, ForeignDatabaseIsNotAStore) {
  test::TempDir dir;
  auto db = sqlite::Db::open(dir.file("other.db").string(), kRw);
  ASSERT_TRUE(db->exec("CREATE TABLE photos (id INTEGER)").ok());
  Status s = prepare_schema(*db, false, "0.1.0");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::parse);
  EXPECT_NE(s.error().what.find("not a wattlab store"), std::string::npos);
}

TEST(Schema, VersionWithoutMetaIsNotAStore) {
  test::TempDir dir;
  auto db = sqlite::Db::open(dir.file("other.db").string(), kRw);
  ASSERT_TRUE(db->exec("CREATE TABLE t (id INTEGER); PRAGMA user_version = 1").ok());
  Status s = prepare_schema(*db, true, "0.1.0");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::parse);
}

TEST(Schema, ColumnListMatchesTable) {
  test::TempDir dir;
  auto db = sqlite::Db::open(dir.file("s.db").string(), kRw);
  ASSERT_TRUE(prepare_schema(*db, false, "0").ok());
  EXPECT_EQ(*db->query_int64("SELECT count(*) FROM pragma_table_info('window_domains')"),
            2 + kWindowDomainColumnCount);
  EXPECT_TRUE(db->prepare("SELECT " + window_domain_columns() + " FROM window_domains").ok());
}

}  // namespace
}  // namespace wattlab::store_detail
