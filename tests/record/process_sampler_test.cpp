// The per-process poller over the fake NVML (several processes with chosen SM utilization and a
// running process without samples) and a fake /proc: shares per process and per group (the
// command's tree and other tenants), labels, and the idle floor measured between empty polls; and
// on virtual time, a GPU that publishes utilization samples as NVML does (one per process per
// sample period, none for a period with zero utilization, each returned once).
#include "record/process_sampler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "sensors/fake_proc.h"
#include "sensors/nvml/fake_nvml_env.h"
#include "wattlab/sensors/registry.h"

namespace wattlab {
namespace {

constexpr int64_t kS = 1'000'000'000;
const std::string kHex = "3f4e5d6c7b8a99887766554433221100ffeeddccbbaa00112233445566778899";

std::vector<Sensor*> raw(const OpenedSensors& o) {
  std::vector<Sensor*> v;
  for (const auto& s : o.sensors) v.push_back(s.get());
  return v;
}

TEST(ProcessSampler, SplitsAmongSeveralProcessesAndTheCommandsTree) {
  testing::FakeNvml fake(
      "gpus=2\n"
      "gpu.0.processes=1234:60:10:900000000;42:20:5:1000;5150:0:0:1000\n"
      "gpu.0.compute_only=77:5000\n");
  testing::FakeProc proc;
  proc.add(1, 0, "init");
  proc.add(100, 1, "wattlab");
  proc.add(200, 100, "bash");
  proc.add(1234, 200, "python3", "0::/user.slice/user-1000.slice/session-1.scope\n", {"SLURM_JOB_ID=31337"});
  proc.add(42, 1, "vllm",
           "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1a2b3c4d_0000_4e5f_8a9b_0123456789ab.slice/"
           "cri-containerd-" + kHex + ".scope\n");
  proc.add(77, 1, "idle-holder");  // 5150 has no /proc entry: gone before it was seen
  VirtualClock clock(0);
  BackendOptions backend = fake.options();
  backend.clock = &clock;  // the samples' timestamps on the sampler's clock
  const OpenedSensors opened = open_sensors(backend);
  ASSERT_EQ(opened.sensors.size(), 1u);
  ProcessSamplerOptions o;
  o.interval_ns = kS;
  o.proc_root = proc.root();
  o.tree_root_pid = 100;
  o.idle_power_w = 100;
  o.idle_power_u95_w = 10;
  ProcessSampler sampler(raw(opened), nullptr, clock, o);
  ASSERT_EQ(sampler.gpu_ids(), (std::vector<std::string>{"gpu:0", "gpu:1"}));
  for (int k = 1; k <= 10; ++k) {
    clock.set_ns(k * kS);
    sampler.poll();
  }
  EXPECT_TRUE(sampler.errors().empty());
  EXPECT_TRUE(sampler.saw_processes("gpu:0", 0, 10 * kS));
  EXPECT_FALSE(sampler.saw_processes("gpu:1", 0, 10 * kS));

  // The fake's samples are on real time: the polls, a few us apart on it, bring the last second's
  // (the first query's look back, mapped onto (0, 1] s here), so no device busy share is given to
  // compare them with. The first sample of each process stands for a period that the other's
  // samples have not yet measured, so the 3 : 1 holds to a few ppm, not exactly.
  const GpuAttribution a = sampler.attribute("gpu:0", 0, 10 * kS, 3000, 30, std::nullopt);
  EXPECT_DOUBLE_EQ(a.split.idle_energy_j, 1000);
  EXPECT_EQ(a.split.idle_source, "--idle-power-w");
  ASSERT_EQ(a.rows.size(), 4u);  // 42, 77, 1234, 5150
  EXPECT_EQ(a.rows[0].pid, 42u);
  EXPECT_EQ(a.rows[0].comm, "vllm");
  EXPECT_EQ(a.rows[0].ids.pod_uid, "1a2b3c4d-0000-4e5f-8a9b-0123456789ab");
  EXPECT_EQ(a.rows[0].ids.container_id, kHex);
  EXPECT_FALSE(a.rows[0].in_tree);
  EXPECT_NEAR(a.rows[0].share.energy_j, 500, 0.01);
  EXPECT_EQ(a.rows[1].pid, 77u);
  EXPECT_DOUBLE_EQ(a.rows[1].share.energy_j, 0);  // listed, never on the SMs
  EXPECT_EQ(a.rows[2].pid, 1234u);
  EXPECT_TRUE(a.rows[2].in_tree);
  EXPECT_EQ(a.rows[2].ids.slurm_job_id, "31337");
  EXPECT_NEAR(a.rows[2].share.energy_j, 1500, 0.01);
  EXPECT_EQ(a.rows[3].comm, "");
  ASSERT_TRUE(a.tree && a.others);
  EXPECT_NEAR(a.tree->energy_j, 1500, 0.01);
  EXPECT_NEAR(a.others->energy_j, 500, 0.01);
  EXPECT_GT(a.tree->uncertainty_j / a.tree->energy_j, 30.0 / 3000);

  // The second GPU has no process: its active energy is unattributed.
  const GpuAttribution b = sampler.attribute("gpu:1", 0, 10 * kS, 3000, 30, 0.0);
  EXPECT_TRUE(b.rows.empty());
  EXPECT_DOUBLE_EQ(b.split.unattributed_energy_j, 2000);
  EXPECT_THROW(sampler.attribute("gpu:7", 0, kS, 1, 0, std::nullopt), UsageError);
}

// One GPU on virtual time that lists processes; what the driver keeps is the subclass's.
class VirtualProcessGpu : public Sensor {
 public:
  explicit VirtualProcessGpu(const Clock& clock) : clock_(clock) {
    Domain d;
    d.id = "gpu:0";
    domains_.push_back(d);
  }
  std::string backend() const override { return "test"; }
  const std::vector<Domain>& domains() const override { return domains_; }
  Status read(std::size_t, ReadingKind, std::vector<Reading>&) override { return Status{}; }
  bool reports_processes(std::size_t) const override { return true; }
  static constexpr int64_t kPeriod = kS / 10;

