// `wattlab serve`'s per-process counters over the fake NVML with several processes, on real time:
// after a few polls the exposition has a counter per process and the GPU's idle counter, and they
// add up to the board's energy; on the simulated GPU it has nothing.
#include "cli/serve_processes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "sensors/nvml/fake_nvml_env.h"

namespace wattlab::cli {
namespace {

// A fake board at 300 W with processes 1 (70 % SM) and 2 (10 %), recorded with 60 W idle power and
// split every 100 ms, until `done` says the exposition is enough (checked every 100 ms, at most 10 s).
template <class Done>
std::string serve_fake_board(Done done) {
  testing::FakeNvml fake("gpus=1\ngpu.0.power_w=300\ngpu.0.processes=1:70:1:1000;2:10:1:1000\n");
  RecordingOptions ro;
  ro.devices = fake.options();
  Recording rec(std::move(ro));
  ProcessOptions po;
  po.interval_ms = 100;
  po.idle_power_w = 60;
  ServeProcesses procs(rec, po);
  std::string text;
  if (!rec.start()) return text;
  procs.start();
  for (int k = 0; k < 100 && !done(text, k); ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    text = procs.format("h");
  }
  procs.stop();
  rec.end(0);
  return text;
}

TEST(ServeProcesses, CountsEnergyPerProcess) {
  const std::string text =
      serve_fake_board([](const std::string& t, int) { return t.find("pid=\"2\"") != std::string::npos; });
  EXPECT_NE(text.find("wattlab_gpu_process_energy_joules_total{host=\"h\",gpu=\"0\",pid=\"1\","), std::string::npos)
      << text;
  EXPECT_NE(text.find("wattlab_gpu_process_energy_joules_total{host=\"h\",gpu=\"0\",pid=\"2\","), std::string::npos)
      << text;
  EXPECT_NE(text.find("wattlab_gpu_idle_energy_joules_total{host=\"h\",gpu=\"0\"}"), std::string::npos) << text;
}

// The value of one sample line of the exposition, or -1.
double sample(const std::string& text, const std::string& head) {
  const auto at = text.find(head);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(text.find(' ', at + head.size() - 1) + 1));
}

// Over the fake board's constant 300 W, the per-process, idle and unattributed counters add up to
// the board's energy over the split intervals (300 W for as long as the 60 W idle share says), and
// the two processes share the active part as their SM utilization (70 % and 10 %).
TEST(ServeProcesses, CountersAddUpToTheBoardsEnergy) {
  const std::string text = serve_fake_board([](const std::string&, int k) { return k >= 30; });  // 3 s
  const double a = sample(text, "wattlab_gpu_process_energy_joules_total{host=\"h\",gpu=\"0\",pid=\"1\",");
  const double b = sample(text, "wattlab_gpu_process_energy_joules_total{host=\"h\",gpu=\"0\",pid=\"2\",");
  const double idle = sample(text, "wattlab_gpu_idle_energy_joules_total{host=\"h\",gpu=\"0\"}");
  const double un = sample(text, "wattlab_gpu_unattributed_energy_joules_total{host=\"h\",gpu=\"0\"}");
  const double n = sample(text, "wattlab_gpu_process_split_intervals_total{host=\"h\",gpu=\"0\"}");
  ASSERT_GT(n, 5) << text;
  const double sum = a + b + idle + un;
  // The idle counter is 60 W times the intervals' own length, whatever the polls' timing under load.
  EXPECT_GT(idle, n * 0.05 * 60) << text;
  EXPECT_NEAR(sum / idle, 300.0 / 60.0, 0.25) << text;
  EXPECT_NEAR(a / b, 7.0, 0.7) << text;
}

TEST(ServeProcesses, SimulatedGpuAddsNothing) {
  RecordingOptions ro;
  ro.devices.device = "sim";
  Recording rec(std::move(ro));
  ServeProcesses procs(rec, {});
  ASSERT_TRUE(rec.start());
  procs.start();
  procs.stop();
  rec.end(0);
  EXPECT_EQ(procs.format("h"), "");
}

}  // namespace
}  // namespace wattlab::cli
