// A serve-bench series (docs/serve-bench.md, "Repeats and the 20 s rule"): pilot runs that size the
// request count until a steady window lasts long enough, then the repeats at that count, each one
// measure_serve_bench run, and the 95 % t-interval of J/token over the stable repeats.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "infer/run_plan.h"
#include "infer/serve_bench.h"
#include "infer/workload.h"

namespace wattlab::infer {

// Labels on every run's windows: the run's number in the series, its request count, what it turned
// out to be ("pilot" or "repeat") and, for a repeat, its number among the repeats.
inline constexpr const char* kRunLabel = "serve_bench.run";
inline constexpr const char* kRequestsPerRunLabel = "serve_bench.requests";
inline constexpr const char* kRoleLabel = "serve_bench.role";
inline constexpr const char* kRepeatLabel = "serve_bench.repeat";

// The requests of one run: `n` of them, drawn with `seed` (a request file ignores the seed).
using RequestSource = std::function<std::vector<BenchRequest>(std::size_t n, uint64_t seed)>;

struct SeriesRun {
  bool pilot = false;
  int index = 0;              // 1-based among pilots, or among repeats
  int64_t requests = 0;       // sent
  uint64_t seed = 0;          // of the requests and of the arrivals
  double mean_input_tokens = 0;    // the requests' prompt lengths as drawn (0: not known, a file)
  double mean_output_tokens = 0;   // streamed tokens per successful request
  double sizing_tok_s = 0;         // the throughput the next count was sized from (pilots)
  ServeBenchMeasurement m;
};

struct SeriesResult {
  std::vector<SeriesRun> runs;       // in the order they ran
  int64_t requests_per_run = 0;      // of the repeats
  std::string failure;               // non-empty: no run reached the window, the repeats did not run
  // J/token over the repeats that passed the study's run filter (stable), with the t-interval;
  // each run's own measurement uncertainty (U95) is beside it, not in it.
  MeanCi energy_per_token_j;
  std::vector<int> included;                                // repeat indices in the interval
  std::vector<std::pair<int, std::string>> excluded;        // repeat index, why not
  double mean_u95_energy_per_token_j = 0;                   // mean of the included runs' own U95
};

// A run's throughput for sizing: the steady window's tokens/s when there is one, else the whole
// run's streamed tokens over its duration (lower: ramp-up and drain included, so it sizes up).
double sizing_throughput(const BenchResult& r);

// Runs the series on `windows` (a recording's), each run with its own windows ("serve-bench run1",
// "steady run2"...); a run sized before any was long enough that falls short is a pilot, and
// more than plan.max_pilots of them end the series with `failure`. `o.load.seed` is the base seed: run k (0-based, pilots included) uses
// seed + k for its requests and arrivals. `mean_output_tokens` sizes the first run.
SeriesResult measure_series(BenchWindows& windows, Clock& clock, const RequestSource& source,
                            double mean_output_tokens, const ServeBenchOptions& o, const SeriesPlan& plan);

// The interval from the repeats' results (pure: what measure_series does at its end).
void summarize_repeats(SeriesResult& s);

// What a series was given, for its JSON and its printout.
struct SeriesDescription {
  std::string request_file;           // a request file, or empty
  std::optional<WorkloadSpec> spec;   // a synthetic workload
  SeriesPlan plan;
  int64_t run_id = 0;                 // the stored run holding every run's windows
};

// The series as JSON, schema wattlab.serve-bench/2 (docs/serve-bench.md, "JSON").
std::string series_to_json(const SeriesResult& s, const SeriesDescription& d);

}  // namespace wattlab::infer
