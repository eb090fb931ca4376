#include "sensors/rapl/rapl_zones.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <string>

#include "sensors/rapl/fake_powercap.h"

namespace wattlab::rapl {
namespace {

using testing::FakePowercap;

std::map<std::string, Zone> by_id(const Discovery& d) {
  std::map<std::string, Zone> m;
  for (const Zone& z : d.zones) m[z.domain_id] = z;
  return m;
}

TEST(RaplZones, TwoSocketsWithSubzones) {
  FakePowercap fake;
  fake.add_socket(0);
  fake.add_socket(1);
  std::filesystem::create_directories(fake.dir("intel-rapl"));  // the control type folder: not a zone
  const Discovery d = discover_zones(fake.root());
  ASSERT_TRUE(d.root_exists);
  EXPECT_TRUE(d.skipped.empty());
  ASSERT_EQ(d.zones.size(), 8u);
  // Stable order: N, then M, parents first.
  EXPECT_EQ(d.zones[0].domain_id, "cpu:0/package");
  EXPECT_EQ(d.zones[1].domain_id, "cpu:0/core");
  EXPECT_EQ(d.zones[4].domain_id, "cpu:1/package");
  const auto m = by_id(d);
  for (int s : {0, 1}) {
    const std::string cpu = "cpu:" + std::to_string(s);
    const Zone& pkg = m.at(cpu + "/package");
    EXPECT_EQ(pkg.scope, "package");
    EXPECT_EQ(pkg.socket, s);
    EXPECT_EQ(pkg.parent_id, "");
    EXPECT_EQ(pkg.name, "package-" + std::to_string(s));
    EXPECT_EQ(pkg.sysfs_name, "intel-rapl:" + std::to_string(s));
    EXPECT_EQ(pkg.max_energy_range_uj, 262143328850ULL);
    EXPECT_EQ(pkg.max_power_uw.value_or(0), 250'000'000u);
    EXPECT_TRUE(pkg.power_limit_file.has_value());
    // core and uncore are inside the package: never summed with it.
    EXPECT_EQ(m.at(cpu + "/core").parent_id, cpu + "/package");
    EXPECT_EQ(m.at(cpu + "/core").scope, "core");
    EXPECT_EQ(m.at(cpu + "/uncore").parent_id, cpu + "/package");
    EXPECT_EQ(m.at(cpu + "/uncore").socket, s);
    // DRAM is listed under the package by sysfs but is not part of its energy: a top-level domain.
    EXPECT_EQ(m.at(cpu + "/dram").parent_id, "");
    EXPECT_EQ(m.at(cpu + "/dram").scope, "dram");
    EXPECT_EQ(m.at(cpu + "/dram").max_energy_range_uj, 65712999613ULL);
  }
}

TEST(RaplZones, ClientWithPsysAndMmioDuplicate) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 262143328850ULL, 5);
  fake.add_zone("intel-rapl:0:0", "core", 262143328850ULL, 5);
  fake.add_zone("intel-rapl:0:1", "uncore", 262143328850ULL, 5);
  fake.add_zone("intel-rapl:1", "psys", 262143328850ULL, 5);
  fake.add_zone("intel-rapl-mmio:0", "package-0", 262143328850ULL, 5);
  const Discovery d = discover_zones(fake.root());
  const auto m = by_id(d);
  ASSERT_EQ(d.zones.size(), 4u);
  EXPECT_EQ(m.at("cpu/psys").scope, "psys");
  EXPECT_EQ(m.at("cpu/psys").parent_id, "");
  EXPECT_EQ(m.at("cpu/psys").socket, -1);
  EXPECT_EQ(m.at("cpu:0/package").parent_id, "cpu/psys");  // the platform contains the package
  EXPECT_EQ(m.at("cpu:0/core").parent_id, "cpu:0/package");
  EXPECT_EQ(m.at("cpu:0/package").control_type, "intel-rapl");  // MSR view kept, MMIO dropped
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_NE(d.notes[0].find("intel-rapl-mmio:0"), std::string::npos);
}

TEST(RaplZones, MmioAloneIsUsed) {
  FakePowercap fake;
  fake.add_zone("intel-rapl-mmio:0", "package-0", 1000, 5);
  const Discovery d = discover_zones(fake.root());
  ASSERT_EQ(d.zones.size(), 1u);
  EXPECT_EQ(d.zones[0].domain_id, "cpu:0/package");
}

