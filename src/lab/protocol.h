// The measurement protocol of one GEMM point (docs/gemm-lab.md): prepare, warm up until the GPU
// temperature is steady (bounded), then one fixed window of back-to-back graph replays. The
// window's energy comes from the meter; the counts turn it into energy per GEMM.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "lab/executor.h"
#include "store/gemm_point_record.h"

namespace wattlab::lab {

struct ProtocolOptions {
  double window_s = 10.0;          // the measurement window
  double replay_target_s = 0.075;  // one graph replay: 50-100 ms
  // Warm-up: at least min_s (first_min_s for the first point of a run: a cold GPU), then until
  // the temperature moved less than max_drift_c over the last slope_window_s, at most
  // max(max_s, that point's minimum) (a short max_s with a long first minimum: the first point
  // warms up for its minimum, the others stop waiting after max_s).
  double first_warmup_min_s = 10.0;
  double warmup_min_s = 2.0;
  double warmup_max_s = 60.0;
  double slope_window_s = 10.0;
  double max_drift_c = 1.0;        // per slope_window_s
  double warmup_chunk_s = 0.5;     // replays enqueued between temperature checks
  bool warmup = true;              // fidelity mode: none
};

// A point whose window is closed but whose result may not be final yet (collect() later, so the
// next point's preparation hides the meter's finalization delay).
struct PendingPoint {
  WindowId window = 0;
  GemmSpec spec;
  Prepared prepared;
  int64_t gemms = 0;
  int64_t replays = 0;
  double prepare_s = 0;  // inputs, checks, graph capture (host wall time)
  double warmup_s = 0;
  bool warmup_steady = false;
  std::optional<double> warmup_drift_c;  // temperature change over the last slope window
};

// The GPU domain whose energy a point reports: the first top-level "gpu:*" domain.
std::optional<std::size_t> gpu_domain_index(const std::vector<Domain>& domains);

// Temperature change over [now - span, now] of domain `d`, from the meter's telemetry.
std::optional<double> temperature_drift_c(const Meter& meter, std::size_t d, double span_s);

Result<PendingPoint> run_point(GemmExecutor& exec, const GemmSpec& spec, const ProtocolOptions& opt, bool first,
                               const std::string& window_name);

// The final meter result of a point's window and what it found: energy per GEMM, power,
// throughput, telemetry, the accuracy spot check, where the preparation time went.
struct CollectedPoint {
  WindowResult window;
  GemmPointCounts counts;
};
CollectedPoint collect(GemmExecutor& exec, const PendingPoint& p);

}  // namespace wattlab::lab
