// The diagnose renderers (report/diagnose_report.h) on small records built in memory: the text
// lines and JSON fields each output promises, with numbers worked out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "diagnose/decompose.h"
#include "diagnose/frontier.h"
#include "diagnose/summary.h"
#include "report/diagnose_report.h"
#include "report/format.h"

namespace {

namespace dg = wattlab::diagnose;
namespace rp = wattlab::report;
using nlohmann::json;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One LLM row that satisfies the invariants: E_req = E_tok x L_out, P = E_tok x throughput.
dg::ConfigRecord llm(const std::string& model, const std::string& gpu, int gpus, int batch, double e_tok_j,
                     double itl_ms, double power_w, double out_len = 500) {
  dg::ConfigRecord r;
  r.workload = dg::Workload::llm;
  r.task = "chat";
  r.model_id = model;
  r.nickname = model + " nick";
  r.architecture = "Dense Transformer";
  r.weight_precision = "bfloat16";
  r.gpu_model = gpu;
  r.num_gpus = gpus;
  r.total_params_billions = 8;
  r.activated_params_billions = 8;
  r.avg_power_watts = power_w;
  dg::LlmMetrics m;
  m.max_num_seqs = batch;
  m.avg_batch_size = batch;
  m.avg_output_len = out_len;
  m.energy_per_token_joules = e_tok_j;
  m.energy_per_request_joules = e_tok_j * out_len;
  m.output_throughput_tokens_per_sec = power_w / e_tok_j;
  m.median_itl_ms = itl_ms;
  r.llm = m;
  return r;
}

// Model org/a on one B200 at batch 8, 16, 64 (a frontier of three points) and org/b at batch 8.
std::vector<dg::Dataset> chat_data() {
  std::vector<dg::ConfigRecord> rows{
      llm("org/a", "B200", 1, 8, 0.4, 10, 400), llm("org/a", "B200", 1, 16, 0.2, 15, 500),
      llm("org/a", "B200", 1, 64, 0.1, 30, 600), llm("org/b", "B200", 1, 8, 0.3, 12, 450, 1000)};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].source = "chat.json";
    rows[i].row_index = i;
  }
  std::vector<dg::Dataset> d;
  d.push_back(dg::make_dataset("chat.json", "test data, chat.json", "chat", std::move(rows)));
  return d;
}

// A task whose responses cost 10x chat's: org/a at batch 8 with ten times the output length.
dg::Dataset reasoning_data() {
  auto r = llm("org/a", "B200", 1, 8, 0.1, 30, 600, 10000);  // 1000 J per response
  r.task = "reason";
  r.source = "reason.json";
  return dg::make_dataset("reason.json", "test data, reason.json", "reason", {r});
}

TEST(DiagnoseRender, FormatNames) {
  for (auto f : {rp::Format::text, rp::Format::json, rp::Format::markdown, rp::Format::html})
    EXPECT_EQ(rp::parse_format(rp::format_name(f)), f);
  EXPECT_EQ(rp::format_name(rp::Format::markdown), "md");
  EXPECT_FALSE(rp::parse_format("xml"));
  EXPECT_FALSE(rp::parse_format("JSON"));
}

