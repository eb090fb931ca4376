#include "report/run_json.h"

#include <sstream>

#include <gtest/gtest.h>

#include "store/store_fixtures.h"
#include "report/run_report.h"
#include "report/run_text.h"

namespace wattlab {
namespace {

using report::run_to_json;
using report::run_to_json_string;

RunRecord sample_record() {
  RunRecord r;
  r.run_id = 4;
  r.info = test::sample_run_info();
  r.wattlab_version = "0.1.0";
  r.end_t_ns = 4'000'000'000;
  r.exit_status = 0;
  r.reading_count = 100;
  r.telemetry_count = 20;
  r.domains = {test::sample_domain("gpu:0"), test::sample_domain("gpu:0/memory", "gpu:0")};
  r.windows = {test::sample_window(1, "step", true)};
  r.window_count = 1;
  r.events = {{5, "gpu:0", "power_instant_w", "read_error", "code 3"}};
  return r;
}

TEST(RunJson, TopLevelKeysInDocumentedOrder) {
  auto j = run_to_json(sample_record());
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  const std::vector<std::string> expected = {
      "schema", "run_id", "wattlab_version", "simulated", "state", "command", "host", "start_utc", "start_t_ns",
      "end_t_ns", "dur_s", "exit_status", "device_selection", "devices", "tags", "domains", "windows", "events", "counts"};
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(j["schema"], "wattlab.run/1");
  EXPECT_EQ(j["run_id"], 4);
  EXPECT_EQ(j["simulated"], true);
  EXPECT_EQ(j["state"], "complete");
  EXPECT_EQ(j["command"][4], "a b \"quoted\"");
  EXPECT_DOUBLE_EQ(j["dur_s"].get<double>(), 3.0);
  EXPECT_EQ(j["devices"][0]["backend"], "sim");
  EXPECT_EQ(j["devices"][0]["properties"]["gpus"], "2");
  EXPECT_EQ(j["counts"]["readings"], 100);
  EXPECT_EQ(j["counts"]["telemetry"], 20);
  EXPECT_EQ(j["counts"]["windows"], 1);
  EXPECT_EQ(j["counts"]["events"], 1);
  EXPECT_EQ(j["events"][0]["kind"], "read_error");
}

TEST(RunJson, EveryEnergyCarriesItsProvenance) {
  auto j = run_to_json(sample_record());
  const auto& w = j["windows"][0];
  EXPECT_EQ(w["name"], "step");
  EXPECT_EQ(w["final"], true);
  EXPECT_DOUBLE_EQ(w["dur_s"].get<double>(), 1.5);
  const auto& gpu = w["domains"][0];
  EXPECT_EQ(gpu["domain_id"], "gpu:0");
  EXPECT_DOUBLE_EQ(gpu["energy_j"].get<double>(), 123.456);
  EXPECT_DOUBLE_EQ(gpu["uncertainty_j"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(gpu["systematic_j"].get<double>(), 6.17);
  EXPECT_EQ(gpu["estimator"], "counter+instant");
  EXPECT_EQ(gpu["simulated"], true);
  EXPECT_DOUBLE_EQ(gpu["cross_check"]["energy_j"].get<double>(), 122.9);
  EXPECT_EQ(gpu["cross_check"]["estimator"], "integrated(instant)");
  EXPECT_EQ(gpu["issues"].size(), 2u);
  EXPECT_EQ(gpu["telemetry"]["mean_sm_clock_mhz"], 1980.0);
  EXPECT_TRUE(gpu["telemetry"]["mean_dram_bw_pct"].is_null());
  EXPECT_EQ(gpu["telemetry"]["clock_event_reasons_seen"].get<uint64_t>(), 0x8000'0000'0000'0004ull);
}

TEST(RunJson, UnavailableEnergyIsNullNotZero) {
  auto j = run_to_json(sample_record());
  const auto& mem = j["windows"][0]["domains"][1];
  EXPECT_EQ(mem["available"], false);
  EXPECT_TRUE(mem["energy_j"].is_null());
  EXPECT_TRUE(mem["uncertainty_j"].is_null());
  EXPECT_TRUE(mem["systematic_j"].is_null());
  EXPECT_TRUE(mem["mean_power_w"].is_null());
  EXPECT_TRUE(mem["cross_check"].is_null());
  EXPECT_EQ(mem["issues"][0], "no memory power reading on this GPU");
}

TEST(RunJson, IncompleteRunHasNullEnd) {
  RunRecord r = sample_record();
  r.end_t_ns.reset();
  r.exit_status.reset();
  auto j = run_to_json(r);
  EXPECT_EQ(j["state"], "incomplete");
  EXPECT_TRUE(j["end_t_ns"].is_null());
  EXPECT_TRUE(j["dur_s"].is_null());
  EXPECT_TRUE(j["exit_status"].is_null());
}

TEST(RunJson, DomainsCarryTheirSensorModel) {
  auto j = run_to_json(sample_record());
  const auto& d = j["domains"][1];
  EXPECT_EQ(d["index"], 1);
  EXPECT_EQ(d["id"], "gpu:0/memory");
  EXPECT_EQ(d["parent"], "gpu:0");
  EXPECT_TRUE(j["domains"][0]["parent"].is_null());
  EXPECT_EQ(d["simulated"], true);
  EXPECT_DOUBLE_EQ(d["sensor_model"]["gain_tolerance"].get<double>(), 0.05);
  EXPECT_EQ(d["sensor_model"]["readings"][1]["kind"], "power_instant_w");
  EXPECT_EQ(d["sensor_model"]["readings"][1]["averaging_window_ns"], 25'000'000);
}

TEST(RunJson, StringFormParsesBackAndSurvivesBadUtf8) {
  RunRecord r = sample_record();
  r.info.command.push_back("\xff\xfe");
  std::string one_line = run_to_json_string(r, -1);
  EXPECT_EQ(one_line.find('\n'), std::string::npos);
  auto back = nlohmann::json::parse(one_line);
  EXPECT_EQ(back["schema"], "wattlab.run/1");
  EXPECT_EQ(back["command"].size(), r.info.command.size());
}

// --format picks the renderer: the text summary, or the JSON document and a newline.
TEST(PrintRun, FormatPicksTheRenderer) {
  const RunRecord r = sample_record();
  std::ostringstream text, json, summary;
  report::print_run(text, r, report::Format::text);
  report::print_run_summary(summary, r);
  EXPECT_EQ(text.str(), summary.str());
  report::print_run(json, r, report::Format::json);
  EXPECT_EQ(json.str(), run_to_json_string(r) + "\n");
  std::ostringstream none;
  EXPECT_THROW(report::print_run(none, r, report::Format::markdown), WattlabError);
  EXPECT_EQ(none.str(), "");
}

}  // namespace
}  // namespace wattlab
