// `wattlab serve`'s per-process counters over the fake NVML with several processes, on real time:
// after a few polls the exposition has a counter per process and the GPU's idle counter; on the
// simulated GPU it has nothing.
#include "cli/serve_processes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "sensors/nvml/fake_nvml_env.h"

namespace wattlab::cli {
namespace {

TEST(ServeProcesses, CountsEnergyPerProcess) {
  testing::FakeNvml fake("gpus=1\ngpu.0.power_w=300\ngpu.0.processes=1:70:1:1000;2:10:1:1000\n");
  RecordingOptions ro;
  ro.devices = fake.options();
  Recording rec(std::move(ro));
  ProcessOptions po;
  po.interval_ms = 100;
  po.idle_power_w = 60;
  ServeProcesses procs(rec, po);
  ASSERT_TRUE(rec.start());
  procs.start();
  std::string text;
  for (int k = 0; k < 100 && text.find("pid=\"2\"") == std::string::npos; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    text = procs.format("h");
  }
  procs.stop();
  rec.end(0);
  EXPECT_NE(text.find("wattlab_gpu_process_energy_joules_total{host=\"h\",gpu=\"0\",pid=\"1\","), std::string::npos)
      << text;
  EXPECT_NE(text.find("wattlab_gpu_process_energy_joules_total{host=\"h\",gpu=\"0\",pid=\"2\","), std::string::npos)
      << text;
  EXPECT_NE(text.find("wattlab_gpu_idle_energy_joules_total{host=\"h\",gpu=\"0\"}"), std::string::npos) << text;
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