 protected:
  const Clock& clock_;

 private:
  std::vector<Domain> domains_;
};

// A GPU on virtual time whose processes publish utilization samples the way NVML does: one per
// process per 100 ms sample period, none for a period with zero utilization, and each sample
// returned by one query only. pid 11 is busy in three of every five periods, pid 22 in one.
class SampledGpu final : public VirtualProcessGpu {
 public:
  using VirtualProcessGpu::VirtualProcessGpu;
  std::vector<ProcessUsage> processes(std::size_t, Status*) const override {
    ProcessUsage a, b;
    a.pid = 11;
    b.pid = 22;
    const int64_t now = clock_.now_ns();
    for (int64_t t = (last_ns_ / kPeriod + 1) * kPeriod; t <= now; t += kPeriod) {
      const int64_t phase = (t / kPeriod) % 5;
      if (phase < 3) a.sm_samples.push_back({t, 100});
      if (phase == 3) b.sm_samples.push_back({t, 100});
    }
    last_ns_ = now;
    return {a, b};
  }

 private:
  mutable int64_t last_ns_ = 0;
};

// Polled every 500 ms, five sample periods, the newest sample at each poll is always the same
// phase (pid 11 busy, pid 22 without a sample): taken alone it gives pid 22 nothing. Every
// sample over its own period gives the loads' SM time, 3 : 1, interval by interval.
TEST(ProcessSampler, EverySampleCountsOverItsOwnPeriod) {
  VirtualClock clock(0);
  SampledGpu gpu(clock);
  ProcessSamplerOptions o;
  o.interval_ns = kS / 2;
  o.idle_power_w = 100;
  ProcessSampler sampler({&gpu}, nullptr, clock, o);
  for (int k = 1; k <= 20; ++k) {
    clock.set_ns(k * o.interval_ns + 1'000'000);  // 1 ms after each 500 ms boundary
    sampler.poll();
  }
  // Complete up to pid 22's newest sample (9.8 s): its next one could still cover the time after.
  EXPECT_EQ(sampler.samples_until_ns("gpu:0"), 98 * SampledGpu::kPeriod);
  for (int64_t t0 = 2 * kS; t0 < 9 * kS; t0 += kS / 2) {
    const GpuAttribution a = sampler.attribute("gpu:0", t0, t0 + kS / 2, 200, 1, 80.0);
    ASSERT_EQ(a.rows.size(), 2u);
    EXPECT_NEAR(a.rows[0].share.sm_s, 0.3, 1e-9) << t0;
    EXPECT_NEAR(a.rows[1].share.sm_s, 0.1, 1e-9) << t0;
    EXPECT_NEAR(a.rows[0].share.energy_j, 3 * a.rows[1].share.energy_j, 1e-9) << t0;
    EXPECT_NEAR(a.split.unattributed_energy_j, 0, 1e-9) << t0;
  }
}

// A GPU on virtual time whose driver keeps only each process's newest row, as the H100's does
// (docs/per-process.md, "What the driver does, measured"): it updates one process per 100 ms
// period, in the order given (by default 11, 11, 22, 11, 22), with the process's average since its
// previous update; a query returns each process's newest row. Each process is steady: pid 11 at
// 60 % of the SMs, every other at 20 %.
class NewestRowGpu final : public VirtualProcessGpu {
 public:
  explicit NewestRowGpu(const Clock& clock, std::vector<unsigned> order = {11, 11, 22, 11, 22})
      : VirtualProcessGpu(clock), order_(std::move(order)) {}
  std::vector<ProcessUsage> processes(std::size_t, Status*) const override {
    std::vector<ProcessUsage> out;
    for (unsigned pid : std::set<unsigned>(order_.begin(), order_.end())) {
      ProcessUsage u;
      u.pid = pid;
      for (int64_t t = clock_.now_ns() / kPeriod * kPeriod; t > 0; t -= kPeriod) {
        if (order_[static_cast<std::size_t>(t / kPeriod) % order_.size()] != pid) continue;
        u.sm_samples.push_back({t, pid == 11 ? 60.0 : 20.0});
        break;
      }
      out.push_back(u);
    }
    return out;
  }

