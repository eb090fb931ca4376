// End-to-end: `wattlab holdout` on a stored simulated run read at every counter update, as a user
// runs it; bad input exits 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "sensors/sim/sim_gpu.h"
#include "shell.h"
#include "wattlab/meter/meter.h"
#include "wattlab/store/store.h"

namespace wattlab::testing {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kS = 1'000'000'000;

// One simulated run (virtual clock, counter read at every update) with windows of 0.25-5 s.
fs::path stored_run(const fs::path& dir) {
  VirtualClock clock(kS);
  sim::SimConfig c;
  c.workload = "idle 2s; step 450W 3s; periodic 690W 120W period=80ms duty=0.5 3s; loop";
  c.gain_error = 0;
  auto gpu = std::make_unique<sim::SimGpu>(c, clock);
  const int64_t t0 = gpu->origin_ns();
  std::vector<SensorPtr> s;
  s.push_back(std::move(gpu));
  MeterOptions o;
  o.counter_interval_ns = 100'000'000;
  o.counter_cpu_share = o.sampler_cpu_share = 0;
  Meter meter(std::move(s), clock, o);
  meter.advance_to(t0 + 40 * kS);
  std::vector<WindowId> ids;
  for (int i = 0; i < 30; ++i) {
    const double a = 3.0 + 1.1 * i, len = i % 3 == 0 ? 0.25 : (i % 3 == 1 ? 1.0 : 5.0);
    ids.push_back(meter.add_window("w" + std::to_string(i), t0 + static_cast<int64_t>(a * 1e9),
                                   t0 + static_cast<int64_t>((a + len) * 1e9)));
  }
  meter.advance_to(clock.now_ns() + kS);
  const fs::path db = dir / "run.db";
  auto store = Store::open(db);
  EXPECT_TRUE(static_cast<bool>(store));
  RunInfo info;
  info.host = "test";
  info.start_utc = "2026-01-01T00:00:00.000Z";
  info.start_t_ns = t0;
  info.simulated = true;
  info.device_selection = "sim";
  const RunId run = *store->begin_run(info);
  EXPECT_TRUE(store->add_domains(run, meter.domains()));
  std::vector<TimedReading> readings;
  meter.drain_readings(readings);
  EXPECT_TRUE(store->append_readings(run, readings));
  for (WindowId id : ids) {
    WindowResult r = meter.wait_result(id);
    r.labels["level"] = id % 2 ? "odd" : "even";
    EXPECT_TRUE(store->add_window(run, r));
  }
  EXPECT_TRUE(store->end_run(run, clock.now_ns(), 0));
  return db;
}

TEST(HoldoutCli, PrintsCoverageAndWritesTheCsv) {
  const fs::path dir = fs::temp_directory_path() / ("wattlab-holdout-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path db = stored_run(dir);
  const std::string bin = wattlab_bin();
  ASSERT_FALSE(bin.empty());
  const Ran r = shell(bin + " holdout 1 --db " + db.string() + " --csv " + (dir / "h.csv").string());
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("hold-out check of run 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(SIMULATED)"), std::string::npos);
  EXPECT_NE(r.out.find("kept one in 10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all         all"), std::string::npos) << r.out;
  std::ifstream csv(dir / "h.csv");
  const std::string text((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("domain,name,level,length_class", 0), 0u);
  EXPECT_GT(std::count(text.begin(), text.end(), '\n'), 10);

  EXPECT_EQ(shell(bin + " holdout 7 --db " + db.string()).rc, 2);
  EXPECT_EQ(shell(bin + " holdout nope --db " + db.string()).rc, 2);
  EXPECT_EQ(shell(bin + " holdout --edges sideways --db " + db.string()).rc, 2);
  EXPECT_EQ(shell(bin + " holdout --db " + (dir / "missing.db").string()).rc, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace wattlab::testing
