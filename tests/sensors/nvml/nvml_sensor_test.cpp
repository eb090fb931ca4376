#include "nvml/nvml_sensor.h"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "backend.h"
#include "sensors/nvml/fake_nvml_env.h"

namespace wattlab::nvml {
namespace {

using testing::FakeNvml;
using K = ReadingKind;

std::unique_ptr<NvmlSensor> open_ok(const BackendOptions& o) {
  auto s = NvmlSensor::open(o);
  if (!s.ok()) {
    ADD_FAILURE() << s.error().message();
    return nullptr;
  }
  return std::move(s.value());
}

std::string prop(const Sensor& s, const std::string& key) {
  for (const auto& [k, v] : s.properties())
    if (k == key) return v;
  return "<absent>";
}

Reading read_one(Sensor& s, std::size_t d, K kind) {
  std::vector<Reading> out;
  Status st = s.read(d, kind, out);
  EXPECT_TRUE(st.ok()) << to_string(kind) << ": " << (st.ok() ? "" : st.error().message());
  EXPECT_EQ(out.size(), 1u) << to_string(kind);
  return out.empty() ? Reading{} : out[0];
}

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::string uuid_of(unsigned i) {
  char b[64];
  std::snprintf(b, sizeof b, "GPU-%08x-fake-4000-8000-%012x", 0xfa4e0000u + i, i);  // the fake's default
  return b;
}

TEST(NvmlSensor, EightGpusWithMemoryDomainsAndEveryReading) {
  FakeNvml fake("gpus=8\ngpu.*.memory_power_w=88\ngpu.*.power_w=700\ngpu.*.energy_base_mj=1000000\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->backend(), "nvml");
  ASSERT_EQ(s->domains().size(), 16u);
  std::set<std::string> uuids;
  for (unsigned i = 0; i < 8; ++i) {
    const Domain& g = s->domains()[2 * i];
    const Domain& m = s->domains()[2 * i + 1];
    EXPECT_EQ(g.id, "gpu:" + std::to_string(i));
    EXPECT_EQ(g.vendor, "NVIDIA");
    EXPECT_EQ(g.name, "NVIDIA H200");
    EXPECT_EQ(g.scope, "gpu");
    EXPECT_EQ(g.uuid, uuid_of(i));
    uuids.insert(g.uuid);
    EXPECT_DOUBLE_EQ(g.model.gain_tolerance, 0.05);
    EXPECT_DOUBLE_EQ(g.model.unseen_power_w, 10.0);
    EXPECT_EQ(m.id, g.id + "/memory");
    EXPECT_EQ(m.scope, "memory");
    EXPECT_EQ(m.parent, g.id);
    EXPECT_TRUE(m.model.supports(K::power_average_w));
    EXPECT_FALSE(m.model.supports(K::power_instant_w));  // as on the H200: instant not in memory scope
    for (std::size_t k = 0; k < kReadingKindCount; ++k)
      EXPECT_TRUE(g.model.supports(static_cast<K>(k))) << g.id << " " << to_string(static_cast<K>(k));
  }
  EXPECT_EQ(uuids.size(), 8u);

  const Domain& g0 = s->domains()[0];
  EXPECT_EQ(g0.model.find(K::energy_counter_j)->update_period_ns, 100'000'000);
  EXPECT_EQ(g0.model.find(K::energy_counter_j)->read_cost_ns, 4'200'000);
  EXPECT_EQ(g0.model.find(K::power_sample_w)->update_period_ns, 20'000'000);
  EXPECT_EQ(g0.model.find(K::power_sample_w)->max_safe_interval_ns, 1'000'000'000);
  EXPECT_EQ(g0.model.find(K::power_average_w)->averaging_window_ns, 1'000'000'000);

  auto& clock = MonotonicClock::instance();
  const int64_t before = clock.now_ns();
  const Reading e = read_one(*s, 6, K::energy_counter_j);  // gpu:3
  const int64_t after = clock.now_ns();
  EXPECT_GE(e.t_ns, before);
  EXPECT_LE(e.t_ns, after);
  EXPECT_EQ(e.kind, K::energy_counter_j);
  EXPECT_GE(e.value, 1000.0);  // 1e6 mJ base -> joules
  EXPECT_LT(e.value, 1000.0 + 700.0 * 10);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::power_average_w).value, 700.0);
  const Reading inst = read_one(*s, 0, K::power_instant_w);
  EXPECT_DOUBLE_EQ(inst.value, 699.0);
  EXPECT_NE(inst.sensor_t_ns, 0);  // the field's own timestamp, mapped onto the monotonic clock
  EXPECT_LT(std::llabs(inst.sensor_t_ns - inst.t_ns), 300'000'000);
  EXPECT_DOUBLE_EQ(read_one(*s, 1, K::power_average_w).value, 88.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::sm_clock_mhz).value, 1980.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::mem_clock_mhz).value, 2619.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::temperature_c).value, 40.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::mem_temperature_c).value, 45.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::utilization_gpu_pct).value, 100.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::utilization_mem_pct).value, 30.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::clock_event_reasons).value, 4.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::power_limit_w).value, 700.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::memory_used_bytes).value, 1e9);
  EXPECT_GT(read_one(*s, 0, K::power_violation_ns).value, 0.0);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::thermal_violation_ns).value, 0.0);

  EXPECT_EQ(prop(*s, "driver_version"), "580.159.04");
  EXPECT_EQ(prop(*s, "nvml_version"), "13.580.159.04");
  EXPECT_EQ(prop(*s, "cuda_driver_version"), "13.0");
  EXPECT_EQ(std::filesystem::path(prop(*s, "library_path")).filename(), "libnvidia-ml.so.1");
  EXPECT_EQ(prop(*s, "device_count"), "8");
  EXPECT_EQ(prop(*s, "missing_functions"), "none");
  EXPECT_EQ(prop(*s, "gpu:2.pci_bus_id"), "00000000:39:00.0");
  EXPECT_EQ(prop(*s, "gpu:2.persistence_mode"), "enabled");
  EXPECT_EQ(prop(*s, "gpu:2.mig_mode_current"), "0");
  EXPECT_EQ(prop(*s, "gpu:2.ecc_mode_current"), "enabled");
  EXPECT_EQ(prop(*s, "gpu:2.power_limit_min_w"), "200");
  EXPECT_EQ(prop(*s, "gpu:2.power_limit_max_w"), "700");
  EXPECT_EQ(prop(*s, "gpu:2.power_limit_default_w"), "700");
  EXPECT_EQ(prop(*s, "gpu:2.power_limit_enforced_w"), "700");
  EXPECT_EQ(prop(*s, "gpu:2.architecture"), "Hopper");
  EXPECT_EQ(prop(*s, "gpu:2.gpm"), "supported");
  EXPECT_EQ(prop(*s, "gpu:2.unsupported"), "gpu:2/memory power_instant_w: nvmlDeviceGetFieldValues[field 186 scope 2]"
                                           "(gpu:2/memory) returned 3 NVML_ERROR_NOT_SUPPORTED (\"Not Supported\") "
                                           "(not supported); this GPU or driver does not provide it; wattlab skips it");
  EXPECT_NE(s->status_detail().find("8 GPUs (gpu:0, gpu:1, gpu:2, gpu:3, gpu:4, gpu:5, gpu:6, gpu:7) of 8"),
            std::string::npos)
      << s->status_detail();
}

