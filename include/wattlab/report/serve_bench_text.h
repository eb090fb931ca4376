// What `wattlab infer serve-bench` prints: requests, tokens, latency, the steady-state window's
// energy per token and per request with its uncertainty, server metrics, and the study's run
// filter. SIMULATED results say so first.
#pragma once
#include <iosfwd>

#include "wattlab/infer/bench_result.h"

namespace wattlab::report {

void print_serve_bench(std::ostream& out, const infer::BenchResult& r);

}  // namespace wattlab::report
