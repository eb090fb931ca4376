// The study's steady-state window and what it holds, as pure functions over request timelines
// (docs/joules-framework.md, "Steady-state window (LLM)"; docs/serve-bench.md).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "infer/timeline.h"

namespace wattlab::infer {

// Start: the moment B requests have each received their first token (the B-th smallest first-token
// time). End: the moment N - B - 1 requests have finished (the (N-B-1)-th smallest finish time).
// N = successful requests, B = batch cap. Failed requests are not in `requests`' count.
struct SteadyWindow {
  bool found = false;
  std::string reason;  // why there is none
  int64_t t_begin_ns = 0;
  int64_t t_end_ns = 0;
  int n_requests = 0;
  int batch_cap = 0;
  double dur_s() const { return static_cast<double>(t_end_ns - t_begin_ns) * 1e-9; }
};

SteadyWindow find_steady_window(std::span<const RequestTimeline> requests, int batch_cap);

// The meter's energy over the window (summed over the domains used).
struct WindowEnergy {
  bool available = false;
  std::string issue;
  double energy_j = 0;
  double uncertainty_j = 0;  // ~95%
  double systematic_j = 0;   // gain tolerance
};

struct RequestEnergy {
  std::size_t index = 0;
  std::string id;
  double active_in_window_s = 0;  // overlap of [first token, finish] with the window
  int64_t tokens_in_window = 0;
  double apportioned_j = 0;       // window energy x this request's share of active time
  double token_share_j = 0;       // window energy x this request's share of the window's tokens
};

struct Stability {
  bool window_long_enough = false;  // >= the window rule's length (20 s)
  bool energy_positive = false;     // J/token > 0
  bool batch_held = false;          // mean running / B >= 0.85
  double batch_fraction = 0;        // mean running / B
  std::string batch_source;         // "client" or "server metrics"
  std::vector<std::string> flags;   // one line per failed rule
  bool stable() const { return window_long_enough && energy_positive && batch_held; }
};

inline constexpr double kMinSteadyWindowS = 20.0;
inline constexpr double kMinBatchFraction = 0.85;

struct SteadyAccount {
  SteadyWindow window;
  int64_t tokens = 0;              // token arrivals inside [begin, end]
  int requests_active = 0;         // requests active at some point inside the window
  int requests_finished = 0;       // requests that finished inside the window
  double avg_running_client = 0;   // time-weighted mean of requests between first token and finish
  std::optional<double> avg_running_server;  // mean vllm:num_requests_running, when scraped
  WindowEnergy energy;
  double energy_per_token_j = 0, energy_per_token_uncertainty_j = 0, energy_per_token_systematic_j = 0;
  double avg_power_w = 0;
  double throughput_tok_s = 0;
  std::vector<RequestEnergy> per_request;  // requests active in the window, in index order
  Stability stability;
};

// `requests` are the successful ones. `server_avg_running` (from the metrics scrape) is used for
// the batch rule when given, as the study does; otherwise the client-side mean. `min_window_s` is
// the window rule's length (the study's 20 s unless the bench is told otherwise).
SteadyAccount account_steady_state(std::span<const RequestTimeline> requests, const SteadyWindow& window,
                                   const WindowEnergy& energy, std::optional<double> server_avg_running = {},
                                   double min_window_s = kMinSteadyWindowS);

}  // namespace wattlab::infer