TEST(DiagnoseRender, SummaryTextAndJson) {
  auto data = chat_data();
  data.push_back(reasoning_data());
  rp::SummaryReport r{data, "B200", {}};
  for (const auto& d : data) r.tasks.push_back(dg::summarize_task(d, r.gpu_model));
  ASSERT_EQ(rp::cheapest_llm_task(r), &r.tasks[0]);  // chat: 175 J per response against 1000 J

  const std::string text = rp::render_text(r);
  EXPECT_TRUE(has(text, "chat (chat) -- test data, chat.json: 4 rows, 2 models, 0 invariant violations\n"));
  EXPECT_TRUE(has(text, "  minimum-energy B200 configurations (lowest energy per token per model), 2 models:\n"));
  // Minima: org/a batch 64 (50 J, 500 tokens) and org/b batch 8 (300 J, 1000 tokens).
  EXPECT_TRUE(has(text, "    mean output length            750.0 tokens (avg_output_len)\n")) << text;
  EXPECT_TRUE(has(text, "    mean energy per response      175.0 J (energy_per_request_joules)\n"));
  EXPECT_TRUE(has(text, "    lowest energy per response    50.0 J (org/a nick, chat.json row 2)\n"));
  EXPECT_TRUE(has(text, "    highest energy per response   300.0 J (org/b nick, chat.json row 3), 6.0x the lowest\n"));
  EXPECT_TRUE(has(text, "    energy per response vs chat  5.7x\n"));  // 1000 / 175
  EXPECT_TRUE(text.ends_with("source: test data, chat.json; test data, reason.json (5 rows, 0 invariant violations)\n"));

  const json j = json::parse(rp::render_json(r));
  EXPECT_EQ(j["command"], "diagnose summary");
  EXPECT_EQ(j["gpu_model"], "B200");
  ASSERT_EQ(j["tasks"].size(), 2u);
  EXPECT_EQ(j["tasks"][0]["models_with_minimum"], 2);
  EXPECT_DOUBLE_EQ(j["tasks"][0]["mean_energy_per_request_joules"].get<double>(), 175);
  EXPECT_FALSE(j["tasks"][0].contains("energy_per_request_ratio_to_chat"));
  EXPECT_NEAR(j["tasks"][1]["energy_per_request_ratio_to_chat"].get<double>(), 1000.0 / 175, 1e-12);
  EXPECT_EQ(j["tasks"][0]["lowest"]["source"], json({{"file", "chat.json"}, {"row", 2}}));
  EXPECT_EQ(j["tasks"][0]["minima"][0]["task"], "chat");
  EXPECT_TRUE(j["invariant_violations"].empty());
}

TEST(DiagnoseRender, SummaryWithoutRowsOnTheGpu) {
  const auto data = chat_data();
  rp::SummaryReport r{data, "H100", {dg::summarize_task(data[0], "H100")}};
  EXPECT_TRUE(has(rp::render_text(r), "  no H100 rows\n\n"));
}

TEST(DiagnoseRender, InvariantViolationsInJson) {
  auto bad = llm("org/a", "B200", 1, 8, 0.4, 10, 400);
  bad.llm->energy_per_request_joules = 250;  // 0.4 J x 500 tokens is 200 J
  bad.source = "bad.json";
  const std::vector<dg::Dataset> data{dg::make_dataset("bad.json", "bad", "chat", {bad})};
  rp::SummaryReport r{data, "B200", {dg::summarize_task(data[0], "B200")}};
  const json j = json::parse(rp::render_json(r));
  ASSERT_EQ(j["invariant_violations"].size(), 1u);
  EXPECT_EQ(j["invariant_violations"][0]["file"], "bad.json");
  EXPECT_DOUBLE_EQ(j["invariant_violations"][0]["stored"].get<double>(), 250);
  EXPECT_DOUBLE_EQ(j["invariant_violations"][0]["computed"].get<double>(), 200);
  EXPECT_TRUE(rp::render_text(r).ends_with("(1 rows, 1 invariant violations)\n"));
}

