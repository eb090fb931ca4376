// End-to-end: `wattlab run --device sim --marks -- CMD` with the Python client and from the
// shell, then the stored windows, `report`, and `diagnose` on the store. Real time: the demo sleeps
// 0.8 s; each test takes 3-5 s with wattlab's start and final counter read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/shell.h"

namespace {

using wattlab::testing::shell;

std::string bin() { return wattlab::testing::wattlab_bin(); }

class MarksCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-marks-cli-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  nlohmann::json report_json() {
    const auto r = shell(bin() + " report latest --json --db " + db_);
    EXPECT_EQ(r.rc, 0) << r.out;
    return nlohmann::json::parse(r.out);
  }
  std::filesystem::path dir_;
  std::string db_;
};

const nlohmann::json* find_window(const nlohmann::json& run, const std::string& name) {
  for (const auto& w : run["windows"])
    if (w["name"] == name) return &w;
  return nullptr;
}

}  // namespace

TEST_F(MarksCli, PythonClientWindowsCountsTagsAndMistakes) {
  const std::string src = WATTLAB_SOURCE_DIR;
  const auto r = shell("PYTHONPATH=" + src + "/python " + bin() + " run --device sim --sim-workload 'step 300W 60s' --marks --db " +
                    db_ + " -- python3 " + src + "/tests/cli/marks_demo.py");
  ASSERT_EQ(r.rc, 3) << r.out;  // the command's status
  EXPECT_NE(r.out.find("marks: 14 lines, 5 windows, 1 malformed lines, 1 windows left open at exit"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("J/tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("line 10: not a JSON object"), std::string::npos) << r.out;
  const auto run = report_json();
  EXPECT_EQ(run["tags"]["model"], "demo/llm-1b");
  EXPECT_EQ(run["tags"]["gpus"], "1");
  EXPECT_EQ(run["tags"]["marks.malformed"], "1");
  EXPECT_EQ(run["tags"]["marks.unclosed"], "1");
  EXPECT_EQ(run["tags"]["marks.arrival_stamped"], "2");
  ASSERT_EQ(run["windows"].size(), 6u) << run["windows"].dump(1);  // "run" + 5 marked
  const auto* b1 = find_window(run, "b1");
  const auto* b4 = find_window(run, "b4");
  const auto* sweep = find_window(run, "sweep");
  ASSERT_TRUE(b1 && b4 && sweep);
  EXPECT_EQ((*b4)["counts"]["tokens"], 128);
  EXPECT_EQ((*b4)["counts"]["requests"], 4);
  EXPECT_EQ((*b4)["labels"]["batch"], "4");
  EXPECT_EQ((*b4)["labels"]["marks.t_source"], "client");
  EXPECT_EQ((*sweep)["counts"]["steps"], 2);
  EXPECT_EQ(sweep->contains("counts") && (*sweep)["counts"].contains("tokens"), false);
  // Nesting: each batch window lies inside the sweep, and lasts about its 0.3 s sleep.
  for (const auto* w : {b1, b4}) {
    EXPECT_GE((*w)["t_begin_ns"].get<int64_t>(), (*sweep)["t_begin_ns"].get<int64_t>());
    EXPECT_LE((*w)["t_end_ns"].get<int64_t>(), (*sweep)["t_end_ns"].get<int64_t>());
    EXPECT_GE((*w)["dur_s"].get<double>(), 0.3);
    EXPECT_LT((*w)["dur_s"].get<double>(), 1.5);
    const auto& d = (*w)["domains"][0];
    EXPECT_TRUE(d["available"].get<bool>()) << d.dump();
    EXPECT_NEAR(d["energy_j"].get<double>(), 300.0 * (*w)["dur_s"].get<double>(),
                d["uncertainty_j"].get<double>() + d["systematic_j"].get<double>());
  }
  const auto* ns = find_window(run, "no-stamp");
  ASSERT_TRUE(ns);
  EXPECT_EQ((*ns)["labels"]["marks.t_source"], "arrival");
  const auto* dangling = find_window(run, "dangling");
  ASSERT_TRUE(dangling);
  EXPECT_TRUE((*dangling)["labels"].contains("marks.unclosed"));
  EXPECT_EQ((*dangling)["counts"]["tokens"], 5);
  const auto rep = shell(bin() + " report latest --db " + db_);
  EXPECT_NE(rep.out.find("J/tokens"), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("tags: gpus=1 model=demo/llm-1b"), std::string::npos) << rep.out;

  // The store feeds the diagnosis: b1 and b4 are records, the rest are reported.
  const auto dg = shell(bin() + " diagnose min-energy --json --data " + db_);
  ASSERT_EQ(dg.rc, 0) << dg.out;
  EXPECT_NE(dg.out.find("window 'dangling': not used: the window was left open"), std::string::npos) << dg.out;
  EXPECT_NE(dg.out.find("window 'sweep': not used: no 'tokens'"), std::string::npos) << dg.out;
  EXPECT_NE(dg.out.find("window 'no-stamp': not used: no 'batch' tag"), std::string::npos) << dg.out;
  const auto j = nlohmann::json::parse(dg.out.substr(dg.out.find('{')));
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["model_id"], "demo/llm-1b");
  EXPECT_EQ(j["rows"][0]["gpu_model"], "SIM");
  EXPECT_EQ(j["rows"][0]["max_num_seqs"], 4);  // 4x the tokens in the same time at the same power
}

TEST_F(MarksCli, ShellWritesMarksWithEcho) {
  const std::string script =
      "echo '{\"op\":\"tag\",\"tags\":{\"task\":\"shell\"}}' >&$WATTLAB_MARKS_FD; "
      "echo '{\"op\":\"open\",\"name\":\"step\"}' >&$WATTLAB_MARKS_FD; sleep 0.3; "
      "echo '{\"op\":\"close\",\"name\":\"step\",\"counts\":{\"images\":2}}' >&$WATTLAB_MARKS_FD";
  const auto r = shell(bin() + " run --device sim --marks --db " + db_ + " -- sh -c \"" + [&] {
    std::string s;
    for (char c : script) {
      if (c == '"' || c == '$') s += '\\';
      s += c;
    }
    return s;
  }() + "\"");
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto run = report_json();
  EXPECT_EQ(run["tags"]["task"], "shell");
  EXPECT_EQ(run["tags"]["marks.malformed"], "0");
  const auto* w = find_window(run, "step");
  ASSERT_TRUE(w) << run.dump(1);
  EXPECT_EQ((*w)["counts"]["images"], 2);
  EXPECT_GE((*w)["dur_s"].get<double>(), 0.3);
}

TEST_F(MarksCli, WithoutMarksTheVariableIsNotPassed) {
  const auto r = shell("WATTLAB_MARKS_FD=9 " + bin() + " run --device sim --db " + db_ + " -- sh -c 'test -z \"$WATTLAB_MARKS_FD\"'");
  EXPECT_EQ(r.rc, 0) << r.out;
  const auto m = shell(bin() + " run --device sim --marks --db " + db_ + " -- sh -c 'test -n \"$WATTLAB_MARKS_FD\"'");
  EXPECT_EQ(m.rc, 0) << m.out;
  EXPECT_NE(m.out.find("marks: 0 lines"), std::string::npos) << m.out;
}
