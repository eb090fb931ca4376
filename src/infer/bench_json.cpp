#include "run_json.h"

#include "infer/bench_result.h"

namespace wattlab::infer {

TokenReconciliation reconcile_tokens(std::span<const RequestTimeline> requests) {
  TokenReconciliation t;
  for (const auto& r : requests) {
    if (!r.ok) continue;
    const auto chunks = static_cast<int64_t>(r.output_tokens());
    t.chunk_tokens += chunks;
    if (!r.usage_completion_tokens) {
      ++t.requests_without_usage;
      continue;
    }
    ++t.requests_with_usage;
    t.usage_tokens += *r.usage_completion_tokens;
    t.chunk_tokens_with_usage += chunks;
    if (*r.usage_completion_tokens != chunks) t.differences.push_back({r.index, r.id, chunks, *r.usage_completion_tokens});
  }
  return t;
}

using nlohmann::json;

namespace {

json q(const Quantile& v) {
  if (v.n == 0) return nullptr;
  return {{"value", v.value}, {"ci95_low", v.lo}, {"ci95_high", v.hi}, {"n", v.n}};
}
json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }
double s_of(int64_t ns) { return static_cast<double>(ns) * 1e-9; }
}  // namespace

json run_json(const BenchResult& r) {
  json j;
  j["arrivals"] = r.rate_per_s > 0 ? json{{"kind", "poisson"}, {"rate_per_s", r.rate_per_s}, {"seed", r.seed}}
                                   : json{{"kind", "all_at_once"}};
  j["bench_dur_s"] = r.bench_dur_s;
  const int failed = static_cast<int>(r.requests.size() - r.succeeded.size());
  j["requests"] = {{"total", r.requests.size()}, {"succeeded", r.succeeded.size()}, {"failed", failed}};

  const auto& s = r.steady;
  json st;
  st["found"] = s.window.found;
  if (!s.window.found) st["reason"] = s.window.reason;
  st["rule"] = "begin: B-th first token; end: (N-B-1)-th finish (N successful requests, B batch cap)";
  st["n_requests"] = s.window.n_requests;
  if (s.window.found) {
    const int64_t t0 = r.requests.empty() ? 0 : r.requests.front().t_send_ns;
    int64_t first_send = t0;
    for (const auto& q0 : r.requests) first_send = std::min(first_send, q0.t_send_ns);
    st["t_begin_s"] = s_of(s.window.t_begin_ns - first_send);  // since the first request was sent
    st["t_end_s"] = s_of(s.window.t_end_ns - first_send);
    st["t_begin_ns"] = s.window.t_begin_ns;  // CLOCK_MONOTONIC, as the meter's timeline
    st["t_end_ns"] = s.window.t_end_ns;
    st["dur_s"] = s.window.dur_s();
    st["tokens"] = s.tokens;
    st["requests_active"] = s.requests_active;
    st["requests_finished"] = s.requests_finished;
    st["avg_running_client"] = s.avg_running_client;
    st["avg_running_server"] = opt(s.avg_running_server);
    st["throughput_tokens_per_s"] = s.throughput_tok_s;
    st["energy_domains"] = r.energy_domains;
    if (s.energy.available) {
      st["energy_j"] = {{"value", s.energy.energy_j}, {"uncertainty95", s.energy.uncertainty_j}, {"systematic", s.energy.systematic_j}};
      st["energy_per_token_j"] = {{"value", s.energy_per_token_j}, {"uncertainty95", s.energy_per_token_uncertainty_j},
                                  {"systematic", s.energy_per_token_systematic_j}};
      st["avg_power_w"] = {{"value", s.avg_power_w}, {"uncertainty95", s.energy.uncertainty_j / s.window.dur_s()},
                           {"systematic", s.energy.systematic_j / s.window.dur_s()}};
    } else {
      st["energy_issue"] = s.energy.issue;
    }
    json per = json::array();
    for (const auto& p : s.per_request)
      per.push_back({{"index", p.index}, {"id", p.id}, {"active_in_window_s", p.active_in_window_s},
                     {"tokens_in_window", p.tokens_in_window}, {"apportioned_j", p.apportioned_j},
                     {"token_share_j", p.token_share_j}});
    st["per_request_energy"] = per;
  }
  st["stability"] = {{"stable", s.stability.stable()},
                     {"window_ge_20s", s.stability.window_long_enough},
                     {"energy_per_token_positive", s.stability.energy_positive},
                     {"batch_ge_85pct", s.stability.batch_held},
                     {"batch_fraction", s.stability.batch_fraction},
                     {"batch_source", s.stability.batch_source},
                     {"flags", s.stability.flags}};
  j["steady_state"] = st;

  const auto& l = r.latency;
  j["latency_s"] = {{"ttft_median", q(l.ttft_median_s)}, {"ttft_p90", q(l.ttft_p90_s)},
                    {"itl_median", q(l.itl_median_s)},   {"itl_p90", q(l.itl_p90_s)},
                    {"itl_p95", q(l.itl_p95_s)},         {"itl_p99", q(l.itl_p99_s)},
                    {"e2e_median", q(l.e2e_median_s)}};
  json diffs = json::array();
  for (const auto& d : r.tokens.differences) diffs.push_back({{"index", d.index}, {"id", d.id}, {"chunks", d.chunks}, {"usage", d.usage}});
  j["output_tokens"] = {{"stream_chunks", r.tokens.chunk_tokens},
                        {"usage_completion_tokens", r.tokens.usage_tokens},
                        {"stream_chunks_of_requests_with_usage", r.tokens.chunk_tokens_with_usage},
                        {"requests_with_usage", r.tokens.requests_with_usage},
                        {"requests_without_usage", r.tokens.requests_without_usage},
                        {"differences", diffs}};
  json m;
  m["samples_total"] = r.metrics_samples;
  m["failures"] = r.metrics_failures;
  if (!r.metrics_first_failure.empty()) m["first_failure"] = r.metrics_first_failure;
  if (r.metrics) {
    m["steady_samples"] = r.metrics->samples;
    m["mean_running"] = opt(r.metrics->running);
    m["mean_waiting"] = opt(r.metrics->waiting);
    m["mean_kv_cache_usage"] = opt(r.metrics->kv_cache_usage);
  }
  j["server_metrics"] = m;

  json reqs = json::array();
  for (const auto& t : r.requests) {
    json x{{"index", t.index}, {"id", t.id}, {"ok", t.ok}};
    if (!t.ok) x["error"] = t.error;
    if (t.http_status) x["http_status"] = t.http_status;
    x["output_tokens"] = t.output_tokens();
    x["usage_completion_tokens"] = t.usage_completion_tokens ? json(*t.usage_completion_tokens) : json(nullptr);
    x["usage_prompt_tokens"] = t.usage_prompt_tokens ? json(*t.usage_prompt_tokens) : json(nullptr);
    x["t_send_ns"] = t.t_send_ns;
    if (!t.token_t_ns.empty()) x["ttft_s"] = s_of(t.t_first_token_ns - t.t_send_ns);
    x["e2e_s"] = s_of(t.t_finish_ns - t.t_send_ns);
    json gaps = json::array();
    for (std::size_t i = 1; i < t.token_t_ns.size(); ++i) gaps.push_back(s_of(t.token_t_ns[i] - t.token_t_ns[i - 1]));
    x["itl_s"] = gaps;
    reqs.push_back(std::move(x));
  }
  j["per_request"] = reqs;
  return j;
}

}  // namespace wattlab::infer