 private:
  std::vector<unsigned> order_;
};

// Polled every 400 ms, each process's newest rows come 200-500 ms apart. Each row stands for the
// time since that process's previous one, so every second holds 0.6 SM-s of pid 11 and 0.2 of
// pid 22, with no busy time left unattributed. Counted over one sample period (the lower quartile
// of the spacings), a 500 ms spacing lost part of its time.
TEST(ProcessSampler, ARowOfADriverThatKeepsOnlyTheNewestCountsSinceThatProcesssPreviousRow) {
  VirtualClock clock(0);
  NewestRowGpu gpu(clock);
  ProcessSamplerOptions o;
  o.interval_ns = 4 * NewestRowGpu::kPeriod;
  o.idle_power_w = 100;
  ProcessSampler sampler({&gpu}, nullptr, clock, o);
  for (int k = 1; k <= 30; ++k) {
    clock.set_ns(k * o.interval_ns + 1'000'000);
    sampler.poll();
  }
  for (int64_t t0 = 2 * kS; t0 < 10 * kS; t0 += kS) {
    const GpuAttribution a = sampler.attribute("gpu:0", t0, t0 + kS, 400, 1, 80.0);
    ASSERT_EQ(a.rows.size(), 2u);
    EXPECT_NEAR(a.rows[0].share.sm_s, 0.6, 1e-9) << t0;
    EXPECT_NEAR(a.rows[1].share.sm_s, 0.2, 1e-9) << t0;
    EXPECT_NEAR(a.split.unattributed_energy_j, 0, 1e-9) << t0;
  }
}

// A process whose row the driver updates once every 1.5 s (pid 33; pid 44 takes the other 14
// periods): its next row covers the time since its newest, so the samples are complete only up to
// that newest row, even 1.4 s back. Taken as complete up to a sample period (1 s) back, the
// exporter would split that time before pid 33's row for it came.
TEST(ProcessSampler, RowsOfADriverThatKeepsOnlyTheNewestAreCompleteUpToTheOldestNewestRow) {
  VirtualClock clock(0);
  std::vector<unsigned> order(15, 44);
  order[0] = 33;
  NewestRowGpu gpu(clock, order);
  ProcessSamplerOptions o;
  o.interval_ns = NewestRowGpu::kPeriod;
  o.idle_power_w = 100;
  ProcessSampler sampler({&gpu}, nullptr, clock, o);
  for (int k = 1; k <= 44; ++k) {  // up to 4.4 s: pid 33's rows at 1.5 s and 3.0 s
    clock.set_ns(k * o.interval_ns + 1'000'000);
    sampler.poll();
  }
  EXPECT_EQ(sampler.samples_until_ns("gpu:0"), 30 * NewestRowGpu::kPeriod);
}

TEST(ProcessSampler, AQueryThatFailsIsSaid) {
  testing::FakeNvml fake("gpus=1\ngpu.0.processes=9:50:1:1\ngpu.0.return.nvmlDeviceGetProcessUtilization=4\n");
  const OpenedSensors opened = open_sensors(fake.options());
  VirtualClock clock(0);
  ProcessSampler sampler(raw(opened), nullptr, clock, {});
  sampler.poll();
  const auto errors = sampler.errors();
  ASSERT_EQ(errors.count("gpu:0"), 1u);
  EXPECT_NE(errors.at("gpu:0").find("nvmlDeviceGetProcessUtilization"), std::string::npos) << errors.at("gpu:0");
}

TEST(ProcessSampler, SimulatedGpuReportsNoProcesses) {
  BackendOptions b;
  b.device = "sim";
  VirtualClock clock(0);
  b.clock = &clock;
  const OpenedSensors opened = open_sensors(b);
  ProcessSampler sampler(raw(opened), nullptr, clock, {});
  EXPECT_FALSE(sampler.any_gpu());
}

// Real time: the meter reads the fake's counter; the floor is the power between polls that saw no
// process (idle_power_w), before the processes appear.
TEST(ProcessSampler, IdleFloorIsMeasuredBetweenEmptyPolls) {
  testing::FakeNvml fake(
      "gpus=1\ngpu.0.power_w=400\ngpu.0.idle_power_w=100\ngpu.0.processes_from_ms=4000\n"
      "gpu.0.processes=10:50:1:1\n");
  OpenedSensors opened = open_sensors(fake.options());
  const auto sensors = raw(opened);
  Meter meter(std::move(opened.sensors), MonotonicClock::instance());
  meter.start();
  ASSERT_TRUE(meter.wait_first_reads(std::chrono::seconds(10)));
  ProcessSamplerOptions o;
  ProcessSampler sampler(sensors, &meter, MonotonicClock::instance(), o);
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < 6 && std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2500); ++k) {
    sampler.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  const auto floor = sampler.idle_floor("gpu:0");
  meter.stop();
  ASSERT_TRUE(floor) << "fewer than two empty intervals before the processes appeared";
  EXPECT_GE(floor->intervals, 2u);
  EXPECT_NEAR(floor->power_w, 100, 10);
}

}  // namespace
}  // namespace wattlab
