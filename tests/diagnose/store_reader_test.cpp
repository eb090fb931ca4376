// The store reader: runs built with the Store API become configuration records; windows that
// lack what a record needs are reported per run. End-to-end: `wattlab diagnose` on the store.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>
#include <nlohmann/json.hpp>

#include "cli/shell.h"
#include "test_data.h"
#include "wattlab/core/error.h"
#include "wattlab/store/store.h"

using namespace wattlab;
using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

namespace {

constexpr int64_t kS = 1'000'000'000;

Domain domain(const std::string& id, const std::string& name, const std::string& scope) {
  Domain d;
  d.id = id;
  d.vendor = scope == "gpu" ? "NVIDIA" : "Intel";
  d.name = name;
  d.scope = scope;
  return d;
}

DomainEnergy energy(const std::string& id, double j, double u, double sys) {
  DomainEnergy e;
  e.domain_id = id;
  e.available = true;
  e.energy_j = j;
  e.uncertainty_j = u;
  e.systematic_j = sys;
  e.estimator = Estimator::counter_samples;
  return e;
}

WindowResult window(WindowId id, const std::string& name, double a_s, double b_s, double gpu_j,
                    std::map<std::string, double> counts, std::map<std::string, std::string> labels) {
  WindowResult w;
  w.id = id;
  w.name = name;
  w.t_begin_ns = static_cast<int64_t>(a_s * kS);
  w.t_end_ns = static_cast<int64_t>(b_s * kS);
  w.final = true;
  DomainEnergy g = energy("gpu:0", gpu_j, 0.02 * gpu_j, 0.05 * gpu_j);
  g.telemetry.mean_sm_clock_mhz = 1980;
  g.telemetry.mean_sm_activity_pct = 20;
  g.telemetry.mean_tensor_activity_pct = 5;
  g.telemetry.mean_dram_bw_pct = 30;
  g.telemetry.mean_utilization_gpu_pct = 95;
  g.telemetry.power_limit_w = 700;
  g.telemetry.power_capped_fraction = 0.25;
  w.domains.push_back(g);
  w.domains.push_back(energy("gpu:0/memory", gpu_j / 4, 1, 1));  // a part of gpu:0: never added
  w.domains.push_back(energy("cpu:0/package", 60, 1, 1));
  w.domains.push_back(energy("cpu:0/dram", 20, 1, 1));
  w.counts = std::move(counts);
  w.labels = std::move(labels);
  return w;
}

// A sweep run (configuration in run tags, batch per window), a plain run, a run of another task.
std::filesystem::path build_store(const std::filesystem::path& dir) {
  const auto path = dir / "runs.db";
  std::filesystem::remove(path);
  auto st = Store::open(path);
  EXPECT_TRUE(st) << st.error().message();
  RunInfo info;
  info.command = {"python3", "sweep.py"};
  info.start_t_ns = 0;
  info.tags = {{"model", "meta-llama/Llama-3.1-8B"}, {"task", "batch-sweep"}, {"precision", "bfloat16"},
               {"total_params_b", "8.03"}, {"architecture", "LlamaForCausalLM"}};
  const RunId r1 = *st->begin_run(info);
  const std::vector<Domain> doms = {domain("gpu:0", "NVIDIA H200", "gpu"), domain("gpu:0/memory", "NVIDIA H200", "memory"),
                                    domain("cpu:0/package", "Intel Xeon", "package"), domain("cpu:0/dram", "Intel Xeon", "dram")};
  EXPECT_TRUE(st->add_domains(r1, doms));
  EXPECT_TRUE(st->add_window(r1, window(1, "run", 0, 30, 9000, {}, {})));
  EXPECT_TRUE(st->add_window(r1, window(2, "b1", 1, 5, 600, {{"tokens", 256}, {"requests", 1}, {"host_cpu_s", 2}},
                                        {{"batch", "1"}, {"path", "generate"}})));
  EXPECT_TRUE(st->add_window(r1, window(3, "b8", 6, 11, 1500, {{"tokens", 2048}, {"requests", 8}},
                                        {{"batch", "8"}, {"median_itl_ms", "19.5"}})));
  EXPECT_TRUE(st->add_window(r1, window(4, "warm", 11, 12, 100, {{"tokens", 10}, {"requests", 1}},
                                        {{"batch", "1"}, {"phase", "warmup"}})));
  EXPECT_TRUE(st->add_window(r1, window(5, "b16", 12, 14, 800, {{"tokens", 4096}}, {{"batch", "16"}})));
  EXPECT_TRUE(st->add_window(r1, window(6, "b32", 14, 16, 800, {{"tokens", 4096}, {"requests", 32}},
                                        {{"batch", "32"}, {"marks.unclosed", "left open"}})));
  EXPECT_TRUE(st->add_window(r1, window(7, "b64", 16, 18, 800, {{"tokens", 4096}, {"requests", 64}}, {{"batch", "many"}})));
  EXPECT_TRUE(st->end_run(r1, 30 * kS, 0));
  RunInfo plain;
  plain.command = {"sleep", "1"};
  const RunId r2 = *st->begin_run(plain);
  EXPECT_TRUE(st->add_domains(r2, doms));
  EXPECT_TRUE(st->add_window(r2, window(1, "run", 0, 1, 100, {}, {})));
  EXPECT_TRUE(st->end_run(r2, kS, 0));
  RunInfo other = info;
  other.tags["task"] = "chat";
  other.tags["batch"] = "4";
  other.tags["gpus"] = "1";
  const RunId r3 = *st->begin_run(other);
  EXPECT_TRUE(st->add_domains(r3, doms));
  EXPECT_TRUE(st->add_window(r3, window(1, "steady", 1, 3, 400, {{"tokens", 1000}, {"requests", 4}}, {})));
  EXPECT_TRUE(st->end_run(r3, 4 * kS, 0));
  return path;
}

class StoreReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("wattlab-store-reader-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    db_ = build_store(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_, db_;
};

const ConfigRecord& row_with_batch(const Dataset& d, int batch, const std::string& task = "batch-sweep") {
  for (const auto& r : d.rows)
    if (r.batch() == batch && r.task == task) return r;
  throw std::runtime_error("no row with batch " + std::to_string(batch));
}

bool rejected(const Dataset& d, const std::string& where, const std::string& why) {
  for (const auto& r : d.rejected)
    if (r.where.find(where) != std::string::npos && r.reason.find(why) != std::string::npos) return true;
  return false;
}

std::string all_rejected(const Dataset& d) {
  std::string s;
  for (const auto& r : d.rejected) s += r.message() + "\n";
  return s;
}

}  // namespace

