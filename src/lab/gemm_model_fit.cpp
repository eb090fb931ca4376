// Fitting the GEMM model (docs/gemm-model.md, "Fit"): per engine and shape and per target, ridge
// regression on standardised features (Eigen), the residual variance over the effective residual
// degrees of freedom, the matrix the prediction interval needs, and leave-one-experiment-out
// scores: each experiment's points are predicted by a fit that never saw that experiment's recipes.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "core/student_t.h"
#include "lab/gemm_model.h"

namespace wattlab::lab {
namespace {

std::size_t index_of(GemmTarget t) {
  return static_cast<std::size_t>(std::find(all_gemm_targets.begin(), all_gemm_targets.end(), t) -
                                  all_gemm_targets.begin());
}

// Feature values of every point (rows) for every asked feature (columns).
Eigen::MatrixXd feature_matrix(const std::vector<GemmModelPoint>& pts, const std::vector<std::string>& names) {
  Eigen::MatrixXd x(static_cast<Eigen::Index>(pts.size()), static_cast<Eigen::Index>(names.size()));
  for (std::size_t i = 0; i < pts.size(); ++i)
    for (std::size_t j = 0; j < names.size(); ++j)
      x(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = *gemm_feature(pts[i].stats, names[j]);
  return x;
}

// The points usable for `target`: a finite measurement and finite features.
std::vector<GemmModelPoint> usable(const std::vector<GemmModelPoint>& pts, GemmTarget target,
                                   const std::vector<std::string>& names) {
  std::vector<GemmModelPoint> out;
  for (const auto& p : pts) {
    if (!std::isfinite(p.measured[index_of(target)])) continue;
    bool ok = true;
    for (const auto& n : names) ok = ok && std::isfinite(*gemm_feature(p.stats, n));
    if (ok) out.push_back(p);
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

HeldOutScores held_out_scores(const std::vector<GemmModelPoint>& pts, GemmTarget target, const GemmFitOptions& o,
                              std::vector<HeldOutPoint>& worst) {
  HeldOutScores s;
  std::vector<std::string> exps;
  for (const auto& p : pts)
    if (std::find(exps.begin(), exps.end(), p.experiment) == exps.end()) exps.push_back(p.experiment);
  s.experiments_total = static_cast<int>(exps.size());
  if (exps.size() < 3) {
    s.note = fmt::format("no held-out score: {} experiment(s), at least 3 are needed", exps.size());
    return s;
  }
  std::vector<HeldOutPoint> held;
  std::vector<std::string> unscored;
  for (const auto& e : exps) {
    std::vector<GemmModelPoint> train;
    for (const auto& p : pts)
      if (p.experiment != e) train.push_back(p);
    std::string why;
    const auto fit = fit_gemm_target(train, target, o, why);
    if (!fit) {
      unscored.push_back(e);
      continue;
    }
    ++s.experiments_scored;
    for (const auto& p : pts) {
      if (p.experiment != e) continue;
      const auto pr = predict_gemm_target(*fit, p.stats);
      const double y = p.measured[index_of(target)];
      held.push_back({p.label, p.recipe_a, p.recipe_b, y, pr.value, pr.low, pr.high,
                      std::abs(pr.value - y) / std::abs(y) * 100.0});
    }
  }
  s.points = static_cast<int>(held.size());
  if (held.size() < 2) {
    s.note = fmt::format("no held-out score: no training fold without one experiment could be fitted");
    return s;
  }
  double mean = 0;
  for (const auto& h : held) mean += h.measured;
  mean /= static_cast<double>(held.size());
  double ss_res = 0, ss_tot = 0;
  int covered = 0;
  std::vector<double> ape;
  for (const auto& h : held) {
    ss_res += (h.measured - h.predicted) * (h.measured - h.predicted);
    ss_tot += (h.measured - mean) * (h.measured - mean);
    covered += (h.measured >= h.low && h.measured <= h.high) ? 1 : 0;
    ape.push_back(h.ape_pct);
  }
  if (ss_tot > 0) s.r2 = 1.0 - ss_res / ss_tot;
  s.mdape_pct = median(ape);
  s.coverage95 = static_cast<double>(covered) / static_cast<double>(held.size());
  if (!unscored.empty()) {
    std::string list;
    for (const auto& u : unscored) list += (list.empty() ? "" : ", ") + u;
    s.note = fmt::format("not held out (too few points without them): {}", list);
  }
  std::stable_sort(held.begin(), held.end(), [](const auto& a, const auto& b) { return a.ape_pct > b.ape_pct; });
  held.resize(std::min<std::size_t>(held.size(), static_cast<std::size_t>(std::max(o.worst_listed, 0))));
  worst = std::move(held);
  return s;
}

}  // namespace

std::optional<GemmTargetFit> fit_gemm_target(const std::vector<GemmModelPoint>& all_points, GemmTarget target,
                                             const GemmFitOptions& o, std::string& why) {
  const auto pts = usable(all_points, target, o.features);
  const Eigen::MatrixXd raw = feature_matrix(pts, o.features);
  const auto n = static_cast<Eigen::Index>(pts.size());
  GemmTargetFit f;
  f.target = target;
  f.n = static_cast<int>(n);
  std::vector<Eigen::Index> used;
  for (Eigen::Index j = 0; j < raw.cols(); ++j) {
    const auto& name = o.features[static_cast<std::size_t>(j)];
    if (n == 0) continue;
    const double mean = raw.col(j).mean();
    const double sd = std::sqrt((raw.col(j).array() - mean).square().sum() / static_cast<double>(n));
    if (!(sd > 1e-12)) {
      f.dropped.push_back(name);
      f.dropped_value.push_back(mean);
      continue;
    }
    used.push_back(j);
    f.features.push_back(name);
    f.mean.push_back(mean);
    f.scale.push_back(sd);
    f.min.push_back(raw.col(j).minCoeff());
    f.max.push_back(raw.col(j).maxCoeff());
  }
  const auto p = static_cast<Eigen::Index>(used.size()) + 1;
  Eigen::MatrixXd x(n, p);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i, 0) = 1.0;
    for (std::size_t j = 0; j < used.size(); ++j)
      x(i, static_cast<Eigen::Index>(j) + 1) = (raw(i, used[j]) - f.mean[j]) / f.scale[j];
    y(i) = pts[static_cast<std::size_t>(i)].measured[index_of(target)];
  }
  Eigen::MatrixXd penalty = Eigen::MatrixXd::Identity(p, p) * o.ridge_lambda;
  penalty(0, 0) = 0.0;
  const Eigen::MatrixXd xtx = x.transpose() * x;
  const Eigen::MatrixXd a = xtx + penalty;
  const Eigen::LDLT<Eigen::MatrixXd> ldlt(a);
  if (n == 0 || ldlt.info() != Eigen::Success || !ldlt.isPositive() || ldlt.rcond() < 1e-12) {
    why = fmt::format("{} point(s) with {} feature(s) that vary: the normal equations are singular", n, p - 1);
    return std::nullopt;
  }
  const Eigen::MatrixXd a_inv = ldlt.solve(Eigen::MatrixXd::Identity(p, p));
  const Eigen::VectorXd beta = a_inv * (x.transpose() * y);
  const Eigen::VectorXd resid = y - x * beta;
  const double hat_trace = (x * a_inv * x.transpose()).trace();
  f.df_residual = static_cast<double>(n) - hat_trace;
  if (f.df_residual < 2.0) {
    why = fmt::format("{} point(s) for {} coefficient(s): fewer than 2 residual degrees of freedom", n, p);
    return std::nullopt;
  }
  const double rss = resid.squaredNorm();
  f.residual_variance = rss / f.df_residual;
  f.t975 = student_t_quantile(0.975, f.df_residual);
  const Eigen::MatrixXd cov = a_inv * xtx * a_inv;
  f.coef.assign(beta.data(), beta.data() + beta.size());
  f.cov_unscaled.assign(static_cast<std::size_t>(p), std::vector<double>(static_cast<std::size_t>(p)));
  for (Eigen::Index r = 0; r < p; ++r)
    for (Eigen::Index c = 0; c < p; ++c)
      f.cov_unscaled[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] = 0.5 * (cov(r, c) + cov(c, r));
  const double ss_tot = (y.array() - y.mean()).square().sum();
  f.r2_in_sample = ss_tot > 0 ? 1.0 - rss / ss_tot : 1.0;
  return f;
}

Result<std::vector<GemmEngineFit>> fit_gemm_model(const std::vector<GemmModelPoint>& points, const GemmFitOptions& o) {
  if (auto st = check_gemm_features(o.features); !st) return st.error();
  if (!(o.ridge_lambda >= 0))
    return Error{ErrorKind::invalid_argument, fmt::format("ridge lambda {} is negative", o.ridge_lambda), ""};
  std::vector<GemmEngineFit> fits;
  for (const auto& p : points) {
    auto it = std::find_if(fits.begin(), fits.end(),
                           [&](const GemmEngineFit& f) { return f.engine == p.engine && f.shape == p.shape; });
    if (it == fits.end()) {
      fits.push_back({p.engine, p.shape, {}, {}, {}});
      it = fits.end() - 1;
    }
    if (std::find(it->experiments.begin(), it->experiments.end(), p.experiment) == it->experiments.end())
      it->experiments.push_back(p.experiment);
  }
  for (auto& ef : fits) {
    std::vector<GemmModelPoint> group;
    for (const auto& p : points)
      if (p.engine == ef.engine && p.shape == ef.shape) group.push_back(p);
    for (GemmTarget t : all_gemm_targets) {
      std::string why;
      auto f = fit_gemm_target(group, t, o, why);
      if (!f) {
        ef.notes.push_back(fmt::format("{}: not fitted: {}", to_string(t), why));
        continue;
      }
      f->held_out = held_out_scores(usable(group, t, o.features), t, o, f->worst_held_out);
      ef.targets.push_back(std::move(*f));
    }
  }
  return fits;
}

}  // namespace wattlab::lab
