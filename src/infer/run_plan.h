// How many requests one serve-bench run sends so that its steady window lasts long enough, and the
// confidence interval over repeated runs (docs/serve-bench.md, "Repeats and the 20 s rule").
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "core/student_t.h"

namespace wattlab::infer {

// Requests for a steady window of at least margin x min_steady_s with every request sent at t = 0
// and batch cap B. In steady state B requests are in flight and requests finish at
// throughput / mean_output per second; the window ends at the (N - B - 1)-th finish, so it lasts
// about (N - B - 1) x mean_output / throughput, and N = B + 1 + ceil(margin x min_steady_s x
// throughput / mean_output). Throughput in output tokens/s; at least B + 2 (the rule's minimum).
int64_t required_requests(int batch_cap, double mean_output_tokens, double throughput_tok_s, double min_steady_s,
                          double margin);

struct SeriesPlan {
  int repeats = 3;               // runs that count, each with the same request count
  double min_steady_s = 20;      // the study's shortest steady window
  double margin = 1.25;          // requests sized for margin x min_steady_s
  int max_pilots = 3;            // runs that fell short, re-sized and run again, before giving up
  int64_t max_requests = 100'000;  // a sizing that asks for more ends the series (one thread per request)
  std::optional<int64_t> fixed_requests;  // --requests-per-run: no sizing, no pilots
  std::optional<double> expect_tok_s;     // --expect-tok-s: the first run sized from this throughput
  int64_t base_set_size = 0;     // a request file's size (the first run sends at least that many)
};

// The first run's request count: fixed; else sized from the expected throughput; else a pilot of
// max(3B + 2, the file's size), whose steady window spans about two request lifetimes.
int64_t first_request_count(const SeriesPlan& p, int batch_cap, double mean_output_tokens);

// After a run of `current` requests whose window fell short: sized from the throughput it
// measured, and more than `current` (twice it when the sizing asks for no more: the shortfall came
// from elsewhere, failures or a server that never held the batch).
int64_t next_request_count(int64_t current, int batch_cap, double mean_output_tokens, double throughput_tok_s,
                           const SeriesPlan& p);

// The p-quantile of Student's t (src/core/student_t.h).
using wattlab::student_t_quantile;

// Mean of repeated measurements with the two-sided 95 % t-interval: mean +- t(0.975, n-1) x sd / sqrt(n).
struct MeanCi {
  std::size_t n = 0;
  double mean = 0, sd = 0;  // sd: sample standard deviation (n - 1)
  double t = 0;             // the quantile used; 0 when n < 2 (no interval)
  double half_width = 0, low = 0, high = 0;
  bool has_interval() const { return n >= 2; }
};
MeanCi mean_ci95(std::span<const double> values);

}  // namespace wattlab::infer
