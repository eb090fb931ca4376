// `wattlab serve`'s per-process counters over the fake NVML with several processes, on real time:
// after a few polls the exposition has a counter per process and the GPU's idle counter, and they
// add up to the board's energy over the split intervals, also where the instant power field
// misreads the board (a periodic load aliasing its 25 ms window) and a process publishes
// utilization samples only in some sample periods; on the simulated GPU it has nothing.
#include "cli/serve_processes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <tuple>
#include <thread>

#include "sensors/nvml/fake_nvml_env.h"

namespace wattlab::cli {
namespace {

struct Served {
  std::string text;
  int64_t span_begin_ns = 0, span_end_ns = 0;  // the split intervals
  double board_j = -1, board_u95_j = 0;        // the meter's energy of gpu:0 over them
  double age_lo_s = 0, age_hi_s = 0;           // now less the newest interval's end, around the last format
};

// A fake board at 300 W with processes 1 (70 % SM) and 2 (10 %), recorded with 60 W idle power and
// split every 100 ms, until `done` says the exposition is enough (checked every 100 ms, at most 10 s).
// `extra_script` adds to the fake's script (a later key wins).
template <class Done>
Served serve_fake_board(Done done, const std::string& extra_script = "") {
  testing::FakeNvml fake("gpus=1\ngpu.0.power_w=300\ngpu.0.processes=1:70:1:1000;2:10:1:1000\n" + extra_script);
  RecordingOptions ro;
  ro.devices = fake.options();
  Recording rec(std::move(ro));
  ProcessOptions po;
  po.interval_ms = 100;
  po.idle_power_w = 60;
  ServeProcesses procs(rec, po);
  Served out;
  if (!rec.start()) return out;
  procs.start();
  for (int k = 0; k < 100 && !done(out.text, k); ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    out.text = procs.format("h");
  }
  procs.stop();
  const int64_t before_ns = rec.clock().now_ns();
  out.text = procs.format("h");
  const int64_t after_ns = rec.clock().now_ns();
  std::tie(out.span_begin_ns, out.span_end_ns) = procs.split_span_ns();
  out.age_lo_s = static_cast<double>(before_ns - out.span_end_ns) * 1e-9;
  out.age_hi_s = static_cast<double>(after_ns - out.span_end_ns) * 1e-9;
  if (out.span_end_ns > out.span_begin_ns) {
    const WindowResult w = rec.meter().estimate(out.span_begin_ns, out.span_end_ns);
    for (const auto& d : w.domains)
      if (d.domain_id == "gpu:0") {
        out.board_j = d.energy_j;
        out.board_u95_j = d.uncertainty_j;
      }
  }
  rec.end(0);
  return out;
}

TEST(ServeProcesses, CountsEnergyPerProcess) {
  const std::string text =
      serve_fake_board([](const std::string& t, int) { return t.find("pid=\"2\"") != std::string::npos; }).text;
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

// The counters of one run, and their sum against the board's energy over the split intervals.
void expect_adds_up(const Served& s, double a_over_b) {
  const std::string& text = s.text;
  const double a = sample(text, "wattlab_gpu_process_energy_joules_total{host=\"h\",gpu=\"0\",pid=\"1\",");
  const double b = sample(text, "wattlab_gpu_process_energy_joules_total{host=\"h\",gpu=\"0\",pid=\"2\",");
  const double idle = sample(text, "wattlab_gpu_idle_energy_joules_total{host=\"h\",gpu=\"0\"}");
  const double un = sample(text, "wattlab_gpu_unattributed_energy_joules_total{host=\"h\",gpu=\"0\"}");
  const double n = sample(text, "wattlab_gpu_process_split_intervals_total{host=\"h\",gpu=\"0\"}");
  ASSERT_GT(n, 5) << text;
  ASSERT_GT(s.board_j, 0) << text;
  const double sum = a + b + idle + un;
  const double span_s = static_cast<double>(s.span_end_ns - s.span_begin_ns) * 1e-9;
  // The idle counter is 60 W times the intervals' own length, whatever the polls' timing under load.
  EXPECT_NEAR(idle, 60 * span_s, 1e-6 * idle) << text;
  // The intervals tile the span: their energies add up to the board's over it, within the
  // board's own uncertainty and 1 % for the intervals' estimates that do not share edges.
  EXPECT_NEAR(sum, s.board_j, s.board_u95_j + 0.01 * s.board_j) << text;
  EXPECT_NEAR(s.board_j / span_s, 300, 15) << text;
  EXPECT_NEAR(a / b, a_over_b, 0.1 * a_over_b) << text;
  // The split's age is how long before the scrape the newest split interval ends.
  const double age = sample(text, "wattlab_gpu_process_split_age_seconds{host=\"h\",gpu=\"0\"}");
  EXPECT_GE(age, s.age_lo_s - 1e-6) << text;
  EXPECT_LE(age, s.age_hi_s + 1e-6) << text;
}

// Over the fake board's constant 300 W, the per-process, idle and unattributed counters add up to
// the board's energy over the split intervals, and the two processes share the active part as
// their SM utilization (70 % and 10 %).
TEST(ServeProcesses, CountersAddUpToTheBoardsEnergy) {
  expect_adds_up(serve_fake_board([](const std::string&, int k) { return k >= 30; }), 7.0);  // 3 s
}

// Two periodic loads that fool the newest-sample view: the instant power field reads 450 W of the board's 300 W
// (its 25 ms window catches the loads' busy phase), so an interval split before the counter has
// published past it comes out 50 % high; and process 2 is busy in one 20 ms sample period of
// every five (NVML leaves out the others), so its newest sample of the last second always reads
// 50 % while its SM time is 10 %. The counters still add up to the board's energy, and the
// processes share it 7 : 1 (to the 100 ms cycles the span cuts at its ends: some 3 % in 4 s).
TEST(ServeProcesses, CountersAddUpWhereInstantPowerAndNewestSamplesMislead) {
  expect_adds_up(serve_fake_board([](const std::string&, int k) { return k >= 40; },
                                  "gpu.0.instant_power_w=450\ngpu.0.process_sample_ms=20\n"
                                  "gpu.0.processes=1:70:1:1000;2:0:0:1000\ngpu.0.process_cycle=2:50,0,0,0,0\n"),
                 7.0);
}

// A driver that keeps only each process's newest row (the H100's, measured): every 100 ms it
// updates one process, in the order 1, 1, 2, 1, 2, with its mean since its previous update, so
// process 2's rows come 200 and 300 ms apart. Each row counts since that process's previous one:
// the counters add up and the processes share the active energy 7 : 1. Counted over one sample
// period (the lower quartile of the spacings, 200 ms), process 2 lost a sixth of its time.
TEST(ServeProcesses, CountersAddUpWhereTheDriverKeepsOnlyEachProcesssNewestRow) {
  expect_adds_up(serve_fake_board([](const std::string&, int k) { return k >= 30; },
                                  "gpu.0.process_rows=newest\ngpu.0.process_sample_ms=100\n"
                                  "gpu.0.process_order=1,1,2,1,2\n"),
                 7.0);
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
