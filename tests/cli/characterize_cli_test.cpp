// End-to-end: `wattlab sensors --characterize` as a user runs it, on the simulated GPU (which the
// command runs on a virtual clock), and its bad-usage exits.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/shell.h"

namespace {

using wattlab::testing::shell;
using wattlab::testing::wattlab_bin;

class CharacterizeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-char-cli-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(CharacterizeCli, SimulatedRunPrintsStoresAndWritesJson) {
  const std::string db = (dir_ / "c.db").string(), json = (dir_ / "c.json").string();
  const auto r = shell(wattlab_bin() + " sensors --characterize --device sim --load-s 4 --idle-s 3 --poll-s 0.5 --db " +
                       db + " --json " + json);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("SIMULATED gpu:0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("power_instant_w"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sample buffer spacing: 20.00 ms"), std::string::npos) << r.out;
  std::ifstream f(json);
  const auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j["schema"], "wattlab.characterize/1");
  EXPECT_TRUE(j["simulated"].get<bool>());
  const auto& d = j["domains"][0];
  EXPECT_NEAR(d["idle"]["power_w"].get<double>(), 75.0, 4.0);
  EXPECT_NEAR(d["readings"][0]["update_period_ms"]["median"].get<double>(), 100.0, 5.0);
  ASSERT_TRUE(d["load"]["ran"].get<bool>());
  EXPECT_NEAR(d["load"]["counter_power_w"].get<double>(), 600.0 * 1.03, 0.06 * 600);  // board gain within ±3%
  // The store: one run tagged as a characterization, with its windows.
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  auto count = [&](const char* sql) {
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(h, sql, -1, &q, nullptr);
    int64_t n = -1;
    if (sqlite3_step(q) == SQLITE_ROW) n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return n;
  };
  EXPECT_EQ(count("SELECT COUNT(*) FROM windows WHERE name LIKE 'characterize:load%'"), 1);
  EXPECT_EQ(count("SELECT COUNT(*) FROM windows WHERE name LIKE 'characterize:reading%'"), 16);
  EXPECT_GT(count("SELECT COUNT(*) FROM readings"), 100);
  sqlite3_close(h);
}

TEST_F(CharacterizeCli, BadValuesExit2) {
  for (const char* bad : {"--load-s 0", "--load-s x", "--idle-s 1", "--poll-s 100", "--load-s 5000"}) {
    const auto r = shell(wattlab_bin() + " sensors --characterize --device sim " + bad + " --db " + (dir_ / "x.db").string());
    EXPECT_EQ(r.rc, 2) << bad << "\n" << r.out;
  }
  // Characterization options without --characterize are bad usage too.
  EXPECT_EQ(shell(wattlab_bin() + " sensors --device sim --load-s 5").rc, 2);
  // A bad sim load script names itself.
  const auto r = shell(wattlab_bin() + " sensors --characterize --device sim --sim-load 'jump 5W' --db " +
                       (dir_ / "y.db").string());
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("jump"), std::string::npos) << r.out;
}

}  // namespace
