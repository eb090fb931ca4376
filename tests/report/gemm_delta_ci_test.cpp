// ΔE against a drift-corrected reference and its bootstrap CI: a reference drifting linearly in
// time gives the known Δ (the plain mean would not), the CI narrows with more seeds, is the same
// on every call, and one seed is flagged and printed as such.
#include "report/gemm_delta_ci.h"

#include <gtest/gtest.h>

#include <regex>

#include "report/gemm_analysis.h"
#include "report/gemm_tables.h"

namespace wattlab::report {
namespace {

TEST(GemmDeltaCi, DriftReferenceInterpolatesBetweenTheNearestReferences) {
  const std::vector<RefPoint> refs = {{0, 1.0}, {100, 1.2}, {200, 1.4}};
  EXPECT_DOUBLE_EQ(*drift_reference(refs, 50), 1.1);
  EXPECT_DOUBLE_EQ(*drift_reference(refs, 175), 1.35);
  EXPECT_DOUBLE_EQ(*drift_reference(refs, -10), 1.0);   // before the first: the nearest
  EXPECT_DOUBLE_EQ(*drift_reference(refs, 300), 1.4);   // after the last: the nearest
  EXPECT_DOUBLE_EQ(*drift_reference(refs, std::nullopt), 1.2);  // no time: the mean
  // A reference left out (weight 0) is not there: 50 ns lies between 0 and 200.
  EXPECT_DOUBLE_EQ(*drift_reference(refs, 50, {1, 0, 1}), 1.1);
  EXPECT_DOUBLE_EQ(*drift_reference(refs, 150, {1, 0, 1}), 1.3);
  EXPECT_DOUBLE_EQ(*drift_reference(refs, std::nullopt, {2, 0, 1}), (2 * 1.0 + 1.4) / 3);
  EXPECT_FALSE(drift_reference(refs, 50, {0, 0, 0}));
  EXPECT_NEAR(*delta_pct({0.88, 50, refs}), -20.0, 1e-9);
}

// A GEMM point window at t_begin_ns .. t_begin_ns + 10 (middle + 5).
WindowResult point(const std::string& exp, const std::string& value, int seed, bool reference, double energy_j,
                   int64_t t_begin_ns) {
  GemmPointRecord r;
  r.sweep = "drift";
  r.experiment = reference ? "ref" : exp;
  r.engine = "bf16";
  r.m = r.n = r.k = 256;
  r.recipe_a = r.recipe_b = "normal(mean=0, std=1)";
  r.param = reference ? "reference" : "fraction";
  r.param_value = reference ? "baseline" : value;
  r.seed = static_cast<uint64_t>(seed);
  r.reference = reference;
  r.counts.energy_per_gemm_j = energy_j;
  r.counts.mean_power_w = 500;
  WindowResult w;
  w.name = "gemm_point";
  w.t_begin_ns = t_begin_ns;
  w.t_end_ns = t_begin_ns + 10;
  r.encode(w);
  return w;
}

// One run per seed: references at 0, 100, 200 drifting +20 % per 100 ns (times `scale`), the point
// at the middle 50 at `ratio` of the reference there.
RunRecord drifting_run(RunId id, int seed, double ratio, double scale = 1.0) {
  RunRecord run;
  run.run_id = id;
  const double r0 = scale, r1 = 1.2 * scale, r2 = 1.4 * scale;
  run.windows = {point("", "", seed, true, r0, -5), point("E11", "0.5", seed, false, ratio * 1.1 * scale, 45),
                 point("", "", seed, true, r1, 95), point("", "", seed, true, r2, 195)};
  return run;
}

TEST(GemmDeltaCi, AKnownDriftGivesTheKnownDelta) {
  const auto a = analyze_gemm(gemm_measurements({drifting_run(1, 1, 0.8), drifting_run(2, 2, 0.8, 1.05)}));
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].rows.size(), 1u);
  const GemmRow& r = a[0].rows[0];
  // Against the mean of the references (1.2) it would read 0.88 / 1.2 - 1 = -26.7 %.
  EXPECT_NEAR(r.delta[idx(GemmQty::energy_per_gemm)].mean, -20.0, 1e-9);
  ASSERT_TRUE(r.energy_ci);
  EXPECT_NEAR(r.energy_ci->mean_pct, -20.0, 1e-9);
  EXPECT_EQ(r.energy_ci->seeds, 2u);
  EXPECT_EQ(r.energy_ci->resamples, 2000u);
  EXPECT_FALSE(r.energy_ci->references_only);
  // Resampled references bracket the point less tightly: the interval holds the estimate.
  EXPECT_LE(r.energy_ci->lo_pct, -20.0);
  EXPECT_GE(r.energy_ci->hi_pct, -20.0);
  EXPECT_LT(r.energy_ci->lo_pct, r.energy_ci->hi_pct);
}

