// Latency statistics of a benchmark: quantiles with a distribution-free 95% interval.
#pragma once
#include <span>
#include <vector>

#include "infer/timeline.h"

namespace wattlab::infer {

// The p-quantile of a sample (nearest rank) and the 95% interval from the order statistics at
// ranks n*p -/+ 1.96*sqrt(n*p*(1-p)) (binomial normal approximation), clamped to the sample.
struct Quantile {
  double value = 0, lo = 0, hi = 0;
  std::size_t n = 0;  // 0: empty sample
};
Quantile quantile(std::vector<double> sample, double p);

struct LatencySummary {
  std::size_t itl_count = 0, ttft_count = 0;
  Quantile ttft_median_s, ttft_p90_s;
  Quantile itl_median_s, itl_p90_s, itl_p95_s, itl_p99_s;
  Quantile e2e_median_s;
};

// Over the successful requests: TTFT = first token - send, ITL = every gap between tokens.
LatencySummary summarize_latency(std::span<const RequestTimeline> requests);

}  // namespace wattlab::infer
