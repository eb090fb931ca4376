#include "sensors/rapl/rapl_sensor.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>

#include "sensors/rapl/fake_powercap.h"
#include "core/energy_math.h"
#include "core/units.h"

namespace wattlab::rapl {
namespace {

using testing::FakePowercap;

RaplConfig config_for(const FakePowercap& fake, Clock* clock = nullptr) {
  RaplConfig c;
  c.root = fake.root();
  c.cpuinfo = "";  // the fake tree is not this machine's CPU
  c.clock = clock;
  return c;
}

std::unique_ptr<RaplSensor> open_fake(const FakePowercap& fake, Clock* clock = nullptr) {
  auto load = open_rapl_with(config_for(fake, clock));
  EXPECT_TRUE(load.status.loaded) << load.status.detail;
  auto* s = dynamic_cast<RaplSensor*>(load.sensor.release());
  return std::unique_ptr<RaplSensor>(s);
}

std::size_t index_of(const Sensor& s, const std::string& id) {
  for (std::size_t i = 0; i < s.domains().size(); ++i)
    if (s.domains()[i].id == id) return i;
  ADD_FAILURE() << "no domain " << id;
  return 0;
}

TEST(RaplSensor, DomainsAndSensorModel) {
  FakePowercap fake;
  fake.add_socket(0);
  fake.add_socket(1);
  auto s = open_fake(fake);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->backend(), "rapl");
  ASSERT_EQ(s->domains().size(), 8u);
  const Domain& pkg = s->domains()[index_of(*s, "cpu:1/package")];
  EXPECT_EQ(pkg.scope, "package");
  EXPECT_EQ(pkg.name, "package-1");
  EXPECT_EQ(pkg.parent, "");
  EXPECT_FALSE(pkg.simulated);
  EXPECT_EQ(s->domains()[index_of(*s, "cpu:1/core")].parent, "cpu:1/package");
  EXPECT_EQ(s->domains()[index_of(*s, "cpu:1/dram")].parent, "");
  const ReadingModel* e = pkg.model.find(ReadingKind::energy_counter_j);
  ASSERT_NE(e, nullptr);
  EXPECT_DOUBLE_EQ(e->wrap_range, 262143.328850);
  EXPECT_EQ(e->update_period_ns, 1'000'000);
  EXPECT_GT(e->read_cost_ns, 0);
  // 262143 J at 500 W (the advertised 250 W is below the default) wraps in 524 s; read every 262 s.
  EXPECT_NEAR(static_cast<double>(e->max_safe_interval_ns) * 1e-9, 262.143, 1e-3);
  EXPECT_NE(e->note.find("intel-rapl:1/energy_uj"), std::string::npos) << e->note;
  EXPECT_NE(e->note.find("500 W"), std::string::npos) << e->note;
  EXPECT_DOUBLE_EQ(pkg.model.gain_tolerance, 0.10);
  EXPECT_DOUBLE_EQ(s->domains()[index_of(*s, "cpu:0/dram")].model.gain_tolerance, 0.15);
  EXPECT_TRUE(pkg.model.supports(ReadingKind::power_limit_w));
  EXPECT_FALSE(s->domains()[index_of(*s, "cpu:0/core")].model.supports(ReadingKind::power_limit_w));
  EXPECT_FALSE(pkg.model.supports(ReadingKind::power_instant_w));
  EXPECT_EQ(pkg.vendor, "unknown (intel-rapl)");
}

TEST(RaplSensor, VendorAndModelFromCpuinfo) {
  FakePowercap fake;
  fake.add_socket(0);
  fake.write(".", "cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654\n");
  RaplConfig c = config_for(fake);
  c.cpuinfo = fake.root() / "cpuinfo";
  RaplSensor s(discover_zones(fake.root()).zones, c);
  EXPECT_EQ(s.domains()[0].vendor, "AMD");
  const auto list = s.properties();
  std::map<std::string, std::string> props(list.begin(), list.end());
  EXPECT_EQ(props.at("cpu_model"), "AMD EPYC 9654");
  EXPECT_EQ(props.at("powercap_root"), fake.root().string());
  EXPECT_NE(props.at("cpu:0/package").find("intel-rapl:0 name=package-0"), std::string::npos);
}

TEST(RaplSensor, ReadsTheRawCounterInJoulesAtTheReadsMidpoint) {
  FakePowercap fake;
  fake.add_socket(0);
  VirtualClock clock(5'000);
  auto s = open_fake(fake, &clock);
  fake.set_energy("intel-rapl:0", 123'456'789);
  std::vector<Reading> out;
  ASSERT_TRUE(s->read(index_of(*s, "cpu:0/package"), ReadingKind::energy_counter_j, out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, ReadingKind::energy_counter_j);
  EXPECT_DOUBLE_EQ(out[0].value, 123.456789);
  EXPECT_EQ(out[0].t_ns, 5'000);  // virtual time does not move during the read
  EXPECT_EQ(out[0].read_dur_ns, 0);
  ASSERT_TRUE(s->read(index_of(*s, "cpu:0/package"), ReadingKind::power_limit_w, out).ok());
  EXPECT_DOUBLE_EQ(out[1].value, 125.0);
}

TEST(RaplSensor, WrongKindOrIndex) {
  FakePowercap fake;
  fake.add_socket(0);
  auto s = open_fake(fake);
  std::vector<Reading> out;
  Status st = s->read(0, ReadingKind::power_instant_w, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::not_supported);
  st = s->read(1, ReadingKind::power_limit_w, out);  // core has no limit file
  EXPECT_EQ(st.error().kind, ErrorKind::not_supported);
  st = s->read(99, ReadingKind::energy_counter_j, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(st.error().what.find("99"), std::string::npos);
  EXPECT_TRUE(out.empty());
}

// Scripted truth: two sockets at different powers for half an hour of virtual time, sampled every
// 10 s, with the counter wrapping at the realistic 65532610987 uJ. Unwrapping the raw readings with
// core's counter_step (as the meter does, with the model's wrap_range) must give the truth.
TEST(RaplSensor, TenWrapsInOneRunMatchTheScriptedTruth) {
  FakePowercap fake;
  const uint64_t range_uj = 65532610987ULL;
  fake.add_zone("intel-rapl:0", "package-0", range_uj, 0);
  fake.add_zone("intel-rapl:1", "package-1", range_uj, 0);
  fake.add_zone("intel-rapl:1:0", "dram", range_uj, 0);
  VirtualClock clock;
  auto s = open_fake(fake, &clock);
  ASSERT_EQ(s->domains().size(), 3u);
  const std::vector<std::string> zones{"intel-rapl:0", "intel-rapl:1", "intel-rapl:1:0"};
  std::vector<uint64_t> truth_uj(3, 0);
  std::vector<double> prev_j(3, 0), total_j(3, 0);
  std::vector<int> wraps(3, 0);
  const int64_t step_ns = 10 * kNsPerS;
  ASSERT_LE(step_ns, s->domains()[0].model.find(ReadingKind::energy_counter_j)->max_safe_interval_ns);
  for (int k = 1; k <= 180; ++k) {
    clock.advance_ns(step_ns);
    // Power varies per step: 300..480 W on the packages, 20..38 W of DRAM.
    const uint64_t p_w[3] = {300u + static_cast<uint64_t>(k % 10) * 20u, 410u + static_cast<uint64_t>(k % 7) * 10u,
                             20u + static_cast<uint64_t>(k % 10) * 2u};
    for (std::size_t i = 0; i < 3; ++i) {
      truth_uj[i] += p_w[i] * 10u * 1'000'000u;  // W * 10 s in uJ
      fake.set_energy(zones[i], truth_uj[i] % range_uj);
      std::vector<Reading> out;
      ASSERT_TRUE(s->read(i, ReadingKind::energy_counter_j, out).ok());
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].t_ns, k * step_ns);
      const double range_j = s->domains()[i].model.find(ReadingKind::energy_counter_j)->wrap_range;
      const CounterStep cs = counter_step(prev_j[i], out[0].value, range_j);
      EXPECT_FALSE(cs.reset);
      wraps[i] += cs.wrapped ? 1 : 0;
      total_j[i] += cs.delta;
      prev_j[i] = out[0].value;
    }
  }
  EXPECT_GE(wraps[0], 10);
  EXPECT_GE(wraps[1], 10);
  for (std::size_t i = 0; i < 3; ++i) {
    const double truth_j = static_cast<double>(truth_uj[i]) * 1e-6;
    EXPECT_EQ(wraps[i], static_cast<int>(truth_uj[i] / range_uj)) << zones[i];
    EXPECT_NEAR(total_j[i], truth_j, truth_j * 1e-9) << zones[i];  // far inside the 0.1 %
  }
}

TEST(RaplSensor, ZoneThatDisappearsFailsAloneAndSaysSo) {
  FakePowercap fake;
  fake.add_socket(0);
  fake.add_socket(1);
  auto s = open_fake(fake);
  const std::size_t gone = index_of(*s, "cpu:1/package");
  const std::size_t kept = index_of(*s, "cpu:0/package");
  std::vector<Reading> out;
  ASSERT_TRUE(s->read(gone, ReadingKind::energy_counter_j, out).ok());
  fake.remove_zone("intel-rapl:1");
  const Status st = s->read(gone, ReadingKind::energy_counter_j, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::device_lost);
  EXPECT_EQ(st.error().vendor_code, ENOENT);
  EXPECT_NE(st.error().what.find("cpu:1/package (intel-rapl:1)"), std::string::npos) << st.error().what;
  EXPECT_NE(st.error().what.find("intel-rapl:1/energy_uj"), std::string::npos) << st.error().what;
  EXPECT_NE(st.error().hint.find("other domains go on"), std::string::npos);
  fake.set_energy("intel-rapl:0", 42'000'000);
  out.clear();
  ASSERT_TRUE(s->read(kept, ReadingKind::energy_counter_j, out).ok());
  EXPECT_DOUBLE_EQ(out.at(0).value, 42.0);
  fake.set_energy("intel-rapl:0:2", 7'000'000);
  ASSERT_TRUE(s->read(index_of(*s, "cpu:0/dram"), ReadingKind::energy_counter_j, out).ok());
  EXPECT_DOUBLE_EQ(out.at(1).value, 7.0);
}

TEST(RaplSensor, GarbageMidRunNamesTheFileAndTheContent) {
  FakePowercap fake;
  fake.add_socket(0);
  auto s = open_fake(fake);
  std::vector<Reading> out;
  fake.write("intel-rapl:0", "energy_uj", "12x\n");
  Status st = s->read(0, ReadingKind::energy_counter_j, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::parse);
  EXPECT_NE(st.error().what.find("cpu:0/package"), std::string::npos);
  EXPECT_NE(st.error().what.find("intel-rapl:0/energy_uj holds '12x\\n'"), std::string::npos) << st.error().what;
  fake.write("intel-rapl:0", "energy_uj", "");
  EXPECT_EQ(s->read(0, ReadingKind::energy_counter_j, out).error().kind, ErrorKind::parse);
  fake.set_energy("intel-rapl:0", 262143328851ULL);  // one past max_energy_range_uj
  st = s->read(0, ReadingKind::energy_counter_j, out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().what.find("above max_energy_range_uj 262143328850"), std::string::npos);
  EXPECT_TRUE(out.empty());
  fake.set_energy("intel-rapl:0", 5);  // recovers
  EXPECT_TRUE(s->read(0, ReadingKind::energy_counter_j, out).ok());
}

TEST(RaplSensor, PermissionLostMidRun) {
  FakePowercap fake;
  fake.add_socket(0);
  RaplConfig c = config_for(fake);
  c.fault = fake.fault_eacces();
  auto load = open_rapl_with(c);
  ASSERT_TRUE(load.status.loaded);
  fake.denied = {"intel-rapl:0"};
  std::vector<Reading> out;
  const Status st = load.sensor->read(0, ReadingKind::energy_counter_j, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::no_permission);
  EXPECT_NE(st.error().hint.find("udev"), std::string::npos);
}

TEST(RaplOpen, MissingOrEmptyPowercapIsReportedNotZero) {
  FakePowercap fake;
  for (const auto& root : {fake.root() / "absent", fake.root()}) {
    RaplConfig c = config_for(fake);
    c.root = root;
    auto load = open_rapl_with(c);
    EXPECT_FALSE(load.status.loaded);
    EXPECT_EQ(load.sensor, nullptr);
    EXPECT_EQ(load.status.backend, "rapl");
    EXPECT_EQ(load.status.detail, "no powercap zones under " + root.string() +
                                      " (a VM or container without /sys/class/powercap): CPU energy unavailable");
  }
}

TEST(RaplOpen, NothingReadableSaysWhyAndHowToFixIt) {
  FakePowercap fake;
  fake.add_socket(0);
  fake.add_zone("intel-rapl:1", "psys", 1000, 1);
  fake.denied = {"intel-rapl:0", "intel-rapl:0:0", "intel-rapl:0:1", "intel-rapl:0:2", "intel-rapl:1"};
  RaplConfig c = config_for(fake);
  c.fault = fake.fault_eacces();
  auto load = open_rapl_with(c);
  EXPECT_FALSE(load.status.loaded);
  EXPECT_EQ(load.sensor, nullptr);
  const std::string& d = load.status.detail;
  for (const char* want : {"no readable RAPL zone under", "CPU energy unavailable", "intel-rapl:0 (package-0)",
                           "intel-rapl:1 (psys)", "Permission denied", "Run wattlab as root", "udev", ":ro"})
    EXPECT_NE(d.find(want), std::string::npos) << want << " in: " << d;
  EXPECT_EQ(d.find("Fix:"), d.rfind("Fix:")) << "the fix is given once: " << d;
}

TEST(RaplOpen, PartlyReadableLoadsTheRestAndListsWhatIsMissing) {
  FakePowercap fake;
  fake.add_socket(0);
  fake.add_socket(1);
  fake.denied = {"intel-rapl:1", "intel-rapl:1:2"};
  RaplConfig c = config_for(fake);
  c.fault = fake.fault_eacces();
  auto load = open_rapl_with(c);
  ASSERT_TRUE(load.status.loaded);
  ASSERT_NE(load.sensor, nullptr);
  EXPECT_EQ(load.sensor->domains().size(), 6u);
  const std::string& d = load.status.detail;
  for (const char* want : {"6 zones on 2 sockets", "cpu:0/package (intel-rapl:0)", "Not measured: intel-rapl:1 (package-1)",
                           "intel-rapl:1:2 (dram)", "Permission denied", "udev"})
    EXPECT_NE(d.find(want), std::string::npos) << want << " in: " << d;
}

TEST(RaplOpen, RootOverrideFromOptionsAndEnvironment) {
  FakePowercap fake;
  fake.add_socket(0);
  BackendOptions o;
  ::unsetenv("WATTLAB_POWERCAP_ROOT");
  EXPECT_EQ(powercap_root(o), "/sys/class/powercap");
  ::setenv("WATTLAB_POWERCAP_ROOT", fake.root().c_str(), 1);
  EXPECT_EQ(powercap_root(o), fake.root());  // the environment overrides the default
  o.powercap_root = "/elsewhere";
  EXPECT_EQ(powercap_root(o), "/elsewhere");  // an explicit option overrides the environment
  o.powercap_root = "/sys/class/powercap";
  auto load = detail::open_rapl(o);
  ::unsetenv("WATTLAB_POWERCAP_ROOT");
  ASSERT_TRUE(load.status.loaded) << load.status.detail;
  EXPECT_EQ(load.sensor->domains().size(), 4u);
  EXPECT_EQ(load.sensor->backend(), "rapl");
}

// Summing the domains that have no parent never counts a part twice: packages plus DRAM.
TEST(RaplSensor, TopLevelDomainsSumWithoutDoubleCounting) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 1'000'000'000, 50'000'000);
  fake.add_zone("intel-rapl:0:0", "core", 1'000'000'000, 30'000'000);
  fake.add_zone("intel-rapl:0:1", "uncore", 1'000'000'000, 5'000'000);
  fake.add_zone("intel-rapl:0:2", "dram", 1'000'000'000, 8'000'000);
  auto s = open_fake(fake);
  double sum_j = 0;
  for (std::size_t i = 0; i < s->domains().size(); ++i) {
    if (!s->domains()[i].parent.empty()) continue;
    std::vector<Reading> out;
    ASSERT_TRUE(s->read(i, ReadingKind::energy_counter_j, out).ok());
    sum_j += out.at(0).value;
  }
  EXPECT_DOUBLE_EQ(sum_j, 58.0);  // package 50 J + DRAM 8 J; core and uncore are inside the package
}

}  // namespace
}  // namespace wattlab::rapl
