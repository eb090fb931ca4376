#include "store/codec.h"

#include <gtest/gtest.h>

#include "store/store_fixtures.h"

namespace wattlab::store_detail {
namespace {

TEST(Codec, SensorModelRoundTrips) {
  SensorModel m = test::sample_domain("gpu:0").model;
  auto back = sensor_model_from_json(sensor_model_to_json(m).dump(), "col");
  ASSERT_TRUE(back.ok()) << back.error().message();
  ASSERT_EQ(back->readings.size(), m.readings.size());
  for (std::size_t i = 0; i < m.readings.size(); ++i) {
    EXPECT_EQ(back->readings[i].kind, m.readings[i].kind);
    EXPECT_EQ(back->readings[i].update_period_ns, m.readings[i].update_period_ns);
    EXPECT_EQ(back->readings[i].averaging_window_ns, m.readings[i].averaging_window_ns);
    EXPECT_DOUBLE_EQ(back->readings[i].resolution, m.readings[i].resolution);
    EXPECT_EQ(back->readings[i].read_cost_ns, m.readings[i].read_cost_ns);
    EXPECT_EQ(back->readings[i].note, m.readings[i].note);
  }
  EXPECT_DOUBLE_EQ(back->gain_tolerance, 0.05);
  EXPECT_DOUBLE_EQ(back->unseen_power_w, 1.5);
  EXPECT_EQ(back->source, "sim defaults");
  EXPECT_EQ(sensor_model_to_json(m)["readings"][0]["unit"], "J");
}

TEST(Codec, DevicesKeepTheirOrder) {
  std::vector<DeviceProperties> d = test::sample_run_info().devices;
  auto back = devices_from_json(devices_to_json(d).dump(), "col");
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].backend, "sim");
  EXPECT_EQ((*back)[0].properties, d[0].properties);
}

TEST(Codec, StringsRoundTrip) {
  std::vector<std::string> s = {"a", "", "with \"quotes\" and \\ and \n"};
  auto back = strings_from_json(strings_to_json(s).dump(), "col");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
}

TEST(Codec, MalformedColumnsAreParseErrorsNotExceptions) {
  auto not_json = strings_from_json("[1,", "runs.command_json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().kind, ErrorKind::parse);
  EXPECT_NE(not_json.error().what.find("runs.command_json"), std::string::npos);
  auto wrong_type = strings_from_json("[1, 2]", "c");
  EXPECT_EQ(wrong_type.error().kind, ErrorKind::parse);
  auto missing = sensor_model_from_json("{\"readings\": []}", "c");
  EXPECT_EQ(missing.error().kind, ErrorKind::parse);
  auto bad_kind = sensor_model_from_json(
      R"({"readings":[{"kind":"flux_capacitor","update_period_ns":0,"averaging_window_ns":0,"resolution":0,)"
      R"("read_cost_ns":0,"max_safe_interval_ns":0,"note":""}],"gain_tolerance":0,"unseen_power_w":0,"source":""})",
      "c");
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_NE(bad_kind.error().what.find("flux_capacitor"), std::string::npos);
}

}  // namespace
}  // namespace wattlab::store_detail
