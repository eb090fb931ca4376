// End-to-end: `wattlab gemm run|sweep|study|check` as a user runs them, on the SIMULATED executor
// (virtual clock: a point of 0.5 s window and a few seconds of warm-up takes milliseconds).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/shell.h"

namespace {

using wattlab::testing::Ran;

Ran sh(const std::string& args) { return wattlab::testing::shell(wattlab::testing::wattlab_bin() + " " + args); }

// Small, fast protocol on the virtual clock.
const std::string kFast = " --device sim --window-s 0.5 --warmup-max-s 3";
const std::string kFastSweep = kFast + " --warmup-s 1 --first-warmup-s 2";

class GemmCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-gemm-cli-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  nlohmann::json run_json(int run_id) {
    const auto r = sh("report " + std::to_string(run_id) + " --json --db " + db_);
    EXPECT_EQ(r.rc, 0) << r.out;
    return nlohmann::json::parse(r.out);
  }
  // The point indices stored in runs 1..n, in order, duplicates kept.
  std::vector<int> stored_points(int runs) {
    std::vector<int> pts;
    for (int id = 1; id <= runs; ++id) {
      const auto j = run_json(id);  // kept alive: the loop walks into it
      for (const auto& w : j["windows"]) pts.push_back(std::stoi(w["labels"]["point"].get<std::string>()));
    }
    return pts;
  }
  std::filesystem::path dir_;
  std::string db_;
};

// "N of T points" in a stop or completion line.
std::pair<int, int> done_of_total(const std::string& out, const std::string& prefix) {
  std::smatch m;
  const std::regex re(prefix + R"(: (\d+) of (\d+) points)");
  if (!std::regex_search(out, m, re)) return {-1, -1};
  return {std::stoi(m[1]), std::stoi(m[2])};
}

