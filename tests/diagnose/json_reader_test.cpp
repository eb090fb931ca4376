#include "test_data.h"
#include "wattlab/core/error.h"

using namespace wattlab::diagnose;
using namespace wattlab::diagnose::testing;

TEST(JsonReader, SharedFilesRowCountsAndModels) {
  EXPECT_EQ(chat().rows.size(), 328u);
  EXPECT_EQ(gpqa().rows.size(), 187u);
  EXPECT_EQ(images().rows.size(), 638u);
  EXPECT_EQ(chat().task, "lm-arena-chat");
  EXPECT_EQ(gpqa().task_display_name, "GPQA Diamond");
  EXPECT_EQ(images().source_label, "ML.ENERGY leaderboard v3, text-to-image.json");
  std::set<std::string> m;
  for (const auto& r : chat().rows) m.insert(r.model_id);
  EXPECT_EQ(m.size(), 18u);
  const auto& r0 = gpqa().rows.front();
  EXPECT_EQ(r0.model_id, "Qwen/Qwen3-14B");
  EXPECT_NEAR(r0.llm->energy_per_token_joules, 1.3662634337367148, 1e-15);
  EXPECT_EQ(r0.llm->max_num_seqs, 8);
  EXPECT_TRUE(r0.extra_json.empty());
}

TEST(JsonReader, VideoRowsAndUnknownFieldsAreKept) {
  const std::string text = R"({"task":"text-to-video","architecture":"diffusion","configurations":[{"model_id":"o/v",
    "gpu_model":"H100","num_gpus":1,"avg_power_watts":500,"batch_size":1,"inference_steps":50,"video_height":480,
    "video_width":832,"num_frames":81,"fps":16,"batch_latency_s":100,"throughput_videos_per_sec":0.01,
    "energy_per_video_joules":50000,"extra_field":[1,2]}]})";
  const Dataset d = parse_leaderboard_json(text, "t2v.json");
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_TRUE(d.rows[0].diffusion->video);
  EXPECT_STREQ(d.rows[0].unit(), "video");
  EXPECT_EQ(d.rows[0].diffusion->num_frames, 81);
  EXPECT_EQ(d.rows[0].extra_json.at("extra_field"), "[1,2]");
  EXPECT_TRUE(d.violations.empty());
}

TEST(JsonReader, MalformedNamesFileRowAndField) {
  TempDir tmp;
  auto expect_error = [&](const std::string& body, const std::string& needle) {
    const auto p = tmp.write("bad.json", body);
    try {
      read_leaderboard_json(p);
      ADD_FAILURE() << "no error for " << body;
    } catch (const wattlab::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
  };
  const std::string ok = llm_row_json();
  expect_error("{\"task\":\"x\",\"configurations\":[" + ok + "," + llm_row_json(R"(,"median_itl_ms":"fast")") + "]}",
               "row 1 (configurations[1]), field 'median_itl_ms': expected a number, got string \"fast\"");
  std::string missing = ok;
  missing.replace(missing.find("\"max_num_seqs\":64,"), 18, "");
  expect_error("{\"configurations\":[" + missing + "]}", "row 0 (configurations[0]), field 'max_num_seqs': missing");
  expect_error("{\"configurations\":[" + llm_row_json(R"(,"energy_per_token_joules":-1)") + "]}",
               "field 'energy_per_token_joules': must be > 0");
  expect_error("{\"configurations\":[" + llm_row_json(R"(,"num_gpus":1.5)") + "]}", "field 'num_gpus': expected a positive integer");
  expect_error("{\"configurations\":[" + llm_row_json(R"(,"sm_activity":1.7)") + "]}", "field 'sm_activity': is a share");
  expect_error("{\"configurations\": [1,2", "not valid JSON");
  expect_error("{\"task\":\"x\"}", "'configurations' is missing");
  expect_error("[]", "expected a leaderboard task object");
  EXPECT_THROW(read_leaderboard_json(tmp.path() + "/none.json"), wattlab::UsageError);
}

// Found by fuzz/fuzz_leaderboard_json.cpp: a number beyond double's range is nlohmann's
// out_of_range, not a parse_error; it escaped as an internal error instead of bad input (exit 2).
TEST(JsonReader, NumberBeyondDoubleIsBadInput) {
  for (const std::string text : {"1e644", "{\"configurations\":[{\"num_gpus\":-1e400}]}"}) {
    try {
      parse_leaderboard_json(text, "huge.json");
      ADD_FAILURE() << "no error for " << text;
    } catch (const wattlab::UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("huge.json: not valid JSON: ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("number overflow"), std::string::npos) << e.what();
    }
  }
}

TEST(JsonReader, MeasuredExtrasAreRead) {
  const Dataset d = parse_leaderboard_json(
      "{\"configurations\":[" + llm_row_json(R"(,"sm_activity":0.4,"cpu_energy_per_unit_joules":0.05,"power_limit_watts":650)") + "]}",
      "m.json");
  const auto& x = d.rows[0].measured;
  EXPECT_EQ(x.sm_activity, 0.4);
  EXPECT_EQ(x.cpu_energy_per_unit_joules, 0.05);
  EXPECT_EQ(x.power_limit_watts, 650.0);
  EXPECT_FALSE(x.gpu_utilization.has_value());
}

TEST(JsonReader, RoundTripKeepsLeaderboardFieldNames) {
  const auto& r = gpqa().rows.at(10);
  const Dataset back = parse_leaderboard_json("{\"task\":\"gpqa\",\"configurations\":[" + record_to_json(r) + "]}", "rt.json");
  const auto& b = back.rows.at(0);
  EXPECT_EQ(b.model_id, r.model_id);
  EXPECT_DOUBLE_EQ(b.llm->energy_per_token_joules, r.llm->energy_per_token_joules);
  EXPECT_DOUBLE_EQ(*b.llm->p99_itl_ms, *r.llm->p99_itl_ms);
  EXPECT_TRUE(b.extra_json.empty());
  EXPECT_NE(record_to_json(images().rows[0]).find("\"energy_per_image_joules\""), std::string::npos);
}