TEST(RaplZones, NestedLayoutAndAmdAndDies) {
  FakePowercap fake;
  // /sys/devices/virtual/powercap style: subzones inside their parent folder.
  fake.add_zone("amd-rapl:0", "package-0", 65532610987ULL, 1);
  fake.add_zone("amd-rapl:0/amd-rapl:0:0", "core", 65532610987ULL, 1);
  fake.add_zone("intel-rapl:0", "package-1-die-1", 1000, 1);
  const Discovery d = discover_zones(fake.root());
  const auto m = by_id(d);
  ASSERT_EQ(d.zones.size(), 3u) << (d.skipped.empty() ? "" : d.skipped[0].error.message());
  EXPECT_EQ(m.at("cpu:0/core").parent_id, "cpu:0/package");
  EXPECT_EQ(m.at("cpu:0/core").control_type, "amd-rapl");
  EXPECT_EQ(m.at("cpu:1/die:1/package").die, 1);
  EXPECT_EQ(m.at("cpu:1/die:1/package").socket, 1);
}

TEST(RaplZones, MissingAndEmptyRoot) {
  FakePowercap fake;
  const Discovery none = discover_zones(fake.root() / "nope");
  EXPECT_FALSE(none.root_exists);
  EXPECT_TRUE(none.zones.empty());
  const Discovery empty = discover_zones(fake.root());
  EXPECT_TRUE(empty.root_exists);
  EXPECT_TRUE(empty.zones.empty());
  EXPECT_TRUE(empty.skipped.empty());
}

TEST(RaplZones, PermissionDeniedZoneIsSkippedWithTheFix) {
  FakePowercap fake;
  fake.add_socket(0);
  fake.add_socket(1);
  fake.denied = {"intel-rapl:1"};
  const Discovery d = discover_zones(fake.root(), fake.fault_eacces());
  ASSERT_EQ(d.zones.size(), 7u);
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_TRUE(d.any_permission_denied());
  const SkippedZone& s = d.skipped[0];
  EXPECT_EQ(s.sysfs_name, "intel-rapl:1");
  EXPECT_EQ(s.zone_name, "package-1");
  EXPECT_EQ(s.error.kind, ErrorKind::no_permission);
  EXPECT_EQ(s.error.vendor_code, EACCES);
  EXPECT_NE(s.error.what.find("intel-rapl:1/energy_uj"), std::string::npos) << s.error.what;
  EXPECT_NE(s.error.what.find("Permission denied"), std::string::npos) << s.error.what;
  for (const char* fix : {"root", "udev", "SUBSYSTEM==\"powercap\"", "chmod a+r", ":ro", "CVE-2020-8694"})
    EXPECT_NE(s.error.hint.find(fix), std::string::npos) << fix;
  // The readable subzones of the unreadable package still name it as their container.
  EXPECT_EQ(by_id(d).at("cpu:1/core").parent_id, "cpu:1/package");
}

TEST(RaplZones, EnergyFileThatCannotBeReadIsSkipped) {
  FakePowercap fake;
  fake.add_socket(0);
  // Root reads mode-000 files, so a folder in place of the file makes the read fail for real.
  std::filesystem::remove(fake.dir("intel-rapl:0:1") / "energy_uj");
  std::filesystem::create_directory(fake.dir("intel-rapl:0:1") / "energy_uj");
  const Discovery d = discover_zones(fake.root());
  ASSERT_EQ(d.skipped.size(), 1u);
  EXPECT_EQ(d.skipped[0].sysfs_name, "intel-rapl:0:1");
  EXPECT_EQ(d.skipped[0].error.kind, ErrorKind::io);
  EXPECT_EQ(d.skipped[0].error.vendor_code, EISDIR);
  EXPECT_EQ(d.zones.size(), 3u);
  EXPECT_FALSE(d.any_permission_denied());
}

