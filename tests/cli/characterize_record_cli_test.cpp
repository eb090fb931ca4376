// End-to-end: every window `wattlab sensors --characterize` stores decodes with its record codec
// (src/store/characterize_record.h), on the simulated GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "cli/shell.h"
#include "store/characterize_record.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

using testing::shell;
using testing::wattlab_bin;

TEST(CharacterizeRecordCli, EveryStoredWindowDecodes) {
  const auto dir = std::filesystem::temp_directory_path() / ("wattlab-char-record-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "c.db").string();
  const auto r = shell(wattlab_bin() + " sensors --characterize --device sim --load-s 2 --idle-s 2 --poll-s 0.3 --db " + db);
  ASSERT_EQ(r.rc, 0) << r.out;
  auto store = Store::open(db, OpenMode::read_only);
  ASSERT_TRUE(store) << store.error().message();
  auto run = store->load_run(1);
  ASSERT_TRUE(run) << run.error().message();
  std::size_t idle = 0, readings = 0, loads = 0;
  for (const auto& w : run->windows) {
    if (w.name.starts_with("characterize:idle ")) {
      auto d = CharacterizeIdleRecord::decode(w);
      ASSERT_TRUE(d) << d.error().message();
      EXPECT_GT(d->idle_power_w, 0);
      ++idle;
    } else if (w.name.starts_with("characterize:reading ")) {
      auto d = CharacterizeReadingRecord::decode(w);
      ASSERT_TRUE(d) << d.error().message();
      EXPECT_GT(d->reads, 0);
      ++readings;
    } else {
      auto d = CharacterizeLoadRecord::decode(w);
      ASSERT_TRUE(d) << d.error().message();
      EXPECT_TRUE(d->simulated);
      EXPECT_FALSE(d->rows.empty());
      ++loads;
    }
  }
  EXPECT_EQ(idle, 1u);
  EXPECT_EQ(readings, 16u);
  EXPECT_EQ(loads, 1u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattlab
