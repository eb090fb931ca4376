#include "diagnose/capacity.h"

#include "test_data.h"
#include "diagnose/select.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(Capacity, ThroughputPerWattAndBudget) {
  const auto& r = resolve(parse_selector("model=Qwen/Qwen3-8B,gpu=B200,gpus=1,pick=min-energy"), rows_of(chat()));
  EXPECT_NEAR(r.energy_per_unit_j(), 0.053, 0.001);  // the paper: 0.053 J/token
  const auto c = capacity_under_budget(r, 10000);
  EXPECT_NEAR(c.throughput_per_watt, 18.9, 0.2);  // the paper: ~18.9 tok/s/W
  EXPECT_NEAR(c.units_per_sec, c.throughput_per_watt * 10000, 1e-6);
  EXPECT_NEAR(c.requests_per_sec, 10000 / r.energy_per_response_j(), 1e-9);
  EXPECT_EQ(c.whole_replicas, static_cast<int>(10000 / r.avg_power_watts));
  EXPECT_LE(c.whole_replica_requests_per_sec, c.requests_per_sec + 1e-9);
}
