// End to end: `wattlab infer serve-bench --device sim` against the fake server with faults.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/shell.h"
#include "infer/fake_openai_server.h"
#include "record/host.h"
#include "store/serve_bench_record.h"
#include "wattlab/store/store.h"

namespace wattlab::testing {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("wattlab_serve_bench_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

TEST(ServeBenchCli, FaultsAreExcludedAndReportedAndTheRunIsStored) {
  const std::string bin = wattlab_bin();
  ASSERT_FALSE(bin.empty()) << "run under CTest (WATTLAB_BIN)";
  // Poisson arrivals (mean gap 3.3 ms): the fake server (httplib) has a listen backlog of 5, and a
  // burst of 20 connects overflows it (SYN retries, resets); a real server has a deep backlog.
  FakeOpenAiServer srv({.tokens = 0, .token_delay_ms = 4, .max_concurrent = 4});
  TempDir tmp;
  const auto req = tmp.path / "req.jsonl";
  {
    std::ofstream f(req);
    for (int i = 0; i < 16; ++i) f << "{\"id\": \"ok" << i << "\", \"prompt\": \"hello\", \"max_tokens\": 12}\n";
    f << "{\"id\": \"e500\", \"prompt\": \"FAULT:500\", \"max_tokens\": 12}\n";
    f << "{\"id\": \"cut\", \"prompt\": \"FAULT:disconnect\", \"max_tokens\": 12}\n";
    f << "{\"id\": \"bad\", \"messages\": [{\"role\": \"user\", \"content\": \"FAULT:malformed\"}], \"max_tokens\": 12}\n";
    f << "{\"id\": \"usage\", \"prompt\": \"FAULT:usage\", \"max_tokens\": 12}\n";
  }
  const auto db = tmp.path / "runs.db", js = tmp.path / "out.json";
  const auto r = shell(bin + " infer serve-bench --device sim --sim-workload 'step 300W 600s' --sim-gain-error 0 --requests " + req.string() +
                       " --url " + srv.base_url() + " --model fake --batch-cap 4 --rate 300 --seed 3 --task chat --repeats 1 --requests-per-run 20 --db " + db.string() +
                       " --json " + js.string() + " --metrics-url http://127.0.0.1:" + std::to_string(srv.port()) +
                       "/metrics --timeout-s 10");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos);
  EXPECT_NE(r.out.find("17 succeeded, 3 failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("HTTP 500"), std::string::npos);
  EXPECT_NE(r.out.find("malformed"), std::string::npos);
  EXPECT_NE(r.out.find("1 requests differ"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("UNSTABLE"), std::string::npos);  // a sub-second window is < 20 s
  EXPECT_NE(r.out.find("shorter than 20 s"), std::string::npos);
  EXPECT_NE(r.out.find("J/token") == std::string::npos ? r.out.find("energy per output token") : 0, std::string::npos);

  std::ifstream f(js);
  const auto all = nlohmann::json::parse(f);
  EXPECT_EQ(all["schema"], "wattlab.serve-bench/2");
  EXPECT_EQ(all["workload"]["kind"], "file");
  ASSERT_EQ(all["runs"].size(), 1u);
  const auto& j = all["runs"][0];
  EXPECT_EQ(j["role"], "repeat");
  EXPECT_EQ(j["requests_sent"], 20);
  EXPECT_EQ(j["requests"]["failed"], 3);
  EXPECT_EQ(j["requests"]["succeeded"], 17);
  // Unstable (a sub-second window), so no repeat is in the interval, and it says why.
  EXPECT_EQ(all["repeats"]["n"], 0);
  EXPECT_NE(all["repeats"]["excluded"][0]["why"].get<std::string>().find("unstable"), std::string::npos);
  const auto& st = j["steady_state"];
  ASSERT_TRUE(st["found"].get<bool>()) << st.dump();
  EXPECT_EQ(st["n_requests"], 17);
  EXPECT_GT(st["tokens"].get<int>(), 0);
  const double ept = st["energy_per_token_j"]["value"];
  const double energy_j = st["energy_j"]["value"], tokens = st["tokens"], dur_s = st["dur_s"];
  // J/token is the steady window's energy over its tokens.
  EXPECT_DOUBLE_EQ(ept, energy_j / tokens) << st.dump();
  // The sim draws 300 W throughout. The steady window is a fraction of a second read off a timeline
  // sampled in real time on a machine under any load, so here its power is only held to a sanity
  // band; the meter's accuracy on short windows with late reads is tested on the virtual clock.
  EXPECT_NEAR(energy_j / dur_s, 300.0, 0.5 * 300.0) << st.dump();
  EXPECT_FALSE(st["stability"]["stable"].get<bool>());
  EXPECT_FALSE(st["stability"]["window_ge_20s"].get<bool>());
  EXPECT_EQ(j["output_tokens"]["differences"].size(), 1u);
  EXPECT_EQ(j["output_tokens"]["differences"][0]["id"], "usage");
  int failed = 0;
  for (const auto& q : j["per_request"])
    if (!q["ok"].get<bool>()) {
      ++failed;
      EXPECT_FALSE(q["error"].get<std::string>().empty());
    }
  EXPECT_EQ(failed, 3);
  // Failed requests carry no share of the energy.
  for (const auto& p : st["per_request_energy"]) EXPECT_EQ(p["id"].get<std::string>().rfind("ok", 0) == 0 || p["id"] == "usage", true);
  EXPECT_GT(j["server_metrics"]["samples_total"].get<int>(), 0);

  // The stored run: the steady window with counts, read by diagnose.
  const auto d = shell(bin + " diagnose min-energy --data " + db.string() + " 2>&1");
  EXPECT_EQ(d.rc, 0) << d.out;
  EXPECT_NE(d.out.find("fake"), std::string::npos) << d.out;

  // Both windows decode with their codecs and agree with the JSON.
  auto store = Store::open(db, OpenMode::read_only);
  ASSERT_TRUE(store) << store.error().message();
  auto run = store->load_run(1);
  ASSERT_TRUE(run) << run.error().message();
  ASSERT_EQ(run->windows.size(), 2u);
  auto whole = ServeBenchWholeRecord::decode(run->windows[0]);
  ASSERT_TRUE(whole) << whole.error().message();
  EXPECT_EQ(whole->requests_sent, 20);
  EXPECT_EQ(whole->requests_failed, 3);
  auto steady = SteadyWindowRecord::decode(run->windows[1].labels, run->windows[1].counts);
  ASSERT_TRUE(steady) << steady.error().message();
  EXPECT_EQ(steady->phase, SteadyWindowRecord::kSteady);
  EXPECT_EQ(steady->batch, 4);
  EXPECT_EQ(steady->tokens, st["tokens"].get<double>());
  EXPECT_EQ(steady->stable, false);
  EXPECT_FALSE(steady->flags.empty());
  ASSERT_TRUE(steady->median_itl_ms);
  EXPECT_EQ(run->info.tags.at(kServeBenchRequestsFailedTag), "3");
  // The run itself, through wattlab::Recording: this host, the command line, the device
  // selection and the configuration tags, ended with status 0 and its readings flushed.
  EXPECT_EQ(run->info.host, host_name());
  const std::vector<std::string> command{"wattlab", "infer", "serve-bench", "--requests", req.string(), "--url",
                                         srv.base_url(), "--model", "fake", "--batch-cap", "4"};
  EXPECT_EQ(run->info.command, command);
  EXPECT_EQ(run->info.device_selection, "sim");
  EXPECT_TRUE(run->info.simulated);
  EXPECT_FALSE(run->info.devices.empty());
  EXPECT_EQ(run->info.tags.at("model"), "fake");
  EXPECT_EQ(run->info.tags.at("task"), "chat");
  EXPECT_EQ(run->info.tags.at("batch"), "4");
  EXPECT_EQ(run->info.tags.at("workload"), "llm");
  ASSERT_TRUE(run->complete());
  EXPECT_EQ(run->exit_status, 0);
  EXPECT_GT(run->reading_count, 0);
  EXPECT_FALSE(run->domains.empty());
}

// The mean avg_output_len of one model's rows of a leaderboard task file, read here independently.
double leaderboard_mean(const fs::path& file, const std::string& model) {
  std::ifstream f(file);
  const auto j = nlohmann::json::parse(f);
  double sum = 0;
  int n = 0;
  for (const auto& r : j["configurations"])
    if (r["model_id"] == model) sum += r["avg_output_len"].get<double>(), ++n;
  return sum / n;
}

TEST(ServeBenchCli, ASyntheticWorkloadTakesTheLeaderboardsOutputMean) {
  const std::string bin = wattlab_bin();
  ASSERT_FALSE(bin.empty()) << "run under CTest (WATTLAB_BIN)";
  const char* data = std::getenv("WATTLAB_TEST_DATA_DIR");
  ASSERT_NE(data, nullptr);
  const auto chat = fs::path(data) / "mlenergy-leaderboard-v3" / "lm-arena-chat.json";
  const std::string model = "meta-llama/Llama-3.1-8B-Instruct";
  FakeOpenAiServer srv({.tokens = 0, .token_delay_ms = 1, .max_concurrent = 4});
  TempDir tmp;
  const auto db = tmp.path / "runs.db", js = tmp.path / "out.json";
  const auto r = shell(bin + " infer serve-bench --device sim --sim-workload 'step 300W 600s' --workload " + chat.string() +
                       " --workload-model " + model + " --input-mean 12 --url " + srv.base_url() +
                       " --model fake --batch-cap 4 --rate 300 --requests-per-run 6 --repeats 1 --db " + db.string() +
                       " --json " + js.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("geometric around a mean of"), std::string::npos) << r.out;
  std::ifstream f(js);
  const auto j = nlohmann::json::parse(f);
  const auto& w = j["workload"];
  EXPECT_EQ(w["kind"], "synthetic");
  EXPECT_EQ(w["api"], "chat");
  EXPECT_NEAR(w["output_tokens"]["mean"].get<double>(), leaderboard_mean(chat, model), 1e-9);
  EXPECT_EQ(w["output_tokens"]["cap"], 4096);  // the leaderboard's cap for lm-arena-chat
  EXPECT_EQ(w["input_tokens"]["mean"], 12.0);
  const auto& run = j["runs"][0];
  EXPECT_EQ(run["requests"]["succeeded"], 6);
  // Each request streamed its drawn max_tokens (sent with ignore_eos), and the server counted the
  // drawn prompt words as its prompt tokens.
  EXPECT_EQ(run["input_tokens"]["requested_mean"], run["input_tokens"]["usage_prompt_mean"]);
  EXPECT_TRUE(run["output_tokens"]["differences"].empty());
  auto store = Store::open(db, OpenMode::read_only);
  ASSERT_TRUE(store) << store.error().message();
  auto stored = store->load_run(1);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->info.tags.at("task"), "lm-arena-chat");
  EXPECT_NE(stored->info.tags.at("serve_bench.workload").find("input mean 12 tokens assumed"), std::string::npos);
}

TEST(ServeBenchCli, APilotSizesTheRepeatsAndTheIntervalIsStored) {
  const std::string bin = wattlab_bin();
  ASSERT_FALSE(bin.empty()) << "run under CTest (WATTLAB_BIN)";
  FakeOpenAiServer srv({.tokens = 0, .token_delay_ms = 2, .max_concurrent = 4});
  TempDir tmp;
  const auto db = tmp.path / "runs.db", js = tmp.path / "out.json";
  const auto r = shell(bin + " infer serve-bench --device sim --sim-workload 'step 300W 600s' --sim-gain-error 0 "
                             "--output-mean 8 --input-mean 4 --length-dist fixed --min-steady-s 3 --repeats 2 --url " +
                       srv.base_url() + " --model fake --batch-cap 4 --rate 300 --metrics-url http://127.0.0.1:" +
                       std::to_string(srv.port()) + "/metrics --db " + db.string() + " --json " + js.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("== pilot 1: 14 requests"), std::string::npos) << r.out;
  std::ifstream f(js);
  const auto j = nlohmann::json::parse(f);
  const auto& runs = j["runs"];
  ASSERT_GE(runs.size(), 3u);
  EXPECT_EQ(runs[0]["role"], "pilot");
  EXPECT_EQ(runs[0]["requests_sent"], 14);  // 3B + 2
  int repeats = 0;
  std::vector<double> ept;
  for (const auto& run : runs) {
    if (run["role"] != "repeat") continue;
    ++repeats;
    EXPECT_EQ(run["requests_sent"], j["requests_per_run"]);
  }
  EXPECT_EQ(repeats, 2);
  for (const auto& i : j["repeats"]["included"])
    for (const auto& run : runs)
      if (run["role"] == "repeat" && run["index"] == i) ept.push_back(run["steady_state"]["energy_per_token_j"]["value"]);
  const auto& rep = j["repeats"];
  EXPECT_EQ(rep["n"].get<std::size_t>(), ept.size());
  EXPECT_EQ(rep["included"].size() + rep["excluded"].size(), 2u);

  auto store = Store::open(db, OpenMode::read_only);
  ASSERT_TRUE(store) << store.error().message();
  auto stored = store->load_run(1);
  ASSERT_TRUE(stored) << stored.error().message();
  EXPECT_EQ(stored->windows.size(), 2 * runs.size());  // whole and steady per run
  int pilot_windows = 0;
  for (const auto& w : stored->windows)
    if (w.labels.count("phase") && w.labels.at("phase") == "pilot") ++pilot_windows;
  EXPECT_EQ(pilot_windows, static_cast<int>(runs.size()) - 2);
  EXPECT_EQ(stored->info.tags.at("serve_bench.requests_per_run"), std::to_string(j["requests_per_run"].get<int>()));
  if (ept.size() >= 2) {  // the interval, stored as run tags, is the one in the JSON
    const double low = rep["energy_per_token_j"]["ci95_low"];
    EXPECT_NEAR(std::stod(stored->info.tags.at("serve_bench.energy_per_token_ci95_low_j")), low, 1e-8 * std::abs(low));  // stored to 9 significant digits; the low bound may be negative
  }
  // diagnose reads the repeats' steady windows as configurations and leaves the pilots out.
  const auto d = shell(bin + " diagnose min-energy --data " + db.string() + " 2>&1");
  EXPECT_EQ(d.rc, 0) << d.out;
}

TEST(ServeBenchCli, BadInputExitsTwo) {
  const std::string bin = wattlab_bin();
  ASSERT_FALSE(bin.empty());
  TempDir tmp;
  const auto req = tmp.path / "bad.jsonl";
  std::ofstream(req) << "{\"prompt\": \"x\"}\n";
  auto r = shell(bin + " infer serve-bench --device sim --requests " + req.string() + " --model m --batch-cap 2 --db " +
                 (tmp.path / "x.db").string());
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("line 1"), std::string::npos) << r.out;
  r = shell(bin + " infer serve-bench --device sim --requests " + req.string() + " --model m --batch-cap 2 --url nope");
  EXPECT_EQ(r.rc, 2) << r.out;
  // Neither a request file nor a workload; both; a model the leaderboard file lacks; a mean over the cap.
  r = shell(bin + " infer serve-bench --device sim --model m --batch-cap 2");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("give --requests FILE or a synthetic workload"), std::string::npos) << r.out;
  r = shell(bin + " infer serve-bench --device sim --model m --batch-cap 2 --output-mean 5 --requests " + req.string());
  EXPECT_EQ(r.rc, 2) << r.out;
  const auto chat = fs::path(std::getenv("WATTLAB_TEST_DATA_DIR")) / "mlenergy-leaderboard-v3" / "lm-arena-chat.json";
  r = shell(bin + " infer serve-bench --device sim --model m --batch-cap 2 --workload " + chat.string() +
            " --workload-model no/such-model");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("no LLM rows of model 'no/such-model'"), std::string::npos) << r.out;
  r = shell(bin + " infer serve-bench --device sim --model m --batch-cap 2 --output-mean 5000");
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("below the cap 4096"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace wattlab::testing
