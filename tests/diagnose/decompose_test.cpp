#include "diagnose/decompose.h"

#include <cmath>

#include "test_data.h"
#include "wattlab/core/error.h"
#include "diagnose/select.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(Decompose, ReasoningOnAndOffQwen32b) {
  Rows rows = rows_of(chat());
  for (const auto* r : rows_of(gpqa())) rows.push_back(r);
  const auto& a = resolve(parse_selector("model=Qwen/Qwen3-32B,task=lm-arena-chat,gpu=B200,gpus=1,batch=128"), rows);
  const auto& b = resolve(parse_selector("model=Qwen/Qwen3-32B,task=gpqa,gpu=B200,gpus=1,batch=128"), rows);
  const auto d = decompose(a, b);
  ASSERT_EQ(d.factors.size(), 5u);
  double prod = 1, shares = 0;
  for (const auto& f : d.factors) {
    prod *= f.ratio;
    shares += f.log_share;
  }
  EXPECT_NEAR(prod, d.total_ratio, 1e-9 * d.total_ratio);
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_NEAR(d.energy_b_j, 2192, 1);                     // the paper: 2,192 J per response
  EXPECT_NEAR(b.energy_per_unit_j() / a.energy_per_unit_j(), 1.5, 0.05);  // the paper: 1.5x at batch 128
  EXPECT_EQ(d.factors[0].name, "output length");
  EXPECT_NEAR(d.factors[0].ratio, 7035.0 / 634.1, 0.01);
  EXPECT_GT(d.factors[0].log_share, 0.8);  // output length dominates
}

TEST(Decompose, DiffusionIsExactAndMixedIsRejected) {
  const Rows rows = rows_of(images());
  const auto& a = *rows[0];
  const auto& b = *rows[10];
  const auto d = decompose(a, b);
  ASSERT_EQ(d.factors.size(), 4u);
  EXPECT_NEAR(d.factors.back().ratio, 1.0, 1e-6);  // the invariant holds, so the residual is 1
  double prod = 1;
  for (const auto& f : d.factors) prod *= f.ratio;
  EXPECT_NEAR(prod, d.total_ratio, 1e-9);
  EXPECT_THROW(decompose(a, chat().rows[0]), wattlab::UsageError);
  EXPECT_NEAR(steady_decode_residual(chat().rows[0]), 1.0, 0.3);
}
