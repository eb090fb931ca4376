#include "infer/run_plan.h"

#include <algorithm>
#include <cmath>

namespace wattlab::infer {

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