TEST(NvmlSensor, EnergyCounterAdvancesWithTime) {
  FakeNvml fake("gpus=1\ngpu.*.power_w=500\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  const Reading a = read_one(*s, 0, K::energy_counter_j);
  sleep_ms(350);
  const Reading b = read_one(*s, 0, K::energy_counter_j);
  const double dt_s = static_cast<double>(b.t_ns - a.t_ns) * 1e-9;
  // The counter moves in 100 ms steps: within one step of power x time.
  EXPECT_NEAR(b.value - a.value, 500.0 * dt_s, 500.0 * 0.1 + 1e-6);
}

TEST(NvmlSensor, MissingOptionalFunctionsAreReportedAndNeverCalled) {
  FakeNvml fake("gpus=2\nmissing=nvmlDeviceGetTotalEnergyConsumption,nvmlGpmSampleGet\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->domains()[0].model.supports(K::energy_counter_j));
  EXPECT_FALSE(s->domains()[0].model.supports(K::gpm_sm_activity_pct));
  EXPECT_TRUE(s->domains()[0].model.supports(K::power_instant_w));
  std::vector<Reading> out;
  Status st = s->read(0, K::energy_counter_j, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::not_supported);
  EXPECT_NE(st.error().what.find("missing from"), std::string::npos) << st.error().what;
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(prop(*s, "missing_functions"), "nvmlDeviceGetTotalEnergyConsumption; nvmlGpmSampleGet");
  EXPECT_NE(prop(*s, "gpu:0.unsupported").find("energy_counter_j"), std::string::npos);
  EXPECT_NE(prop(*s, "gpu:0.gpm").find("missing"), std::string::npos) << prop(*s, "gpu:0.gpm");
  EXPECT_NE(s->status_detail().find("missing optional functions: nvmlDeviceGetTotalEnergyConsumption nvmlGpmSampleGet"),
            std::string::npos);
}

TEST(NvmlSensor, MissingRequiredFunctionFailsOpen) {
  FakeNvml fake("gpus=1\nmissing=nvmlDeviceGetCount_v2,nvmlDeviceGetCount\n");
  auto s = NvmlSensor::open(fake.options());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::not_found);
  EXPECT_NE(s.error().what.find("nvmlDeviceGetCount_v2 / nvmlDeviceGetCount"), std::string::npos);
}

TEST(NvmlSensor, NoLibrary) {
  FakeNvml fake("gpus=1\n");
  BackendOptions o = fake.options();
  o.nvml_library = (fake.dir() / "libnvidia-ml.so.1").string();  // nothing there
  auto s = NvmlSensor::open(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::not_found);
  EXPECT_NE(s.error().what.find("NVML library not loaded"), std::string::npos);
  auto load = detail::open_nvml(o);
  EXPECT_FALSE(load.status.loaded);
  EXPECT_EQ(load.status.backend, "nvml");
  EXPECT_NE(load.status.detail.find("install the NVIDIA driver"), std::string::npos);
}

TEST(NvmlSensor, NoGpuIsASpecificMessage) {
  FakeNvml fake("gpus=0\n");
  auto s = NvmlSensor::open(fake.options());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, ErrorKind::not_found);
  EXPECT_NE(s.error().what.find("no NVIDIA GPU: nvmlDeviceGetCount_v2 reported 0 devices"), std::string::npos)
      << s.error().what;
  EXPECT_NE(s.error().hint.find("not measured"), std::string::npos);
  auto load = detail::open_nvml(fake.options());
  EXPECT_FALSE(load.status.loaded);
  EXPECT_EQ(load.sensor, nullptr);
  EXPECT_NE(load.status.detail.find("no NVIDIA GPU"), std::string::npos);
}

