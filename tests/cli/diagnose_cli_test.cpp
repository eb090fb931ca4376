// End-to-end: runs the built wattlab binary as a user would and checks output, JSON and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct Ran {
  int rc = -1;
  std::string out;
};

// A leaderboard file under tests/data/mlenergy-leaderboard-v3 (CTest passes the folder).
std::string data(const std::string& f) {
  const char* dir = std::getenv("WATTLAB_TEST_DATA_DIR");
  EXPECT_NE(dir, nullptr) << "WATTLAB_TEST_DATA_DIR is not set (CTest sets it)";
  return std::string(dir ? dir : "/nonexistent") + "/mlenergy-leaderboard-v3/" + f;
}

// Runs `wattlab ARGS` with stderr merged into the output when `merge_err`.
Ran run(const std::string& args, bool merge_err = false) {
  const char* bin = std::getenv("WATTLAB_BIN");
  EXPECT_NE(bin, nullptr) << "WATTLAB_BIN is not set (CTest sets it)";
  const std::string cmd = std::string(bin ? bin : "false") + " " + args + (merge_err ? " 2>&1" : " 2>/dev/null");
  Ran r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = ::pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace

TEST(DiagnoseCli, SummaryReproducesThePaper) {
  const auto r = run("diagnose summary --data " + data("gpqa.json") + " " + data("lm-arena-chat.json"));
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("mean output length            6987.7 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mean energy per response      4624.6 J"), std::string::npos);
  EXPECT_NE(r.out.find("716.7 tokens"), std::string::npos);
  EXPECT_NE(r.out.find("183.8 J"), std::string::npos);
  EXPECT_NE(r.out.find("25.2x"), std::string::npos);
  EXPECT_NE(r.out.find("12 models:"), std::string::npos);
  EXPECT_NE(r.out.find("16 models:"), std::string::npos);
  EXPECT_NE(r.out.find("source: ML.ENERGY leaderboard v3, gpqa.json"), std::string::npos);
}

TEST(DiagnoseCli, SummaryJson) {
  const auto r = run("diagnose summary --json --data " + data("gpqa.json") + " " + data("lm-arena-chat.json"));
  ASSERT_EQ(r.rc, 0);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][0]["task"], "gpqa");
  EXPECT_EQ(j["tasks"][0]["models_with_minimum"], 12);
  EXPECT_NEAR(j["tasks"][0]["mean_avg_output_len"].get<double>(), 6987.7, 0.05);
  EXPECT_NEAR(j["tasks"][0]["mean_energy_per_request_joules"].get<double>(), 4624.6, 0.05);
  EXPECT_NEAR(j["tasks"][1]["mean_avg_output_len"].get<double>(), 716.7, 0.05);
  EXPECT_NEAR(j["tasks"][1]["mean_energy_per_request_joules"].get<double>(), 183.8, 0.05);
  EXPECT_NEAR(j["tasks"][0]["energy_per_request_ratio_to_lm-arena-chat"].get<double>(), 25.2, 0.05);
  EXPECT_TRUE(j["tasks"][0]["minima"][0].contains("energy_per_token_joules"));
}

TEST(DiagnoseCli, Llama8bBatch8To512OnOneH100) {
  const auto r = run("diagnose frontier --json --data " + data("lm-arena-chat.json") +
                     " --model meta-llama/Llama-3.1-8B-Instruct --gpu H100");
  ASSERT_EQ(r.rc, 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& f = j["frontiers"][0];
  EXPECT_EQ(f["num_gpus"], 1);
  EXPECT_EQ(f["frontier"][0]["max_num_seqs"], 8);
  EXPECT_NEAR(f["frontier"][0]["energy_per_token_joules"].get<double>(), 0.455, 0.0005);
  EXPECT_EQ(f["min_energy"]["max_num_seqs"], 512);
  EXPECT_NEAR(f["min_energy"]["energy_per_token_joules"].get<double>(), 0.070, 0.0005);
  EXPECT_NEAR(f["min_energy"]["avg_power_watts"].get<double>(), 688, 0.5);
  const auto e = run("diagnose explain --data " + data("lm-arena-chat.json") +
                     " --config model=meta-llama/Llama-3.1-8B-Instruct,gpu=H100,gpus=1,batch=8");
  ASSERT_EQ(e.rc, 0);
  EXPECT_NE(e.out.find("path: Batch size → GPU utilization → Energy"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("0.4548 J at batch 8 -> 0.07019 J at batch 512"), std::string::npos);
}

TEST(DiagnoseCli, MinEnergyOneRowPerModel) {
  const auto r = run("diagnose min-energy --json --gpu B200 --data " + data("gpqa.json"));
  ASSERT_EQ(r.rc, 0);
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 12u);
  double sum = 0;
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["gpu_model"], "B200");
    sum += row["energy_per_request_joules"].get<double>();
  }
  EXPECT_NEAR(sum / 12, 4624.6, 0.05);
  const auto d = run("diagnose min-energy --gpu H100 --deadline-ms 20 --data " + data("lm-arena-chat.json"));
  ASSERT_EQ(d.rc, 0);
  EXPECT_NE(d.out.find("latency <= 20 ms"), std::string::npos);
}

