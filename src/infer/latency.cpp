#include "infer/latency.h"

#include <algorithm>
#include <cmath>

namespace wattlab::infer {

Quantile quantile(std::vector<double> sample, double p) {
  Quantile q;
  q.n = sample.size();
  if (sample.empty()) return q;
  std::sort(sample.begin(), sample.end());
  const double n = static_cast<double>(sample.size());
  auto at_rank = [&](double rank) {  // 1-based rank, clamped
    const double r = std::clamp(std::ceil(rank), 1.0, n);
    return sample[static_cast<std::size_t>(r) - 1];
  };
  q.value = at_rank(n * p);
  const double half = 1.96 * std::sqrt(n * p * (1 - p));
  q.lo = at_rank(n * p - half);
  q.hi = at_rank(n * p + half + 1);
  return q;
}

LatencySummary summarize_latency(std::span<const RequestTimeline> requests) {
  std::vector<double> ttft, itl, e2e;
  for (const auto& r : requests) {
    if (!r.ok || r.token_t_ns.empty()) continue;
    ttft.push_back(static_cast<double>(r.t_first_token_ns - r.t_send_ns) * 1e-9);
    e2e.push_back(static_cast<double>(r.t_finish_ns - r.t_send_ns) * 1e-9);
    for (std::size_t i = 1; i < r.token_t_ns.size(); ++i)
      itl.push_back(static_cast<double>(r.token_t_ns[i] - r.token_t_ns[i - 1]) * 1e-9);
  }
  LatencySummary s;
  s.ttft_count = ttft.size();
  s.itl_count = itl.size();
  s.ttft_median_s = quantile(ttft, 0.5);
  s.ttft_p90_s = quantile(ttft, 0.9);
  s.itl_median_s = quantile(itl, 0.5);
  s.itl_p90_s = quantile(itl, 0.9);
  s.itl_p95_s = quantile(itl, 0.95);
  s.itl_p99_s = quantile(itl, 0.99);
  s.e2e_median_s = quantile(e2e, 0.5);
  return s;
}

}  // namespace wattlab::infer
