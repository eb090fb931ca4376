// End-to-end: `wattlab run`, `report` and `sensors` as a user runs them, on the simulated GPU.
#include <gtest/gtest.h>

#include "cli/shell.h"
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace {

using wattlab::testing::Ran;

Ran sh(const std::string& args) { return wattlab::testing::shell(wattlab::testing::wattlab_bin() + " " + args); }

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-run-cli-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string db_;
};

TEST_F(RunCli, MeasuresTheSimulatedGpuStoresAndReportsIt) {
  const std::string json = (dir_ / "r.json").string();
  const auto r = sh("run --device sim --sim-workload 'step 400W 60s' --db " + db_ + " --json " + json + " -- sleep 1.5");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("wattlab run: SIMULATED GPU", 0), 0u) << "first line must say SIMULATED:\n" << r.out;
  EXPECT_NE(r.out.find("gpu:0*"), std::string::npos) << r.out;
  std::ifstream f(json);
  const auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j["schema"], "wattlab.run/1");
  const auto& d = j["windows"][0]["domains"][0];
  EXPECT_TRUE(d["simulated"].get<bool>());
  const double e = d["energy_j"].get<double>(), dur = j["windows"][0]["dur_s"].get<double>();
  // The board's gain is within ±3%; the sensor claims ±5% systematic on top of the window's own.
  EXPECT_NEAR(e, 400.0 * dur, d["uncertainty_j"].get<double>() + d["systematic_j"].get<double>()) << d.dump();
  const auto rep = sh("report latest --db " + db_);
  EXPECT_EQ(rep.rc, 0);
  EXPECT_NE(rep.out.find("sleep 1.5"), std::string::npos);
  EXPECT_NE(rep.out.find("SIMULATED"), std::string::npos);
  EXPECT_EQ(sh("report latest --json --db " + db_).rc, 0);
}

TEST_F(RunCli, ReportsTheSamplersCpuAsAShareOfOneCore) {
  const std::string json = (dir_ / "r.json").string();
  const auto r = sh("run --device sim --db " + db_ + " --json " + json + " -- sleep 1");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("wattlab CPU: sampler thread "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("tags: wattlab."), std::string::npos) << "cost tags are not user tags:\n" << r.out;
  std::ifstream f(json);
  const auto tags = nlohmann::json::parse(f)["tags"];
  const double span_s = std::stod(tags["wattlab.sampler_span_s"].get<std::string>());
  const double cpu_s = std::stod(tags["wattlab.sampler_cpu_s"].get<std::string>());
  const double pct = std::stod(tags["wattlab.sampler_cpu_pct"].get<std::string>());
  const double proc_s = std::stod(tags["wattlab.process_cpu_s"].get<std::string>());
  EXPECT_GE(span_s, 1.0);  // the sampler ran at least as long as `sleep 1`
  EXPECT_GT(cpu_s, 0.0);   // it read the simulated sensors
  EXPECT_LE(cpu_s, proc_s);  // the sampler is one thread of the process
  EXPECT_NEAR(pct, 100.0 * cpu_s / span_s, 1e-3);
  EXPECT_NEAR(std::stod(tags["wattlab.process_cpu_pct"].get<std::string>()), 100.0 * proc_s / span_s, 1e-3);
}

TEST_F(RunCli, ExitStatusIsTheCommands) {
  EXPECT_EQ(sh("run --device sim --db " + db_ + " -- sh -c 'exit 7'").rc, 7);
  const auto r = sh("run --device sim --db " + db_ + " -- /no/such/program");
  EXPECT_EQ(r.rc, 127);
  EXPECT_NE(r.out.find("cannot start '/no/such/program'"), std::string::npos) << r.out;
}

TEST_F(RunCli, VersionNamesTheCommitTheBinaryWasBuiltFrom) {
  // Binaries are carried to the GPU machine, whose copy of the tree may carry other git metadata.
  const auto r = sh("--version");
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("wattlab 0.1.0 (commit ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("commit )"), std::string::npos) << r.out;
}

TEST_F(RunCli, BadUsageExitsTwoAndNamesTheProblem) {
  auto r = sh("run --device sim --db " + db_);
  EXPECT_EQ(r.rc, 2);
  r = sh("run --interval-ms abc --db " + db_ + " -- true");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("--interval-ms"), std::string::npos) << r.out;
  r = sh("run --device quantum -- true");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("quantum"), std::string::npos) << r.out;
  r = sh("run --device sim --sim-workload 'jump 3s' --db " + db_ + " -- true");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("unknown segment 'jump'"), std::string::npos) << r.out;
  EXPECT_EQ(sh("report notanumber --db " + db_).rc, 2);
  EXPECT_EQ(sh("report 5 --db " + (dir_ / "missing.db").string()).rc, 2);
}

TEST_F(RunCli, SensorsListsTheSimulatedModel) {
  const auto r = sh("sensors --device sim");
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("energy_counter_j"), std::string::npos);
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos);
}

TEST_F(RunCli, KilledRunLeavesAReadableDatabase) {
  // SIGKILL wattlab itself mid-run: everything up to its last flush (every 500 ms) must be there.
  const std::string cmd = std::string(std::getenv("WATTLAB_BIN")) + " run --device sim --db " + db_ + " -- sleep 30";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, which `sleep 30` joins: the kill below takes both and nothing else
    ::execl("/bin/sh", "sh", "-c", ("exec " + cmd + " 2>/dev/null").c_str(), nullptr);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists whichever of the two runs first
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // real time: the run under test
  ::kill(-pid, SIGKILL);
  int st = 0;
  ::waitpid(pid, &st, 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM readings", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_GT(sqlite3_column_int64(s, 0), 50);  // 2 s of 20 ms power reads and more
  sqlite3_finalize(s);
  sqlite3_close(db);
  const auto rep = sh("report latest --db " + db_);
  EXPECT_EQ(rep.rc, 0) << rep.out;
  EXPECT_NE(rep.out.find("incomplete"), std::string::npos) << rep.out;
}

}  // namespace
