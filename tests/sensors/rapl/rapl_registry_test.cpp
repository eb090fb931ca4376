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
    // Under auto the NVIDIA backend reports too (not loaded on this machine); rapl is last.
    ASSERT_EQ(s.statuses.size(), std::string(device) == "auto" ? 2u : 1u);
    EXPECT_TRUE(s.statuses.back().loaded);
    EXPECT_EQ(s.statuses.back().backend, "rapl");
  }
  o.cpu = false;  // auto without CPU domains
  for (const auto& st : open_sensors(o).statuses) EXPECT_NE(st.backend, "rapl");
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
  ASSERT_FALSE(s.statuses.empty());
  EXPECT_EQ(s.statuses.back().backend, "rapl");
  EXPECT_FALSE(s.statuses.back().loaded);
  EXPECT_NE(s.statuses.back().detail.find("CPU energy unavailable"), std::string::npos);
}

}  // namespace
}  // namespace wattlab
