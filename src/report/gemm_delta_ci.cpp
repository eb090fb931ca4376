#include "report/gemm_delta_ci.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace wattlab::report {
namespace {

// The q-quantile of sorted values, linear between order statistics.
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::optional<double> pct(double value, std::optional<double> ref) {
  if (!ref || *ref == 0) return std::nullopt;
  return 100.0 * (value / *ref - 1.0);
}

// Mean Δ of one seed's samples, each against its references weighted by `weights[i]`.
std::optional<double> seed_delta(const std::vector<DeltaSample>& samples, const std::vector<std::vector<unsigned>>& weights) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (auto d = pct(samples[i].value, drift_reference(samples[i].refs, samples[i].t_ns, weights[i]))) sum += *d, ++n;
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

}  // namespace

std::optional<double> drift_reference(const std::vector<RefPoint>& refs, std::optional<int64_t> t_ns,
                                      const std::vector<unsigned>& weights) {
  auto w = [&](std::size_t i) -> unsigned { return weights.empty() ? 1u : weights[i]; };
  if (!t_ns) {
    double sum = 0, n = 0;
    for (std::size_t i = 0; i < refs.size(); ++i) sum += w(i) * refs[i].value, n += w(i);
    if (n == 0) return std::nullopt;
    return sum / n;
  }
  const RefPoint *before = nullptr, *after = nullptr;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    if (w(i) == 0) continue;
    if (refs[i].t_ns <= *t_ns) before = &refs[i];
    else if (!after) after = &refs[i];
  }
  if (before && after) {
    const double f = static_cast<double>(*t_ns - before->t_ns) / static_cast<double>(after->t_ns - before->t_ns);
    return before->value + f * (after->value - before->value);
  }
  if (before) return before->value;
  if (after) return after->value;
  return std::nullopt;
}

std::optional<double> delta_pct(const DeltaSample& s) { return pct(s.value, drift_reference(s.refs, s.t_ns)); }

std::optional<DeltaCi> delta_ci(const std::vector<std::vector<DeltaSample>>& per_seed, const DeltaCiOptions& o) {
  // Seeds with a Δ on all their reference points.
  std::vector<const std::vector<DeltaSample>*> seeds;
  std::vector<double> full;
  for (const auto& s : per_seed) {
    std::vector<std::vector<unsigned>> all(s.size());
    if (auto d = seed_delta(s, all)) seeds.push_back(&s), full.push_back(*d);
  }
  if (seeds.empty()) return std::nullopt;
  DeltaCi ci;
  ci.seeds = seeds.size();
  ci.resamples = o.resamples;
  ci.references_only = seeds.size() == 1;
  double sum = 0;
  for (double d : full) sum += d;
  ci.mean_pct = sum / static_cast<double>(full.size());
  if (o.resamples == 0) {
    ci.lo_pct = ci.hi_pct = ci.mean_pct;
    return ci;
  }
  std::mt19937_64 rng(o.rng_seed);
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };  // n is small: the bias is nil
  std::vector<double> means;
  means.reserve(o.resamples);
  while (means.size() < o.resamples) {
    double total = 0;
    std::size_t n = 0;
    for (std::size_t j = 0; j < seeds.size(); ++j) {
      const auto& samples = *seeds[seeds.size() == 1 ? 0 : below(seeds.size())];
      std::vector<std::vector<unsigned>> weights(samples.size());
      for (std::size_t i = 0; i < samples.size(); ++i) {
        weights[i].assign(samples[i].refs.size(), 0);
        for (std::size_t r = 0; r < samples[i].refs.size(); ++r) ++weights[i][below(samples[i].refs.size())];
      }
      if (auto d = seed_delta(samples, weights)) total += *d, ++n;
    }
    if (n > 0) means.push_back(total / static_cast<double>(n));
  }
  std::sort(means.begin(), means.end());
  ci.lo_pct = quantile(means, (1 - o.level) / 2);
  ci.hi_pct = quantile(means, 1 - (1 - o.level) / 2);
  return ci;
}

}  // namespace wattlab::report
