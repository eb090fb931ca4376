#include "diagnose/records.h"

#include "test_data.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(Records, AccessorsFollowTheWorkload) {
  const auto& c = chat().rows.front();
  EXPECT_EQ(c.workload, Workload::llm);
  EXPECT_EQ(c.batch(), c.llm->max_num_seqs);
  EXPECT_DOUBLE_EQ(c.energy_per_unit_j(), c.llm->energy_per_token_joules);
  EXPECT_DOUBLE_EQ(c.latency_ms(), c.llm->median_itl_ms);
  EXPECT_DOUBLE_EQ(c.throughput_per_watt(), 1.0 / c.llm->energy_per_token_joules);
  EXPECT_STREQ(c.unit(), "token");
  const auto& i = images().rows.front();
  EXPECT_EQ(i.workload, Workload::diffusion);
  EXPECT_STREQ(i.unit(), "image");
  EXPECT_DOUBLE_EQ(i.latency_ms(), i.diffusion->batch_latency_s * 1000);
  EXPECT_EQ(i.where(), "text-to-image.json row 0");
}

TEST(Records, GpuSpecsAndPowerLimit) {
  ASSERT_NE(find_gpu_spec("H100"), nullptr);
  EXPECT_DOUBLE_EQ(find_gpu_spec("H100")->tdp_w, 700);
  EXPECT_DOUBLE_EQ(find_gpu_spec("NVIDIA B200")->tdp_w, 1000);
  EXPECT_EQ(find_gpu_spec("MI300X"), nullptr);
  ConfigRecord r = chat().rows.front();
  EXPECT_EQ(power_limit_per_gpu_w(r), 1000.0);  // B200
  r.measured.power_limit_watts = 600;
  EXPECT_EQ(power_limit_per_gpu_w(r), 600.0);  // measured limit wins
  EXPECT_TRUE(r.measured.any());
}
