// The serve-bench measurement (docs/serve-bench.md): drive an OpenAI-compatible server with a
// request set inside a meter window, find the study's steady-state window, read its energy off the
// meter's timeline, and account it per token and per request. The caller owns the run: it starts
// the meter before, and stops it and stores the windows after.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wattlab/infer/bench_result.h"
#include "wattlab/infer/client.h"
#include "wattlab/infer/request_set.h"
#include "wattlab/meter/meter.h"

namespace wattlab::infer {

struct ServeBenchOptions {
  ServerOptions server;
  LoadOptions load;
  int batch_cap = 0;         // the server's batch cap B
  std::string request_file;  // where the requests came from (for the result)
  std::string metrics_url;   // the server's Prometheus endpoint, scraped once a second; empty: none
  bool simulated = false;    // the meter reads the simulated GPU
};

struct ServeBenchMeasurement {
  BenchResult result;
  WindowResult whole;                  // the whole benchmark: a ServeBenchWholeRecord
  std::optional<WindowResult> steady;  // the steady-state window: a SteadyWindowRecord
};

// Sends `requests` (run_load) between a meter window's edges; `meter` runs on `clock` and is left
// running. Failed requests are in the result and in no statistic.
ServeBenchMeasurement measure_serve_bench(Meter& meter, Clock& clock, std::span<const BenchRequest> requests,
                                          const ServeBenchOptions& o);

// The energy of the GPU domains (gpu:N) of `w` summed as the study sums GPUs, or of every domain
// when there is no GPU; `domains` receives the summed ids ("gpu:0+gpu:1").
WindowEnergy summed_energy(const WindowResult& w, std::string& domains);

// The request set `repeat` times over; ids get " #k" when repeated (the study repeats sets for a
// large batch cap).
std::vector<BenchRequest> repeat_requests(const std::vector<BenchRequest>& base, int repeat);

}  // namespace wattlab::infer
