// The serve-bench window codecs: round trips, the windows `infer serve-bench` wrote before the
// codec stored in a database and read back, and malformed labels named.
#include "store/serve_bench_record.h"

#include <gtest/gtest.h>

#include "store/store_fixtures.h"
#include "wattlab/store/store.h"

namespace wattlab {
namespace {

SteadyWindowRecord sample() {
  SteadyWindowRecord r;
  r.phase = SteadyWindowRecord::kSteady;
  r.batch = 64;
  r.avg_batch_size = 61.25;
  r.median_itl_ms = 24.5;
  r.p90_itl_ms = 30.125;
  r.p95_itl_ms = 33;
  r.p99_itl_ms = 41.75;
  r.kv_cache_usage = 0.875;
  r.stable = false;
  r.flags = {"steady window 12 s is shorter than 20 s", "mean running 40 of B = 64 (0.62 < 0.85)"};
  r.tokens = 51200;
  r.requests = 400;
  return r;
}

TEST(SteadyWindowRecord, RoundTripsEveryField) {
  const SteadyWindowRecord r = sample();
  WindowResult w;
  r.encode(w);
  EXPECT_EQ(w.labels.at("batch"), "64");
  EXPECT_EQ(w.labels.at("serve_bench.flags"),
            "steady window 12 s is shorter than 20 s | mean running 40 of B = 64 (0.62 < 0.85)");
  auto back = SteadyWindowRecord::decode(w.labels, w.counts);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, r);

  // A window with none of it (a plain marks window) decodes to empty fields.
  auto empty = SteadyWindowRecord::decode({}, {});
  ASSERT_TRUE(empty);
  EXPECT_EQ(*empty, SteadyWindowRecord{});
}

TEST(ServeBenchWholeRecord, RoundTrips) {
  const ServeBenchWholeRecord r{20, 3};
  WindowResult w;
  w.name = "serve-bench";
  r.encode(w);
  EXPECT_EQ(w.labels.at("phase"), "whole");
  auto back = ServeBenchWholeRecord::decode(w);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(*back, r);
}

// The labels and counts `wattlab infer serve-bench` wrote before the codec, in a database.
TEST(SteadyWindowRecord, DecodesTodaysLabelsFromADatabase) {
  test::TempDir dir;
  auto store = Store::open(dir.file("serve.db"));
  ASSERT_TRUE(store) << store.error().message();
  RunInfo info = test::sample_run_info();
  info.tags = {{"model", "fake"}, {"task", "chat"}, {"batch", "4"}, {"workload", "llm"}};
  auto run = store->begin_run(info);
  ASSERT_TRUE(run);
  WindowResult whole;
  whole.id = 1;
  whole.name = "serve-bench";
  whole.final = true;
  whole.labels = {{"phase", "whole"}};
  whole.counts = {{"requests_sent", 20}, {"requests_failed", 3}};
  WindowResult steady;
  steady.id = 2;
  steady.name = "steady";
  steady.final = true;
  steady.labels = {{"phase", "steady"},         {"batch", "4"},         {"avg_batch_size", "3.71429"},
                   {"median_itl_ms", "4.12345"}, {"p90_itl_ms", "5.5"},  {"p95_itl_ms", "6"},
                   {"p99_itl_ms", "7.25"},      {"kv_cache_usage", "0.125"}, {"serve_bench.stable", "false"},
                   {"serve_bench.flags", "steady window 0.2 s is shorter than 20 s"}};
  steady.counts = {{"tokens", 180}, {"requests", 13}};
  ASSERT_TRUE(store->add_window(*run, whole));
  ASSERT_TRUE(store->add_window(*run, steady));
  auto rec = store->load_run(*run);
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->windows.size(), 2u);
  auto w = ServeBenchWholeRecord::decode(rec->windows[0]);
  ASSERT_TRUE(w) << w.error().message();
  EXPECT_EQ(*w, (ServeBenchWholeRecord{20, 3}));
  auto s = SteadyWindowRecord::decode(rec->windows[1].labels, rec->windows[1].counts);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->phase, "steady");
  EXPECT_EQ(s->batch, 4);
  EXPECT_EQ(s->avg_batch_size, 3.71429);
  EXPECT_EQ(s->median_itl_ms, 4.12345);
  EXPECT_EQ(s->p99_itl_ms, 7.25);
  EXPECT_EQ(s->kv_cache_usage, 0.125);
  EXPECT_EQ(s->stable, false);
  EXPECT_EQ(s->flags, std::vector<std::string>{"steady window 0.2 s is shorter than 20 s"});
  EXPECT_EQ(s->tokens, 180);
  EXPECT_EQ(s->requests, 13);
  WindowResult again;
  s->encode(again);
  EXPECT_EQ(again.labels, steady.labels);
  EXPECT_EQ(again.counts, steady.counts);
}

TEST(SteadyWindowRecord, MalformedLabelsSayWhatIsWrong) {
  auto error = [](std::map<std::string, std::string> labels) {
    auto r = SteadyWindowRecord::decode(labels, {});
    return r ? std::string() : r.error().what;
  };
  EXPECT_EQ(error({{"batch", "many"}}), "tag 'batch' = 'many' is not a number");
  EXPECT_EQ(error({{"kv_cache_usage", "inf"}}), "tag 'kv_cache_usage' = 'inf' is not a number");
  EXPECT_EQ(error({{"serve_bench.stable", "yes"}}), "tag 'serve_bench.stable' = 'yes' is neither 'true' nor 'false'");
  EXPECT_EQ(error({{"batch", "64.0"}, {"p90_itl_ms", "1e1"}}), "");

  WindowResult w;
  w.name = "serve-bench";
  w.labels = {{"phase", "steady"}};
  w.counts = {{"requests_sent", 1}, {"requests_failed", 0}};
  EXPECT_EQ(ServeBenchWholeRecord::decode(w).error().what,
            "serve-bench window 'serve-bench': label 'phase' = 'steady', expected 'whole'");
  w.labels = {{"phase", "whole"}};
  w.counts.erase("requests_failed");
  EXPECT_EQ(ServeBenchWholeRecord::decode(w).error().what,
            "serve-bench window 'serve-bench': count 'requests_failed' is missing");
}

// The run's configuration tags: the user's own model and task stay; batch and workload are the
// benchmark's; the steady window decodes its batch over them as diagnose reads it.
TEST(ServeBenchRunTags, SetTheConfigurationOverTheUsersTags) {
  std::map<std::string, std::string> tags{{"task", "gpqa"}, {"batch", "99"}, {"gpu", "H200"}};
  ServeBenchRunTags{"llama-8b", "serve-bench", 16}.encode(tags);
  const std::map<std::string, std::string> expected{
      {"model", "llama-8b"}, {"task", "gpqa"}, {"batch", "16"}, {"workload", "llm"}, {"gpu", "H200"}};
  EXPECT_EQ(tags, expected);
  auto steady = SteadyWindowRecord::decode(tags, {});
  ASSERT_TRUE(steady) << steady.error().message();
  EXPECT_EQ(steady->batch, 16);
}

}  // namespace
}  // namespace wattlab
