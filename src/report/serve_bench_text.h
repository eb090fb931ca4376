// What `wattlab infer serve-bench` prints: requests, tokens, latency, the steady-state window's
// energy per token and per request with its uncertainty, server metrics, and the study's run
// filter. SIMULATED results say so first.
#pragma once
#include <iosfwd>

#include "infer/bench_result.h"
#include "infer/series.h"

namespace wattlab::report {

void print_serve_bench(std::ostream& out, const infer::BenchResult& r);

// A series: the workload and the sizing rule, every run (pilots marked) as print_serve_bench
// prints it, then J/token over the repeats with its 95 % t-interval (serve_bench_series_text.cpp).
void print_serve_bench_series(std::ostream& out, const infer::SeriesResult& s, const infer::SeriesDescription& d);

}  // namespace wattlab::report
