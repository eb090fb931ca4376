#include "diagnose/min_energy.h"

#include "test_data.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

namespace {
double mean_request(const Rows& r) {
  double s = 0;
  for (const auto* x : r) s += x->energy_per_response_j();
  return s / static_cast<double>(r.size());
}
double mean_len(const Rows& r) {
  double s = 0;
  for (const auto* x : r) s += x->llm->avg_output_len;
  return s / static_cast<double>(r.size());
}
}  // namespace

TEST(MinEnergy, PaperHeadlineOnB200) {
  Filter f;
  f.gpu_model = "B200";
  const Rows ps = min_energy_per_model(rows_of(gpqa()), f);
  ASSERT_EQ(ps.size(), 12u);
  EXPECT_NEAR(mean_len(ps), 6987.7, 0.05);
  EXPECT_NEAR(mean_request(ps), 4624.6, 0.05);
  const Rows ch = min_energy_per_model(rows_of(chat()), f);
  ASSERT_EQ(ch.size(), 16u);
  EXPECT_NEAR(mean_len(ch), 716.7, 0.05);
  EXPECT_NEAR(mean_request(ch), 183.8, 0.05);
  EXPECT_NEAR(mean_request(ps) / mean_request(ch), 25.2, 0.05);
}

TEST(MinEnergy, PerGroupAndMoE) {
  Filter f;
  f.gpu_model = "B200";
  f.model = "Qwen/Qwen3-30B-A3B-Thinking-2507";
  const Rows m = min_energy_per_model(rows_of(gpqa()), f);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_NEAR(m[0]->energy_per_unit_j(), 0.0876, 5e-4);  // the paper's 0.088
  f.model = "Qwen/Qwen3-32B";
  EXPECT_NEAR(min_energy_per_model(rows_of(gpqa()), f)[0]->energy_per_unit_j(), 0.3116, 5e-4);
  // One row per (model, task, GPU, count): 1xH100 gpt-oss-120b stops at batch 64 (0.27 J), 2xH100 at 2048 (0.09 J).
  Filter g;
  g.model = "openai/gpt-oss-120b";
  g.gpu_model = "H100";
  const Rows groups = min_energy_per_group(rows_of(gpqa()), g);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]->num_gpus, 1);
  EXPECT_EQ(groups[0]->batch(), 64);
  EXPECT_NEAR(groups[0]->energy_per_unit_j(), 0.27, 0.005);
  EXPECT_EQ(groups[1]->batch(), 2048);
  EXPECT_NEAR(groups[1]->energy_per_unit_j(), 0.09, 0.005);
  EXPECT_NEAR(1 - groups[1]->energy_per_unit_j() / groups[0]->energy_per_unit_j(), 0.68, 0.01);
}

TEST(MinEnergy, DeadlineAndBudget) {
  Filter f;
  f.gpu_model = "H100";
  f.model = "meta-llama/Llama-3.1-8B-Instruct";
  f.deadline_ms = 20;
  const Rows d = min_energy_per_model(rows_of(chat()), f);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_LE(d[0]->latency_ms(), 20);
  EXPECT_EQ(d[0]->batch(), 128);  // batch 192 has median ITL 20.9 ms
  Filter b;
  b.model = f.model;
  b.gpu_model = "H100";
  const Rows fast = best_latency_within_budget(rows_of(chat()), 50.0, b);  // J per request
  ASSERT_EQ(fast.size(), 1u);
  EXPECT_LE(fast[0]->energy_per_response_j(), 50.0);
  EXPECT_EQ(fast[0]->batch(), 64);
  f.deadline_ms = 1;
  EXPECT_TRUE(min_energy_per_model(rows_of(chat()), f).empty());
}
