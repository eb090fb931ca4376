// The characterization window codecs: what characterization_windows() makes of a result, compared
// with the windows `sensors --characterize` stored before the codec; round trips through a
// database; malformed windows named.
#include "store/characterize_record.h"

#include <gtest/gtest.h>

#include "store/store_fixtures.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

DomainCharacter sample() {
  DomainCharacter d;
  d.domain_id = "gpu:0";
  d.simulated = true;
  d.idle.measured = true;
  d.idle.power_kind = ReadingKind::power_instant_w;
  d.idle.settled = true;
  d.idle.waited_ns = 3'500'000'000;
  d.idle.t_begin_ns = 4'000'000'000;
  d.idle.t_end_ns = 6'000'000'000;
  d.idle.power_w = 72.5;
  d.idle.power_sd_w = 0.75;
  d.idle.counter_power_w = 73.0;
  ReadingCharacter counter;
  counter.kind = ReadingKind::energy_counter_j;
  counter.reads = 500;
  counter.changes = 20;
  counter.read_cost_ns = {500, 4'000'000, 0, 0, 6'000'000, 0, 0};
  counter.update_period_ns = {19, 100'000'000, 99'000'000, 101'000'000, 0, 0, 0};
  ReadingCharacter samples;
  samples.kind = ReadingKind::power_sample_w;
  samples.reads = 10;
  samples.failed_reads = 2;
  samples.first_error = "nvmlDeviceGetSamples returned 3";
  samples.read_cost_ns = {8, 2000, 0, 0, 2500, 0, 0};
  samples.sample_spacing_ns = {100, 20'000'000, 19'000'000, 21'000'000, 0, 0, 0};
  samples.depth_samples = 120;
  d.readings = {counter, samples};
  d.load.ran = true;
  d.load.load = "scripted load 'step 600W 3600s' (SIMULATED)";
  d.load.load_report = "ran 10 s";
  d.load.t_a_ns = 10'000'000'000;
  d.load.t_b_ns = 19'500'000'000;
  d.load.counter_j = 5700;
  d.load.counter_power_w = 600;
  AgreementRow instant;
  instant.kind = ReadingKind::power_instant_w;
  instant.available = true;
  instant.integrated_j = 5710;
  instant.ratio = 5710.0 / 5700;
  instant.diff_pct = 0.175;
  instant.uncertainty_pct = 0.5;
  AgreementRow average;
  average.kind = ReadingKind::power_average_w;
  average.available = false;
  d.load.rows = {instant, average};
  return d;
}

// The windows as cmd_sensors.cpp built them before the codec, field by field.
std::vector<WindowResult> todays_windows() {
  WindowResult idle;
  idle.id = 1;
  idle.name = "characterize:idle gpu:0";
  idle.t_begin_ns = 4'000'000'000;
  idle.t_end_ns = 6'000'000'000;
  idle.final = true;
  idle.labels = {{"domain", "gpu:0"}, {"reading", "power_instant_w"}, {"settled", "yes"}};
  idle.counts = {{"idle_power_w", 72.5}, {"idle_power_sd_w", 0.75}, {"waited_s", 3.5}, {"counter_power_w", 73.0}};
  WindowResult counter;
  counter.id = 2;
  counter.name = "characterize:reading gpu:0 energy_counter_j";
  counter.final = true;
  counter.labels = {{"domain", "gpu:0"}, {"reading", "energy_counter_j"}};
  counter.counts = {{"reads", 500},
                    {"failed_reads", 0},
                    {"changes", 20},
                    {"read_cost_median_us", 4'000'000 * 1e-3},
                    {"read_cost_p99_us", 6'000'000 * 1e-3},
                    {"update_period_median_ms", 100'000'000 * 1e-6},
                    {"update_period_p10_ms", 99'000'000 * 1e-6},
                    {"update_period_p90_ms", 101'000'000 * 1e-6}};
  WindowResult samples;
  samples.id = 3;
  samples.name = "characterize:reading gpu:0 power_sample_w";
  samples.final = true;
  samples.labels = {{"domain", "gpu:0"}, {"reading", "power_sample_w"}, {"first_error", "nvmlDeviceGetSamples returned 3"}};
  samples.counts = {{"reads", 10},
                    {"failed_reads", 2},
                    {"changes", 0},
                    {"read_cost_median_us", 2000 * 1e-3},
                    {"read_cost_p99_us", 2500 * 1e-3},
                    {"sample_spacing_median_ms", 20'000'000 * 1e-6},
                    {"sample_spacing_p10_ms", 19'000'000 * 1e-6},
                    {"sample_spacing_p90_ms", 21'000'000 * 1e-6},
                    {"buffer_depth_samples", 120}};
  WindowResult load;
  load.id = 4;
  load.name = "characterize:load gpu:0";
  load.t_begin_ns = 10'000'000'000;
  load.t_end_ns = 19'500'000'000;
  load.final = true;
  DomainEnergy e;
  e.domain_id = "gpu:0";
  e.simulated = true;
  e.available = true;
  e.energy_j = 5700;
  e.mean_power_w = 600;
  e.estimator = Estimator::counter;
  e.cross_check_j = 5710;
  e.cross_check_estimator = Estimator::integrated_power_instant_w;
  load.domains = {e};
  load.labels = {{"domain", "gpu:0"},
                 {"load", "scripted load 'step 600W 3600s' (SIMULATED)"},
                 {"load_report", "ran 10 s"}};
  load.counts = {{"power_instant_w.ratio", 5710.0 / 5700},
                 {"power_instant_w.diff_pct", 0.175},
                 {"power_instant_w.uncertainty_pct", 0.5}};
  return {idle, counter, samples, load};
}

