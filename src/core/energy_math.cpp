#include "core/energy_math.h"

#include <algorithm>
#include <cmath>

namespace wattlab {

CounterStep counter_step(double prev, double cur, double range) {
  CounterStep s;
  if (cur >= prev) {
    s.delta = cur - prev;
  } else if (range > 0) {
    s.delta = cur + range - prev;
    s.wrapped = true;
  } else {
    s.delta = cur;  // counted again from zero; what happened before the reset is lost
    s.reset = true;
  }
  return s;
}

Integral integrate(std::span<const PowerPiece> pieces, int64_t a_ns, int64_t b_ns) {
  Integral out;
  if (b_ns <= a_ns) return out;
  // Pieces are sorted by t0; skip to the first that can overlap.
  auto it = std::lower_bound(pieces.begin(), pieces.end(), a_ns,
                             [](const PowerPiece& p, int64_t t) { return p.t1_ns <= t; });
  for (; it != pieces.end() && it->t0_ns < b_ns; ++it) {
    const int64_t lo = std::max(a_ns, it->t0_ns);
    const int64_t hi = std::min(b_ns, it->t1_ns);
    if (hi <= lo) continue;
    out.energy_j += it->power_w * static_cast<double>(hi - lo) * 1e-9;
    out.covered_ns += hi - lo;
  }
  return out;
}

double shaped_interpolate(const CumulativePoint& p0, const CumulativePoint& p1,
                          std::span<const PowerPiece> shape, int64_t t_ns) {
  if (t_ns <= p0.t_ns) return p0.energy_j;
  if (t_ns >= p1.t_ns) return p1.energy_j;
  const double span_j = p1.energy_j - p0.energy_j;
  const Integral whole = integrate(shape, p0.t_ns, p1.t_ns);
  const int64_t len_ns = p1.t_ns - p0.t_ns;
  double frac = static_cast<double>(t_ns - p0.t_ns) / static_cast<double>(len_ns);
  // Shape only where the model covers the whole interval with positive energy.
  if (whole.covered_ns == len_ns && whole.energy_j > 0) {
    frac = integrate(shape, p0.t_ns, t_ns).energy_j / whole.energy_j;
  }
  return p0.energy_j + span_j * std::clamp(frac, 0.0, 1.0);
}

double rss(std::initializer_list<double> parts) {
  double s = 0;
  for (double p : parts) s += p * p;
  return std::sqrt(s);
}

double mean(std::span<const double> xs) {
  if (xs.empty()) return 0;
  double s = 0;
  for (double x : xs) s += x;
  return s / static_cast<double>(xs.size());
}

double stddev(std::span<const double> xs) {
  if (xs.size() < 2) return 0;
  const double m = mean(xs);
  double s = 0;
  for (double x : xs) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(xs.size() - 1));
}

}  // namespace wattlab
