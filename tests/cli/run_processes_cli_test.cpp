// End-to-end: `wattlab run` over the fake NVML that lists the command itself (the pid it writes)
// and another tenant: the split per process, the command's tree apart from other tenants, in text
// and JSON; nothing new on the simulated GPU; a bad idle power is a usage error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/shell.h"

namespace {

using wattlab::testing::Ran;

class RunProcessesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-run-proc-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Ran run(const std::string& script, const std::string& args) {
    const auto path = dir_ / "nvml.txt";
    std::ofstream(path) << script;
    return wattlab::testing::shell("WATTLAB_FAKE_NVML_SCRIPT=" + path.string() + " WATTLAB_NVML_LIBRARY=" +
                                   WATTLAB_FAKE_NVML + " " + wattlab::testing::wattlab_bin() + " run " + args);
  }
  std::filesystem::path dir_;
};

TEST_F(RunProcessesCli, SplitsTheGpuBetweenTheCommandsTreeAndAnotherTenant) {
  const std::string pidfile = (dir_ / "pid").string(), json = (dir_ / "r.json").string();
  // The command (pid written to pidfile) holds 60 % of the SMs, pid 1 (not ours) 20 %.
  const auto r = run("gpus=1\ngpu.0.power_w=400\ngpu.0.util_gpu_pct=80\ngpu.0.processes=@" + pidfile +
                         ":60:1:1000;1:20:1:1000\n",
                     "--device nvml --db " + (dir_ / "t.db").string() + " --json " + json +
                         " --idle-power-w 100 --idle-power-u95-w 5 --process-interval-ms 100 -- sh -c 'echo $$ > " +
                         pidfile + "; sleep 2; true'");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("energy per process"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the command's process tree"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("other tenants"), std::string::npos) << r.out;

  std::ifstream pf(pidfile);
  unsigned child = 0;
  ASSERT_TRUE(pf >> child);
  std::ifstream f(json);
  const auto j = nlohmann::json::parse(f);
  ASSERT_TRUE(j.contains("per_process")) << j.dump();
  ASSERT_EQ(j["per_process"].size(), 1u);
  const auto& g = j["per_process"][0];
  EXPECT_EQ(g["gpu"], "gpu:0");
  const double dur_s = j["windows"][0]["dur_s"].get<double>();
  const auto& total = j["windows"][0]["domains"][0];
  EXPECT_DOUBLE_EQ(g["total"]["energy_j"].get<double>(), total["energy_j"].get<double>());
  EXPECT_NEAR(g["idle"]["energy_j"].get<double>(), 100 * dur_s, 1e-6 * 100 * dur_s);
  EXPECT_EQ(g["idle"]["source"], "--idle-power-w");
  bool saw_child = false, saw_init = false;
  for (const auto& p : g["processes"]) {
    if (p["pid"] == child) {
      saw_child = true;
      EXPECT_TRUE(p["in_command_tree"].get<bool>()) << p.dump();
    }
    if (p["pid"] == 1) {
      saw_init = true;
      EXPECT_FALSE(p["in_command_tree"].get<bool>()) << p.dump();
    }
  }
  EXPECT_TRUE(saw_child && saw_init) << g.dump();
  const double tree = g["command_tree"]["energy_j"].get<double>(), others = g["other_tenants"]["energy_j"].get<double>();
  EXPECT_GT(tree, others) << g.dump();  // 60 % against 20 % while both ran
  const double sum = g["idle"]["energy_j"].get<double>() + tree + others + g["unattributed"]["energy_j"].get<double>();
  EXPECT_NEAR(sum, g["total"]["energy_j"].get<double>(), 1e-6 * sum);
  EXPECT_GT(g["command_tree"]["u95_j"].get<double>() / tree,
            g["total"]["u95_j"].get<double>() / g["total"]["energy_j"].get<double>());
}

TEST_F(RunProcessesCli, SimulatedGpuShowsNothingNew) {
  const std::string json = (dir_ / "r.json").string();
  const auto r = wattlab::testing::shell(wattlab::testing::wattlab_bin() + " run --device sim --db " +
                                         (dir_ / "t.db").string() + " --json " + json + " -- true");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("per process"), std::string::npos) << r.out;
  std::ifstream f(json);
  EXPECT_FALSE(nlohmann::json::parse(f).contains("per_process"));
}

TEST_F(RunProcessesCli, NegativeIdlePowerIsAUsageError) {
  const auto r = wattlab::testing::shell(wattlab::testing::wattlab_bin() + " run --device sim --db " +
                                         (dir_ / "t.db").string() + " --idle-power-w -5 -- true");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("--idle-power-w"), std::string::npos) << r.out;
}

}  // namespace