TEST(NvmlSensor, PermissionErrorsCarryAHint) {
  {
    FakeNvml fake("gpus=1\ninit_return=4\n");
    auto s = NvmlSensor::open(fake.options());
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().kind, ErrorKind::no_permission);
    EXPECT_NE(s.error().hint.find("/dev/nvidia"), std::string::npos);
  }
  {
    FakeNvml fake("gpus=1\ngpu.*.return.nvmlDeviceGetTotalEnergyConsumption=4\n");
    auto s = open_ok(fake.options());
    ASSERT_TRUE(s);
    EXPECT_FALSE(s->domains()[0].model.supports(K::energy_counter_j));
    ASSERT_FALSE(s->unsupported().empty());
    bool found = false;
    for (const auto& u : s->unsupported())
      if (u.kind == K::energy_counter_j) {
        found = true;
        EXPECT_EQ(u.error.kind, ErrorKind::no_permission);
        EXPECT_EQ(u.error.vendor_code, 4);
        EXPECT_NE(u.error.what.find("nvmlDeviceGetTotalEnergyConsumption(gpu:0)"), std::string::npos);
        EXPECT_NE(u.error.hint.find("/dev/nvidia"), std::string::npos);
      }
    EXPECT_TRUE(found);
  }
}

TEST(NvmlSensor, GpuLostMidRunIsDeviceLost) {
  FakeNvml fake("gpus=2\ngpu.1.lost_after_ms=400\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->domains().size(), 2u);
  read_one(*s, 1, K::power_instant_w);
  sleep_ms(450);
  std::vector<Reading> out;
  Status st = s->read(1, K::energy_counter_j, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::device_lost);
  EXPECT_EQ(st.error().vendor_code, 15);
  EXPECT_NE(st.error().what.find("(gpu:1)"), std::string::npos) << st.error().what;
  // Later reads say the same without calling NVML; the other GPU goes on.
  st = s->read(1, K::power_instant_w, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::device_lost);
  EXPECT_TRUE(out.empty());
  read_one(*s, 0, K::energy_counter_j);
  Status pst;
  EXPECT_TRUE(s->processes(1, &pst).empty());
  EXPECT_EQ(pst.error().kind, ErrorKind::device_lost);
}

TEST(NvmlSensor, CounterResetShowsAsAValueGoingBack) {
  FakeNvml fake("gpus=1\ngpu.*.energy_base_mj=500000000\ngpu.*.reset_after_ms=400\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  const Reading a = read_one(*s, 0, K::energy_counter_j);
  EXPECT_GE(a.value, 500000.0);
  sleep_ms(500);
  const Reading b = read_one(*s, 0, K::energy_counter_j);
  EXPECT_LT(b.value, a.value);  // the meter's counter_step() turns this into a reset event
  EXPECT_LT(b.value, 700.0 * 1.0);
}

TEST(NvmlSensor, CudaVisibleDevicesByIndex) {
  FakeNvml fake("gpus=4\n");
  ::setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->domains().size(), 2u);
  EXPECT_EQ(s->domains()[0].id, "gpu:0");
  EXPECT_EQ(s->domains()[1].id, "gpu:2");
  EXPECT_NE(prop(*s, "device_selection").find("CUDA_VISIBLE_DEVICES=2,0"), std::string::npos);
}

TEST(NvmlSensor, CudaVisibleDevicesIndexMapsByPciBusIdNotNvmlIndex) {
  FakeNvml fake("gpus=4\ngpu.0.pci_bus_id=00000000:F1:00.0\n");
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->domains().size(), 1u);
  EXPECT_EQ(s->domains()[0].id, "gpu:1");  // CUDA device 0 is the lowest PCI address
}

