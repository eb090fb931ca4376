#include "test_data.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(Invariants, SharedFilesHaveNone) {
  EXPECT_EQ(chat().violations.size(), 0u);
  EXPECT_EQ(gpqa().violations.size(), 0u);
  EXPECT_EQ(images().violations.size(), 0u);
}

TEST(Invariants, EachBrokenRelationIsReportedPerRow) {
  ConfigRecord r = chat().rows.at(5);
  EXPECT_TRUE(check_invariants(r).empty());
  r.llm->energy_per_request_joules *= 1.01;
  auto v = check_invariants(r);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].row_index, 5u);
  EXPECT_NE(v[0].invariant.find("energy_per_request_joules"), std::string::npos);
  EXPECT_NEAR(v[0].rel_error, 0.01 / 1.01, 1e-9);
  EXPECT_NE(v[0].message().find("lm-arena-chat.json row 5"), std::string::npos);
  r.avg_power_watts *= 2;  // breaks the power relation, and 1520 W exceeds the B200 TDP
  v = check_invariants(r);
  EXPECT_GE(v.size(), 2u);
}

TEST(Invariants, DiffusionEnergyAndThroughput) {
  ConfigRecord r = images().rows.at(3);
  EXPECT_TRUE(check_invariants(r).empty());
  r.diffusion->throughput_per_sec *= 1.5;
  const auto v = check_invariants(r);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].invariant.find("throughput_images_per_sec"), std::string::npos);
}

TEST(Invariants, PerGpuPowerAboveTdp) {
  ConfigRecord r = chat().rows.at(0);
  r.avg_power_watts = 1500 * r.num_gpus;
  r.llm->energy_per_token_joules = r.avg_power_watts / r.llm->output_throughput_tokens_per_sec;
  r.llm->energy_per_request_joules = r.llm->energy_per_token_joules * r.llm->avg_output_len;
  const auto v = check_invariants(r);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_NE(v[0].invariant.find("power limit"), std::string::npos);
}
