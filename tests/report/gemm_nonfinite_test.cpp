// Non-finite results: the inputs of a point whose output held Inf/NaN are regenerated; Inf/NaN in
// them labels the point "non-finite inputs" and keeps it out of every Δ (its energy still shown);
// finite inputs label it an accumulator overflow and keep its Δ.
#include "report/gemm_nonfinite.h"

#include <gtest/gtest.h>

#include <cmath>

#include "lab/generate.h"
#include "lab/input_finiteness.h"
#include "lab/number_format.h"
#include "report/gemm_tables.h"

namespace wattlab::report {
namespace {

// E4's recipe: a constant with 8 of its 16 bits flipped per element; in BF16 that often sets
// every exponent bit: Inf or NaN.
const std::string kFlip8 = "normal(mean=0, std=1024) | distinct(n=1) | flip(n=8)";
const std::string kBaseline = "normal(mean=0, std=1024)";

lab::OperandShape shape(lab::Operand which, lab::DType t, int64_t d = 64) { return {which, d, d, d, t}; }

// Counted the slow way: the whole operand from generate_cpu, each element decoded.
int64_t brute_force(const std::string& recipe, const lab::OperandShape& s, uint64_t seed) {
  const auto bytes = lab::generate_cpu(*lab::parse_recipe(recipe), s, seed);
  const std::size_t w = lab::size_bytes(s.dtype);
  int64_t n = 0;
  for (std::size_t i = 0; i < bytes.size(); i += w) n += !std::isfinite(lab::decode(s.dtype, &bytes[i]));
  return n;
}

TEST(GemmNonfinite, InputsRegeneratedCountInfAndNanAsTheGeneratorMadeThem) {
  for (const std::string& r : {kFlip8, std::string("normal(mean=0, std=1) | distinct(n=1) | randomize_low(n=16)"), kBaseline,
                               std::string("normal(mean=100000, std=1) | sort(fraction=1, along=MN)")}) {
    for (auto which : {lab::Operand::A, lab::Operand::B}) {
      const auto s = shape(which, lab::DType::f16);
      const auto c = lab::count_nonfinite_inputs(*lab::parse_recipe(r), s, 3);
      ASSERT_TRUE(c) << r;
      EXPECT_EQ(c->elements, 64 * 64);
      EXPECT_EQ(c->nonfinite, brute_force(r, s, 3)) << r;
    }
  }
  const auto s = shape(lab::Operand::A, lab::DType::bf16);
  EXPECT_GT(lab::count_nonfinite_inputs(*lab::parse_recipe(kFlip8), s, 1)->nonfinite, 0);
  EXPECT_EQ(lab::count_nonfinite_inputs(*lab::parse_recipe(kBaseline), s, 1)->nonfinite, 0);
  // Stopping at the first: one found, after no more elements than the whole.
  const auto first = lab::count_nonfinite_inputs(*lab::parse_recipe(kFlip8), s, 1, true);
  EXPECT_EQ(first->nonfinite, 1);
  EXPECT_LT(first->elements, 64 * 64);
  EXPECT_EQ(lab::count_nonfinite_inputs(*lab::parse_recipe(kBaseline), s, 1, true)->elements, 64 * 64);
  // FP16 overflows 100000 to Inf (the sort path goes through generate_cpu).
  EXPECT_EQ(lab::count_nonfinite_inputs(*lab::parse_recipe("normal(mean=100000, std=1) | sort(fraction=1, along=MN)"),
                                        shape(lab::Operand::A, lab::DType::f16), 1)->fraction(), 1.0);
  // A shape the recipe does not fit is an error, not a count.
  EXPECT_FALSE(lab::count_nonfinite_inputs(*lab::parse_recipe("normal(mean=0, std=1) | sparse24(keep=random)"),
                                           lab::OperandShape{lab::Operand::A, 64, 64, 6, lab::DType::bf16}, 1));
}

struct P {
  std::string experiment, value, recipe;
  int seed;
  bool reference;
  double energy_j;
  bool output_nonfinite = false;
  std::string engine = "bf16";
};

WindowResult window(const P& p, int64_t t_begin_ns) {
  GemmPointRecord r;
  r.sweep = "nf";
  r.experiment = p.reference ? "ref" : p.experiment;
  r.engine = p.engine;
  r.m = r.n = r.k = 64;
  r.recipe_a = r.recipe_b = p.reference ? kBaseline : p.recipe;
  r.param = p.reference ? "reference" : "n";
  r.param_value = p.reference ? "baseline" : p.value;
  r.seed = static_cast<uint64_t>(p.seed);
  r.reference = p.reference;
  r.counts.energy_per_gemm_j = p.energy_j;
  r.counts.mean_power_w = 500 * p.energy_j;
  r.counts.nonfinite_fraction = p.output_nonfinite ? 1.0 : 0.0;
  r.counts.rel_error_nonfinite = p.output_nonfinite;
  if (!p.output_nonfinite) r.counts.rel_error = 1e-3;
  WindowResult w;
  w.name = "gemm_point";
  w.t_begin_ns = t_begin_ns;
  w.t_end_ns = t_begin_ns + 10;
  r.encode(w);
  return w;
}

RunRecord study(const std::vector<P>& pts) {
  RunRecord run;
  run.run_id = 1;
  int64_t t = 0;
  for (const auto& p : pts) run.windows.push_back(window(p, t += 100));
  return run;
}

TEST(GemmNonfinite, NonFiniteInputsAreLabelledAndKeptOutOfDelta) {
  const std::string e4_0 = "normal(mean=0, std=1024) | distinct(n=1) | flip(n=0)";
  const auto pts = gemm_measurements({study({{"", "", kBaseline, 1, true, 1.0},
                                             {"E4", "0", e4_0, 1, false, 0.9},
                                             {"E4", "8", kFlip8, 1, false, 0.5, true},
                                             {"E4", "1", "normal(mean=0, std=1024) | distinct(n=1) | flip(n=1)", 1, false, 0.95, true},
                                             {"", "", kBaseline, 1, true, 1.0}})});
  ASSERT_EQ(pts.size(), 5u);
  EXPECT_EQ(pts[1].nonfinite, GemmNonfinite::none);
  EXPECT_EQ(pts[2].nonfinite, GemmNonfinite::inputs);
  EXPECT_TRUE(pts[2].excluded());
  EXPECT_EQ(pts[2].nonfinite_label, "non-finite inputs (A and B)");
  // One flipped bit of a finite BF16 constant here stays finite: the output's Inf is an overflow.
  EXPECT_EQ(pts[3].nonfinite, GemmNonfinite::overflow);
  EXPECT_FALSE(pts[3].excluded());
  EXPECT_EQ(pts[3].nonfinite_label, "FP32 accumulator overflow (finite inputs)");

  const auto a = analyze_gemm(pts)[0];
  ASSERT_EQ(a.rows.size(), 3u);  // E4 at 0, 1, 8
  const GemmRow& n8 = a.rows[2];
  ASSERT_EQ(n8.param_value, "8");
  EXPECT_TRUE(n8.all_excluded());
  EXPECT_EQ(n8.delta[idx(GemmQty::energy_per_gemm)].n, 0u);       // no Δ
  EXPECT_FALSE(n8.energy_ci);
  EXPECT_DOUBLE_EQ(n8.value[idx(GemmQty::energy_per_gemm)].mean, 0.5);  // its energy is shown
  EXPECT_NEAR(a.rows[1].delta[idx(GemmQty::energy_per_gemm)].mean, -5.0, 1e-9);  // the overflow keeps its Δ
  // The effect's largest ΔE and its curve skip the non-finite point.
  ASSERT_EQ(a.effects.size(), 1u);
  EXPECT_EQ(a.effects[0].max_energy_at, "0");
  EXPECT_NE(a.effects[0].energy_curve, Curve::unknown);

  const auto tables = gemm_tables(a);
  const GemmTable& e4 = tables.at(2);
  ASSERT_EQ(e4.rows.size(), 3u);
  EXPECT_EQ(e4.rows[2][5], "n/a (non-finite inputs)");
  EXPECT_EQ(e4.rows[2].back(), pts[2].nonfinite_label);
  EXPECT_EQ(e4.rows[1].back(), "FP32 accumulator overflow (finite inputs)");
  EXPECT_EQ(e4.rows[0].back(), "-");
}

TEST(GemmNonfinite, OverflowLabelsNameTheTypes) {
  EXPECT_EQ(overflow_label("fp32"), "FP32 accumulator overflow (finite inputs)");
  EXPECT_EQ(overflow_label("fp16acc16"), "FP16 accumulator overflow (finite inputs)");
  EXPECT_EQ(overflow_label("fp16"), "overflow in the FP32 accumulator or the FP16 output (finite inputs)");
  // Inputs that cannot be regenerated are not guessed at: kept out, and the label says why.
  std::vector<GemmMeasurement> pts(1);
  pts[0].engine = "bf17";
  pts[0].output_nonfinite = true;
  classify_nonfinite(pts);
  EXPECT_EQ(pts[0].nonfinite, GemmNonfinite::unchecked);
  EXPECT_TRUE(pts[0].excluded());
  EXPECT_NE(pts[0].nonfinite_label.find("'bf17'"), std::string::npos);
}

}  // namespace
}  // namespace wattlab::report
