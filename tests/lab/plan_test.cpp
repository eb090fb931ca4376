#include "lab/plan.h"

#include <gtest/gtest.h>

#include <set>

namespace wattlab::lab {
namespace {

PlanRequest request() {
  PlanRequest r;
  r.experiments = {"E3", "E11"};
  r.engines = {Engine::bf16, Engine::fp16};
  r.shapes = {Shape{256, 256, 256}};
  r.seeds = {1, 2};
  r.reference_every = 4;
  return r;
}

TEST(Plan, ShapesParse) {
  auto s = parse_shape("8192");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->k, 8192);
  auto t = parse_shape_list("2048,8192x8192x28672");
  ASSERT_TRUE(t);
  EXPECT_EQ((*t)[1].k, 28672);
  EXPECT_FALSE(parse_shape("8192x"));
  EXPECT_FALSE(parse_shape("0"));
  EXPECT_FALSE(parse_shape("1x2"));
}

TEST(Plan, RandomizedWithinSeedWithInterleavedReference) {
  auto plan = make_plan(request());
  ASSERT_TRUE(plan) << plan.error().message();
  const auto& pts = plan->points;
  ASSERT_FALSE(pts.empty());
  // Every block (seed, engine) starts and ends with its reference, with <= 4 points between.
  std::size_t since_ref = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    EXPECT_EQ(pts[i].index, static_cast<int>(i));
    if (pts[i].reference) {
      since_ref = 0;
      continue;
    }
    ++since_ref;
    EXPECT_LE(since_ref, 4u);
    ASSERT_GT(i, 0u);
    EXPECT_EQ(pts[i].spec.seed, pts[i - since_ref].spec.seed);
    EXPECT_EQ(pts[i].engine_label, pts[i - since_ref].engine_label);  // the reference of its own engine
  }
  EXPECT_TRUE(pts.front().reference);
  EXPECT_TRUE(pts.back().reference);
  // Not in ascending order: the E3 values of the first block differ in order from the study's.
  std::vector<std::string> e3;
  for (const auto& p : pts)
    if (p.experiment == "E3" && p.spec.seed == pts.front().spec.seed && p.engine_label == pts.front().engine_label)
      e3.push_back(p.param_value);
  auto sw = study_sweep("E3", pts.front().spec.engine, request());
  ASSERT_TRUE(sw);
  std::vector<std::string> ascending;
  for (const auto& v : sw->values) ascending.push_back(v.value);
  ASSERT_EQ(e3.size(), ascending.size());
  EXPECT_NE(e3, ascending);
  EXPECT_EQ(std::set<std::string>(e3.begin(), e3.end()), std::set<std::string>(ascending.begin(), ascending.end()));
  // Deterministic; another order seed gives another order and another sweep id.
  auto again = make_plan(request());
  EXPECT_EQ(again->sweep_id, plan->sweep_id);
  auto req2 = request();
  req2.order_seed = 2;
  EXPECT_NE(make_plan(req2)->sweep_id, plan->sweep_id);
}

TEST(Plan, BadInputNamesTheProblem) {
  auto r = request();
  r.experiments = {"E99"};
  auto p = make_plan(r);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message().find("E99"), std::string::npos);
  r = request();
  r.engines = {Engine::fp8e4m3};
  r.shapes = {Shape{100, 256, 256}};
  p = make_plan(r);
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message().find("M = 100"), std::string::npos);
}

TEST(Plan, ThinKeepsEndsAndTimeAddsUp) {
  std::vector<SweepValue> v(10);
  for (int i = 0; i < 10; ++i) v[static_cast<std::size_t>(i)].value = std::to_string(i);
  auto t = thin_values(v, 3);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].value, "0");
  EXPECT_EQ(t[2].value, "9");
  SweepPlan plan;
  plan.points.resize(3);
  TimeModel m{10, 2, 10, 0.5};
  EXPECT_DOUBLE_EQ(estimate_plan_s(plan, m), 3 * 10.5 + 10 + 2 + 2);
}

TEST(Plan, OnePointIsBaselineOnlyWithTheReferenceRecipes) {
  const SweepValue ref = *reference_value(Engine::fp8e4m3);
  GemmSpec s;
  s.engine = Engine::fp8e4m3;
  s.m = s.n = s.k = 1024;
  s.recipe_a = ref.recipe_a;
  s.recipe_b = ref.recipe_b;
  auto plan = single_point_plan(s);
  ASSERT_TRUE(plan) << plan.error().message();
  ASSERT_EQ(plan->points.size(), 1u);
  const PlannedPoint& p = plan->points[0];
  EXPECT_EQ(p.index, 0);
  EXPECT_EQ(p.experiment, "run");
  EXPECT_EQ(p.param, "recipe");
  EXPECT_EQ(p.param_value, "baseline");
  EXPECT_TRUE(p.reference);
  EXPECT_EQ(p.engine_label, "fp8e4m3");
  EXPECT_EQ(p.spec.m, 1024);
  s.recipe_b = "zeros()";
  plan = single_point_plan(s);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->points[0].param_value, "custom");
  EXPECT_FALSE(plan->points[0].reference);
}

}  // namespace
}  // namespace wattlab::lab
