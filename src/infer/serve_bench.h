// The serve-bench measurement (docs/serve-bench.md): drive an OpenAI-compatible server with a
// request set inside a meter window, find the study's steady-state window, read its energy off the
// meter's timeline, and account it per token and per request. The caller owns the run and its
// windows (BenchWindows: the CLI's wattlab::Recording, which stores them as they become final).
#pragma once
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "infer/bench_result.h"
#include "infer/client.h"
#include "infer/request_set.h"
#include "wattlab/meter/meter.h"

namespace wattlab::infer {

// The phase label of a pilot run's steady window (a steady window is labelled "steady").
inline constexpr const char* kPilotPhase = "pilot";

struct ServeBenchOptions {
  ServerOptions server;
  LoadOptions load;
  int batch_cap = 0;         // the server's batch cap B
  std::string request_file;  // where the requests came from (for the result)
  std::string metrics_url;   // the server's Prometheus endpoint, scraped once a second; empty: none
  bool simulated = false;    // the meter reads the simulated GPU
  double min_steady_s = kMinSteadyWindowS;  // the run filter's window rule
  // One run of a series: appended to the windows' names ("serve-bench run2", "steady run2"), and
  // labels both windows carry.
  std::string run_name;
  std::map<std::string, std::string> labels;
};

// The windows of the run the benchmark is measured in, on the meter's timeline: opened and closed
// around the load, added with past edges once the steady state is known, and annotated with what
// each held (its record's labels and counts).
class BenchWindows {
 public:
  virtual ~BenchWindows() = default;
  virtual WindowId open(std::string_view name) = 0;
  virtual void close(WindowId id) = 0;
  virtual WindowId add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns) = 0;
  // The window's final result (waiting for the timeline to cover its end), with its annotations.
  virtual WindowResult result(WindowId id) = 0;
  virtual void annotate(WindowId id, const std::map<std::string, std::string>& labels,
                        const std::map<std::string, double>& counts) = 0;
};

struct ServeBenchMeasurement {
  BenchResult result;
  WindowResult whole;                  // the whole benchmark: a ServeBenchWholeRecord
  std::optional<WindowResult> steady;  // the steady-state window: a SteadyWindowRecord
};

// Sends `requests` (run_load) between the edges of a window "serve-bench"; the meter behind
// `windows` runs on `clock` and is left running. Failed requests are in the result and in no
// statistic.
ServeBenchMeasurement measure_serve_bench(BenchWindows& windows, Clock& clock, std::span<const BenchRequest> requests,
                                          const ServeBenchOptions& o);

// Labels a finished run's windows with what it turned out to be, over what they carry. A pilot's
// steady window gets phase=pilot, which wattlab diagnose skips: it sized the runs, it is no
// configuration.
void label_run(BenchWindows& windows, ServeBenchMeasurement& m, const std::map<std::string, std::string>& labels,
               bool pilot);

// The energy of the GPU domains (gpu:N) of `w` summed as the study sums GPUs, or of every domain
// when there is no GPU; `domains` receives the summed ids ("gpu:0+gpu:1").
WindowEnergy summed_energy(const WindowResult& w, std::string& domains);

// The first `n` requests of the set repeated over and over; ids get " #k" (copy k) once the set
// repeats (the study repeats sets for a large batch cap).
std::vector<BenchRequest> cycle_requests(const std::vector<BenchRequest>& base, std::size_t n);

}  // namespace wattlab::infer
