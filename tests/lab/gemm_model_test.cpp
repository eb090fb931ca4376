// The GEMM model on points drawn from a known linear law of its features: the fit recovers the
// law, the held-out scores see it, the 95 % prediction intervals cover about 95 % of new points,
// and too few points or experiments are said, not scored. Deterministic (splitmix64 noise).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/splitmix.h"
#include "lab/gemm_model.h"

namespace {

using namespace wattlab::lab;

double unit(uint64_t& s) { return static_cast<double>(wattlab::splitmix64(s++) >> 11) * 0x1.0p-53; }

// A standard normal draw (Box-Muller).
double normal(uint64_t& s) {
  const double u1 = std::max(unit(s), 1e-300), u2 = unit(s);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

OperandBitStats random_operand(uint64_t& s) {
  OperandBitStats o;
  o.width_bits = 16;
  o.popcount_bits = 16 * unit(s);
  o.zero_fraction = unit(s);
  o.distinct_values = std::exp2(16 * unit(s));
  o.hamming_k_bits = 8 * unit(s);
  o.hamming_mn_bits = 8 * unit(s);
  return o;
}

// The law: y = base + sum slope_j x feature_j + sigma x N(0,1), on the default features.
const std::vector<double> kSlopes = {0.4, -0.3, 0.2, 0.5, 0.25, -0.6};
constexpr double kBase = 1.0;

std::vector<GemmModelPoint> law_points(int experiments, int per_experiment, double sigma, uint64_t seed) {
  std::vector<GemmModelPoint> pts;
  uint64_t s = seed;
  for (int e = 0; e < experiments; ++e)
    for (int i = 0; i < per_experiment; ++i) {
      GemmModelPoint p;
      p.engine = "bf16";
      p.shape = "256x256x256";
      p.experiment = "E" + std::to_string(e + 1);
      p.label = p.experiment + " i=" + std::to_string(i);
      p.stats.a = random_operand(s);
      p.stats.b = random_operand(s);
      p.stats.ab_bit_agreement = 0.5 + 0.5 * unit(s);
      double y = kBase;
      for (std::size_t j = 0; j < kSlopes.size(); ++j)
        y += kSlopes[j] * *gemm_feature(p.stats, gemm_default_features()[j]);
      p.measured = {y + sigma * normal(s), 500 + 100 * y, std::nan("")};
      pts.push_back(p);
    }
  return pts;
}

const GemmTargetFit& target(const GemmEngineFit& f, GemmTarget t) {
  for (const auto& x : f.targets)
    if (x.target == t) return x;
  throw std::runtime_error("no such target");
}

TEST(GemmModel, FitRecoversAKnownLinearLawAndScoresItHeldOut) {
  GemmFitOptions o;
  o.ridge_lambda = 0;
  const auto fits = fit_gemm_model(law_points(8, 6, 1e-4, 7), o);
  ASSERT_TRUE(fits.ok());
  ASSERT_EQ(fits->size(), 1u);
  const auto& f = target(fits->front(), GemmTarget::energy_per_gemm_j);
  ASSERT_EQ(f.features, gemm_default_features());
  for (std::size_t j = 0; j < kSlopes.size(); ++j)
    EXPECT_NEAR(f.coef[j + 1] / f.scale[j], kSlopes[j], 2e-3) << f.features[j];
  ASSERT_TRUE(f.held_out.r2.has_value());
  EXPECT_GT(*f.held_out.r2, 0.999);
  EXPECT_LT(*f.held_out.mdape_pct, 0.1);
  EXPECT_EQ(f.held_out.experiments_scored, 8);
  EXPECT_EQ(f.held_out.points, 48);
  // A target with no measurement is said, not fitted.
  ASSERT_EQ(fits->front().targets.size(), 2u);
  ASSERT_EQ(fits->front().notes.size(), 1u);
  EXPECT_NE(fits->front().notes[0].find("mean_sm_clock_mhz: not fitted"), std::string::npos);
}

TEST(GemmModel, PredictionIntervalsCoverAboutNinetyFivePercentOfNewPoints) {
  const double sigma = 0.05;
  const auto fits = fit_gemm_model(law_points(10, 4, sigma, 11), GemmFitOptions{});
  ASSERT_TRUE(fits.ok());
  const auto& f = target(fits->front(), GemmTarget::energy_per_gemm_j);
  EXPECT_NEAR(std::sqrt(f.residual_variance), sigma, 0.4 * sigma);
  const auto fresh = law_points(50, 20, sigma, 99);
  int covered = 0;
  for (const auto& p : fresh) {
    const auto pr = predict_gemm_target(f, p.stats);
    EXPECT_NEAR(pr.value, predict_value(f, p.stats), 1e-12);
    covered += (p.measured[0] >= pr.low && p.measured[0] <= pr.high) ? 1 : 0;
  }
  const double share = covered / static_cast<double>(fresh.size());
  EXPECT_GT(share, 0.92);
  EXPECT_LT(share, 0.98);
  ASSERT_TRUE(f.held_out.coverage95.has_value());
  EXPECT_GT(*f.held_out.coverage95, 0.85);
}

TEST(GemmModel, DriversAreSortedAndOutOfRangeFeaturesAreNamed) {
  const auto fits = fit_gemm_model(law_points(6, 5, 0.01, 3), GemmFitOptions{});
  ASSERT_TRUE(fits.ok());
  const auto& f = target(fits->front(), GemmTarget::energy_per_gemm_j);
  GemmBitStats s = law_points(1, 1, 0, 5)[0].stats;
  s.a.zero_fraction = s.b.zero_fraction = 1.5;  // beyond any training point
  const auto pr = predict_gemm_target(f, s);
  ASSERT_EQ(pr.drivers.size(), 6u);
  for (std::size_t i = 1; i < pr.drivers.size(); ++i)
    EXPECT_GE(std::abs(pr.drivers[i - 1].contribution), std::abs(pr.drivers[i].contribution));
  double sum = f.coef[0];
  for (const auto& d : pr.drivers) sum += d.contribution;
  EXPECT_NEAR(sum, pr.value, 1e-9);
  ASSERT_EQ(pr.out_of_range.size(), 1u);
  EXPECT_EQ(pr.out_of_range[0].rfind("zero_frac = 1.5 outside the training range", 0), 0u) << pr.out_of_range[0];
}

TEST(GemmModel, AFeatureWithoutSpreadIsLeftOutAndAnyOtherValueWarns) {
  auto pts = law_points(5, 5, 0.01, 13);
  for (auto& p : pts) p.stats.ab_bit_agreement = 0.75;
  const auto fits = fit_gemm_model(pts, GemmFitOptions{});
  ASSERT_TRUE(fits.ok());
  const auto& f = target(fits->front(), GemmTarget::energy_per_gemm_j);
  EXPECT_EQ(f.features.size(), 5u);
  ASSERT_EQ(f.dropped, std::vector<std::string>{"ab_agreement"});
  GemmBitStats s = pts[0].stats;
  EXPECT_TRUE(predict_gemm_target(f, s).out_of_range.empty());
  s.ab_bit_agreement = 0.9;
  const auto pr = predict_gemm_target(f, s);
  ASSERT_EQ(pr.out_of_range.size(), 1u);
  EXPECT_NE(pr.out_of_range[0].find("every training point had 0.75"), std::string::npos);
}

TEST(GemmModel, TooFewPointsOrExperimentsAreSaidNotScored) {
  // 2 experiments: a fit, but no held-out score.
  const auto two = fit_gemm_model(law_points(2, 6, 0.01, 17), GemmFitOptions{});
  ASSERT_TRUE(two.ok());
  const auto& f = target(two->front(), GemmTarget::energy_per_gemm_j);
  EXPECT_FALSE(f.held_out.r2.has_value());
  EXPECT_NE(f.held_out.note.find("2 experiment(s), at least 3 are needed"), std::string::npos);
  // 5 points for 7 coefficients: nothing fitted, and why.
  const auto few = fit_gemm_model(law_points(5, 1, 0.01, 19), GemmFitOptions{});
  ASSERT_TRUE(few.ok());
  EXPECT_TRUE(few->front().targets.empty());
  ASSERT_EQ(few->front().notes.size(), 3u);
  EXPECT_NE(few->front().notes[0].find("energy_per_gemm_j: not fitted"), std::string::npos);
}

TEST(GemmModel, UnknownFeaturesAreInvalidArguments) {
  GemmFitOptions o;
  o.features = {"zero_frac", "watts"};
  const auto r = fit_gemm_model(law_points(4, 4, 0.01, 23), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, wattlab::ErrorKind::invalid_argument);
  EXPECT_NE(r.error().what.find("unknown feature 'watts'"), std::string::npos);
  EXPECT_NE(r.error().hint.find("hamming_k_frac*zero_frac"), std::string::npos);
  o.features = {"zero_frac", "zero_frac"};
  EXPECT_FALSE(fit_gemm_model(law_points(4, 4, 0.01, 23), o).ok());
}

TEST(GemmModel, TheModelFileRoundTripsAndBadFilesAreNamed) {
  GemmModel m;
  m.gpu = "H200";
  m.date = "2026-12-06";
  m.training_csv = "points.csv";
  m.training_sha256 = std::string(64, 'a');
  m.training_rows = 40;
  m.features = gemm_default_features();
  m.ridge_lambda = 0.1;
  m.fits = *fit_gemm_model(law_points(8, 5, 0.02, 29), GemmFitOptions{});
  const std::string text = gemm_model_to_json(m);
  const auto back = gemm_model_from_json(text, "m.json");
  ASSERT_TRUE(back.ok()) << back.error().what;
  EXPECT_EQ(gemm_model_to_json(*back), text);
  const auto probe = law_points(1, 1, 0, 31)[0].stats;
  EXPECT_EQ(predict_value(back->fits[0].targets[0], probe), predict_value(m.fits[0].targets[0], probe));

  EXPECT_NE(gemm_model_from_json("{", "m.json").error().what.find("m.json: not JSON"), std::string::npos);
  std::string v2 = text;
  v2.replace(v2.find("\"format_version\": 1"), 19, "\"format_version\": 2");
  EXPECT_NE(gemm_model_from_json(v2, "m.json").error().what.find("model format version 2"), std::string::npos);
  std::string no_coef = text;
  no_coef.replace(no_coef.find("\"coef\""), 6, "\"cof\"");
  EXPECT_NE(gemm_model_from_json(no_coef, "m.json").error().what.find("no field 'coef'"), std::string::npos);
}

TEST(GemmModel, TheBuiltInModelReads) {
  const auto m = gemm_model_from_json(embedded_gemm_model_json(), "built in");
  ASSERT_TRUE(m.ok()) << m.error().what;
  EXPECT_EQ(embedded_gemm_model_name(), "h200-v1");
  EXPECT_EQ(m->gpu, "H200");
  ASSERT_NE(find_gemm_fit(*m, "bf16", "8192x8192x8192"), nullptr);
  EXPECT_EQ(find_gemm_fit(*m, "fp16", "8192x8192x8192"), nullptr);
}

}  // namespace