TEST(RaplZones, GarbageRangeOrNameMissingIsSkipped) {
  FakePowercap fake;
  fake.add_socket(0);
  fake.write("intel-rapl:0:2", "max_energy_range_uj", "lots\n");
  fake.add_zone("intel-rapl:0:3", "core", 0, 0);  // range 0: cannot be unwrapped
  fake.add_zone("intel-rapl:0:4", "core", 100, 200);  // value past its wrap point
  fake.add_zone("intel-rapl:1", "package-1", 100, 1);
  std::filesystem::remove(fake.dir("intel-rapl:1") / "name");
  const Discovery d = discover_zones(fake.root());
  EXPECT_EQ(d.zones.size(), 3u);
  ASSERT_EQ(d.skipped.size(), 4u);
  std::map<std::string, Error> e;
  for (const auto& s : d.skipped) e[s.sysfs_name] = s.error;
  EXPECT_EQ(e.at("intel-rapl:0:2").kind, ErrorKind::parse);
  EXPECT_NE(e.at("intel-rapl:0:2").what.find("max_energy_range_uj holds 'lots\\n'"), std::string::npos)
      << e.at("intel-rapl:0:2").what;
  EXPECT_NE(e.at("intel-rapl:0:3").what.find("is 0"), std::string::npos);
  EXPECT_NE(e.at("intel-rapl:0:4").what.find("above max_energy_range_uj 100"), std::string::npos);
  EXPECT_EQ(e.at("intel-rapl:1").kind, ErrorKind::not_found);
}

TEST(RaplZones, DuplicateNamesStayDistinct) {
  FakePowercap fake;
  fake.add_zone("intel-rapl:0", "package-0", 100, 1);
  fake.add_zone("intel-rapl:0:0", "dram", 100, 1);
  fake.add_zone("intel-rapl:0:1", "dram", 100, 1);
  const auto m = by_id(discover_zones(fake.root()));
  EXPECT_EQ(m.count("cpu:0/dram"), 1u);
  EXPECT_EQ(m.count("cpu:0/dram@intel-rapl:0:1"), 1u);
}

TEST(RaplZones, ParseUint) {
  const std::filesystem::path p = "/x/energy_uj";
  EXPECT_EQ(parse_uint(p, "123\n").value(), 123u);
  EXPECT_EQ(parse_uint(p, " 18446744073709551615 ").value(), 18446744073709551615ULL);
  for (const char* bad : {"", "\n", "12a\n", "-5", "1.5", "0x10", "18446744073709551616"}) {
    auto r = parse_uint(p, bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::parse);
    EXPECT_NE(r.error().what.find("/x/energy_uj holds '"), std::string::npos) << r.error().what;
  }
  EXPECT_NE(parse_uint(p, "12a\n").error().what.find("'12a\\n'"), std::string::npos);
  EXPECT_NE(parse_uint(p, std::string("\x01\xff", 2)).error().what.find("'\\x01\\xff'"), std::string::npos);
  EXPECT_NE(parse_uint(p, std::string(200, '9')).error().what.find("..."), std::string::npos);
}

TEST(RaplZones, SafeIntervalIsHalfTheWrapTimeAtMaxPower) {
  Zone z;
  z.max_energy_range_uj = 65532610987ULL;  // 2^32 units of 2^-16 J, as on most parts
  // No advertised maximum: the 500 W default. 65532.6 J / 500 W = 131.07 s.
  EXPECT_DOUBLE_EQ(assumed_max_power_w(z), 500.0);
  EXPECT_NEAR(static_cast<double>(wrap_time_ns(z)) * 1e-9, 131.065, 1e-3);
  EXPECT_EQ(max_safe_interval_ns(z), wrap_time_ns(z) / 2);
  // An advertised maximum below the default does not shorten the margin; one above it does.
  z.max_power_uw = 125'000'000;
  EXPECT_DOUBLE_EQ(assumed_max_power_w(z), 500.0);
  z.max_power_uw = 1'000'000'000;
  EXPECT_DOUBLE_EQ(assumed_max_power_w(z), 1000.0);
  EXPECT_NEAR(static_cast<double>(max_safe_interval_ns(z)) * 1e-9, 32.77, 1e-2);
  // At the assumed power, one safe interval adds half a range: a wrap can never be missed.
  const double step_j = assumed_max_power_w(z) * static_cast<double>(max_safe_interval_ns(z)) * 1e-9;
  EXPECT_LE(step_j, 0.5 * 65532.610987 + 1e-6);
}

}  // namespace
}  // namespace wattlab::rapl
