// Predictions of the GEMM model (docs/gemm-model.md, "Predict"): the value, its 95 % prediction
// interval y +- t(0.975, df) x sqrt(s^2 (1 + x0' C x0)), which features drive it (their
// coefficient times their distance from the training mean), and the features outside the range
// the model was trained on.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "lab/gemm_model.h"

namespace wattlab::lab {
namespace {

// The standardised feature vector with the intercept first.
std::vector<double> standardised(const GemmTargetFit& fit, const GemmBitStats& s, std::vector<double>& raw) {
  std::vector<double> z{1.0};
  raw.clear();
  for (std::size_t j = 0; j < fit.features.size(); ++j) {
    const double v = *gemm_feature(s, fit.features[j]);
    raw.push_back(v);
    z.push_back((v - fit.mean[j]) / fit.scale[j]);
  }
  return z;
}

}  // namespace

double predict_value(const GemmTargetFit& fit, const GemmBitStats& s) {
  std::vector<double> raw;
  const auto z = standardised(fit, s, raw);
  double y = 0;
  for (std::size_t j = 0; j < z.size(); ++j) y += fit.coef[j] * z[j];
  return y;
}

GemmPrediction predict_gemm_target(const GemmTargetFit& fit, const GemmBitStats& s) {
  GemmPrediction p;
  p.target = fit.target;
  std::vector<double> raw;
  const auto z = standardised(fit, s, raw);
  double quad = 0;
  for (std::size_t r = 0; r < z.size(); ++r) {
    p.value += fit.coef[r] * z[r];
    for (std::size_t c = 0; c < z.size(); ++c) quad += z[r] * fit.cov_unscaled[r][c] * z[c];
  }
  double half = fit.t975 * std::sqrt(fit.residual_variance * (1.0 + std::max(quad, 0.0)));
  if (std::isnan(half)) half = std::numeric_limits<double>::infinity();  // 0 x Inf: an interval that says nothing
  p.low = p.value - half;
  p.high = p.value + half;
  for (std::size_t j = 0; j < fit.features.size(); ++j) {
    p.drivers.push_back({fit.features[j], raw[j], fit.mean[j], fit.coef[j + 1] * z[j + 1]});
    if (!(raw[j] >= fit.min[j] && raw[j] <= fit.max[j]))
      p.out_of_range.push_back(fmt::format("{} = {:.4g} outside the training range [{:.4g}, {:.4g}]", fit.features[j],
                                           raw[j], fit.min[j], fit.max[j]));
  }
  for (std::size_t j = 0; j < fit.dropped.size(); ++j) {
    const double v = *gemm_feature(s, fit.dropped[j]);
    if (!(std::abs(v - fit.dropped_value[j]) <= 1e-9))
      p.out_of_range.push_back(fmt::format("{} = {:.4g}, but every training point had {:.4g} (the model has no slope for it)",
                                           fit.dropped[j], v, fit.dropped_value[j]));
  }
  std::stable_sort(p.drivers.begin(), p.drivers.end(),
                   [](const auto& a, const auto& b) { return std::abs(a.contribution) > std::abs(b.contribution); });
  return p;
}

const GemmEngineFit* find_gemm_fit(const GemmModel& m, std::string_view engine, std::string_view shape) {
  for (const auto& f : m.fits)
    if (f.engine == engine && f.shape == shape) return &f;
  return nullptr;
}

}  // namespace wattlab::lab
