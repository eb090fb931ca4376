// The GEMM study analysis on hand-built runs with known answers: Δ against the same seed's
// reference, SD across seeds, reference CV and drift, the cap rule, curves, tables and plots.
#include "report/gemm_analysis.h"

#include <gtest/gtest.h>

#include <cmath>

#include "report/gemm_original.h"
#include "report/gemm_plots.h"
#include "report/gemm_tables.h"

namespace wattlab::report {
namespace {

struct Pt {
  std::string sweep, experiment, engine, value;
  int seed = 1;
  bool reference = false;
  double energy_j = 1, power_w = 500, clock_mhz = 1400, tflops = 100, capped = 0;
  std::string param = "fraction";
};

// A point as the lab stores it (through its record's codec).
WindowResult window(const Pt& p) {
  GemmPointRecord r;
  r.sweep = p.sweep;
  r.experiment = p.reference ? "ref" : p.experiment;
  r.engine = p.engine;
  r.m = r.n = r.k = p.engine == "control" ? 0 : 256;
  r.recipe_a = r.recipe_b = "normal(mean=0, std=1)";
  r.param = p.reference ? "reference" : p.param;
  r.param_value = p.reference ? "baseline" : p.value;
  r.seed = static_cast<uint64_t>(p.seed);
  r.reference = p.reference;
  r.simulated = true;
  auto& c = r.counts;
  c.energy_per_gemm_j = p.energy_j;
  c.energy_per_gemm_u_j = 0.001 * p.energy_j;
  c.mean_power_w = p.power_w;
  c.mean_sm_clock_mhz = p.clock_mhz;
  c.tflops = p.tflops;
  c.power_capped_fraction = p.capped;
  c.temperature_c = 60;
  c.rel_error = 1e-3;
  c.nonfinite_fraction = 0;
  WindowResult w;
  w.name = "gemm_point";
  r.encode(w);
  return w;
}

RunRecord run(RunId id, const std::vector<Pt>& pts) {
  RunRecord r;
  r.run_id = id;
  r.info.simulated = true;
  for (const auto& p : pts) r.windows.push_back(window(p));
  WindowResult other;  // not a GEMM point: ignored
  other.name = "run";
  r.windows.push_back(other);
  return r;
}

// Sweep s1, bf16 at the cap: seed 1 in run 1, seed 2 in run 2 (a resumed study).
std::vector<RunRecord> capped_study() {
  const std::string s = "s1", e = "bf16";
  RunRecord r1 = run(1, {{s, "ref", e, "", 1, true, 1.0, 500, 1400, 100, 0.9},
                         {s, "E11", e, "0", 1, false, 1.1, 510, 1400, 100, 0.9},
                         {s, "E11", e, "1", 1, false, 0.88, 504.9, 1540, 110, 0.1},
                         {s, "ref", e, "", 1, true, 1.2, 520, 1400, 100, 0.9}});
  RunRecord r2 = run(2, {{s, "ref", e, "", 2, true, 1.0, 500, 1400, 100, 0.9},
                         {s, "E11", e, "1", 2, false, 0.85, 490, 1540, 110, 0.1},
                         {s, "E11", e, "0", 2, false, 1.0, 500, 1400, 100, 0.9},
                         {s, "ref", e, "", 2, true, 1.0, 500, 1400, 100, 0.9}});
  return {r1, r2};
}

TEST(GemmAnalysis, AMalformedPointIsAnErrorNamingIt) {
  auto runs = capped_study();
  runs[1].windows[2].labels["seed"] = "two";
  try {
    (void)gemm_measurements(runs);
    FAIL() << "a malformed point was accepted";
  } catch (const WattlabError& e) {
    EXPECT_EQ(e.error().what, "run 2: gemm_point window 'gemm_point': label 'seed' = 'two' is not a non-negative integer");
  }
  runs[1].windows[2].labels["kind"] = "other";  // not a GEMM point: not read
  EXPECT_EQ(gemm_measurements(runs).size(), 7u);
}

TEST(GemmAnalysis, StatsAndParamNumbers) {
  const Stat s = stat_of({1, 2, 3});
  EXPECT_EQ(s.n, 3u);
  EXPECT_DOUBLE_EQ(s.mean, 2);
  ASSERT_TRUE(s.sd);
  EXPECT_DOUBLE_EQ(*s.sd, 1);
  EXPECT_FALSE(stat_of({4}).sd);
  EXPECT_EQ(stat_of({}).n, 0u);
  EXPECT_DOUBLE_EQ(*param_number("2^-3"), 0.125);
  EXPECT_DOUBLE_EQ(*param_number("0xFF"), 255);
  EXPECT_DOUBLE_EQ(*param_number("0.5"), 0.5);
  EXPECT_FALSE(param_number("baseline"));
  EXPECT_FALSE(param_number("2^x"));
  EXPECT_TRUE(experiment_less("E2", "E10"));
  EXPECT_TRUE(experiment_less("E15", "TF32"));
  EXPECT_TRUE(experiment_less("TF32", "X1"));
  EXPECT_FALSE(experiment_less("X1", "E1"));
}

TEST(GemmAnalysis, DeltaAgainstTheSameSeedsReferenceAcrossRuns) {
  const auto pts = gemm_measurements(capped_study());
  ASSERT_EQ(pts.size(), 8u);  // the "run" windows are not GEMM points
  const auto all = analyze_gemm(pts);
  ASSERT_EQ(all.size(), 1u);
  const auto& a = all[0];
  EXPECT_EQ(a.sweep, "s1");
  EXPECT_TRUE(a.simulated);
  EXPECT_EQ(a.runs, (std::vector<RunId>{1, 2}));
  EXPECT_EQ(a.points, 8u);
  ASSERT_EQ(a.rows.size(), 2u);
  EXPECT_EQ(a.rows[0].param_value, "0");
  const GemmRow& r = a.rows[1];
  EXPECT_EQ(r.param_value, "1");
  EXPECT_EQ(r.shape, "256x256x256");
  EXPECT_EQ(r.seeds, 2u);
  EXPECT_EQ(r.referenced_seeds, 2u);
  // Seed 1: 0.88 against (1.0 + 1.2) / 2 = -20 %; seed 2: 0.85 against 1.0 = -15 %.
  const Stat& de = r.delta[idx(GemmQty::energy_per_gemm)];
  EXPECT_EQ(de.n, 2u);
  EXPECT_NEAR(de.mean, -17.5, 1e-9);
  EXPECT_NEAR(*de.sd, std::sqrt(12.5), 1e-9);
  // Power: 504.9 against 510 = -1 %, 490 against 500 = -2 %.
  EXPECT_NEAR(r.delta[idx(GemmQty::power)].mean, -1.5, 1e-9);
  EXPECT_NEAR(r.delta[idx(GemmQty::sm_clock)].mean, 10, 1e-9);
  EXPECT_NEAR(*r.delta[idx(GemmQty::sm_clock)].sd, 0, 1e-9);
  // The capped fraction's Δ is a difference: 0.1 - 0.9.
  EXPECT_NEAR(r.delta[idx(GemmQty::capped_fraction)].mean, -0.8, 1e-12);
  EXPECT_NEAR(r.value[idx(GemmQty::energy_per_gemm)].mean, 0.865, 1e-12);
  EXPECT_NEAR(a.rows[0].delta[idx(GemmQty::energy_per_gemm)].mean, 0, 1e-9);
}

TEST(GemmAnalysis, ReferenceCvDriftAndTheCapRule) {
  const auto a = analyze_gemm(gemm_measurements(capped_study()))[0];
  ASSERT_EQ(a.references.size(), 1u);
  const GemmReference& ref = a.references[0];
  EXPECT_EQ(ref.points, 4u);
  EXPECT_EQ(ref.seeds, 2u);
  // Seed means 1.1 and 1.0: SD sqrt(0.005), CV 6.73 % > 1 %.
  EXPECT_NEAR(*ref.cv_energy_pct, 100 * std::sqrt(0.005) / 1.05, 1e-9);
  EXPECT_EQ(ref.cv_pass, std::optional<bool>(false));
  EXPECT_NEAR(*ref.cv_power_pct, 100 * std::sqrt(50.0) / 505, 1e-9);
  // Seed 1's references spread 1.0..1.2 around 1.1.
  EXPECT_NEAR(*ref.drift_energy_pct, 100 * 0.2 / 1.1, 1e-9);
  EXPECT_DOUBLE_EQ(*ref.min_energy_j, 1.0);
  EXPECT_DOUBLE_EQ(*ref.max_energy_j, 1.2);
  EXPECT_TRUE(ref.capped);

  ASSERT_EQ(a.effects.size(), 1u);
  const GemmEffect& e = a.effects[0];
  EXPECT_EQ(e.experiment, "E11");
  EXPECT_EQ(e.values, 2u);
  EXPECT_EQ(e.max_energy_at, "1");
  EXPECT_NEAR(e.max_energy_pct->mean, -17.5, 1e-9);
  EXPECT_NEAR(*e.clock_at_max_energy_pct, 10, 1e-9);
  EXPECT_NEAR(*e.tflops_at_max_energy_pct, 10, 1e-9);
  // End against start per seed: 0.88 / 1.1 and 0.85 / 1.0.
  EXPECT_NEAR(e.start_to_end_energy_pct->mean, -17.5, 1e-9);
  EXPECT_TRUE(e.reference_capped);
  EXPECT_TRUE(e.cap_shifted);  // |ΔP| 1.5 % < 3 %, clock +10 %, reference capped 0.9
  EXPECT_EQ(e.shows_in, "clock/throughput (at the cap)");
  EXPECT_EQ(e.power_curve, Curve::flat);
  EXPECT_EQ(e.energy_curve, Curve::down);
}

TEST(GemmAnalysis, UncappedPowerEffectPassingCvAndMissingReference) {
  std::vector<Pt> pts;
  const double ref_e[3] = {2.0, 2.01, 1.99};
  for (int seed = 1; seed <= 3; ++seed) {
    pts.push_back({"s2", "ref", "fp32", "", seed, true, ref_e[seed - 1], 600, 1980, 50, 0});
    pts.push_back({"s2", "E2", "fp32", "2^0", seed, false, ref_e[seed - 1], 600, 1980, 50, 0, "mean"});
    pts.push_back({"s2", "E2", "fp32", "2^14", seed, false, 0.8 * ref_e[seed - 1], 480, 1980, 50, 0, "mean"});
  }
  pts.push_back({"s2", "E2", "int8", "2^0", 1, false, 1, 400, 1980, 50, 0, "mean"});  // int8 has no reference
  pts.push_back({"s2", "ref", "control", "", 1, true, 0, 75, 300, 0, 0});
  pts.push_back({"s2", "X1", "control", "0x00", 1, false, 0, 75, 300, 0, 0, "fill"});
  pts.push_back({"s2", "X1", "control", "0xFF", 1, false, 0, 75.75, 300, 0, 0, "fill"});
  const auto a = analyze_gemm(gemm_measurements({run(7, pts)}))[0];
  ASSERT_EQ(a.references.size(), 1u);
  EXPECT_NEAR(*a.references[0].cv_energy_pct, 0.5, 1e-9);
  EXPECT_EQ(a.references[0].cv_pass, std::optional<bool>(true));
  EXPECT_FALSE(a.references[0].capped);
  ASSERT_EQ(a.effects.size(), 2u);
  const GemmEffect& fp32 = a.effects[0];
  EXPECT_EQ(fp32.engine, "fp32");
  EXPECT_EQ(fp32.max_power_at, "2^14");
  EXPECT_NEAR(fp32.max_power_pct->mean, -20, 1e-9);
  EXPECT_NEAR(*fp32.max_power_pct->sd, 0, 1e-9);
  EXPECT_FALSE(fp32.cap_shifted);
  EXPECT_EQ(fp32.shows_in, "power");
  EXPECT_EQ(fp32.power_curve, Curve::down);
  EXPECT_EQ(curve_agrees(original_effect("E2")->expected, fp32.power_curve), "yes");
  const GemmEffect& int8 = a.effects[1];
  EXPECT_EQ(int8.shows_in, "no reference");
  const GemmRow* int8_row = nullptr;
  for (const auto& r : a.rows)
    if (r.engine == "int8") int8_row = &r;
  ASSERT_NE(int8_row, nullptr);
  EXPECT_EQ(int8_row->referenced_seeds, 0u);
  EXPECT_EQ(int8_row->delta[idx(GemmQty::energy_per_gemm)].n, 0u);
  // Controls against idle, their own table.
  ASSERT_TRUE(a.control_reference);
  ASSERT_EQ(a.controls.size(), 2u);
  EXPECT_EQ(a.controls[0].param_value, "0x00");  // 0 < 255
  EXPECT_NEAR(a.controls[1].delta[idx(GemmQty::power)].mean, 1.0, 1e-9);
  EXPECT_FALSE(a.controls[1].delta[idx(GemmQty::power)].sd);  // one seed
}

TEST(GemmAnalysis, Curves) {
  EXPECT_EQ(classify_curve({0, 1, -1}, 3), Curve::flat);
  EXPECT_EQ(classify_curve({0, 10, 20}, 3), Curve::up);
  EXPECT_EQ(classify_curve({0, -5, -20}, 3), Curve::down);
  EXPECT_EQ(classify_curve({0, 10, 0}, 3), Curve::peak);
  EXPECT_EQ(classify_curve({0, 12, -25}, 3), Curve::peak);  // E12's hump, then the fall
  EXPECT_EQ(classify_curve({0, -10, 0}, 3), Curve::dip);
  // Relative to the start value, not to the reference: +10 % -> +10 % is flat.
  EXPECT_EQ(classify_curve({10, 11, 10}, 3), Curve::flat);
  EXPECT_EQ(classify_curve({5}, 3), Curve::unknown);
  EXPECT_EQ(curve_agrees(Curve::down, Curve::flat), "no");
  EXPECT_EQ(curve_agrees(Curve::unknown, Curve::flat), "n/a");
}

TEST(GemmAnalysis, TablesSaySimulatedAndCarryTheOriginal) {
  const auto a = analyze_gemm(gemm_measurements(capped_study()))[0];
  const auto tables = gemm_tables(a);
  ASSERT_EQ(tables.size(), 3u);  // references, effects, E11
  for (const auto& t : tables) EXPECT_NE(t.title.find("SIMULATED"), std::string::npos) << t.title;
  EXPECT_EQ(tables[0].rows.at(0).back(), "FAIL");
  const std::string md = render_markdown(tables);
  EXPECT_NE(md.find("| 256x256x256 | bf16 | 1 | 2 | 865.0 ± 21.2 |"), std::string::npos) << md;  // mJ
  EXPECT_NE(md.find("#### E11 over fraction: each value against the reference (SIMULATED)"), std::string::npos) << md;
  EXPECT_NE(md.find("| -17.50 ± 3.54 |"), std::string::npos) << md;
  EXPECT_NE(md.find("big 90 -> 100 % step"), std::string::npos);  // the original's result, §3
  EXPECT_NE(md.find("clock/throughput (at the cap)"), std::string::npos);
  const std::string text = render_text(tables);
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_NE(render_html(tables).find("<table class=\"gemm\">"), std::string::npos);
  EXPECT_EQ(mean_sd(stat_of({0.001}), "{:.4g}", 1e3), "1 ± n/a");
  EXPECT_EQ(mean_sd(Stat{}), "n/a");
  EXPECT_EQ(mean_sd(stat_of({0.01947e-3, 0.01953e-3}), nullptr, 1e3), "0.01950 ± 0.00004");
  EXPECT_EQ(mean_sd(stat_of({1980, 1980})), "1980 ± 0");
  EXPECT_NE(gemm_sweep_heading(a).find("SIMULATED"), std::string::npos);
  EXPECT_NE(gemm_sweep_heading(a).find("runs 1, 2"), std::string::npos);
}

TEST(GemmAnalysis, NormalizedPlot) {
  const auto a = analyze_gemm(gemm_measurements(capped_study()))[0];
  const auto keys = gemm_plot_keys(a);
  ASSERT_EQ(keys.size(), 1u);
  auto p = gemm_normalized_plot(a, keys[0], GemmQty::energy_per_gemm);
  ASSERT_TRUE(p);
  EXPECT_NE(p->title.find("SIMULATED"), std::string::npos);
  EXPECT_EQ(p->hline_y, std::optional<double>(1.0));
  ASSERT_EQ(p->series.size(), 1u);
  ASSERT_EQ(p->series[0].points.size(), 2u);
  EXPECT_NEAR(p->series[0].points[1].x, 1, 1e-12);
  EXPECT_NEAR(p->series[0].points[1].y, 0.825, 1e-12);
  EXPECT_NEAR(p->series[0].points[1].y_err, std::sqrt(12.5) / 100, 1e-12);
  EXPECT_EQ(p->series[0].style, Style::errorlines);
  auto pw = gemm_normalized_plot(a, keys[0], GemmQty::power);
  ASSERT_TRUE(pw);
  EXPECT_NEAR(pw->series[0].points[1].y, 0.985, 1e-12);
  EXPECT_FALSE(gemm_normalized_plot(a, {"1x1x1", "E11"}, GemmQty::power));
}

}  // namespace
}  // namespace wattlab::report
