// Crash safety: a writer killed with SIGKILL leaves a database that opens and holds every batch it
// committed. The child reports each commit through a pipe; the parent kills it at an arbitrary
// point (often mid-transaction) and checks the file. Nothing here depends on timing.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cerrno>
#include <cstdint>
#include <optional>

#include "store/store_fixtures.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

constexpr int64_t kBatch = 5'000;  // readings per commit, like one flush of a busy meter

bool write_all(int fd, int64_t v) {
  const char* p = reinterpret_cast<const char*>(&v);
  std::size_t left = sizeof v;
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads one whole int64, or nothing at end of stream.
std::optional<int64_t> read_one(int fd) {
  int64_t v = 0;
  char* p = reinterpret_cast<char*>(&v);
  std::size_t got = 0;
  while (got < sizeof v) {
    ssize_t n = ::read(fd, p + got, sizeof v - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // a torn last value counts as not reported
    got += static_cast<std::size_t>(n);
  }
  return v;
}

// The child: the flusher of a `wattlab run`, appending until killed. Exit codes flag setup failures.
[[noreturn]] void writer_child(const std::string& path, int fd) {
  auto store = Store::open(path);
  if (!store) ::_exit(10);
  auto run = store->begin_run(test::sample_run_info());
  if (!run) ::_exit(11);
  if (!store->add_domains(*run, std::vector<Domain>{test::sample_domain("gpu:0")})) ::_exit(12);
  if (!write_all(fd, *run)) ::_exit(13);
  std::vector<TimedReading> batch(static_cast<std::size_t>(kBatch));
  int64_t committed = 0;
  for (int64_t b = 0; b < 1'000'000; ++b) {  // bounded, in case the parent is gone
    for (int64_t i = 0; i < kBatch; ++i)
      batch[static_cast<std::size_t>(i)] = {0, Reading{committed + i, ReadingKind::power_instant_w, 1.0, 2}};
    if (!store->append_readings(*run, batch)) ::_exit(14);
    committed += kBatch;
    if (!write_all(fd, committed)) ::_exit(0);
  }
  ::_exit(15);
}

struct Killed {
  RunId run = 0;
  int64_t last_reported = 0;
};

// Runs one writer, kills it after it reported at least `min_batches` commits.
Killed run_and_kill(const std::string& path, int64_t min_batches) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    writer_child(path, fds[1]);
  }
  ::close(fds[1]);
  Killed k;
  auto run = read_one(fds[0]);
  EXPECT_TRUE(run.has_value()) << "the writer failed before its first batch";
  k.run = run.value_or(0);
  while (auto count = read_one(fds[0])) {
    k.last_reported = *count;
    if (*count >= min_batches * kBatch) break;
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child exit status " << status;
  // Counts written between our last read and the kill were committed too.
  while (auto count = read_one(fds[0])) k.last_reported = *count;
  ::close(fds[0]);
  return k;
}

std::string integrity(const std::string& path) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* q = nullptr;
  std::string out = "(no answer)";
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &q, nullptr) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
    out = reinterpret_cast<const char*>(sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(db);
  return out;
}

TEST(StoreCrash, SigkilledWriterKeepsEveryCommittedBatch) {
  test::TempDir dir;
  const std::string path = dir.file("killed.db").string();
  std::vector<Killed> kills;
  // Several writers in turn on one file: each must also be able to write after the last one died.
  for (int64_t min_batches : {3, 10, 25}) {
    kills.push_back(run_and_kill(path, min_batches));
    ASSERT_GE(kills.back().last_reported, min_batches * kBatch);
  }

  EXPECT_EQ(integrity(path), "ok");
  auto store = Store::open(path, OpenMode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto runs = store->list_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), kills.size());
  for (const Killed& k : kills) {
    auto rec = store->load_run(k.run);
    ASSERT_TRUE(rec.ok()) << rec.error().message();
    EXPECT_FALSE(rec->complete());
    EXPECT_EQ(rec->state(), "incomplete");
    EXPECT_FALSE(rec->exit_status.has_value());
    ASSERT_EQ(rec->domains.size(), 1u);
    // Every reported batch is there; at most the one batch committed but not yet reported is extra.
    EXPECT_GE(rec->reading_count, k.last_reported);
    EXPECT_LE(rec->reading_count, k.last_reported + kBatch);
    EXPECT_EQ(rec->reading_count % kBatch, 0) << "a batch was stored in part";
    auto stored = store->load_readings(k.run, 0, ReadingKind::power_instant_w, INT64_MIN, INT64_MAX);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(static_cast<int64_t>(stored->size()), rec->reading_count);
    EXPECT_EQ(stored->back().t_ns, rec->reading_count - 1);
  }
}

}  // namespace
}  // namespace wattlab
