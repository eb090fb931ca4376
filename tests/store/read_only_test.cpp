// A store on a read-only file system: SQLite cannot make the -shm file a WAL reader needs, so a
// plain read-only open fails ("unable to open database file"); Store::open(read_only) reads it
// as immutable instead, for report and diagnose. The read-only mount is the fault VFS's.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "store/fault_vfs.h"
#include "store/store_fixtures.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

TEST(ReadOnlyStore, OnAReadOnlyFileSystemItIsReadAsImmutable) {
  auto& vfs = test::FaultVfs::install();
  vfs.clear();
  test::TempDir dir;
  const auto db = dir.file("ro.db");
  RunId id = 0;
  {
    auto s = Store::open(db);
    ASSERT_TRUE(s.ok()) << s.error().message();
    auto r = s->begin_run(test::sample_run_info());
    ASSERT_TRUE(r.ok());
    id = *r;
    WindowResult w;
    w.id = 7;
    w.name = "step";
    w.final = true;
    ASSERT_TRUE(s->add_window(id, w).ok());
    ASSERT_TRUE(s->end_run(id, 2'000'000'000, 0).ok());
  }  // the last connection closes: no -wal or -shm file is left
  vfs.read_only_fs = true;

  // What SQLite alone does there: the defect this open works around.
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  if (rc == SQLITE_OK) rc = sqlite3_exec(raw, "SELECT count(*) FROM runs", nullptr, nullptr, nullptr);
  sqlite3_close_v2(raw);
  EXPECT_NE(rc, SQLITE_OK) << "the fault VFS must make a plain read-only open fail as a read-only mount does";

  auto s = Store::open(db, OpenMode::read_only);
  ASSERT_TRUE(s.ok()) << s.error().message();
  auto r = s->load_run(id);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_TRUE(r->complete());
  ASSERT_EQ(r->windows.size(), 1u);
  EXPECT_EQ(r->windows[0].name, "step");
  EXPECT_EQ(s->path(), db);

  // Writing there still fails, and says why.
  auto w = Store::open(db);
  EXPECT_FALSE(w.ok());
  vfs.clear();
}

TEST(ReadOnlyStore, AMissingFileIsStillNotFound) {
  auto& vfs = test::FaultVfs::install();
  vfs.clear();
  test::TempDir dir;
  vfs.read_only_fs = true;
  auto s = Store::open(dir.file("missing.db"), OpenMode::read_only);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::not_found) << s.error().message();
  vfs.clear();
}

}  // namespace
}  // namespace wattlab
