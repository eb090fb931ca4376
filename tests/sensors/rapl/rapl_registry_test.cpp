// The registry's wiring of the rapl backend: --device rapl, and auto gated by options.cpu.
#include <gtest/gtest.h>

#include <string>

#include "sensors/rapl/fake_powercap.h"
#include "wattlab/sensors/registry.h"

namespace wattlab {
namespace {

using rapl::testing::FakePowercap;

TEST(RaplRegistry, DeviceRaplAndAuto) {
  FakePowercap fake;
  fake.add_socket(0);
  BackendOptions o;
  o.powercap_root = fake.root().string();
  for (const char* device : {"rapl", "auto"}) {
    o.device = device;
    OpenedSensors s = open_sensors(o);
    ASSERT_EQ(s.sensors.size(), 1u) << device;
    EXPECT_EQ(s.sensors[0]->backend(), "rapl");
    EXPECT_EQ(s.domain_count(), 4u);
    EXPECT_FALSE(s.simulated());
    ASSERT_EQ(s.statuses.size(), 1u);
    EXPECT_TRUE(s.statuses[0].loaded);
    EXPECT_EQ(s.statuses[0].backend, "rapl");
  }
  o.cpu = false;  // auto without CPU domains
  EXPECT_TRUE(open_sensors(o).statuses.empty());
  o.device = "rapl";  // asked for by name: cpu does not gate it
  EXPECT_EQ(open_sensors(o).sensors.size(), 1u);
}

TEST(RaplRegistry, NoPowercapIsAStatusNotAnError) {
  FakePowercap fake;
  BackendOptions o;
  o.device = "auto";
  o.powercap_root = (fake.root() / "absent").string();
  OpenedSensors s = open_sensors(o);
  EXPECT_TRUE(s.sensors.empty());
  EXPECT_EQ(s.domain_count(), 0u);
  ASSERT_EQ(s.statuses.size(), 1u);
  EXPECT_FALSE(s.statuses[0].loaded);
  EXPECT_NE(s.statuses[0].detail.find("CPU energy unavailable"), std::string::npos);
}

}  // namespace
}  // namespace wattlab
