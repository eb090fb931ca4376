#include "diagnose/summary.h"

#include "test_data.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(Summary, ProblemSolvingAndChat) {
  const auto ps = summarize_task(gpqa());
  EXPECT_EQ(ps.rows, 187u);
  EXPECT_EQ(ps.models, 12u);
  EXPECT_EQ(ps.minima.size(), 12u);
  EXPECT_NEAR(ps.mean_output_len_tokens, 6987.7, 0.05);
  EXPECT_NEAR(ps.mean_energy_per_response_j, 4624.6, 0.05);
  const auto ch = summarize_task(chat());
  EXPECT_EQ(ch.models, 18u);
  EXPECT_EQ(ch.minima.size(), 16u);
  EXPECT_NEAR(ch.mean_output_len_tokens, 716.7, 0.05);
  EXPECT_NEAR(ch.mean_energy_per_response_j, 183.8, 0.05);
  EXPECT_GT(ch.batch_effect_min, 3.0);
}

TEST(Summary, TextToImageSpansTwentyX) {
  const auto s = summarize_task(images());
  EXPECT_EQ(s.workload, Workload::diffusion);
  EXPECT_EQ(s.minima.size(), 7u);
  EXPECT_EQ(s.minima_on_one_gpu, 7u);  // the paper: every image minimum is on 1 GPU
  EXPECT_EQ(s.lowest->nickname, "SANA 1.5 1.6B");
  EXPECT_NEAR(s.lowest->energy_per_response_j(), 338, 0.5);
  EXPECT_EQ(s.highest->model_id, "black-forest-labs/FLUX.1-dev");
  EXPECT_NEAR(s.highest->energy_per_response_j(), 6679, 0.5);
  EXPECT_EQ(s.batch_groups, 28u);
}