void expect_same(const WindowResult& a, const WindowResult& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.t_begin_ns, b.t_begin_ns);
  EXPECT_EQ(a.t_end_ns, b.t_end_ns);
  EXPECT_EQ(a.final, b.final);
  EXPECT_EQ(a.labels, b.labels) << a.name;
  EXPECT_EQ(a.counts, b.counts) << a.name;
  ASSERT_EQ(a.domains.size(), b.domains.size()) << a.name;
  for (std::size_t i = 0; i < a.domains.size(); ++i) {
    EXPECT_EQ(a.domains[i].domain_id, b.domains[i].domain_id);
    EXPECT_EQ(a.domains[i].simulated, b.domains[i].simulated);
    EXPECT_EQ(a.domains[i].energy_j, b.domains[i].energy_j);
    EXPECT_EQ(a.domains[i].mean_power_w, b.domains[i].mean_power_w);
    EXPECT_EQ(a.domains[i].estimator, b.domains[i].estimator);
    EXPECT_EQ(a.domains[i].cross_check_j, b.domains[i].cross_check_j);
    EXPECT_EQ(a.domains[i].cross_check_estimator, b.domains[i].cross_check_estimator);
  }
}

TEST(CharacterizeRecord, WindowsMatchWhatTheCommandStored) {
  const auto made = characterization_windows({sample()});
  const auto want = todays_windows();
  ASSERT_EQ(made.size(), want.size());
  for (std::size_t i = 0; i < made.size(); ++i) expect_same(made[i], want[i]);
}

TEST(CharacterizeRecord, RoundTripThroughADatabase) {
  test::TempDir dir;
  auto store = Store::open(dir.file("char.db"));
  ASSERT_TRUE(store) << store.error().message();
  auto run = store->begin_run(test::sample_run_info());
  ASSERT_TRUE(run);
  for (const auto& w : todays_windows()) ASSERT_TRUE(store->add_window(*run, w));
  auto rec = store->load_run(*run);
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->windows.size(), 4u);
  const auto& ws = rec->windows;

  auto idle = CharacterizeIdleRecord::decode(ws[0]);
  ASSERT_TRUE(idle) << idle.error().message();
  EXPECT_EQ(idle->domain_id, "gpu:0");
  EXPECT_EQ(idle->reading, ReadingKind::power_instant_w);
  EXPECT_TRUE(idle->settled);
  EXPECT_EQ(idle->waited_s, 3.5);
  EXPECT_EQ(idle->counter_power_w, 73.0);
  expect_same(idle->encode(1), todays_windows()[0]);

  auto counter = CharacterizeReadingRecord::decode(ws[1]);
  ASSERT_TRUE(counter) << counter.error().message();
  EXPECT_EQ(counter->reading, ReadingKind::energy_counter_j);
  EXPECT_EQ(counter->reads, 500);
  EXPECT_EQ(counter->update_period_median_ms, 100);
  EXPECT_FALSE(counter->sample_spacing_median_ms);
  auto samples = CharacterizeReadingRecord::decode(ws[2]);
  ASSERT_TRUE(samples) << samples.error().message();
  EXPECT_EQ(samples->first_error, "nvmlDeviceGetSamples returned 3");
  EXPECT_EQ(samples->buffer_depth_samples, 120);
  expect_same(samples->encode(3), todays_windows()[2]);

  auto load = CharacterizeLoadRecord::decode(ws[3]);
  ASSERT_TRUE(load) << load.error().message();
  EXPECT_TRUE(load->simulated);
  EXPECT_EQ(load->counter_j, 5700);
  EXPECT_EQ(load->integrated_instant_j, 5710);
  ASSERT_EQ(load->rows.size(), 1u);
  EXPECT_EQ(load->rows[0].kind, ReadingKind::power_instant_w);
  EXPECT_EQ(load->rows[0].diff_pct, 0.175);
  expect_same(load->encode(4), todays_windows()[3]);
}

TEST(CharacterizeRecord, MalformedWindowsSayWhatIsWrong) {
  auto ws = todays_windows();
  EXPECT_EQ(CharacterizeIdleRecord::decode(ws[1]).error().what,
            "window 'characterize:reading gpu:0 energy_counter_j' is not a 'characterize:idle ...' window");
  ws[0].labels["reading"] = "power_w";
  EXPECT_EQ(CharacterizeIdleRecord::decode(ws[0]).error().what,
            "window 'characterize:idle gpu:0': label 'reading' = 'power_w' is not a reading kind");
  ws[0].labels["reading"] = "power_instant_w";
  ws[0].labels["settled"] = "maybe";
  EXPECT_EQ(CharacterizeIdleRecord::decode(ws[0]).error().what,
            "window 'characterize:idle gpu:0': label 'settled' = 'maybe' is neither 'yes' nor 'no'");
  ws[1].counts.erase("changes");
  EXPECT_EQ(CharacterizeReadingRecord::decode(ws[1]).error().what,
            "window 'characterize:reading gpu:0 energy_counter_j': count 'changes' is missing");
  ws[3].counts.erase("power_instant_w.uncertainty_pct");
  EXPECT_EQ(CharacterizeLoadRecord::decode(ws[3]).error().what,
            "window 'characterize:load gpu:0': count 'power_instant_w.uncertainty_pct' is missing");
  ws[3].domains.clear();
  EXPECT_EQ(CharacterizeLoadRecord::decode(ws[3]).error().what,
            "window 'characterize:load gpu:0': expected the energy counter's estimate of gpu:0 as its one domain");
}

}  // namespace
}  // namespace wattlab
