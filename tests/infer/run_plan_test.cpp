// Sizing runs for the 20 s rule and the interval over repeats, on known numbers.
#include "infer/run_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "infer/series.h"

namespace wattlab::infer {
namespace {

TEST(RunPlan, RequestsForTwentySecondsOfSteadyState) {
  // B = 64 at 5,000 tok/s with 400-token outputs: 12.5 finishes/s; 1.25 x 20 s needs 313 finishes
  // (312.5 rounded up), on top of the B + 1 the rule leaves out.
  EXPECT_EQ(required_requests(64, 400, 5000, 20, 1.25), 64 + 1 + 313);
  // Without margin, exactly 20 s: 250 finishes.
  EXPECT_EQ(required_requests(64, 400, 5000, 20, 1.0), 64 + 1 + 250);
  // The rule's minimum when nothing is needed.
  EXPECT_EQ(required_requests(8, 400, 5000, 0, 1.0), 10);
  // Leaderboard scale: Llama-3.1-8B on an H100 at B = 512 made 9,806 tok/s at 396.7 tokens out.
  EXPECT_EQ(required_requests(512, 396.7, 9806, 20, 1.25), 512 + 1 + 618);
}

TEST(RunPlan, FirstAndNextCounts) {
  SeriesPlan p;
  EXPECT_EQ(first_request_count(p, 16, 400), 3 * 16 + 2);  // a pilot
  p.base_set_size = 100;
  EXPECT_EQ(first_request_count(p, 16, 400), 100);          // a file is sent whole at least
  p.expect_tok_s = 2000;
  EXPECT_EQ(first_request_count(p, 16, 400), 16 + 1 + 125);  // 1.25 x 20 x 2000 / 400
  p.fixed_requests = 7;
  EXPECT_EQ(first_request_count(p, 16, 400), 7);
  SeriesPlan q;
  // A pilot of 50 measured 1000 tok/s: 63 finishes needed (62.5 up).
  EXPECT_EQ(next_request_count(50, 16, 400, 1000, q), 16 + 1 + 63);
  // When the sizing asks for no more than was sent, twice as many.
  EXPECT_EQ(next_request_count(500, 16, 400, 1000, q), 1000);
}

TEST(RunPlan, StudentTQuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062047, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.30265273, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.77644511, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.22813885, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.04227246, 1e-7);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.95996398, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.95, 5), 2.01504837, 1e-7);
}

TEST(RunPlan, IntervalOverThreeRepeats) {
  const std::vector<double> v{0.10, 0.12, 0.14};
  const MeanCi c = mean_ci95(v);
  EXPECT_EQ(c.n, 3u);
  EXPECT_NEAR(c.mean, 0.12, 1e-15);
  EXPECT_NEAR(c.sd, 0.02, 1e-15);
  EXPECT_NEAR(c.t, 4.30265273, 1e-7);
  EXPECT_NEAR(c.half_width, 4.30265273 * 0.02 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(c.low, 0.12 - c.half_width, 1e-15);
  EXPECT_TRUE(c.has_interval());
  const MeanCi one = mean_ci95(std::vector<double>{0.2});
  EXPECT_FALSE(one.has_interval());
  EXPECT_EQ(one.mean, 0.2);
  EXPECT_EQ(mean_ci95({}).n, 0u);
}

SeriesRun repeat(int index, double ept, bool stable, bool pilot = false) {
  SeriesRun r;
  r.index = index;
  r.pilot = pilot;
  auto& st = r.m.result.steady;
  st.window.found = true;
  st.energy.available = true;
  st.energy_per_token_j = ept;
  st.energy_per_token_uncertainty_j = ept / 100;
  st.stability.window_long_enough = stable;
  st.stability.energy_positive = true;
  st.stability.batch_held = true;
  return r;
}

TEST(RunPlan, TheIntervalTakesStableRepeatsOnly) {
  SeriesResult s;
  s.runs = {repeat(1, 9.0, false, true), repeat(1, 0.10, true), repeat(2, 0.50, false), repeat(3, 0.12, true),
            repeat(4, 0.14, true)};
  summarize_repeats(s);
  EXPECT_EQ(s.included, (std::vector<int>{1, 3, 4}));  // the pilot is no repeat; repeat 2 is unstable
  ASSERT_EQ(s.excluded.size(), 1u);
  EXPECT_EQ(s.excluded[0].first, 2);
  EXPECT_NE(s.excluded[0].second.find("unstable"), std::string::npos);
  EXPECT_NEAR(s.energy_per_token_j.mean, 0.12, 1e-15);
  EXPECT_NEAR(s.energy_per_token_j.high, 0.12 + 4.30265273 * 0.02 / std::sqrt(3.0), 1e-9);
  EXPECT_NEAR(s.mean_u95_energy_per_token_j, 0.0012, 1e-15);
}

}  // namespace
}  // namespace wattlab::infer