TEST_F(StoreReaderTest, StoredWindowsBecomeRecords) {
  const Dataset d = read_store(db_.string());
  ASSERT_EQ(d.rows.size(), 3u) << all_rejected(d);
  EXPECT_TRUE(d.violations.empty()) << d.violations[0].message();
  EXPECT_EQ(d.task, "");  // two tasks in the store
  const ConfigRecord& b1 = row_with_batch(d, 1);
  EXPECT_EQ(b1.workload, Workload::llm);
  EXPECT_EQ(b1.model_id, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(b1.gpu_model, "H200");  // from the domain's name "NVIDIA H200"
  EXPECT_EQ(b1.num_gpus, 1);        // the gpu:N domains measured
  EXPECT_EQ(b1.weight_precision, "bfloat16");
  EXPECT_DOUBLE_EQ(b1.total_params_billions, 8.03);
  EXPECT_DOUBLE_EQ(b1.activated_params_billions, 8.03);
  const auto& m = *b1.llm;
  EXPECT_EQ(m.max_num_seqs, 1);
  EXPECT_DOUBLE_EQ(m.avg_batch_size, 1);
  EXPECT_DOUBLE_EQ(m.avg_output_len, 256);
  EXPECT_DOUBLE_EQ(m.energy_per_token_joules, 600.0 / 256);  // gpu:0 only, not gpu:0/memory
  EXPECT_DOUBLE_EQ(m.energy_per_request_joules, 600.0);
  EXPECT_DOUBLE_EQ(m.output_throughput_tokens_per_sec, 64);
  EXPECT_DOUBLE_EQ(b1.avg_power_watts, 150);
  EXPECT_DOUBLE_EQ(m.median_itl_ms, 4000.0 / 256);  // derived, and said so
  EXPECT_EQ(b1.extra_json.at("median_itl_ms_source").find("derived"), 1u);
  const auto& x = b1.measured;
  EXPECT_DOUBLE_EQ(*x.cpu_energy_per_unit_joules, 80.0 / 256);  // package + DRAM
  EXPECT_DOUBLE_EQ(*x.sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(*x.sm_activity, 0.20);
  EXPECT_DOUBLE_EQ(*x.tensor_activity, 0.05);
  EXPECT_DOUBLE_EQ(*x.dram_activity, 0.30);
  EXPECT_DOUBLE_EQ(*x.gpu_utilization, 0.95);
  EXPECT_DOUBLE_EQ(*x.power_limit_watts, 700);
  EXPECT_DOUBLE_EQ(*x.cpu_utilization, 0.5);  // 2 CPU s over 4 s
  EXPECT_EQ(b1.extra_json.at("power_capped_fraction"), "0.25");
  EXPECT_DOUBLE_EQ(std::stod(b1.extra_json.at("energy_per_token_uncertainty_joules")), 12.0 / 256);
  EXPECT_DOUBLE_EQ(std::stod(b1.extra_json.at("energy_per_token_systematic_joules")), 30.0 / 256);
  EXPECT_EQ(b1.extra_json.at("wattlab_window"), "\"b1\"");
  EXPECT_EQ(b1.extra_json.at("path"), "\"generate\"");
  // Given ITL wins over the derived one.
  const ConfigRecord& b8 = row_with_batch(d, 8);
  EXPECT_DOUBLE_EQ(b8.llm->median_itl_ms, 19.5);
  EXPECT_EQ(b8.extra_json.count("median_itl_ms_source"), 0u);
  EXPECT_DOUBLE_EQ(b8.llm->energy_per_token_joules, 1500.0 / 2048);
  EXPECT_FALSE(b8.measured.cpu_utilization.has_value());
  // The JSON row keeps the leaderboard's names, with the extras.
  const auto j = nlohmann::json::parse(record_to_json(b1));
  EXPECT_DOUBLE_EQ(j["energy_per_token_joules"].get<double>(), 600.0 / 256);
  EXPECT_DOUBLE_EQ(j["power_capped_fraction"].get<double>(), 0.25);
}

TEST_F(StoreReaderTest, RowsThatLackWhatARecordNeedsAreReportedPerRun) {
  const Dataset d = read_store(db_.string());
  EXPECT_TRUE(rejected(d, "run 1 window 'warm'", "phase 'warmup'")) << all_rejected(d);
  EXPECT_TRUE(rejected(d, "run 1 window 'b16'", "no 'requests' count")) << all_rejected(d);
  EXPECT_TRUE(rejected(d, "run 1 window 'b32'", "left open")) << all_rejected(d);
  EXPECT_TRUE(rejected(d, "run 1 window 'b64'", "'batch' = 'many' is not a number")) << all_rejected(d);
  EXPECT_TRUE(rejected(d, "runs.db run 2", "no window with counts")) << all_rejected(d);
  EXPECT_EQ(d.rejected.size(), 5u) << all_rejected(d);  // the "run" windows without counts are not rows
  EXPECT_EQ(d.rejected[0].message().find("runs.db run 1 window"), 0u) << d.rejected[0].message();
}

TEST_F(StoreReaderTest, MissingTagsAreReasons) {
  auto st = Store::open(db_);
  RunInfo info;
  info.tags = {{"task", "t"}};
  const RunId r = *st->begin_run(info);
  ASSERT_TRUE(st->add_domains(r, std::vector<Domain>{domain("gpu:0", "NVIDIA H200", "gpu")}));
  WindowResult w = window(1, "a", 0, 1, 10, {{"tokens", 5}, {"requests", 1}}, {{"batch", "1"}});
  ASSERT_TRUE(st->add_window(r, w));
  w.id = 2;
  w.name = "b";
  w.labels["model"] = "m";
  w.domains[0].available = false;
  w.domains[0].issues = {"window 20 ms is shorter than the 100 ms counter update"};
  ASSERT_TRUE(st->add_window(r, w));
  w.id = 3;
  w.name = "c";
  w.domains[0].available = true;
  w.final = false;
  ASSERT_TRUE(st->add_window(r, w));
  w.id = 4;
  w.name = "d";
  w.final = true;
  w.counts = {{"requests", 3}};
  ASSERT_TRUE(st->add_window(r, w));
  const Dataset d = read_store(db_.string(), "t");
  EXPECT_TRUE(d.rows.empty());
  EXPECT_EQ(d.task, "t");
  EXPECT_TRUE(rejected(d, "window 'a'", "no 'model' tag")) << all_rejected(d);
  EXPECT_TRUE(rejected(d, "window 'b'", "gpu:0 has no energy estimate (window 20 ms")) << all_rejected(d);
  EXPECT_TRUE(rejected(d, "window 'c'", "provisional")) << all_rejected(d);
  EXPECT_TRUE(rejected(d, "window 'd'", "no 'tokens', 'images' or 'videos' count")) << all_rejected(d);
}

// Found by the fuzzer (fuzz/corpus/store/crash-window-name-not-utf8): a store's text need not be
// UTF-8, and its record must still become valid JSON, with U+FFFD for the bytes that are not.
TEST_F(StoreReaderTest, TextThatIsNotUtf8BecomesValidJson) {
  auto st = Store::open(db_);
  RunInfo info;
  info.tags = {{"task", "t"}, {"model", "org/m\xff"}};
  const RunId r = *st->begin_run(info);
  ASSERT_TRUE(st->add_domains(r, std::vector<Domain>{domain("gpu:0", "NVIDIA H200", "gpu")}));
  ASSERT_TRUE(st->add_window(r, window(1, "stea\xffy", 0, 2, 10, {{"tokens", 5}, {"requests", 1}},
                                       {{"batch", "1"}, {"path", "p\xc3"}})));
  const Dataset d = read_store(db_.string(), "t");
  ASSERT_EQ(d.rows.size(), 1u) << all_rejected(d);
  const auto j = nlohmann::json::parse(record_to_json(d.rows[0]));
  EXPECT_EQ(j["wattlab_window"].get<std::string>(), "stea\xef\xbf\xbdy");
  EXPECT_EQ(j["path"].get<std::string>(), "p\xef\xbf\xbd");
  EXPECT_EQ(j["model_id"].get<std::string>(), "org/m\xef\xbf\xbd");
}

TEST_F(StoreReaderTest, TaskFilterAndRunTagsForTheWholeRun) {
  const Dataset d = read_store(db_.string(), "chat");
  ASSERT_EQ(d.rows.size(), 1u) << all_rejected(d);
  EXPECT_EQ(d.task, "chat");
  const auto& r = d.rows[0];
  EXPECT_EQ(r.task, "chat");
  EXPECT_EQ(r.batch(), 4);  // from the run tag
  EXPECT_DOUBLE_EQ(r.energy_per_unit_j(), 0.4);
  EXPECT_DOUBLE_EQ(r.llm->avg_output_len, 250);
  EXPECT_TRUE(rejected(d, "run 2", "no window with counts"));  // untagged runs are not filtered out
}

TEST_F(StoreReaderTest, DiffusionWindows) {
  auto st = Store::open(db_);
  RunInfo info;
  info.tags = {{"task", "text-to-image"}, {"model", "sdxl"}, {"gpu", "H100"}, {"batch", "4"}, {"steps", "30"},
               {"height", "1024"}, {"width", "1024"}};
  const RunId r = *st->begin_run(info);
  ASSERT_TRUE(st->add_domains(r, std::vector<Domain>{domain("gpu:0", "NVIDIA H200", "gpu")}));
  ASSERT_TRUE(st->add_window(r, window(1, "gen", 0, 8, 4000, {{"images", 8}}, {})));
  const Dataset d = read_store(db_.string(), "text-to-image");
  ASSERT_EQ(d.rows.size(), 1u) << all_rejected(d);
  const auto& x = d.rows[0];
  EXPECT_EQ(x.workload, Workload::diffusion);
  EXPECT_EQ(x.gpu_model, "H100");  // the tag wins over the domain name
  EXPECT_DOUBLE_EQ(x.diffusion->energy_per_generation_joules, 500);
  EXPECT_DOUBLE_EQ(x.diffusion->batch_latency_s, 4);
  EXPECT_DOUBLE_EQ(x.diffusion->throughput_per_sec, 1);
  EXPECT_EQ(x.diffusion->inference_steps, 30);
  EXPECT_TRUE(d.violations.empty());
}

TEST(StoreReader, MissingOrForeignFilesAreBadInput) {
  EXPECT_THROW(read_store("/no/such/runs.db"), wattlab::UsageError);
  const auto p = std::filesystem::temp_directory_path() / ("wattlab-not-a-store-" + std::to_string(::getpid()) + ".db");
  { std::FILE* f = std::fopen(p.c_str(), "w"); std::fputs("hello", f); std::fclose(f); }
  EXPECT_THROW(read_any(p.string()), wattlab::UsageError);
  std::filesystem::remove(p);
}

// Found by fuzz/fuzz_store.cpp: a store whose runs table is damaged threw an internal error
// (exit 1); a damaged file is bad input, named, exit 2. The damage: the first page of the runs
// table gets an invalid page type, so the schema reads fine and the first read of runs fails.
TEST_F(StoreReaderTest, DamagedRunsTableIsBadInput) {
  int64_t root_page = 0, page_size = 0;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(db_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    for (auto [sql, out] : {std::pair<const char*, int64_t*>{"SELECT rootpage FROM sqlite_schema WHERE name = 'runs'", &root_page},
                            {"PRAGMA page_size", &page_size}}) {
      sqlite3_stmt* q = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &q, nullptr), SQLITE_OK);
      ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
      *out = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
    }
    sqlite3_close(db);
  }
  ASSERT_GT(root_page, 1);
  {
    std::fstream f(db_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((root_page - 1) * page_size);
    f.put('\xff');  // a b-tree page starts with its type: 2, 5, 10 or 13
  }
  try {
    read_store(db_.string());
    ADD_FAILURE() << "no error for a damaged store";
  } catch (const wattlab::UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(db_.string() + ": ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed"), std::string::npos) << e.what();
  }
}

