#include "diagnose/frontier.h"

#include "test_data.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(Frontier, Llama8bOneH100) {
  const auto frs = frontiers_for_model(rows_of(chat()), "meta-llama/Llama-3.1-8B-Instruct", 20.0);
  const Frontier* h1 = nullptr;
  for (const auto& f : frs)
    if (f.gpu_model == "H100" && f.num_gpus == 1) h1 = &f;
  ASSERT_NE(h1, nullptr);
  EXPECT_EQ(h1->points.size(), 11u);
  EXPECT_EQ(h1->frontier.size(), 10u);  // batch 768 is dominated by 512
  EXPECT_EQ(h1->min_energy->batch(), 512);
  EXPECT_NEAR(h1->min_energy->energy_per_unit_j(), 0.0702, 5e-4);
  EXPECT_NEAR(h1->frontier.front()->energy_per_unit_j(), 0.4548, 5e-4);  // batch 8
  EXPECT_EQ(h1->feasible, 6u);
  EXPECT_EQ(h1->best_under_deadline->batch(), 128);
  for (std::size_t i = 1; i < h1->frontier.size(); ++i) {
    EXPECT_GT(h1->frontier[i]->latency_ms(), h1->frontier[i - 1]->latency_ms());
    EXPECT_LT(h1->frontier[i]->energy_per_unit_j(), h1->frontier[i - 1]->energy_per_unit_j());
  }
}

TEST(Frontier, DominanceOnSmallSet) {
  const auto& rows = chat().rows;
  // Pick three rows of one curve and check is_dominated against the frontier.
  const Rows all = rows_of(chat());
  const auto frs = frontiers_for_model(all, "meta-llama/Llama-3.1-8B-Instruct");
  for (const auto& f : frs) {
    for (const auto* p : f.points) {
      const bool on = std::find(f.frontier.begin(), f.frontier.end(), p) != f.frontier.end();
      EXPECT_EQ(on, !is_dominated(*p, f.points)) << p->where();
    }
  }
  EXPECT_TRUE(pareto_frontier({}).empty());
  EXPECT_FALSE(rows.empty());
}
