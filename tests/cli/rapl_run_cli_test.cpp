// End-to-end: `wattlab run --device rapl` on a fake powercap tree that a scripted "CPU" drives.
// The command under measurement (data/powercap_driver.py) adds a known energy to each zone,
// wrapping the counters several times; wattlab's energy must match it within 0.1%.
#include <gtest/gtest.h>

#include "cli/shell.h"
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

namespace fs = std::filesystem;

using wattlab::testing::Ran;

Ran sh(const std::string& args) { return wattlab::testing::shell(wattlab::testing::wattlab_bin() + " " + args); }

void put(const fs::path& file, const std::string& content) {
  std::ofstream out(file, std::ios::trunc);
  out << content << "\n";
  ASSERT_TRUE(out.good()) << file;
}

void add_zone(const fs::path& root, const std::string& zone, const std::string& name, uint64_t range_uj,
              uint64_t energy_uj, const std::string& max_power_uw = "") {
  fs::create_directories(root / zone);
  put(root / zone / "name", name);
  put(root / zone / "max_energy_range_uj", std::to_string(range_uj));
  put(root / zone / "energy_uj", std::to_string(energy_uj));
  put(root / zone / "enabled", "1");
  if (!max_power_uw.empty()) {
    put(root / zone / "constraint_0_name", "long_term");
    put(root / zone / "constraint_0_max_power_uw", max_power_uw);
  }
}

TEST(RaplRunCli, CpuEnergyMatchesTheScriptedTruthWithinATenthOfAPercent) {
  const fs::path dir = fs::temp_directory_path() / ("wattlab-rapl-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path root = dir / "powercap";
  // Small ranges so the run wraps: ~109.5 J over a 30 J package range, 18 J over a 5 J dram range.
  add_zone(root, "intel-rapl:0", "package-0", 30'000'000, 29'000'000, "250000000");
  add_zone(root, "intel-rapl:0:0", "dram", 5'000'000, 4'900'000);
  const fs::path driver = fs::path(WATTLAB_SOURCE_DIR) / "tests" / "cli" / "data" / "powercap_driver.py";
  const std::string truth_file = (dir / "truth.json").string(), json_file = (dir / "run.json").string();

  const auto r = sh("run --device rapl --powercap-root " + root.string() + " --db " + (dir / "t.db").string() +
                    " --json " + json_file + " -- python3 " + driver.string() + " " + root.string() + " " + truth_file);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("SIMULATED"), std::string::npos) << "a powercap tree is not the sim device:\n" << r.out;

  std::ifstream tf(truth_file), jf(json_file);
  const auto truth = nlohmann::json::parse(tf);
  const auto run = nlohmann::json::parse(jf);
  ASSERT_EQ(run["windows"].size(), 1u) << run.dump(1);
  const auto& domains = run["windows"][0]["domains"];
  const std::array<std::pair<const char*, const char*>, 2> zones = {
      {{"intel-rapl:0", "cpu:0/package"}, {"intel-rapl:0:0", "cpu:0/dram"}}};
  for (const auto& [zone, id] : zones) {
    const double truth_j = truth[zone]["energy_j"].get<double>();
    EXPECT_GE(truth[zone]["wraps"].get<int>(), 3) << zone;
    const nlohmann::json* found = nullptr;
    for (const auto& d : domains)
      if (d["domain_id"] == id) found = &d;
    ASSERT_NE(found, nullptr) << id << " missing:\n" << domains.dump(1);
    ASSERT_TRUE((*found)["available"].get<bool>()) << found->dump(1);
    const double e = (*found)["energy_j"].get<double>();
    EXPECT_NEAR(e, truth_j, 1e-3 * truth_j) << id << ": wattlab " << e << " J, truth " << truth_j << " J\n"
                                            << found->dump(1);
    // And the claim covers the truth.
    EXPECT_LE(std::abs(e - truth_j), (*found)["uncertainty_j"].get<double>() + 1e-6) << found->dump(1);
  }
  fs::remove_all(dir);
}

}  // namespace
