// LiveMeter: published energy never goes back; the helpers name GPUs and throttle reasons.
#include "export/live.h"

#include <gtest/gtest.h>

#include "prom_fixture.h"

namespace wattlab {
namespace {

TEST(Live, GpuIndexFromDomainId) {
  EXPECT_EQ(gpu_index_of("gpu:0"), "0");
  EXPECT_EQ(gpu_index_of("gpu:12/memory"), "12");
  EXPECT_EQ(gpu_index_of("cpu:0/package"), "");
}

TEST(Live, ClockEventReasonNames) {
  EXPECT_EQ(clock_event_reason_names(0), std::vector<std::string>{});
  EXPECT_EQ(clock_event_reason_names(0x4 | 0x1), (std::vector<std::string>{"gpu_idle", "sw_power_cap"}));
  EXPECT_EQ(clock_event_reason_names(0x1000), std::vector<std::string>{"bit_0x1000"});
}

TEST(Live, EnergyIsPublishedMonotonicWhileTheTimelineRevisesDown) {
  // The sample buffer is read once a second while power is extended from instant readings;
  // successive snapshots taken every 10 ms may revise the extension down: never published.
  sim::SimConfig c;
  c.workload = "periodic 690W 120W period=80ms duty=0.5 10s";
  c.faults = "counter-reset 2s";
  testing::LiveSim s(c);
  double prev = -1;
  int64_t prev_t_ns = INT64_MIN;
  bool raw_went_back = false;
  double raw_prev = -1;
  for (int64_t k = 1; k <= 300; ++k) {
    s.meter->advance_to(s.gpu->origin_ns() + k * 10'000'000);
    const MeterSnapshot raw = s.meter->snapshot();
    const MeterSnapshot pub = s.live->sample();
    if (!pub.domains[0].energy_ok) continue;
    if (raw.domains[0].energy_j < raw_prev) raw_went_back = true;
    raw_prev = raw.domains[0].energy_j;
    EXPECT_GE(pub.domains[0].energy_j, prev) << "at step " << k;
    EXPECT_GE(pub.domains[0].energy_j, raw.domains[0].energy_j);
    EXPECT_GE(pub.domains[0].energy_t_ns, prev_t_ns) << "at step " << k;
    // A held value keeps the time it belongs to.
    if (pub.domains[0].energy_j > raw.domains[0].energy_j) {
      EXPECT_EQ(pub.domains[0].energy_j, prev) << "at step " << k;
      EXPECT_EQ(pub.domains[0].energy_t_ns, prev_t_ns) << "at step " << k;
    }
    prev = pub.domains[0].energy_j;
    prev_t_ns = pub.domains[0].energy_t_ns;
  }
  EXPECT_GT(prev, 0);
  // Say whether the clamp was exercised; the property above holds either way.
  RecordProperty("timeline_revised_down", raw_went_back ? "yes" : "no");
}

}  // namespace
}  // namespace wattlab