TEST_F(GemmCli, RunMeasuresOnePointAndStoresItsWindow) {
  const std::string json = (dir_ / "r.json").string();
  const auto r = sh("gemm run" + kFast + " --warmup-min-s 1 --engine bf16 --shape 256 --seed 3 --db " + db_ +
                    " --json " + json);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("SIMULATED", 0), 0u) << "the first line must say SIMULATED:\n" << r.out;
  for (const char* s : {"SIMULATED result", "energy per GEMM:", "mean power:", "TFLOP/s", "SM clock (mean):",
                        "temperature:", "power capped:", "tensor activity:", "rel. error:", "non-finite C:",
                        "warm-up:", "stored as run 1"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  EXPECT_NE(r.out.find("not checked: the SIMULATED executor computes no GEMM output"), std::string::npos);

  const auto j = run_json(1);
  EXPECT_TRUE(j["simulated"].get<bool>());
  ASSERT_EQ(j["windows"].size(), 1u);
  const auto& w = j["windows"][0];
  const auto& l = w["labels"];
  EXPECT_EQ(l["kind"], "gemm_point");
  EXPECT_EQ(l["engine"], "bf16");
  EXPECT_EQ(l["M"], "256");
  EXPECT_EQ(l["N"], "256");
  EXPECT_EQ(l["K"], "256");
  EXPECT_EQ(l["seed"], "3");
  EXPECT_EQ(l["recipe_a"], "normal(mean=0, std=1024)");  // the bf16 reference
  EXPECT_EQ(l["reference"], "1");
  EXPECT_EQ(l["simulated"], "1");
  EXPECT_GT(w["counts"]["energy_per_gemm_j"].get<double>(), 0);
  EXPECT_GT(w["counts"]["gemms"].get<double>(), 0);
  EXPECT_NEAR(w["dur_s"].get<double>(), 0.5, 0.1);
  EXPECT_GE(w["counts"]["warmup_s"].get<double>(), 1.0);
  EXPECT_TRUE(std::filesystem::exists(json));
}

TEST_F(GemmCli, RunWithACustomRecipeIsNotTheReference) {
  const auto r = sh("gemm run" + kFast + " --warmup-min-s 1 --engine fp16 --shape 256 --recipe-a 'normal(std=1) | zero(fraction=0.5)' --db " + db_);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto l = run_json(1)["windows"][0]["labels"];
  EXPECT_EQ(l["recipe_a"], "normal(std=1) | zero(fraction=0.5)");
  EXPECT_EQ(l["reference"], "0");
  EXPECT_EQ(l["engine"], "fp16");
}

TEST_F(GemmCli, SweepStopsAtMaxPointsAndResumesWithoutDuplicates) {
  const std::string sweep = "gemm sweep" + kFastSweep + " --experiment E3,E11 --engines bf16 --shapes 256 --seeds 1,2 "
                            "--max-values 3 --reference-every 2 --db " + db_;
  const auto first = sh(sweep + " --max-points 3");
  ASSERT_EQ(first.rc, 0) << first.out;
  EXPECT_EQ(first.out.rfind("SIMULATED", 0), 0u) << first.out;
  EXPECT_NE(first.out.find("SIMULATED results"), std::string::npos) << first.out;
  const auto [n1, total] = done_of_total(first.out, "stopped after --max-points 3");
  ASSERT_EQ(n1, 3) << first.out;
  ASSERT_GT(total, 6);
  EXPECT_NE(first.out.find("run the same command again to resume"), std::string::npos);

  const auto second = sh(sweep);
  ASSERT_EQ(second.rc, 0) << second.out;
  EXPECT_NE(second.out.find("resuming: 3 of " + std::to_string(total)), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("done:        3 of " + std::to_string(total)), std::string::npos) << second.out;
  EXPECT_EQ(done_of_total(second.out, "sweep complete"), std::make_pair(total, total)) << second.out;

  const auto pts = stored_points(2);
  ASSERT_EQ(pts.size(), static_cast<std::size_t>(total));
  const std::set<int> unique(pts.begin(), pts.end());
  EXPECT_EQ(unique.size(), pts.size()) << "a point was measured twice";
  EXPECT_EQ(*unique.begin(), 0);
  EXPECT_EQ(*unique.rbegin(), total - 1);
  // Both runs carry the same sweep id.
  EXPECT_EQ(run_json(1)["windows"][0]["labels"]["sweep"], run_json(2)["windows"][0]["labels"]["sweep"]);

  const auto third = sh(sweep);
  ASSERT_EQ(third.rc, 0) << third.out;
  EXPECT_NE(third.out.find("nothing to run"), std::string::npos) << third.out;
}

TEST_F(GemmCli, DryRunPrintsThePlanAndMeasuresNothing) {
  const auto r = sh("gemm sweep --dry-run --device sim --experiment E3 --engines bf16,int8 --shapes 256 --seeds 1 "
                    "--max-values 3 --db " + db_);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.rfind("dry run: nothing is measured", 0), 0u) << r.out;
  for (const char* s : {"plan: ", "sweep id:", "estimate:", "engines:     bf16,int8", "index  engine", "n=1", "n=512",
                        "reference=baseline", "normal(mean=0, std=1024)", "256x256x256"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  EXPECT_FALSE(std::filesystem::exists(db_)) << "a dry run writes no database";
  // The table has one line per point: 3 values + 2 references per engine.
  std::size_t rows = 0;
  for (std::size_t p = r.out.find(" planned "); p != std::string::npos; p = r.out.find(" planned ", p + 1)) ++rows;
  EXPECT_EQ(rows, 10u) << r.out;
}

TEST_F(GemmCli, StudyDryRunListsEveryExperimentAndControl) {
  const auto r = sh("gemm study --dry-run --device sim --engines bf16 --shapes 256 --seeds 1 --max-values 2 --db " + db_);
  ASSERT_EQ(r.rc, 0) << r.out;
  for (int i = 1; i <= 15; ++i) EXPECT_NE(r.out.find(" E" + std::to_string(i) + " "), std::string::npos) << "E" << i;
  for (int i = 1; i <= 3; ++i) EXPECT_NE(r.out.find(" X" + std::to_string(i) + " "), std::string::npos) << "X" << i;
  EXPECT_NE(r.out.find("control"), std::string::npos);
  EXPECT_NE(r.out.find("(idle: no kernel)"), std::string::npos);
}

TEST_F(GemmCli, FidelityForcesThePapersSetup) {
  const auto dry = sh("gemm sweep --dry-run --fidelity --device sim --experiment E3 --max-values 2 --db " + db_);
  ASSERT_EQ(dry.rc, 0) << dry.out;
  EXPECT_NE(dry.out.find("FIDELITY mode"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("engines:     fp16acc16"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("shapes:      2048x2048x2048"), std::string::npos) << dry.out;
  const auto bad = sh("gemm sweep --dry-run --fidelity --device sim --experiment E3 --shapes 8192 --db " + db_);
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_NE(bad.out.find("--shapes 8192"), std::string::npos) << bad.out;

  const auto r = sh("gemm run --fidelity --device sim --window-s 0.5 --db " + db_);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("warm-up:           none (fidelity mode)"), std::string::npos) << r.out;
  const auto l = run_json(1)["windows"][0]["labels"];
  EXPECT_EQ(l["engine"], "fp16acc16");
  EXPECT_EQ(l["M"], "2048");
  EXPECT_EQ(l["K"], "2048");
}

TEST_F(GemmCli, BadInputExits2AndNamesTheBadPart) {
  const std::map<std::string, std::string> cases = {
      {"gemm run --device sim --engine bf17 --db " + db_, "bf17"},
      {"gemm run --device sim --shape 12x --db " + db_, "12x"},
      {"gemm run --device sim --engine int8 --shape 100 --db " + db_, "M = 100"},
      {"gemm run --device sim --shape 256 --recipe-a 'normal(mean=0 | sort' --db " + db_, "--recipe-a: bad recipe at column 15"},
      {"gemm run --device sim --shape 256 --engine bf16 --recipe-b 'normal | flip(n=20)' --db " + db_, "--recipe-b"},
      {"gemm sweep --device sim --experiment E99 --db " + db_, "'E99'"},
      {"gemm sweep --device sim --experiment E3 --engines bf16,nope --db " + db_, "nope"},
      {"gemm sweep --device sim --experiment E3 --seeds 1,x --db " + db_, "'x'"},
      {"gemm sweep --device sim --experiment E3 --engines fp8e4m3 --shapes 1000 --db " + db_, "fp8e4m3"},
  };
  for (const auto& [args, part] : cases) {
    const auto r = sh(args);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(part), std::string::npos) << args << " should name " << part << ":\n" << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(db_)) << "bad input stores nothing";
}

TEST_F(GemmCli, CheckNeedsTheGpuExecutor) {
  const auto r = sh("gemm check --device sim --engines bf16 --shapes 256");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("SIMULATED executor computes no GEMM output"), std::string::npos) << r.out;
  EXPECT_EQ(sh("gemm check --device sim --engines bf17").rc, 2);
}

TEST_F(GemmCli, GpuExecutorThatCannotOpenFailsWithItsReason) {
  const auto r = sh("gemm run --device nvml --shape 256 --window-s 0.5 --db " + db_);
  if (r.rc == 0) {
    EXPECT_EQ(r.out.rfind("GPU executor on gpu:", 0), 0u) << r.out;  // a machine with a GPU and a CUDA build
  } else {
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find("unavailable"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("SIMULATED GEMM executor"), std::string::npos) << "--device nvml never falls back:\n" << r.out;
  }
}

TEST_F(GemmCli, BudgetStopsBetweenPointsAndTheSameCommandResumes) {
  // Each SIMULATED point holds a virtual slot of warm-up max + window + 5 s (8.5 s here); a
  // 0.5 minute budget fits a few of them.
  const std::string sweep = "gemm sweep" + kFastSweep + " --experiment E5 --engines bf16 --shapes 256 --seeds 1 "
                            "--max-values 9 --db " + db_;
  const auto first = sh(sweep + " --budget-min 0.5");
  ASSERT_EQ(first.rc, 0) << first.out;
  const auto [n1, total] = done_of_total(first.out, "stopped at budget");
  ASSERT_GT(n1, 0) << first.out;
  ASSERT_LT(n1, total) << first.out;
  EXPECT_NE(first.out.find("run the same command again to resume"), std::string::npos);

  const auto second = sh(sweep + " --budget-min 0.5");
  ASSERT_EQ(second.rc, 0) << second.out;
  const auto [n2, total2] = done_of_total(second.out, "stopped at budget");
  EXPECT_EQ(total2, total);
  EXPECT_GT(n2, n1) << second.out;

  const auto last = sh(sweep + " --budget-min 60");
  ASSERT_EQ(last.rc, 0) << last.out;
  EXPECT_EQ(done_of_total(last.out, "sweep complete"), std::make_pair(total, total)) << last.out;
  const auto pts = stored_points(3);
  EXPECT_EQ(pts.size(), static_cast<std::size_t>(total));
  EXPECT_EQ(std::set<int>(pts.begin(), pts.end()).size(), pts.size());
}

}  // namespace
