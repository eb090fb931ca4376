// `wattlab run` on a store that fills up mid-run: the file size limit (ulimit -f, SIGXFSZ
// ignored) stops the -wal file from growing, so SQLite's commits fail with an I/O error, at the
// same point every time. The failure is said naming the file, the summary and --json still hold
// the command's energy, and the exit status is 74 when the command succeeded (its own otherwise).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/shell.h"

namespace wattlab {
namespace {

using testing::shell;
using testing::wattlab_bin;

class StoreFullCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wattlab_bin().empty()) GTEST_SKIP() << "WATTLAB_BIN is not set (run through ctest)";
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-store-full-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "full.db").string();
    // The store exists first (its schema written without a limit): the limit then leaves the
    // -wal file ~100 KiB, enough to begin the run and too little for 3 s of readings.
    const auto r = shell(wattlab_bin() + " run --device sim --db " + db_ + " -- true");
    ASSERT_EQ(r.rc, 0) << r.out;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  testing::Ran run_limited(const std::string& command, const std::string& json) {
    const auto limit_kib = (std::filesystem::file_size(db_) + 16 * 1024) / 1024;
    return shell("bash -c \"trap '' XFSZ; ulimit -f " + std::to_string(limit_kib) + "; " + wattlab_bin() +
                 " run --device sim --db " + db_ + " --json " + json + " -- " + command + "\"");
  }
  std::filesystem::path dir_;
  std::string db_;
};

TEST_F(StoreFullCli, AFullStoreIsSaidTheEnergyStillComesOutAndTheExitStatusIs74) {
  const std::string json = (dir_ / "run.json").string();
  const auto r = run_limited("sleep 3", json);
  EXPECT_EQ(r.rc, 74) << r.out;
  EXPECT_NE(r.out.find("storing the run failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(db_), std::string::npos) << "names the file: " << r.out;
  EXPECT_NE(r.out.find("I/O error"), std::string::npos) << "names SQLite's error: " << r.out;
  EXPECT_NE(r.out.find("is incomplete: the store failed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("stored as run"), std::string::npos) << r.out;
  std::ifstream f(json);
  const auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j.at("exit_status"), 0);
  bool run = false;
  for (const auto& w : j.at("windows")) {
    if (w.at("name") != "run") continue;
    run = true;
    EXPECT_TRUE(w.at("final").get<bool>());
    EXPECT_GT(w.at("domains")[0].at("energy_j").get<double>(), 0.0) << w.dump();
  }
  EXPECT_TRUE(run) << "the command's window reaches --json although the store lacks it: " << j.dump();
}

TEST_F(StoreFullCli, AFailedCommandKeepsItsOwnStatus) {
  const auto r = run_limited("sh -c 'sleep 3; exit 3'", (dir_ / "run.json").string());
  EXPECT_EQ(r.rc, 3) << r.out;
  EXPECT_NE(r.out.find("storing the run failed"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace wattlab
