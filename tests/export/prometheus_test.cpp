// The exposition of a fixed virtual-clock sim run, as exact text; and its conventions.
#include "export/prometheus.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "prom_fixture.h"

namespace wattlab {
namespace {

sim::SimConfig board(std::string faults = "") {
  sim::SimConfig c;
  c.workload = "step 300W 60s";
  c.faults = std::move(faults);
  c.seed = 7;
  return c;
}

ExpositionInfo node_a() {
  ExpositionInfo info;
  info.host = "node-a";
  info.device_selection = "sim";
  return info;
}

// The value of the one series of `metric` whose labels contain `has`.
double value_of(const std::string& text, const std::string& metric, const std::string& has = "") {
  std::istringstream in(text);
  std::string line;
  std::optional<double> found;
  while (std::getline(in, line)) {
    if (line.rfind(metric + "{", 0) != 0 && line.rfind(metric + " ", 0) != 0) continue;
    if (!has.empty() && line.find(has) == std::string::npos) continue;
    EXPECT_FALSE(found) << "two series of " << metric << " with " << has;
    found = std::stod(line.substr(line.rfind(' ') + 1));
  }
  EXPECT_TRUE(found) << metric << " " << has << " missing in\n" << text;
  return found.value_or(-1);
}

TEST(Prometheus, ExactTextForAFixedSimRun) {
  testing::LiveSim s(board());
  const std::string text = format_prometheus(s.meter->domains(), s.at(2.0), node_a());
  const std::string path = std::string(WATTLAB_EXPORT_TEST_DATA) + "/sim_exposition.txt";
  if (std::getenv("WATTLAB_WRITE_EXPECTED")) {
    std::ofstream(path) << text;
    FAIL() << "wrote " << path << "; review it, then run without WATTLAB_WRITE_EXPECTED";
  }
  std::ifstream f(path);
  ASSERT_TRUE(f) << path;
  std::stringstream expected;
  expected << f.rdbuf();
  EXPECT_EQ(text, expected.str());
}

TEST(Prometheus, EnergyCounterFollowsTheTruthAndStaysMonotonicAcrossACounterReset) {
  testing::LiveSim s(board("counter-reset 3s"));
  const int64_t t0 = s.gpu->origin_ns();
  double prev = 0;
  std::optional<std::pair<int64_t, double>> first;
  for (int k = 1; k <= 60; ++k) {  // 0.1 s steps to 6 s, across the reset at 3 s
    const MeterSnapshot snap = s.at(0.1 * k);
    const DomainLive& d = snap.domains.at(0);
    ASSERT_TRUE(d.energy_ok);
    EXPECT_GE(d.energy_j, prev) << "at " << 0.1 * k << " s";
    prev = d.energy_j;
    if (!first) first = std::make_pair(d.energy_t_ns, d.energy_j);
    if (k == 60) {
      EXPECT_EQ(d.counter_resets, 1u);
      const std::string text = format_prometheus(s.meter->domains(), snap, node_a());
      EXPECT_EQ(value_of(text, "wattlab_energy_counter_resets_total"), 1);
      // Energy between the first and last published values against the board's true energy
      // times its gain (what its sensors see), within 1%: the reset was bridged, not lost.
      const double truth = s.gpu->gain(0) * s.gpu->true_energy_j(first->first, d.energy_t_ns);
      EXPECT_NEAR(d.energy_j - first->second, truth, 0.01 * truth);
      EXPECT_NEAR(value_of(text, "wattlab_energy_joules_total"), d.energy_j, 1e-9);
    }
  }
  (void)t0;
}

TEST(Prometheus, ReadErrorsAndAgesShowInSensorHealth) {
  testing::LiveSim s(board("read-error power_instant_w 1s-1.5s"));
  const std::string text = format_prometheus(s.meter->domains(), s.at(1.5), node_a());
  // Read every 100 ms (once per refresh; the sample buffer gives the shape): ~5 failures.
  EXPECT_GE(value_of(text, "wattlab_sensor_read_errors_total", "reading=\"power_instant_w\""), 4);
  EXPECT_EQ(value_of(text, "wattlab_sensor_read_errors_total", "reading=\"power_average_w\""), 0);
  // The instant power has not been read successfully since the errors began at 1 s.
  EXPECT_GE(value_of(text, "wattlab_sensor_last_success_age_seconds", "reading=\"power_instant_w\""), 0.45);
  EXPECT_LT(value_of(text, "wattlab_sensor_last_success_age_seconds", "reading=\"power_average_w\""), 0.11);
}

// Whether any series of `metric` has labels containing `has`.
bool has_series(const std::string& text, const std::string& metric, const std::string& has) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(metric + "{", 0) == 0 && line.find(has) != std::string::npos) return true;
  return false;
}

