// The sweep runner on the SIMULATED executor: order, resume after an interruption, labels and
// counts in the store, progress output.
#include "lab/runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "lab/temp_db.h"
#include "lab/sim_executor.h"

namespace wattlab::lab {
namespace {

PlanRequest request() {
  PlanRequest r;
  r.experiments = {"E11"};
  r.engines = {Engine::bf16};
  r.shapes = {Shape{64, 64, 64}};
  r.seeds = {1};
  r.max_values = 3;
  r.reference_every = 2;
  return r;
}

ProtocolOptions protocol() {
  ProtocolOptions o;
  o.window_s = 2;
  o.first_warmup_min_s = 5;
  o.warmup_min_s = 1;
  o.warmup_max_s = 20;
  o.slope_window_s = 5;
  return o;
}

std::vector<GemmSpec> specs(const std::vector<PlannedPoint>& pts) {
  std::vector<GemmSpec> s;
  for (const auto& p : pts) s.push_back(p.spec);
  return s;
}

using Db = test::TempDb;

RunId begin(Store& store, GemmExecutor& exec) {
  RunInfo info;
  info.simulated = exec.simulated();
  info.device_selection = "sim";
  info.devices = exec.devices();
  auto id = store.begin_run(info);
  EXPECT_TRUE(id);
  EXPECT_TRUE(store.add_domains(*id, exec.meter().domains()));
  return *id;
}

TEST(Runner, ResumesAfterInterruptionAndStoresLabelsAndCounts) {
  Db db;
  auto plan = make_plan(request());
  ASSERT_TRUE(plan) << plan.error().message();
  const std::size_t total = plan->points.size();
  ASSERT_GE(total, 5u);
  auto store = Store::open(db.path);
  ASSERT_TRUE(store);
  std::ostringstream log;
  {
    auto exec = make_sim_executor(specs(plan->points), {30, 1, 1 << 12});
    ASSERT_TRUE(exec) << exec.error().message();
    const RunId run = begin(*store, **exec);
    Progress progress(log, false, total, 0, 10, true);
    auto out = run_sweep(*plan, plan->points, **exec, *store, run, protocol(), &progress, nullptr, 3);
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_TRUE(out->stopped);
    EXPECT_EQ(out->measured, 3u);
  }
  auto done = completed_points(*store, plan->sweep_id);
  ASSERT_TRUE(done);
  EXPECT_EQ(*done, (std::set<int>{0, 1, 2}));
  const auto rest = remaining_points(*plan, *done);
  ASSERT_EQ(rest.size(), total - 3);
  EXPECT_EQ(rest.front().index, 3);
  {
    auto exec = make_sim_executor(specs(rest), {30, 1, 1 << 12});
    ASSERT_TRUE(exec);
    const RunId run = begin(*store, **exec);
    Progress progress(log, false, total, done->size(), 10, true);
    auto out = run_sweep(*plan, rest, **exec, *store, run, protocol(), &progress);
    ASSERT_TRUE(out) << out.error().message();
    EXPECT_FALSE(out->stopped);
  }
  auto all = completed_points(*store, plan->sweep_id);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), total);
  EXPECT_NE(log.str().find("resuming: 3 of"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("(SIMULATED time)"), std::string::npos);

  // Labels and counts the report reads; zeros draw less than the dense baseline.
  auto runs = store->list_runs();
  ASSERT_TRUE(runs);
  std::map<std::string, double> power_by_value;
  std::size_t windows = 0;
  for (const auto& r : *runs) {
    auto rec = store->load_run(r.run_id);
    ASSERT_TRUE(rec);
    EXPECT_TRUE(rec->info.simulated);
    for (const auto& w : rec->windows) {
      ++windows;
      for (const char* k : {"kind", "experiment", "engine", "M", "N", "K", "recipe_a", "recipe_b", "seed", "param",
                            "param_value", "reference"})
        EXPECT_TRUE(w.labels.count(k)) << k;
      EXPECT_EQ(w.labels.at("kind"), "gemm_point");
      for (const char* k : {"energy_per_gemm_j", "energy_per_gemm_u_j", "mean_power_w", "tflops", "gemms"})
        ASSERT_TRUE(w.counts.count(k)) << k;
      EXPECT_GT(w.counts.at("energy_per_gemm_j"), 0);
      EXPECT_LT(w.counts.at("energy_per_gemm_u_j"), 0.05 * w.counts.at("energy_per_gemm_j"));
      EXPECT_NEAR(w.dur_s(), 2.0, 0.1);
      power_by_value[w.labels.at("experiment") + "=" + w.labels.at("param_value")] = w.counts.at("mean_power_w");
    }
  }
  EXPECT_EQ(windows, total);
  auto sw = study_sweep("E11", Engine::bf16, request());
  ASSERT_TRUE(sw);
  const std::string dense = "E11=" + sw->values.front().value, zeros = "E11=" + sw->values.back().value;
  ASSERT_TRUE(power_by_value.count(dense));
  ASSERT_TRUE(power_by_value.count(zeros));
  EXPECT_LT(power_by_value[zeros], 0.8 * power_by_value[dense]);
}

TEST(Runner, StoredWindowsDecodeAsThePlannedPoints) {
  Db db;
  auto plan = make_plan(request());
  ASSERT_TRUE(plan);
  auto store = Store::open(db.path);
  ASSERT_TRUE(store);
  auto exec = make_sim_executor(specs_to_run(plan->points, 2), {30, 1, 1 << 12});
  ASSERT_TRUE(exec);
  const RunId run = begin(*store, **exec);
  auto out = run_sweep(*plan, plan->points, **exec, *store, run, protocol(), nullptr, nullptr, 2);
  ASSERT_TRUE(out) << out.error().message();
  auto rec = store->load_run(run);
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->windows.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    auto p = GemmPointRecord::decode(rec->windows[i]);
    ASSERT_TRUE(p) << p.error().message();
    GemmPointRecord want = point_record(*plan, plan->points[i], true);
    want.counts = p->counts;
    EXPECT_EQ(*p, want);
    EXPECT_GT(p->counts.energy_per_gemm_j.value_or(0), 0);
    EXPECT_EQ(p->counts.gemms.value_or(0), p->counts.replays.value_or(0) * p->counts.gemms_per_replay.value_or(0));
  }
}

TEST(Runner, ResumeNamesAMalformedPointAndReadsNoMissingFile) {
  Db db;
  auto none = completed_points_in_file(db.path.string(), "s");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(std::filesystem::exists(db.path));  // a dry run creates no database
  {
    auto store = Store::open(db.path);
    ASSERT_TRUE(store);
    auto run = store->begin_run(RunInfo{});
    ASSERT_TRUE(run);
    WindowResult w;
    w.name = "gemm_point 4";
    GemmPointRecord r;
    r.sweep = "s";
    r.point = 4;
    r.encode(w);
    w.labels["point"] = "four";
    ASSERT_TRUE(store->add_window(*run, w));
  }
  auto done = completed_points_in_file(db.path.string(), "s");
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().what.find("label 'point' = 'four' is not an integer"), std::string::npos) << done.error().what;
  EXPECT_EQ(done.error().what.rfind("run 1: gemm_point window 'gemm_point 4'", 0), 0u) << done.error().what;
}

}  // namespace
}  // namespace wattlab::lab
