// <wattlab/wattlab.h> alone is the public C++ API: this file includes nothing else from wattlab
// and links wattlab::wattlab only, so a header the umbrella misses, or a layer the target misses,
// fails its build. It records a run on the simulated GPU and reads it back from the store.
#include <wattlab/wattlab.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;

TEST(Umbrella, RecordsAWindowOnTheSimulatedGpuAndStoresIt) {
  const auto dir = std::filesystem::temp_directory_path() / ("wattlab-umbrella-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  VirtualClock clock{100 * kS};
  RecordingOptions o;
  o.devices.device = "sim";
  o.devices.clock = &clock;
  o.devices.sim_workload = "step 250W 600s";
  o.devices.sim_gain_error = 0;
  o.db = dir / "run.db";
  RunId run_id = 0;
  DomainEnergy energy;
  {
    Recording rec(o);
    ASSERT_TRUE(rec.start());
    rec.meter().advance_to(clock.now_ns() + 1 * kS);  // the meter holds readings before the window opens
    const WindowId w = rec.open("step");
    rec.meter().advance_to(clock.now_ns() + 4 * kS);
    rec.close(w);
    rec.meter().advance_to(clock.now_ns() + 2 * kS);
    const WindowResult r = rec.result(w);
    ASSERT_TRUE(r.final);
    ASSERT_EQ(r.domains.size(), 1u);
    energy = r.domains[0];
    run_id = rec.run_id();
    rec.end(0);
  }
  EXPECT_TRUE(energy.simulated);
  EXPECT_TRUE(energy.available);
  EXPECT_NEAR(energy.energy_j, 250.0 * 4, energy.uncertainty_j + 1e-6);

  auto store = Store::open(dir / "run.db", OpenMode::read_only);
  ASSERT_TRUE(store.ok()) << store.error().message();
  auto run = store->load_run(run_id);
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_TRUE(run->complete());
  EXPECT_TRUE(run->info.simulated);
  ASSERT_EQ(run->windows.size(), 1u);
  EXPECT_DOUBLE_EQ(run->windows[0].domains[0].energy_j, energy.energy_j);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wattlab