TEST(Prometheus, ALostGpuSaysSoAndStopsRepeatingItsLastTelemetry) {
  testing::LiveSim s(board("gpu-lost 1s"));
  const std::string gpu0 = "domain=\"gpu:0\"";
  const char* gauges[] = {"wattlab_power_watts", "wattlab_power_limit_watts", "wattlab_clock_hertz",
                          "wattlab_temperature_celsius", "wattlab_utilization_ratio", "wattlab_memory_used_bytes",
                          "wattlab_throttle_reason_active"};
  const std::string before = format_prometheus(s.meter->domains(), s.at(0.9), node_a());
  EXPECT_EQ(value_of(before, "wattlab_domain_up", gpu0), 1);
  for (const char* g : gauges) EXPECT_TRUE(has_series(before, g, gpu0)) << g << " missing before the loss";
  const std::string after = format_prometheus(s.meter->domains(), s.at(2.0), node_a());
  EXPECT_EQ(value_of(after, "wattlab_domain_up", gpu0), 0);
  for (const char* g : gauges) EXPECT_FALSE(has_series(after, g, gpu0)) << g << " still exported after the loss";
  // The energy counter keeps its final value (the energy used until the loss), its age grows.
  const double e = value_of(after, "wattlab_energy_joules_total", gpu0);
  const std::string later = format_prometheus(s.meter->domains(), s.at(3.0), node_a());
  EXPECT_EQ(value_of(later, "wattlab_energy_joules_total", gpu0), e);
  EXPECT_GT(value_of(later, "wattlab_energy_age_seconds", gpu0), 1.9);
  EXPECT_EQ(value_of(later, "wattlab_domain_up", gpu0), 0);
}

TEST(Prometheus, AReadingWhoseReadsFailIsOmittedUntilOneSucceeds) {
  testing::LiveSim s(board("read-error power_instant_w 1s-1.5s"));
  const std::string during = format_prometheus(s.meter->domains(), s.at(1.45), node_a());
  EXPECT_FALSE(has_series(during, "wattlab_power_watts", "kind=\"instant\"")) << during;
  EXPECT_TRUE(has_series(during, "wattlab_power_watts", "kind=\"average\""));
  EXPECT_EQ(value_of(during, "wattlab_domain_up", "domain=\"gpu:0\""), 1);
  const std::string after = format_prometheus(s.meter->domains(), s.at(1.7), node_a());
  EXPECT_TRUE(has_series(after, "wattlab_power_watts", "kind=\"instant\"")) << after;
}

TEST(Prometheus, RealDomainsCpuLabelsThrottleFlagsAndNoCounterDomains) {
  Domain gpu;
  gpu.id = "gpu:1/memory";
  gpu.name = "NVIDIA \"H200\"\\x";
  gpu.uuid = "GPU-abc";
  gpu.scope = "memory";
  gpu.model.readings = {{ReadingKind::power_instant_w}, {ReadingKind::clock_event_reasons}};
  Domain cpu;
  cpu.id = "cpu:0/package";
  cpu.name = "Intel package";
  cpu.scope = "package";
  cpu.model.readings = {{ReadingKind::energy_counter_j}};
  MeterSnapshot snap;
  snap.t_ns = 10'000'000'000;
  snap.domains.resize(2);
  snap.domains[0].energy_ok = true;
  snap.domains[0].energy_j = 12.5;
  snap.domains[0].energy_t_ns = 9'500'000'000;
  snap.domains[0].unmeasured_ns = 250'000'000;
  snap.domains[0].readings[static_cast<std::size_t>(ReadingKind::clock_event_reasons)].latest =
      Reading{9'000'000'000, ReadingKind::clock_event_reasons, 0x4 | 0x40, 0, 0};
  snap.domains[1].energy_ok = true;
  snap.domains[1].energy_j = 100;
  snap.domains[1].energy_t_ns = 10'000'000'000;
  ExpositionInfo info;
  info.host = "h";
  info.device_selection = "auto";
  info.http = ServerCounters{3, 0, 1, 0, 0, 0};
  const std::string text = format_prometheus({gpu, cpu}, snap, info);
  EXPECT_EQ(text.find("SIMULATED"), std::string::npos) << "real devices carry no SIMULATED note";
  EXPECT_NE(text.find(R"(wattlab_energy_joules_total{host="h",domain="gpu:1/memory",gpu="1",uuid="GPU-abc",name="NVIDIA \"H200\"\\x",scope="memory",simulated="false"} 12.5)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(wattlab_energy_joules_total{host="h",domain="cpu:0/package",uuid="",name="Intel package",scope="package",simulated="false"} 100)"),
            std::string::npos)
      << text;
  EXPECT_EQ(value_of(text, "wattlab_energy_unmeasured_seconds_total"), 0.25);
  EXPECT_EQ(value_of(text, "wattlab_energy_age_seconds", "gpu:1"), 0.5);
  EXPECT_EQ(value_of(text, "wattlab_throttle_reason_active", "reason=\"sw_power_cap\""), 1);
  EXPECT_EQ(value_of(text, "wattlab_throttle_reason_active", "reason=\"hw_thermal_slowdown\""), 1);
  EXPECT_EQ(value_of(text, "wattlab_throttle_reason_active", "reason=\"gpu_idle\""), 0);
  EXPECT_EQ(value_of(text, "wattlab_exporter_scrapes_total"), 3);
  // Every family has HELP and TYPE before its first sample, and every sample line parses.
  std::istringstream in(text);
  std::string line, family;
  const std::regex sample(R"(^(wattlab_[a-z_]+)(\{([a-z_]+="([^"\\]|\\.)*",?)*\})? [-+0-9.eInfNa]+$)");
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, sample)) << line;
    EXPECT_EQ(m[1].str().rfind(family, 0), 0u) << line << " outside its family " << family;
  }
}

}  // namespace
}  // namespace wattlab
