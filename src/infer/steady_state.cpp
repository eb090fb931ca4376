#include "infer/steady_state.h"

#include <fmt/format.h>

#include <algorithm>

namespace wattlab::infer {

SteadyWindow find_steady_window(std::span<const RequestTimeline> requests, int batch_cap) {
  SteadyWindow w;
  w.batch_cap = batch_cap;
  std::vector<int64_t> first, finish;
  for (const auto& r : requests) {
    if (!r.ok || r.token_t_ns.empty()) continue;
    first.push_back(r.t_first_token_ns);
    finish.push_back(r.t_finish_ns);
  }
  const int n = static_cast<int>(first.size());
  w.n_requests = n;
  if (batch_cap < 1) {
    w.reason = fmt::format("batch cap {} (at least 1)", batch_cap);
    return w;
  }
  // The end is the (N-B-1)-th finish: it needs N >= B + 2.
  if (n < batch_cap + 2) {
    w.reason = fmt::format("{} successful requests with output; the rule needs at least batch cap + 2 = {}", n,
                           batch_cap + 2);
    return w;
  }
  std::sort(first.begin(), first.end());
  std::sort(finish.begin(), finish.end());
  w.t_begin_ns = first[static_cast<std::size_t>(batch_cap - 1)];
  w.t_end_ns = finish[static_cast<std::size_t>(n - batch_cap - 2)];
  if (w.t_end_ns <= w.t_begin_ns) {
    w.reason = fmt::format(
        "the {}-th request finished ({:.3f} s) before {} requests had their first token ({:.3f} s): the server "
        "never held the batch cap",
        n - batch_cap - 1, static_cast<double>(w.t_end_ns - first.front()) * 1e-9, batch_cap,
        static_cast<double>(w.t_begin_ns - first.front()) * 1e-9);
    return w;
  }
  w.found = true;
  return w;
}

SteadyAccount account_steady_state(std::span<const RequestTimeline> requests, const SteadyWindow& window,
                                   const WindowEnergy& energy, std::optional<double> server_avg_running,
                                   double min_window_s) {
  SteadyAccount a;
  a.window = window;
  a.energy = energy;
  a.avg_running_server = server_avg_running;
  if (!window.found) {
    a.stability.flags.push_back("no steady-state window: " + window.reason);
    return a;
  }
  const int64_t b = window.t_begin_ns, e = window.t_end_ns;
  const double dur_s = window.dur_s();
  double active_sum_s = 0;
  for (const auto& r : requests) {
    if (!r.ok || r.token_t_ns.empty()) continue;
    RequestEnergy re;
    re.index = r.index;
    re.id = r.id;
    const int64_t lo = std::max(b, r.t_first_token_ns), hi = std::min(e, r.t_finish_ns);
    if (hi > lo) re.active_in_window_s = static_cast<double>(hi - lo) * 1e-9;
    for (int64_t t : r.token_t_ns)
      if (t >= b && t <= e) ++re.tokens_in_window;
    if (re.active_in_window_s <= 0 && re.tokens_in_window == 0) continue;
    if (r.t_finish_ns >= b && r.t_finish_ns <= e) ++a.requests_finished;
    a.tokens += re.tokens_in_window;
    active_sum_s += re.active_in_window_s;
    a.per_request.push_back(re);
  }
  std::sort(a.per_request.begin(), a.per_request.end(),
            [](const RequestEnergy& x, const RequestEnergy& y) { return x.index < y.index; });
  a.requests_active = static_cast<int>(a.per_request.size());
  a.avg_running_client = active_sum_s / dur_s;
  a.throughput_tok_s = static_cast<double>(a.tokens) / dur_s;
  if (energy.available) {
    a.avg_power_w = energy.energy_j / dur_s;
    if (a.tokens > 0) {
      const double tok = static_cast<double>(a.tokens);
      a.energy_per_token_j = energy.energy_j / tok;
      a.energy_per_token_uncertainty_j = energy.uncertainty_j / tok;
      a.energy_per_token_systematic_j = energy.systematic_j / tok;
    }
    for (auto& re : a.per_request) {
      if (active_sum_s > 0) re.apportioned_j = energy.energy_j * re.active_in_window_s / active_sum_s;
      if (a.tokens > 0) re.token_share_j = energy.energy_j * static_cast<double>(re.tokens_in_window) / static_cast<double>(a.tokens);
    }
  }

  auto& s = a.stability;
  s.window_long_enough = dur_s >= min_window_s;
  if (!s.window_long_enough)
    s.flags.push_back(fmt::format("steady window {:.3f} s is shorter than {:g} s", dur_s, min_window_s));
  s.energy_positive = energy.available && a.energy_per_token_j > 0;
  if (!energy.available) s.flags.push_back("no energy for the window: " + energy.issue);
  else if (!s.energy_positive) s.flags.push_back(fmt::format("energy per token {:.6g} J is not > 0", a.energy_per_token_j));
  const double running = server_avg_running.value_or(a.avg_running_client);
  s.batch_source = server_avg_running ? "server metrics (vllm:num_requests_running)" : "client (requests between first token and finish)";
  s.batch_fraction = running / window.batch_cap;
  s.batch_held = s.batch_fraction >= kMinBatchFraction;
  if (!s.batch_held)
    s.flags.push_back(fmt::format("mean running requests {:.3f} / batch cap {} = {:.3f} < {:.2f} ({})", running,
                                  window.batch_cap, s.batch_fraction, kMinBatchFraction, s.batch_source));
  return a;
}

}  // namespace wattlab::infer
