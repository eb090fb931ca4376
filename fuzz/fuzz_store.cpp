// Fuzzes the store loader (src/store/store_load.cpp, schema.cpp, codec.cpp) and the diagnosis's
// store reader (src/diagnose/store_reader.cpp): the input is written as an SQLite file to a
// temporary directory and opened read-only. A file that is not a wattlab store, or holds malformed
// columns, gives an error (a UsageError from the reader); nothing else may escape, crash or hang.
#include <sqlite3.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "fuzz_check.h"
#include "wattlab/core/error.h"
#include "diagnose/readers.h"
#include "wattlab/store/store.h"

namespace {

namespace fs = std::filesystem;

// One directory per fuzzing process, removed at exit.
const fs::path& scratch_dir() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "wattlab-fuzz-store-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch_dir(), ec);
    });
    return fs::path(tmpl);
  }();
  return dir;
}

void remove_db(const fs::path& db) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(db.string() + suffix, ec);
}

void load_everything(const wattlab::Store& store) {
  auto runs = store.list_runs();
  if (!runs) return;
  (void)store.latest_run_id();
  for (const auto& summary : *runs) {
    auto run = store.load_run(summary.run_id);
    if (!run) continue;
    for (std::size_t d = 0; d < run->domains.size() && d < 8; ++d)
      for (std::size_t k = 0; k < wattlab::kReadingKindCount; ++k)
        (void)store.load_readings(run->run_id, static_cast<uint32_t>(d), static_cast<wattlab::ReadingKind>(k),
                                  std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A corrupt file makes SQLite log through its error log; the fuzzer's output stays readable without.
  sqlite3_config(SQLITE_CONFIG_LOG, nullptr, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const fs::path db = scratch_dir() / "fuzz.db";
  remove_db(db);
  {
    std::ofstream out(db, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    wattlab::fuzz::check(static_cast<bool>(out), "cannot write " + db.string());
  }
  if (auto store = wattlab::Store::open(db, wattlab::OpenMode::read_only)) load_everything(*store);
  try {
    for (const auto& r : wattlab::diagnose::read_store(db.string()).rows) (void)wattlab::diagnose::record_to_json(r);
  } catch (const wattlab::UsageError&) {
  }
  remove_db(db);
  return 0;
}
