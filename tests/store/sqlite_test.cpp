#include "store/sqlite.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>

#include "store/store_fixtures.h"

namespace wattlab::sqlite {
namespace {

constexpr int kRw = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

TEST(SqliteError, MapsCodesToKinds) {
  EXPECT_EQ(make_error(SQLITE_NOTADB, "x", "y", "f.db").kind, ErrorKind::parse);
  EXPECT_EQ(make_error(SQLITE_CANTOPEN, "x", "y", "f.db").kind, ErrorKind::not_found);
  EXPECT_EQ(make_error(SQLITE_READONLY, "x", "y", "f.db").kind, ErrorKind::no_permission);
  EXPECT_EQ(make_error(SQLITE_BUSY, "x", "y", "f.db").kind, ErrorKind::unavailable);
  EXPECT_EQ(make_error(SQLITE_IOERR_WRITE, "x", "y", "f.db").kind, ErrorKind::io);
  Error e = make_error(SQLITE_IOERR_WRITE, "x", "y", "f.db");
  EXPECT_EQ(e.vendor_code, SQLITE_IOERR_WRITE);  // the extended code is kept
  EXPECT_NE(e.what.find("f.db"), std::string::npos);
}

TEST(SqliteDb, BindStepAndColumns) {
  test::TempDir dir;
  auto db = Db::open(dir.file("a.db").string(), kRw);
  ASSERT_TRUE(db.ok()) << db.error().message();
  ASSERT_TRUE(db->exec("CREATE TABLE t (i INTEGER, r REAL, s TEXT, n REAL)").ok());
  auto ins = db->prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4)");
  ASSERT_TRUE(ins.ok());
  ins->bind(1, int64_t{-7}).bind(2, 2.5).bind(3, std::string_view("héllo")).bind(4, std::optional<double>{});
  ASSERT_TRUE(ins->run().ok());
  ins->bind(1, int64_t{8}).bind(2, 0.125).bind_static(3, "static").bind(4, std::optional<double>{3.0});
  ASSERT_TRUE(ins->run().ok());
  EXPECT_EQ(db->changes(), 1);

  auto q = db->prepare("SELECT i, r, s, n FROM t ORDER BY i");
  ASSERT_TRUE(q.ok());
  auto row = q->step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(q->int64(0), -7);
  EXPECT_DOUBLE_EQ(q->real(1), 2.5);
  EXPECT_EQ(q->text(2), "héllo");
  EXPECT_FALSE(q->opt_real(3).has_value());
  row = q->step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(q->text(2), "static");
  EXPECT_EQ(q->opt_real(3), std::optional<double>{3.0});
  row = q->step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

TEST(SqliteDb, BadSqlIsAnErrorNamingTheStatement) {
  test::TempDir dir;
  auto db = Db::open(dir.file("a.db").string(), kRw);
  ASSERT_TRUE(db.ok());
  auto q = db->prepare("SELECT nope FROM nowhere");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().what.find("nowhere"), std::string::npos);
  EXPECT_FALSE(db->exec("CREATE TABL x").ok());
}

// Found by fuzz/fuzz_store.cpp: a file whose runs table lacked a column made loading fail as an
// internal error. A missing table or column is the file's fault (parse); bad SQL stays internal.
TEST(SqliteDb, MissingTableOrColumnIsAParseError) {
  test::TempDir dir;
  auto db = Db::open(dir.file("a.db").string(), kRw);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->exec("CREATE TABLE t (x INTEGER)").ok());
  for (const char* sql : {"SELECT nope FROM t", "SELECT x FROM nowhere"}) {
    auto q = db->prepare(sql);
    ASSERT_FALSE(q.ok()) << sql;
    EXPECT_EQ(q.error().kind, ErrorKind::parse) << sql;
    EXPECT_NE(q.error().hint.find("damaged or was not written by wattlab"), std::string::npos);
  }
  auto q = db->prepare("SELEC x FROM t");
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().kind, ErrorKind::internal);
}

TEST(SqliteDb, BindOutOfRangeIsReportedByStep) {
  test::TempDir dir;
  auto db = Db::open(dir.file("a.db").string(), kRw);
  ASSERT_TRUE(db.ok());
  auto q = db->prepare("SELECT ?1");
  ASSERT_TRUE(q.ok());
  q->bind(5, int64_t{1});
  EXPECT_FALSE(q->step().ok());
}

TEST(SqliteDb, NotADatabaseFailsAtFirstStatement) {
  test::TempDir dir;
  auto path = dir.file("text.db");
  std::ofstream(path) << "this is plain text, certainly longer than nothing at all.............................\n"
                      << std::string(600, 'x');
  auto db = Db::open(path.string(), kRw);
  ASSERT_TRUE(db.ok());  // SQLite opens lazily
  auto v = db->query_int64("PRAGMA user_version");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kind, ErrorKind::parse);
  EXPECT_NE(v.error().what.find("is not a SQLite database"), std::string::npos);
}

TEST(SqliteTransaction, RollsBackUnlessCommitted) {
  test::TempDir dir;
  auto db = Db::open(dir.file("a.db").string(), kRw);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(db->exec("CREATE TABLE t (i INTEGER)").ok());
  {
    auto tx = Transaction::begin(*db);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(db->exec("INSERT INTO t VALUES (1)").ok());
  }  // dropped: rolled back
  EXPECT_EQ(*db->query_int64("SELECT count(*) FROM t"), 0);
  {
    auto tx = Transaction::begin(*db);
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(db->exec("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(tx->commit().ok());
  }
  EXPECT_EQ(*db->query_int64("SELECT count(*) FROM t"), 1);
}

}  // namespace
}  // namespace wattlab::sqlite