TEST(DiagnoseRender, ExplainTextAndJson) {
  const auto data = chat_data();
  const auto& rec = data[0].rows[0];
  dg::Finding f{"gpu_underutilized", "GPU underutilized",
                {dg::Node::batch_size, dg::Node::gpu_utilization, dg::Node::energy},
                "A larger batch lowers energy per token.",
                {{"energy per token at batch 64", 0.1, "J/token", "chat.json row 2"}, {"ratio", 4, "", "derived"}}};
  rp::ExplainReport r{data, "model=org/a,batch=8", &rec, {f}};

  const std::string text = rp::render_text(r);
  EXPECT_TRUE(text.starts_with("org/a B200x1 batch 8 bfloat16 -- chat (chat.json row 0), chat.json\n")) << text;
  EXPECT_TRUE(has(text, "  energy_per_token_joules 0.4 J   energy_per_request_joules 200.0 J   avg_output_len 500.0 tokens\n"));
  EXPECT_TRUE(has(text, "  power per GPU / limit 40% (limit 1000 W: TDP of the paper's setup)\n")) << text;
  EXPECT_TRUE(has(text, "findings:\n  [gpu_underutilized] GPU underutilized\n    path: Batch size → GPU utilization → Energy\n"
                        "    A larger batch lowers energy per token.\n"));
  EXPECT_TRUE(has(text, "      - energy per token at batch 64: 0.1 J/token (chat.json row 2)\n"));
  EXPECT_TRUE(has(text, "      - ratio: 4 (derived)\n"));
  EXPECT_TRUE(text.ends_with("source: test data, chat.json (4 rows, 0 invariant violations)\n"));

  const json j = json::parse(rp::render_json(r));
  EXPECT_EQ(j["command"], "diagnose explain");
  EXPECT_EQ(j["selector"], "model=org/a,batch=8");
  EXPECT_EQ(j["config"]["max_num_seqs"], 8);
  EXPECT_EQ(j["config"]["source"]["row"], 0);
  EXPECT_NEAR(j["steady_decode_residual_rho"].get<double>(), dg::steady_decode_residual(rec), 1e-12);
  ASSERT_EQ(j["findings"].size(), 1u);
  EXPECT_EQ(j["findings"][0]["path"], json({"batch_size", "gpu_utilization", "energy"}));
  EXPECT_EQ(j["findings"][0]["evidence"][1]["from"], "derived");

  r.findings.clear();
  EXPECT_TRUE(has(rp::render_text(r), "findings:\n  no rule fired"));
  EXPECT_TRUE(json::parse(rp::render_json(r))["findings"].empty());
}

TEST(DiagnoseRender, CompareTextAndJson) {
  const auto data = chat_data();
  const auto& a = data[0].rows[0];  // 200 J per response
  const auto& b = data[0].rows[3];  // 300 J per response
  rp::CompareReport r{data, dg::decompose(a, b), {}, {}, {}};

  const std::string text = rp::render_text(r);
  EXPECT_TRUE(text.starts_with("A: org/a B200x1 batch 8")) << text;
  EXPECT_TRUE(has(text, "\nB: org/b B200x1 batch 8"));
  EXPECT_TRUE(has(text, "\nEnergy per response: A 200 J, B 300 J; B / A = 1.5000x\n"));
  EXPECT_TRUE(has(text, "Decomposition: E_resp = avg_output_len x avg_power_watts x median_itl / avg_batch_size x rho\n"));
  EXPECT_TRUE(has(text, "output length  avg_output_len"));
  EXPECT_TRUE(has(text, "findings for A:\n  no rule fired"));
  EXPECT_TRUE(has(text, "findings for B:\n  no rule fired"));
  // The product row: the factors multiply to B / A.
  const auto product = text.find("\nproduct");
  ASSERT_NE(product, std::string::npos);
  EXPECT_TRUE(has(text.substr(product, text.find('\n', product + 1) - product), "1.5000"));

  json j = json::parse(rp::render_json(r));
  EXPECT_EQ(j["command"], "diagnose compare");
  EXPECT_DOUBLE_EQ(j["energy_per_response_joules_a"].get<double>(), 200);
  EXPECT_NEAR(j["ratio_b_over_a"].get<double>(), 1.5, 1e-12);
  double prod = 1;
  for (const auto& f : j["factors"]) prod *= f["ratio"].get<double>();
  EXPECT_NEAR(prod, 1.5, 1e-9);
  EXPECT_EQ(j["a"]["model_id"], "org/a");
  EXPECT_FALSE(j.contains("plot"));
  r.plot_path = "wf.svg";
  j = json::parse(rp::render_json(r));
  EXPECT_EQ(j["plot"], "wf.svg");
}