TEST(NvmlSensor, CudaVisibleDevicesByUuid) {
  FakeNvml fake("gpus=8\n");
  ::setenv("CUDA_VISIBLE_DEVICES", (uuid_of(5) + "," + uuid_of(3).substr(0, 16)).c_str(), 1);
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->domains().size(), 2u);
  EXPECT_EQ(s->domains()[0].id, "gpu:3");
  EXPECT_EQ(s->domains()[1].id, "gpu:5");
}

TEST(NvmlSensor, CudaVisibleDevicesByMigUuidMeasuresTheWholeGpuAndSaysSo) {
  FakeNvml fake(
      "gpus=2\ngpu.1.mig_current=1\ngpu.1.mig_devices=MIG-aaaaaaaa-1111-2222-3333-444444444444,"
      "MIG-bbbbbbbb-1111-2222-3333-444444444444\n");
  ::setenv("CUDA_VISIBLE_DEVICES", "MIG-bbbbbbbb-1111-2222-3333-444444444444", 1);
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->domains().size(), 1u);
  EXPECT_EQ(s->domains()[0].id, "gpu:1");
  EXPECT_EQ(prop(*s, "gpu:1.mig_mode_current"), "1");
  EXPECT_NE(prop(*s, "gpu:1.mig").find("whole-GPU energy only"), std::string::npos);
  EXPECT_NE(prop(*s, "gpu:1.mig_devices").find("MIG-aaaaaaaa"), std::string::npos);
  EXPECT_NE(prop(*s, "device_selection_notes").find("MIG instance of gpu:1"), std::string::npos);
  EXPECT_NE(s->status_detail().find("MIG mode on gpu:1: whole-GPU energy only"), std::string::npos)
      << s->status_detail();
}

TEST(NvmlSensor, GpusOptionOverridesCudaVisibleDevices) {
  FakeNvml fake("gpus=8\n");
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  BackendOptions o = fake.options();
  o.gpus = {"6", uuid_of(4)};
  auto s = open_ok(o);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->domains().size(), 2u);
  EXPECT_EQ(s->domains()[0].id, "gpu:4");
  EXPECT_EQ(s->domains()[1].id, "gpu:6");
  EXPECT_NE(s->status_detail().find("--gpus"), std::string::npos);
  o.gpus = {"9"};
  auto bad = NvmlSensor::open(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid_argument);
  EXPECT_THROW(detail::open_nvml(o), UsageError);  // exit status 2
}

