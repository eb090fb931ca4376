#include "sensors/sim/sim_workload.h"

#include <gtest/gtest.h>

#include "wattlab/core/error.h"

namespace wattlab::sim {

// Numerical integration at 10 us steps, to check the analytic energy.
double numeric_energy(const Workload& w, int64_t a, int64_t b) {
  double e = 0;
  const int64_t dt = 10'000;
  for (int64_t t = a; t < b; t += dt) e += w.power_w(t + dt / 2) * 1e-5;
  return e;
}

TEST(Workload, AnalyticEnergyMatchesIntegration) {
  auto w = Workload::parse("idle 1s; step 450W 2s; periodic 690W 120W period=80ms duty=0.5 3s; gemm 0.5 1s; loop");
  EXPECT_EQ(w.cycle_ns(), 7'000'000'000);
  for (auto [a, b] : {std::pair<int64_t, int64_t>{0, 1'000'000'000}, {500'000'000, 2'345'678'901},
                      {3'010'000'000, 5'990'000'000}, {6'500'000'000, 15'250'000'000}}) {
    EXPECT_NEAR(w.energy_j(a, b), numeric_energy(w, a, b), 1e-6 * w.energy_j(a, b) + 1e-3) << a << ".." << b;
  }
  EXPECT_DOUBLE_EQ(w.energy_j(1'000'000'000), 75.0);
  EXPECT_DOUBLE_EQ(w.power_w(1'500'000'000), 450.0);
  EXPECT_DOUBLE_EQ(w.power_w(3'000'000'000 + 10'000'000), 690.0);
  EXPECT_DOUBLE_EQ(w.power_w(3'000'000'000 + 50'000'000), 120.0);
  EXPECT_DOUBLE_EQ(w.power_w(8'500'000'000), 450.0);  // second cycle
}

TEST(Workload, CapClampsPowerAndCountsCappedTime) {
  auto w = Workload::parse("cap 500W; step 650W 1s; cap none; step 650W 1s");
  EXPECT_DOUBLE_EQ(w.power_w(500'000'000), 500.0);
  EXPECT_TRUE(w.capped_at(500'000'000));
  EXPECT_DOUBLE_EQ(w.power_w(1'500'000'000), 650.0);
  EXPECT_FALSE(w.capped_at(1'500'000'000));
  EXPECT_EQ(w.capped_ns(2'000'000'000), 1'000'000'000);
  EXPECT_NEAR(w.energy_j(2'000'000'000), 1150.0, 1e-9);
  // After a non-looping script: idle.
  EXPECT_DOUBLE_EQ(w.power_w(5'000'000'000), 75.0);
  EXPECT_NEAR(w.energy_j(3'000'000'000), 1150.0 + 75.0, 1e-9);
}

TEST(Workload, GemmPowerFollowsActivityUpToTheBoardCap) {
  auto w = Workload::parse("gemm 0.2 1s; gemm 1.0 1s");
  EXPECT_GT(w.power_w(1'500'000'000), w.power_w(500'000'000));
  EXPECT_DOUBLE_EQ(w.power_w(1'500'000'000), 700.0);  // capped at the 700 W default limit
  EXPECT_TRUE(w.segment_at(0).tensor);
}

TEST(Workload, BadScriptsNameTheBadPart) {
  auto msg = [](const char* s) {
    try {
      Workload::parse(s);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("idle 1s; jump 3s").find("unknown segment 'jump'"), std::string::npos);
  EXPECT_NE(msg("step 450 2s").find("'450' needs a unit"), std::string::npos);
  EXPECT_NE(msg("idle 2x").find("needs a unit"), std::string::npos);
  EXPECT_NE(msg("periodic 600W 100W period=80ms duty=1.5 2s").find("duty must be"), std::string::npos);
  EXPECT_NE(msg("").find("no segments"), std::string::npos);
  EXPECT_NE(msg("idle 1s; loop; idle 1s").find("nothing may follow"), std::string::npos);
  EXPECT_NE(msg("idle -1s").find("must be positive"), std::string::npos);
}

// Found by fuzz/fuzz_sim_workload.cpp: a duration past int64 ns gave a workload of negative length,
// one that rounds to 0 ns gave a cycle of 0 ns (a division by zero in energy_j of a looping script),
// and many long segments overflowed the cycle.
TEST(Workload, DurationsAndTheCycleAreBounded) {
  auto msg = [](const std::string& s) {
    try {
      Workload::parse(s);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg("idle\r557777777777777777777777777777777777777777777777777777777777777777777777777777777777777s"),
            "sim workload: duration '557777777777777777777777777777777777777777777777777777777777777777777777777777777777777s' "
            "is longer than 10^7 s");
  EXPECT_EQ(msg("idle 0.4ns; loop"), "sim workload: duration '0.4ns' is shorter than 1 ns");
  EXPECT_EQ(msg("periodic 600W 100W period=0.1ns duty=0.5 2s"), "sim workload: duration '0.1ns' is shorter than 1 ns");
  std::string eleven;
  for (int i = 0; i < 11; ++i) eleven += "idle 10000000s;";
  EXPECT_NE(msg(eleven).find("segment 11 'idle 10000000s': the script lasts longer than 10^8 s"), std::string::npos)
      << msg(eleven);
  // The bounds themselves are fine, and the energy over them is exact.
  const auto w = Workload::parse("step 100W 10000000s; idle 0.5ns; loop");
  EXPECT_EQ(w.cycle_ns(), kMaxDurationNs + 1);
  EXPECT_DOUBLE_EQ(w.energy_j(kMaxDurationNs), 100.0 * 1e7);
  EXPECT_DOUBLE_EQ(w.energy_j(2 * (kMaxDurationNs + 1)), 2 * (100.0 * 1e7 + 75.0 * 1e-9));
}

}  // namespace wattlab::sim