// Seed s's point sits at a Δ spread around -20 %; the references are noisy as well.
std::vector<std::vector<DeltaSample>> seeds_around(std::size_t n) {
  const double spread[] = {-3, 2.5, -1, 3.5, -2.5, 1, 0.5, -1.5, 2, -0.5};
  std::vector<std::vector<DeltaSample>> out;
  for (std::size_t s = 0; s < n; ++s) {
    DeltaSample d;
    d.t_ns = 150;
    d.refs = {{0, 0.99}, {100, 1.01}, {200, 1.0}, {300, 0.995}};
    d.value = (1 + (-20 + spread[s % 10]) / 100) * *drift_reference(d.refs, d.t_ns);
    out.push_back({d});
  }
  return out;
}

TEST(GemmDeltaCi, TheIntervalShrinksWithMoreSeedsAndIsTheSameEveryTime) {
  const auto two = delta_ci(seeds_around(2)), four = delta_ci(seeds_around(4)), ten = delta_ci(seeds_around(10));
  ASSERT_TRUE(two && four && ten);
  const double w2 = two->hi_pct - two->lo_pct, w4 = four->hi_pct - four->lo_pct, w10 = ten->hi_pct - ten->lo_pct;
  EXPECT_GT(w2, w4);
  EXPECT_GT(w4, w10);
  EXPECT_GT(w10, 0);
  const auto again = delta_ci(seeds_around(10));
  EXPECT_EQ(again->lo_pct, ten->lo_pct);
  EXPECT_EQ(again->hi_pct, ten->hi_pct);
  // Another RNG seed gives a slightly different interval: the draws are really random.
  DeltaCiOptions other;
  other.rng_seed = 7;
  EXPECT_NE(delta_ci(seeds_around(10), other)->lo_pct, ten->lo_pct);
}

TEST(GemmDeltaCi, OneSeedComesFromTheReferencesOnlyAndSaysSo) {
  const auto one = delta_ci(seeds_around(1));
  ASSERT_TRUE(one);
  EXPECT_TRUE(one->references_only);
  EXPECT_EQ(one->seeds, 1u);
  EXPECT_NEAR(one->mean_pct, -23.0, 1e-9);
  EXPECT_LT(one->lo_pct, one->hi_pct);  // the noisy references still spread it
  // Without references there is nothing to compare with.
  DeltaSample lone;
  lone.value = 1;
  EXPECT_FALSE(delta_ci({{lone}}));

  const auto a = analyze_gemm(gemm_measurements({drifting_run(1, 1, 0.8)}));
  ASSERT_TRUE(a[0].rows.at(0).energy_ci);
  EXPECT_TRUE(a[0].rows[0].energy_ci->references_only);
  const auto tables = gemm_tables(a[0]);
  const GemmTable& e11 = tables.at(2);
  const std::string cell = e11.rows.at(0).at(5);
  EXPECT_TRUE(std::regex_match(cell, std::regex(R"(-20\.0 % \[-?\d+\.\d, -?\d+\.\d\] \(1 seed\))"))) << cell;
  bool said = false;
  for (const auto& n : e11.notes) said = said || (n.find("(1 seed)") != std::string::npos && n.find("2000 resamples") != std::string::npos);
  EXPECT_TRUE(said);
  const auto two = gemm_tables(analyze_gemm(gemm_measurements({drifting_run(1, 1, 0.8), drifting_run(2, 2, 0.8, 1.05)}))[0]);
  const std::string cell2 = two.at(2).rows.at(0).at(5);
  EXPECT_TRUE(std::regex_match(cell2, std::regex(R"(-20\.0 % \[-?\d+\.\d, -?\d+\.\d\])"))) << cell2;
}

}  // namespace
}  // namespace wattlab::report