TEST(StoreReader, DispatchByExtension) {
  EXPECT_NE(reader_for("x.json")->describe().find("leaderboard JSON"), std::string::npos);
  EXPECT_NE(reader_for("x.csv")->describe().find("CSV"), std::string::npos);
  EXPECT_NE(reader_for("x.sqlite")->describe().find("store"), std::string::npos);
  EXPECT_THROW(reader_for("x.parquet"), wattlab::UsageError);
}

TEST(StoreReader, MeasuredRecordsGoThroughMakeDataset) {
  ConfigRecord r = chat().rows.at(0);
  r.source.clear();
  r.llm->energy_per_request_joules *= 2;
  const Dataset d = make_dataset("store:run-7", "wattlab store run 7", "lm-arena-chat", {r});
  EXPECT_EQ(d.rows[0].source, "store:run-7");
  EXPECT_EQ(d.violations.size(), 1u);
}

// End to end: the diagnose CLI on a store, as a user runs it.
namespace {
wattlab::testing::Ran wattlab_cli(const std::string& args) {
  return wattlab::testing::shell(wattlab::testing::wattlab_bin() + " " + args);
}
}  // namespace

TEST_F(StoreReaderTest, DiagnoseCliReadsTheStore) {
  if (std::getenv("WATTLAB_BIN") == nullptr) GTEST_SKIP() << "WATTLAB_BIN not set (run through ctest)";
  auto r = wattlab_cli("diagnose min-energy --json --data " + db_.string());
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto brace = r.out.find('{');
  const auto warnings = r.out.substr(0, brace);
  EXPECT_NE(warnings.find("run 1 window 'b16': not used: no 'requests' count"), std::string::npos) << r.out;
  const auto j = nlohmann::json::parse(r.out.substr(brace));
  ASSERT_EQ(j["rows"].size(), 2u) << j.dump(1);  // one per (model, task)
  for (const auto& row : j["rows"]) {
    if (row["task"] == "batch-sweep") {
      EXPECT_DOUBLE_EQ(row["energy_per_token_joules"].get<double>(), 1500.0 / 2048);  // batch 8 beats batch 1
      EXPECT_EQ(row["max_num_seqs"], 8);
    }
  }
  const auto t = wattlab_cli("diagnose min-energy --data " + db_.string());
  EXPECT_EQ(t.rc, 0) << t.out;
  EXPECT_NE(t.out.find("wattlab store runs.db"), std::string::npos) << t.out;
  const auto c = wattlab_cli("diagnose compare model=meta-llama/Llama-3.1-8B,task=batch-sweep,batch=1 "
                             "model=meta-llama/Llama-3.1-8B,task=batch-sweep,batch=8 --data " + db_.string());
  EXPECT_EQ(c.rc, 0) << c.out;
  EXPECT_NE(c.out.find("0.3125"), std::string::npos) << c.out;  // (1500/2048) / (600/256): ratio B/A
  const auto e = wattlab_cli("diagnose explain --config model=meta-llama/Llama-3.1-8B,task=batch-sweep,batch=1 --data " +
                             db_.string());
  EXPECT_EQ(e.rc, 0) << e.out;
}
