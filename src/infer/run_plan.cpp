#include "infer/run_plan.h"

#include <algorithm>
#include <cmath>

namespace wattlab::infer {
namespace {

// Continued fraction of the incomplete beta function (modified Lentz).
double beta_cf(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    c = 1 + aa / c;
    d = 1 / (std::abs(d) < tiny ? tiny : d);
    c = std::abs(c) < tiny ? tiny : c;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    c = 1 + aa / c;
    d = 1 / (std::abs(d) < tiny ? tiny : d);
    c = std::abs(c) < tiny ? tiny : c;
    const double del = d * c;
    h *= del;
    if (std::abs(del - 1) < 1e-15) break;
  }
  return h;
}

// I_x(a, b), the regularized incomplete beta function.
double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_cf(a, b, x) / a;
  return 1 - front * beta_cf(b, a, 1 - x) / b;
}

// P(T <= t) for t >= 0.
double student_t_cdf(double t, double df) { return 1 - 0.5 * incomplete_beta(df / 2, 0.5, df / (df + t * t)); }

}  // namespace

int64_t required_requests(int batch_cap, double mean_output_tokens, double throughput_tok_s, double min_steady_s,
                          double margin) {
  const double finishes = std::ceil(margin * min_steady_s * throughput_tok_s / std::max(mean_output_tokens, 1.0));
  return std::max<int64_t>(batch_cap + 2, batch_cap + 1 + static_cast<int64_t>(finishes));
}

int64_t first_request_count(const SeriesPlan& p, int batch_cap, double mean_output_tokens) {
  if (p.fixed_requests) return *p.fixed_requests;
  if (p.expect_tok_s)
    return std::max(p.base_set_size,
                    required_requests(batch_cap, mean_output_tokens, *p.expect_tok_s, p.min_steady_s, p.margin));
  return std::max<int64_t>(p.base_set_size, 3 * static_cast<int64_t>(batch_cap) + 2);
}

int64_t next_request_count(int64_t current, int batch_cap, double mean_output_tokens, double throughput_tok_s,
                           const SeriesPlan& p) {
  const int64_t need = required_requests(batch_cap, mean_output_tokens, throughput_tok_s, p.min_steady_s, p.margin);
  return need > current ? need : 2 * current;
}

double student_t_quantile(double p, double df) {
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, df) < p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (student_t_cdf(mid, df) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

MeanCi mean_ci95(std::span<const double> values) {
  MeanCi c;
  c.n = values.size();
  if (c.n == 0) return c;
  for (double v : values) c.mean += v;
  c.mean /= static_cast<double>(c.n);
  if (c.n < 2) {
    c.low = c.high = c.mean;
    return c;
  }
  double ss = 0;
  for (double v : values) ss += (v - c.mean) * (v - c.mean);
  c.sd = std::sqrt(ss / static_cast<double>(c.n - 1));
  c.t = student_t_quantile(0.975, static_cast<double>(c.n - 1));
  c.half_width = c.t * c.sd / std::sqrt(static_cast<double>(c.n));
  c.low = c.mean - c.half_width;
  c.high = c.mean + c.half_width;
  return c;
}

}  // namespace wattlab::infer