TEST(NvmlSensor, SampleBufferReturnsOnlyNewSamplesWithTheirOwnTimestamps) {
  FakeNvml fake("gpus=1\ngpu.*.power_w=600\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  auto& clock = MonotonicClock::instance();
  sleep_ms(130);
  std::vector<Reading> a;
  ASSERT_TRUE(s->read(0, K::power_sample_w, a).ok());
  // The probe at open saw the buffer: only samples since then come back (20 ms apart).
  ASSERT_GE(a.size(), 3u);
  EXPECT_LE(a.size(), 12u);
  for (std::size_t i = 1; i < a.size(); ++i) {
    EXPECT_EQ(a[i].t_ns - a[i - 1].t_ns > 19'000'000 && a[i].t_ns - a[i - 1].t_ns < 21'000'000, true)
        << a[i].t_ns - a[i - 1].t_ns;
  }
  for (const auto& r : a) {
    EXPECT_EQ(r.kind, K::power_sample_w);
    EXPECT_GE(r.value, 600.0);
    EXPECT_LE(r.value, 603.0);
    EXPECT_EQ(r.sensor_t_ns, r.t_ns);
    EXPECT_LE(r.t_ns, clock.now_ns() + 5'000'000);
    EXPECT_GE(r.t_ns, clock.now_ns() - 1'000'000'000);
  }
  sleep_ms(70);
  std::vector<Reading> b;
  ASSERT_TRUE(s->read(0, K::power_sample_w, b).ok());
  ASSERT_FALSE(b.empty());
  EXPECT_GT(b.front().t_ns, a.back().t_ns);  // no sample twice
  std::vector<Reading> c;
  ASSERT_TRUE(s->read(0, K::power_sample_w, c).ok());
  for (const auto& r : c) EXPECT_GT(r.t_ns, b.back().t_ns);
}

TEST(NvmlSensor, SampleBufferDedupsTheLastSeenSampleTheDriverSendsAgain) {
  FakeNvml fake("gpus=1\ngpu.*.samples_repeat_last=1\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  std::vector<Reading> all;
  for (int i = 0; i < 6; ++i) {
    sleep_ms(i % 2 ? 5 : 45);  // some reads find a new sample, some only the repeated one
    ASSERT_TRUE(s->read(0, K::power_sample_w, all).ok());
  }
  ASSERT_GE(all.size(), 4u);
  for (std::size_t i = 1; i < all.size(); ++i) EXPECT_GT(all[i].t_ns, all[i - 1].t_ns) << "sample " << i << " twice";
}

TEST(NvmlSensor, TimestampsFollowTheInjectedClock) {
  FakeNvml fake("gpus=1\n");
  VirtualClock vclock(5'000'000'000);
  BackendOptions o = fake.options();
  o.clock = &vclock;
  auto s = open_ok(o);
  ASSERT_TRUE(s);
  const Reading r = read_one(*s, 0, K::power_instant_w);
  EXPECT_EQ(r.t_ns, 5'000'000'000);  // midpoint of the call, on the injected clock
  EXPECT_EQ(r.read_dur_ns, 0);
  // NVML's own stamp (us since the epoch, the last 100 ms tick) mapped onto that clock.
  EXPECT_LE(r.sensor_t_ns, 5'000'000'000);
  EXPECT_GT(r.sensor_t_ns, 5'000'000'000 - 150'000'000);
}

TEST(NvmlSensor, GpmNeedsTwoSamplesMoreThan100msApart) {
  FakeNvml fake("gpus=2\ngpu.1.gpm=0\ngpu.0.gpm_sm_pct=96.3\ngpu.0.gpm_tensor_pct=93.4\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  std::vector<Reading> out;
  ASSERT_TRUE(s->read(0, K::gpm_sm_activity_pct, out).ok());
  EXPECT_TRUE(out.empty());  // right after open: the gap to the first sample is too short
  sleep_ms(150);
  const Reading sm = read_one(*s, 0, K::gpm_sm_activity_pct);
  EXPECT_DOUBLE_EQ(sm.value, 96.3);
  // The other metrics come from the same pair of samples, without another sample.
  const Reading tensor = read_one(*s, 0, K::gpm_tensor_activity_pct);
  EXPECT_DOUBLE_EQ(tensor.value, 93.4);
  EXPECT_EQ(tensor.t_ns, sm.t_ns);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::gpm_sm_occupancy_pct).value, 14.2);
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::gpm_dram_bw_pct).value, 15.9);
  out.clear();
  ASSERT_TRUE(s->read(0, K::gpm_sm_activity_pct, out).ok());
  EXPECT_TRUE(out.empty());  // again too soon after the last sample
  sleep_ms(120);
  const Reading sm2 = read_one(*s, 0, K::gpm_sm_activity_pct);
  EXPECT_GT(sm2.t_ns - sm.t_ns, 100'000'000);
  // So the meter reads the other three right after SM activity, never on schedules of their own
  // (as four, each paid for the sample in turn: the H200 got SM activity twice in 66 s).
  const SensorModel& m = s->domains()[0].model;
  EXPECT_EQ(m.find(K::gpm_sm_activity_pct)->read_with, K::kCount);
  for (K k : {K::gpm_sm_occupancy_pct, K::gpm_tensor_activity_pct, K::gpm_dram_bw_pct})
    EXPECT_EQ(m.find(k)->read_with, K::gpm_sm_activity_pct) << to_string(k);

  EXPECT_FALSE(s->domains()[1].model.supports(K::gpm_sm_activity_pct));
  EXPECT_NE(prop(*s, "gpu:1.gpm").find("has no GPM"), std::string::npos);
}

TEST(NvmlSensor, PerProcessUtilizationAndMemory) {
  FakeNvml fake("gpus=1\ngpu.*.processes=1234:92:10:920000000;42:5:1:1000\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  Status st;
  auto ps = s->processes(0, &st);
  ASSERT_TRUE(st.ok()) << st.error().message();
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].pid, 42u);
  EXPECT_EQ(ps[1].pid, 1234u);
  EXPECT_EQ(ps[1].used_memory_bytes.value_or(0), 920000000u);
  EXPECT_DOUBLE_EQ(ps[1].sm_util_pct.value_or(-1), 92.0);
  EXPECT_DOUBLE_EQ(ps[1].mem_util_pct.value_or(-1), 10.0);
  EXPECT_NE(ps[1].util_t_ns, 0);
  EXPECT_FALSE(ps[1].gpu_instance_id.has_value());
}

// NVML keeps a utilization sample per process per sample period and returns those newer than
// lastSeenTimeStamp, several per process, stamped in CLOCK_REALTIME us: every one comes back from
// one query only, in order, mapped onto the monotonic clock, with its own value; a period with
// zero utilization has none.
TEST(NvmlSensor, ProcessUtilizationSamplesComeBackOnceEach) {
  FakeNvml fake("gpus=1\ngpu.*.process_sample_ms=50\ngpu.*.processes=7:40:0:1000\ngpu.*.process_cycle=7:40,0,80\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  auto& clock = MonotonicClock::instance();
  std::vector<ProcessSmSample> all;
  for (int k = 0; k < 4; ++k) {
    const int64_t before = clock.now_ns();
    Status st;
    const auto ps = s->processes(0, &st);
    const int64_t after = clock.now_ns();
    ASSERT_TRUE(st.ok()) << st.error().message();
    ASSERT_EQ(ps.size(), 1u);
    for (const auto& x : ps[0].sm_samples) {
      EXPECT_LE(x.t_ns, after + 1'000'000);
      EXPECT_GT(x.t_ns, before - 1'100'000'000);  // the first query looks back one second
      all.push_back(x);
    }
    if (k > 0) {
      EXPECT_GE(ps[0].sm_samples.size(), 2u) << "250 ms of 50 ms periods, one in three empty";
    }
    if (!ps[0].sm_samples.empty()) {
      EXPECT_EQ(ps[0].util_t_ns, ps[0].sm_samples.back().t_ns);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_GE(all.size(), 10u);
  for (std::size_t i = 1; i < all.size(); ++i) {
    EXPECT_GT(all[i].t_ns, all[i - 1].t_ns) << "sample " << i << " twice or out of order";
    const int64_t gap = all[i].t_ns - all[i - 1].t_ns;
    // 50 ms apart, or 100 ms across the empty period (us stamps, the offset read per query).
    EXPECT_TRUE(std::llabs(gap - 50'000'000) < 2'000'000 || std::llabs(gap - 100'000'000) < 2'000'000) << gap;
  }
  for (const auto& x : all) EXPECT_TRUE(x.sm_util_pct == 40 || x.sm_util_pct == 80) << x.sm_util_pct;
}

// The driver keeps each process on its own schedule: a sample of one process may be published
// after a newer sample of another was handed out. None is lost and none comes back twice.
TEST(NvmlSensor, ASampleOfOneProcessPublishedAfterANewerOneOfAnotherIsKept) {
  FakeNvml fake("gpus=1\ngpu.*.process_sample_ms=50\ngpu.*.processes=7:40:0:1000;8:20:0:1000\n"
                "gpu.*.process_lag_ms=8:120\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  std::map<unsigned, std::vector<int64_t>> t_ns;
  auto& clock = MonotonicClock::instance();
  int64_t last_query_ns = 0;
  for (int k = 0; k < 12; ++k) {
    Status st;
    last_query_ns = clock.now_ns();
    for (const auto& u : s->processes(0, &st))
      for (const auto& x : u.sm_samples) t_ns[u.pid].push_back(x.t_ns);
    ASSERT_TRUE(st.ok()) << st.error().message();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  ASSERT_EQ(t_ns.size(), 2u);
  for (const auto& [pid, ts] : t_ns) {
    ASSERT_GE(ts.size(), 8u) << "pid " << pid;
    // Up to the last query, less the publication lag and two periods.
    EXPECT_GT(ts.back(), last_query_ns - (pid == 8 ? 120'000'000 : 0) - 100'000'000)
        << "pid " << pid << ": its newest samples never came back";
    for (std::size_t i = 1; i < ts.size(); ++i) {
      EXPECT_GT(ts[i], ts[i - 1]) << "pid " << pid << ": sample " << i << " twice or out of order";
      // Every period has a sample: 50 ms apart (us stamps, the offset read per query).
      EXPECT_LT(std::llabs(ts[i] - ts[i - 1] - 50'000'000), 2'000'000) << "pid " << pid << ": a sample lost";
    }
  }
}

TEST(NvmlSensor, PowerUsageStandsInOnlyForTheReadingItIs) {
  FakeNvml fake("gpus=1\ngpu.*.average_field=0\ngpu.*.instant_field=0\ngpu.*.arch=9\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  const Domain& d = s->domains()[0];
  ASSERT_TRUE(d.model.supports(K::power_average_w));
  EXPECT_NE(d.model.find(K::power_average_w)->note.find("nvmlDeviceGetPowerUsage"), std::string::npos);
  EXPECT_FALSE(d.model.supports(K::power_instant_w));  // a 1 s average is not an instant reading
  EXPECT_DOUBLE_EQ(read_one(*s, 0, K::power_average_w).value, 700.0);
  EXPECT_NE(prop(*s, "gpu:0.unsupported").find("power_instant_w"), std::string::npos);
}

TEST(NvmlSensor, ReadOfAnUnsupportedKindOrDomainSaysWhy) {
  FakeNvml fake("gpus=1\n");  // no memory scope
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->domains().size(), 1u);
  EXPECT_EQ(prop(*s, "gpu:0.memory_domain").find("none"), 0u);
  std::vector<Reading> out;
  Status st = s->read(3, K::power_instant_w, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::invalid_argument);
}

TEST(NvmlSensor, OpenNvmlReportsWhatLoaded) {
  FakeNvml fake("gpus=8\n");
  auto load = detail::open_nvml(fake.options());
  ASSERT_TRUE(load.status.loaded) << load.status.detail;
  ASSERT_NE(load.sensor, nullptr);
  EXPECT_EQ(load.sensor->domains().size(), 8u);
  EXPECT_NE(load.status.detail.find("driver 580.159.04"), std::string::npos) << load.status.detail;
  EXPECT_NE(load.status.detail.find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_NE(load.status.detail.find("all GPUs"), std::string::npos);
}

TEST(NvmlSensor, GpuLostAtOpenIsLeftOutAndSaid) {
  FakeNvml fake("gpus=2\ngpu.0.lost_after_ms=0\n");
  auto s = open_ok(fake.options());
  ASSERT_TRUE(s);
  ASSERT_EQ(s->domains().size(), 1u);
  EXPECT_EQ(s->domains()[0].id, "gpu:1");
  EXPECT_NE(s->status_detail().find("gpu:0"), std::string::npos) << s->status_detail();
}

}  // namespace
}  // namespace wattlab::nvml

namespace wattlab::nvml {
namespace {

// On a machine with NVIDIA GPUs (the H200 device machine): WATTLAB_TEST_REAL_NVML=1 runs the backend
// against the real driver, which is what checks nvml_api.h's layouts. Skipped everywhere else.
TEST(NvmlRealDevice, ReadsEveryProbedReadingPlausibly) {
  if (!std::getenv("WATTLAB_TEST_REAL_NVML")) GTEST_SKIP() << "set WATTLAB_TEST_REAL_NVML=1 on a GPU machine";
  ::unsetenv("WATTLAB_NVML_LIBRARY");
  BackendOptions o;
  o.device = "nvml";
  auto opened = NvmlSensor::open(o);
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  auto& s = *opened.value();
  std::printf("status: %s\n", s.status_detail().c_str());
  for (const auto& [k, v] : s.properties()) std::printf("  %s = %s\n", k.c_str(), v.c_str());
  auto& clock = MonotonicClock::instance();
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  for (std::size_t d = 0; d < s.domains().size(); ++d) {
    const Domain& dom = s.domains()[d];
    for (const auto& m : dom.model.readings) {
      std::vector<Reading> out;
      Status st = s.read(d, m.kind, out);
      ASSERT_TRUE(st.ok()) << dom.id << " " << to_string(m.kind) << ": " << st.error().message();
      const bool gpm = m.kind >= ReadingKind::gpm_sm_activity_pct && m.kind <= ReadingKind::gpm_dram_bw_pct;
      if (out.empty()) {
        EXPECT_TRUE(gpm) << dom.id << " " << to_string(m.kind) << " gave nothing";
        continue;
      }
      const Reading& r = out.back();
      std::printf("%-14s %-24s n=%-3zu last=%.3f %s  t_ns-now=%.1f ms  sensor_t-t=%.1f ms  dur=%.1f us\n", dom.id.c_str(),
                  std::string(to_string(m.kind)).c_str(), out.size(), r.value, std::string(unit_of(m.kind)).c_str(),
                  static_cast<double>(r.t_ns - clock.now_ns()) / 1e6,
                  r.sensor_t_ns ? static_cast<double>(r.sensor_t_ns - r.t_ns) / 1e6 : 0.0,
                  static_cast<double>(r.read_dur_ns) / 1e3);
      EXPECT_LT(std::llabs(r.t_ns - clock.now_ns()), 3'000'000'000) << to_string(m.kind);
      if (r.sensor_t_ns) {
        EXPECT_LT(std::llabs(r.sensor_t_ns - r.t_ns), 3'000'000'000) << to_string(m.kind);
      }
      if (is_power_or_energy(m.kind) && m.kind != ReadingKind::energy_counter_j) {
        EXPECT_GT(r.value, 1.0) << dom.id << " " << to_string(m.kind);
        EXPECT_LT(r.value, 2000.0) << dom.id << " " << to_string(m.kind);
      }
      if (m.kind == ReadingKind::power_sample_w) {
        EXPECT_GE(out.size(), 20u);  // ~1.1 s of 20 ms samples
        for (std::size_t i = 1; i < out.size(); ++i) EXPECT_GT(out[i].t_ns, out[i - 1].t_ns);
      }
      if (m.kind == ReadingKind::temperature_c) {
        EXPECT_TRUE(r.value > 5 && r.value < 110);
      }
      if (m.kind == ReadingKind::sm_clock_mhz) {
        EXPECT_TRUE(r.value > 100 && r.value < 4000);
      }
      if (gpm) {
        EXPECT_TRUE(r.value >= 0 && r.value <= 100);
      }
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  for (std::size_t d = 0; d < s.domains().size(); ++d)
    if (s.domains()[d].model.supports(ReadingKind::gpm_sm_activity_pct)) {
      std::vector<Reading> out;
      ASSERT_TRUE(s.read(d, ReadingKind::gpm_sm_activity_pct, out).ok());
      EXPECT_EQ(out.size(), 1u) << "GPM after > 100 ms";
    }
  Status pst;
  auto ps = s.processes(0, &pst);
  std::printf("processes on %s: %zu (%s)\n", s.domains()[0].id.c_str(), ps.size(),
              pst.ok() ? "ok" : pst.error().message().c_str());
}

}  // namespace
}  // namespace wattlab::nvml
