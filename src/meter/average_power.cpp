#include "average_power.h"

#include <algorithm>
#include <cmath>
#include <vector>
#include <fmt/format.h>

#include "power_shape.h"
#include "core/energy_math.h"

namespace wattlab {
namespace {

constexpr double kNs = 1e-9;
const double kSqrt3 = std::sqrt(3.0);
const double kSqrt12 = std::sqrt(12.0);

// One published value of the average: the update it belongs to lies between the read before it
// and the read that first showed it, and no further back than one update period. t_ns is that
// span's middle, sigma_t_ns its uniform spread. A read showing the value before it is the same
// update again, unless an update period has passed since that value first showed (an unchanged
// average, e.g. a steady idle).
struct Point {
  int64_t t_ns;
  double v;
  double sigma_t_ns;
};

int64_t tau_ns(const ReadingModel& m) { return m.averaging_window_ns > 0 ? m.averaging_window_ns : 1'000'000'000; }
int64_t update_ns(const ReadingModel& m) { return m.update_period_ns > 0 ? m.update_period_ns : 100'000'000; }
// The baseline of the slopes that reveal power steps (a quarter of the window: noise on the
// averaged value is multiplied by tau / baseline).
int64_t baseline_ns(const ReadingModel& m) { return std::max(update_ns(m), tau_ns(m) / 4); }
// The longest the averaging window is taken to be.
int64_t tau_max_ns(const ReadingModel& m) {
  return tau_ns(m) + static_cast<int64_t>(kAverageWindowTolerance * static_cast<double>(tau_ns(m)));
}
// How far past the window's end the readings must reach: the end edge's ramp (half the longest
// window) plus the slope baseline that looks at it.
int64_t reach_ns(const ReadingModel& m) { return tau_max_ns(m) / 2 + baseline_ns(m); }

// The distinct values published over [lo, hi], one point before and after it where read; the
// longest gap between two reads over [lo, hi] goes to max_gap_ns.
std::vector<Point> points_in(const RingBuffer<Reading>& r, int64_t dt, int64_t lo, int64_t hi, int64_t& max_gap_ns) {
  std::vector<Point> out;
  max_gap_ns = 0;
  const long i0 = last_at_or_before(r, lo, [](const Reading& x) { return x.t_ns; });
  int64_t first_seen = 0;  // the read that first showed the newest point's value
  for (std::size_t i = static_cast<std::size_t>(std::max(0L, i0)); i < r.size(); ++i) {
    const Reading& x = r[i];
    if (i > 0 && x.t_ns > lo && r[i - 1].t_ns < hi) max_gap_ns = std::max(max_gap_ns, x.t_ns - r[i - 1].t_ns);
    if (out.empty() || r[i - 1].value != x.value || x.t_ns - first_seen >= dt) {
      const int64_t u_lo = i > 0 ? std::max(r[i - 1].t_ns, x.t_ns - dt) : x.t_ns - dt;
      out.push_back({u_lo + (x.t_ns - u_lo) / 2, x.value, static_cast<double>(x.t_ns - u_lo) / kSqrt12});
      first_seen = x.t_ns;
    }
    if (x.t_ns > hi) break;
  }
  return out;
}

// The averaged power at t, linear between points (held beyond the first and last).
double value_at(const std::vector<Point>& p, int64_t t) {
  if (t <= p.front().t_ns) return p.front().v;
  if (t >= p.back().t_ns) return p.back().v;
  const auto it = std::upper_bound(p.begin(), p.end(), t, [](int64_t x, const Point& q) { return x < q.t_ns; });
  const Point& p1 = *it;
  const Point& p0 = *(it - 1);
  const double f = static_cast<double>(t - p0.t_ns) / static_cast<double>(p1.t_ns - p0.t_ns);
  return p0.v + f * (p1.v - p0.v);
}

// Integral (J) of the piecewise-linear averaged power over [x0, x1].
double integral(const std::vector<Point>& p, int64_t x0, int64_t x1) {
  std::vector<int64_t> knots = {x0};
  for (const Point& q : p)
    if (q.t_ns > x0 && q.t_ns < x1) knots.push_back(q.t_ns);
  knots.push_back(x1);
  double e = 0;
  for (std::size_t i = 1; i < knots.size(); ++i)
    e += 0.5 * (value_at(p, knots[i - 1]) + value_at(p, knots[i])) * static_cast<double>(knots[i] - knots[i - 1]) * kNs;
  return e;
}

// The power range (W) the average shows over [s0, s1]: the range of the averaged values, or the
// largest change of the power against one window earlier, tau * dP/dt = P(t) - P(t - tau), over
// the slope baseline, whichever is larger. A step of the power shows as both. What the readings'
// own noise (sigma_w) would show alone is taken off: the noise is counted apart.
double range_w(const std::vector<Point>& p, int64_t s0, int64_t s1, int64_t dt, int64_t tau, int64_t h, double sigma_w) {
  double lo = value_at(p, s0), hi = lo, slope = 0;
  for (int64_t t = s0; t <= s1; t += dt / 2) {
    const double v = value_at(p, t);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    slope = std::max(slope, std::abs(v - value_at(p, t - h)) * static_cast<double>(tau) / static_cast<double>(h));
  }
  const double gain = static_cast<double>(tau) / static_cast<double>(h);
  return std::max({hi - lo - 4 * sigma_w, slope - 4 * std::sqrt(2.0) * sigma_w * gain, 0.0});
}

// Noise (1 sigma, W) of the averaged values: the median absolute second difference, which a
// smooth average leaves near zero outside its kinks.
double noise_w(const std::vector<Point>& p) {
  if (p.size() < 5) return 0;
  std::vector<double> d;
  for (std::size_t i = 1; i + 1 < p.size(); ++i) d.push_back(std::abs(p[i + 1].v - 2 * p[i].v + p[i - 1].v));
  const auto mid = d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2);
  std::nth_element(d.begin(), mid, d.end());
  return *mid / (0.6745 * std::sqrt(6.0));
}

}  // namespace

bool average_covers_end(const RingBuffer<Reading>& readings, const ReadingModel& model, int64_t b_ns) {
  // The newest read's value belongs to an update at most one period before it.
  return !readings.empty() && readings.back().t_ns - update_ns(model) >= b_ns + reach_ns(model);
}

AverageEstimate integrate_average(const RingBuffer<Reading>& readings, const ReadingModel& model, int64_t a, int64_t b) {
  AverageEstimate out;
  const int64_t tau = tau_ns(model), dt = update_ns(model), h = baseline_ns(model);
  const int64_t lag = tau / 2;
  const int64_t tau_max = tau_max_ns(model);
  const int64_t lo = a - tau_max / 2 - h - dt, hi = b + reach_ns(model) + dt;
  int64_t max_gap = 0;
  const std::vector<Point> p = points_in(readings, dt, lo, hi, max_gap);
  if (p.empty() || p.front().t_ns > a + lag || p.back().t_ns < b + lag) {
    out.issue = IssueCode::no_estimate;
    out.why = p.empty() || p.front().t_ns > a + lag
                  ? fmt::format("no energy estimate: the averaged power readings begin after the window's begin + "
                                "{:.0f} ms (the average's lag)", static_cast<double>(lag) * 1e-6)
                  : fmt::format("no energy estimate yet: the averaged power readings do not reach the window's end + "
                                "{:.0f} ms (the average's lag)", static_cast<double>(lag) * 1e-6);
    return out;
  }
  if (max_gap > 5 * dt / 2) {
    out.issue = IssueCode::average_gap;
    out.why = fmt::format("no energy estimate: no averaged power reading for {:.0f} ms around the window "
                          "(read every {:.0f} ms)", static_cast<double>(max_gap) * 1e-6, static_cast<double>(dt) * 1e-6);
    return out;
  }
  out.ok = true;
  out.covered = average_covers_end(readings, model, b);
  out.points = p.size();
  out.energy_j = integral(p, a + lag, b + lag);
  // Shape: the lagged average weighs the power with a trapezoid (ramps of one window at each
  // edge) instead of the window's box; the error is at most half the power range under the
  // ramps times the area where the two differ: tau/8 per edge (windows of tau or more), the
  // window's length or tau/4 for shorter ones. Taken as uniform within that bound.
  const int64_t r = b - a;
  const double sigma_w = noise_w(p);
  double bound_j;
  if (r < tau) {
    bound_j = range_w(p, a - tau_max / 2, b + tau_max / 2 + h, dt, tau, h, sigma_w) *
              static_cast<double>(std::min(r, tau_max / 4)) * kNs;
  } else {
    const double ra = range_w(p, a - tau_max / 2, a + tau_max / 2 + h, dt, tau, h, sigma_w);
    const double rb = range_w(p, b - tau_max / 2, b + tau_max / 2 + h, dt, tau, h, sigma_w);
    bound_j = (ra + rb) * static_cast<double>(tau_max) / 8 * kNs;
  }
  // Timing: an error in where the values belong, or in the lag (the window's own uncertainty),
  // moves the integration interval; that changes the energy by the shift times the difference of
  // the averaged power at its two ends.
  double sigma_t = 0;
  for (const Point& q : p)
    if (std::llabs(q.t_ns - (a + lag)) <= dt || std::llabs(q.t_ns - (b + lag)) <= dt) sigma_t = std::max(sigma_t, q.sigma_t_ns);
  const double sigma_lag = kAverageWindowTolerance * static_cast<double>(tau) / 2 / kSqrt3;
  const double u_timing = std::hypot(sigma_t, sigma_lag) * kNs * std::abs(value_at(p, b + lag) - value_at(p, a + lag));
  const double r_s = static_cast<double>(r) * kNs;
  const double u_noise = sigma_w * std::sqrt(r_s * std::min(r_s, static_cast<double>(dt) * kNs));
  out.u_j = rss({bound_j / kSqrt3, u_timing, u_noise});
  if (2 * out.u_j >= std::abs(out.energy_j)) {
    out.issue = IssueCode::shorter_than_average;
    out.why = fmt::format("no honest energy estimate: the window of {:.1f} ms against the {:.0f} ms averaged power "
                          "leaves a 95% uncertainty of {:.3f} J, more than its {:.3f} J",
                          r_s * 1e3, static_cast<double>(tau) * 1e-6, 2 * out.u_j, out.energy_j);
  }
  return out;
}

}  // namespace wattlab
