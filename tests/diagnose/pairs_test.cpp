#include "diagnose/pairs.h"

#include "test_data.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(Pairs, B200AgainstH100ImagesAtMatchedDeadlines) {
  std::vector<double> changes;
  std::size_t wins = 0, n = 0;
  for (double d : {10000.0, 30000.0, 60000.0}) {
    const auto s = compare_gpus(rows_of(images()), "H100", "B200", d);
    n += s.n;
    wins += s.b_wins_energy;
    for (const auto& p : s.pairs) changes.push_back(p.energy_change());
    if (d == 30000.0) {
      EXPECT_NEAR(s.median_energy_change, -0.15, 0.01);  // the paper: median -15 %
    }
  }
  EXPECT_EQ(n, 21u);
  EXPECT_EQ(wins, 18u);  // the paper: B200 wins 18/21 image pairs
  EXPECT_NEAR(median_of(changes), -0.15, 0.01);
}

TEST(Pairs, Fp8AgainstBf16ByBatchBin) {
  Rows rows = rows_of(chat());
  for (const auto* r : rows_of(gpqa())) rows.push_back(r);
  const auto small = compare_fp8_bf16(rows, 8, 16);
  ASSERT_GT(small.n, 0u);
  EXPECT_EQ(small.b_wins_energy, 0u);  // the paper: FP8 wins 0 pairs at batch 8-16
  EXPECT_GT(small.median_energy_change, 0.2);
  const auto large = compare_fp8_bf16(rows, 65, 256);
  ASSERT_GT(large.n, 0u);
  EXPECT_EQ(large.b_wins_energy, large.n);
  EXPECT_LT(large.median_energy_change, 0);
  EXPECT_EQ(bf16_sibling_id("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8"), "Qwen/Qwen3-235B-A22B-Instruct-2507");
  EXPECT_EQ(bf16_sibling_id("Qwen/Qwen3-8B"), "");
}

TEST(Pairs, MoreGpusAtEqualBatchAndMoeAgainstDense) {
  const auto g = compare_gpu_counts(rows_of(gpqa()));
  ASSERT_GT(g.n, 10u);
  EXPECT_GT(g.n - g.b_wins_energy, g.n / 2);  // more GPUs raise J/token in most pairs
  EXPECT_GT(g.b_wins_latency, g.n / 2);       // and lower latency in most
  const auto m = compare_models(rows_of(gpqa()), "Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B-Thinking-2507", "B200");
  ASSERT_EQ(m.n, 1u);
  EXPECT_NEAR(m.pairs[0].a->energy_per_unit_j() / m.pairs[0].b->energy_per_unit_j(), 3.56, 0.01);  // the paper: 3.56x
  const auto md = compare_moe_dense(rows_of(gpqa()), "B200");
  bool found = false;
  for (const auto& p : md.pairs)
    if (p.b->model_id == "Qwen/Qwen3-30B-A3B-Thinking-2507") {
      found = true;
      EXPECT_EQ(p.a->model_id, "Qwen/Qwen3-32B");
    }
  EXPECT_TRUE(found);
}