TEST(DiagnoseRender, FrontierTextAndJson) {
  const auto data = chat_data();
  const auto rows = dg::all_rows(data);
  rp::FrontierReport r{data, "org/a", 20.0, dg::frontiers_for_model(rows, "org/a", 20.0), {}};
  ASSERT_EQ(r.frontiers.size(), 2u);  // B200 x1, and B200 over all counts

  const std::string text = rp::render_text(r);
  EXPECT_TRUE(has(text, "org/a on B200 x1: 3 configurations, 3 on the time-energy frontier\n")) << text;
  EXPECT_TRUE(has(text, "org/a on B200 x(all counts): 3 configurations"));
  EXPECT_TRUE(has(text, "GPUs  batch  median ITL ms  J/token  J/response  power W  mark"));
  EXPECT_TRUE(has(text, "feasible\n"));          // batch 8 at 10 ms
  EXPECT_TRUE(has(text, "best <= deadline\n"));  // batch 16 at 15 ms, 0.2 J/token
  EXPECT_TRUE(has(text, "min energy\n"));        // batch 64 at 30 ms
  EXPECT_TRUE(has(text, "  deadline 20 ms: 2 of 3 configurations feasible, best 0.2 J/token (chat.json row 1)\n"));
  EXPECT_TRUE(text.ends_with("source: test data, chat.json (4 rows, 0 invariant violations)\n"));

  json j = json::parse(rp::render_json(r));
  EXPECT_EQ(j["command"], "diagnose frontier");
  EXPECT_EQ(j["model_id"], "org/a");
  EXPECT_DOUBLE_EQ(j["deadline_ms"].get<double>(), 20);
  ASSERT_EQ(j["frontiers"].size(), 2u);
  EXPECT_EQ(j["frontiers"][0]["num_gpus"], 1);
  EXPECT_EQ(j["frontiers"][1]["num_gpus"], "all");
  EXPECT_EQ(j["frontiers"][0]["frontier"].size(), 3u);
  EXPECT_EQ(j["frontiers"][0]["min_energy"]["max_num_seqs"], 64);
  EXPECT_EQ(j["frontiers"][0]["feasible_under_deadline"], 2);
  EXPECT_EQ(j["frontiers"][0]["best_under_deadline"]["max_num_seqs"], 16);

  // A deadline nothing meets: no best, and JSON says null.
  r.deadline_ms = 1.0;
  r.frontiers = dg::frontiers_for_model(rows, "org/a", 1.0);
  EXPECT_TRUE(has(rp::render_text(r), "  deadline 1 ms: 0 of 3 configurations feasible, none\n"));
  j = json::parse(rp::render_json(r));
  EXPECT_TRUE(j["frontiers"][0]["best_under_deadline"].is_null());
  // Without a deadline neither the deadline line nor the deadline fields appear.
  r.deadline_ms.reset();
  r.frontiers = dg::frontiers_for_model(rows, "org/a");
  EXPECT_FALSE(has(rp::render_text(r), "deadline"));
  j = json::parse(rp::render_json(r));
  EXPECT_FALSE(j.contains("deadline_ms"));
  EXPECT_FALSE(j["frontiers"][0].contains("best_under_deadline"));
}

TEST(DiagnoseRender, MinEnergyWithPowerBudget) {
  const auto data = chat_data();
  dg::Filter f;
  f.gpu_model = "B200";
  rp::MinEnergyReport r{data, f, {&data[0].rows[2], &data[0].rows[3]}, 1200.0};
  const std::string text = rp::render_text(r);
  EXPECT_TRUE(text.starts_with("Minimum-energy configuration per model on B200\n")) << text;
  EXPECT_TRUE(has(text, "req/s @budget: requests per second a 1200 W GPU power budget serves"));
  const json j = json::parse(rp::render_json(r));
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["gpu_model"], "B200");
  EXPECT_NEAR(j["rows"][0]["requests_per_sec_under_budget"].get<double>(), 1200.0 / 50, 1e-9);  // 50 J per response
  EXPECT_EQ(j["rows"][0]["whole_replicas_under_budget"], 2);                                    // 1200 W / 600 W
  EXPECT_NEAR(j["rows"][0]["throughput_per_watt_tokens_per_sec_per_watt"].get<double>(), 10, 1e-9);  // 1 / 0.1 J
}

TEST(DiagnoseRender, GraphTextAndJson) {
  const rp::GraphReport g;
  const std::string text = rp::render_text(g);
  EXPECT_TRUE(text.starts_with("Causal graph of \"Where Do the Joules Go?\" (arXiv 2601.22076, section 2)\nnodes:\n"));
  EXPECT_TRUE(has(text, "  16. Energy ↔ Throughput/Watt"));
  const json j = json::parse(rp::render_json(g));
  EXPECT_EQ(j["nodes"].size(), 13u);
  EXPECT_EQ(j["edges"].size(), 16u);
  EXPECT_EQ(j["rules"].size(), dg::rules().size());
}

}  // namespace