TEST(DiagnoseCli, CompareWaterfallAndPlot) {
  const auto dir = std::filesystem::temp_directory_path() / "wattlab-cli-test";
  std::filesystem::create_directories(dir);
  const auto svg = (dir / "wf.svg").string();
  const auto r = run("diagnose compare model=Qwen/Qwen3-32B,task=lm-arena-chat,gpu=B200,gpus=1,batch=128 "
                     "model=Qwen/Qwen3-32B,task=gpqa,gpu=B200,gpus=1,batch=128 --json --plot " + svg + " --data " +
                     data("lm-arena-chat.json") + " " + data("gpqa.json"));
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["factors"].size(), 5u);
  double prod = 1;
  for (const auto& f : j["factors"]) prod *= f["ratio"].get<double>();
  EXPECT_NEAR(prod, j["ratio_b_over_a"].get<double>(), 1e-9);
  EXPECT_NEAR(j["energy_per_response_joules_b"].get<double>(), 2192, 1);
  EXPECT_TRUE(std::filesystem::exists(svg));
  std::filesystem::remove_all(dir);
}

TEST(DiagnoseCli, BadInputExitsTwoNamingFileRowField) {
  const auto dir = std::filesystem::temp_directory_path() / "wattlab-cli-bad";
  std::filesystem::create_directories(dir);
  const auto bad = (dir / "bad.json").string();
  std::ofstream(bad) << R"({"task":"t","configurations":[{"model_id":"m","gpu_model":"H100","num_gpus":1,"avg_power_watts":"hot"}]})";
  const auto r = run("diagnose summary --data " + bad, true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("bad.json: row 0 (configurations[0]), field 'avg_power_watts': expected a number"), std::string::npos)
      << r.out;
  const auto amb = run("diagnose explain --data " + data("lm-arena-chat.json") + " --config model=Llama,gpu=H100", true);
  EXPECT_EQ(amb.rc, 2);
  EXPECT_NE(amb.out.find("ambiguous"), std::string::npos);
  EXPECT_EQ(run("diagnose summary --data " + (dir / "missing.json").string()).rc, 2);
  EXPECT_EQ(run("diagnose explain --data " + data("gpqa.json") + " --config colour=red").rc, 2);
  EXPECT_EQ(run("diagnose summary --data " + (dir / "runs.db").string()).rc, 2);  // a missing store is bad input
  std::filesystem::remove_all(dir);
}

TEST(DiagnoseCli, GraphListsAllEdges) {
  const auto r = run("diagnose graph --json");
  ASSERT_EQ(r.rc, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["nodes"].size(), 13u);
  EXPECT_EQ(j["edges"].size(), 16u);
}

TEST(DiagnoseCli, FormatOptionMatchesJsonFlag) {
  const auto json = run("diagnose graph --json");
  ASSERT_EQ(json.rc, 0);
  const auto as_json = run("diagnose graph --format json");
  ASSERT_EQ(as_json.rc, 0);
  EXPECT_EQ(as_json.out, json.out);
  const auto text = run("diagnose graph");
  EXPECT_EQ(run("diagnose graph --format text").out, text.out);
  EXPECT_NE(text.out, json.out);
  const auto summary = run("diagnose summary --format json --data " + data("gpqa.json"));
  ASSERT_EQ(summary.rc, 0);
  EXPECT_EQ(summary.out, run("diagnose summary --json --data " + data("gpqa.json")).out);

  const auto md = run("diagnose graph --format md", true);
  EXPECT_EQ(md.rc, 2);
  EXPECT_NE(md.out.find("--format: 'md' is not a format of 'diagnose graph'; give text or json"), std::string::npos) << md.out;
  const auto both = run("diagnose explain --json --format text --config model=x --data " + data("gpqa.json"), true);
  EXPECT_EQ(both.rc, 2);
  EXPECT_NE(both.out.find("contradicts --json"), std::string::npos) << both.out;
}
