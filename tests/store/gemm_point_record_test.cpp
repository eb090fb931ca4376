// The GEMM point codec: a round trip, a window with today's labels and counts stored in a database
// and read back, and malformed windows named with what is wrong.
#include "store/gemm_point_record.h"

#include <gtest/gtest.h>

#include "store/store_fixtures.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

GemmPointRecord sample() {
  GemmPointRecord r;
  r.experiment = "E11";
  r.engine = "bf16";
  r.m = 8192;
  r.n = 4096;
  r.k = 1024;
  r.recipe_a = "normal(mean=0, std=1)";
  r.recipe_b = "zeros(fraction=0.5)";
  r.seed = 3;
  r.param = "fraction";
  r.param_value = "0.5";
  r.reference = false;
  r.sweep = "sweep-abc";
  r.point = 17;
  r.simulated = true;
  auto& c = r.counts;
  c.gemms = 2400;
  c.replays = 24;
  c.gemms_per_replay = 100;
  c.replay_s = 0.075;
  c.window_s = 10.01;
  c.prepare_s = 1.5;
  c.warmup_s = 12;
  c.warmup_steady = true;
  c.warmup_drift_c = 0.25;
  c.tflops = 612.5;
  c.rel_error = 1.5e-3;
  c.nonfinite_fraction = 0;
  c.input_stats = {{"a_popcount_frac", 0.5}, {"b_popcount_frac", 0.25}};
  c.prepare_steps_s = {{"generate", 0.5}, {"graph", 0.25}};
  c.energy_j = 6000;
  c.energy_u_j = 30;
  c.energy_sys_j = 300;
  c.mean_power_w = 600;
  c.mean_power_u_w = 3;
  c.energy_per_gemm_j = 2.5;
  c.energy_per_gemm_u_j = 0.0125;
  c.mean_sm_clock_mhz = 1755;
  c.temperature_c = 61.5;
  c.power_capped_fraction = 0.75;
  c.tensor_activity_pct = 88;
  c.power_limit_w = 700;
  return r;
}

TEST(GemmPointRecord, RoundTripsEveryField) {
  const GemmPointRecord r = sample();
  WindowResult w;
  w.name = "gemm_point 17";
  r.encode(w);
  EXPECT_TRUE(is_gemm_point(w));
  auto back = GemmPointRecord::decode(w);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, r);

  // What the writer leaves out stays out: no spot check, an inf error, no GPU energy.
  GemmPointRecord sparse = sample();
  sparse.counts = {};
  sparse.counts.gemms = 10;
  sparse.counts.rel_error_nonfinite = true;
  WindowResult s;
  sparse.encode(s);
  EXPECT_EQ(s.counts, (std::map<std::string, double>{{"gemms", 10}, {"rel_error_nonfinite", 1}}));
  auto sparse_back = GemmPointRecord::decode(s);
  ASSERT_TRUE(sparse_back);
  EXPECT_EQ(*sparse_back, sparse);
}

// Labels and counts as wattlab wrote them before the codec (lab::point_labels, lab::collect),
// stored in a database and loaded back.
TEST(GemmPointRecord, DecodesTodaysLabelsFromADatabase) {
  test::TempDir dir;
  auto store = Store::open(dir.file("gemm.db"));
  ASSERT_TRUE(store) << store.error().message();
  auto run = store->begin_run(test::sample_run_info());
  ASSERT_TRUE(run);
  WindowResult w;
  w.id = 1;
  w.name = "gemm_point 5";
  w.t_begin_ns = 2'000'000'000;
  w.t_end_ns = 12'000'000'000;
  w.final = true;
  w.labels = {{"kind", "gemm_point"}, {"experiment", "X2"},      {"engine", "control"},  {"M", "0"},
              {"N", "0"},             {"K", "0"},                {"recipe_a", ""},       {"recipe_b", ""},
              {"seed", "2"},          {"param", "toggle_bits"},  {"param_value", "0x0F"}, {"reference", "0"},
              {"sweep", "study-1a2b"}, {"point", "5"},           {"simulated", "0"}};
  w.counts = {{"gemms", 0},           {"replays", 133},          {"gemms_per_replay", 0},
              {"replay_s", 0.075},    {"window_s", 10.0},        {"prepare_s", 0.5},
              {"warmup_s", 2.5},      {"warmup_steady", 0},      {"tflops", 0},
              {"nonfinite_fraction", 0}, {"input_a_zero_frac", 1}, {"prepare_toggle_s", 0.1},
              {"energy_j", 5000},     {"energy_u_j", 20},        {"energy_sys_j", 250},
              {"mean_power_w", 500},  {"mean_power_u_w", 2},     {"mean_sm_clock_mhz", 1980},
              {"temperature_c", 45},  {"power_capped_fraction", 0}, {"power_limit_w", 700}};
  ASSERT_TRUE(store->add_window(*run, w));
  auto rec = store->load_run(*run);
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->windows.size(), 1u);
  auto p = GemmPointRecord::decode(rec->windows[0]);
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->experiment, "X2");
  EXPECT_EQ(p->engine, "control");
  EXPECT_EQ(p->m, 0);
  EXPECT_EQ(p->seed, 2u);
  EXPECT_EQ(p->param_value, "0x0F");
  EXPECT_FALSE(p->reference);
  EXPECT_EQ(p->sweep, "study-1a2b");
  EXPECT_EQ(p->point, 5);
  EXPECT_FALSE(p->simulated);
  EXPECT_EQ(p->counts.replays, 133);
  EXPECT_EQ(p->counts.warmup_steady, false);
  EXPECT_FALSE(p->counts.rel_error);
  EXPECT_FALSE(p->counts.energy_per_gemm_j);  // no GEMMs: the writer leaves it out
  EXPECT_EQ(p->counts.input_stats, (std::map<std::string, double>{{"a_zero_frac", 1}}));
  EXPECT_EQ(p->counts.prepare_steps_s, (std::map<std::string, double>{{"toggle", 0.1}}));
  // Encoding it again gives the stored labels and counts back.
  WindowResult again;
  p->encode(again);
  EXPECT_EQ(again.labels, w.labels);
  EXPECT_EQ(again.counts, w.counts);
}

TEST(GemmPointRecord, MalformedWindowsSayWhatIsWrong) {
  WindowResult good;
  good.name = "gemm_point 3";
  sample().encode(good);
  auto decode_with = [&](const char* key, const char* value) {
    WindowResult w = good;
    if (value) w.labels[key] = value;
    else w.labels.erase(key);
    auto r = GemmPointRecord::decode(w);
    EXPECT_FALSE(r) << key;
    return r ? std::string() : r.error().what;
  };
  EXPECT_EQ(decode_with("M", "8k"), "gemm_point window 'gemm_point 3': label 'M' = '8k' is not an integer");
  EXPECT_EQ(decode_with("point", nullptr), "gemm_point window 'gemm_point 3': label 'point' is missing");
  EXPECT_EQ(decode_with("seed", "-1"), "gemm_point window 'gemm_point 3': label 'seed' = '-1' is not a non-negative integer");
  EXPECT_EQ(decode_with("reference", "yes"),
            "gemm_point window 'gemm_point 3': label 'reference' = 'yes' is neither '1' nor '0'");
  EXPECT_EQ(decode_with("kind", "run"), "window 'gemm_point 3' is not a GEMM point (label kind = 'run', expected 'gemm_point')");
  EXPECT_EQ(GemmPointRecord::decode(good).ok(), true);
  EXPECT_EQ(GemmPointRecord::decode(WindowResult{}).error().kind, ErrorKind::parse);
}

}  // namespace
}  // namespace wattlab
