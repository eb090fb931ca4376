#include <nlohmann/json.hpp>

#include "run_json.h"
#include "infer/series.h"

namespace wattlab::infer {
namespace {
using nlohmann::json;

json lengths(const LengthDistribution& d) {
  json j{{"distribution", to_string(d.kind)}, {"mean", d.mean}, {"cap", d.cap}, {"capped_mean", capped_mean(d)}};
  if (d.kind == LengthKind::lognormal) j["sigma"] = d.sigma;
  return j;
}

json workload(const SeriesDescription& d) {
  if (!d.spec) return {{"kind", "file"}, {"request_file", d.request_file}};
  const auto& w = *d.spec;
  return {{"kind", "synthetic"}, {"api", w.api == Api::chat ? "chat" : "completions"}, {"source", w.source},
          {"input_tokens", lengths(w.input)}, {"output_tokens", lengths(w.output)}};
}

json plan(const SeriesPlan& p) {
  json j{{"repeats", p.repeats}, {"min_steady_s", p.min_steady_s}, {"margin", p.margin}, {"max_pilots", p.max_pilots},
          {"max_requests", p.max_requests}};
  j["requests_per_run_fixed"] = p.fixed_requests ? json(*p.fixed_requests) : json(nullptr);
  j["expect_tok_s"] = p.expect_tok_s ? json(*p.expect_tok_s) : json(nullptr);
  j["rule"] = "N = B + 1 + ceil(margin x min_steady_s x throughput / mean output tokens); a run sized before any "
              "reached min_steady_s that falls short is a pilot, and the next is sized from its throughput";
  return j;
}

json usage_prompt_mean(const BenchResult& r) {
  double sum = 0;
  int n = 0;
  for (const auto& t : r.succeeded)
    if (t.usage_prompt_tokens) sum += static_cast<double>(*t.usage_prompt_tokens), ++n;
  return n ? json(sum / n) : json(nullptr);
}

}  // namespace

std::string series_to_json(const SeriesResult& s, const SeriesDescription& d) {
  json j;
  j["schema"] = "wattlab.serve-bench/2";
  const BenchResult* first = s.runs.empty() ? nullptr : &s.runs.front().m.result;
  j["simulated"] = first && first->simulated;
  if (first) {
    j["server"] = {{"base_url", first->base_url}, {"model", first->model}};
    j["batch_cap"] = first->batch_cap;
  }
  j["run_id"] = d.run_id;
  j["workload"] = workload(d);
  j["plan"] = plan(d.plan);
  j["requests_per_run"] = s.requests_per_run;
  if (!s.failure.empty()) j["failure"] = s.failure;
  const auto& c = s.energy_per_token_j;
  json rep{{"method", "Student t-interval over the stable repeats' J/token: mean +- t(0.975, n-1) sd / sqrt(n)"},
           {"n", c.n}, {"included", s.included}};
  json excluded = json::array();
  for (const auto& [i, why] : s.excluded) excluded.push_back({{"repeat", i}, {"why", why}});
  rep["excluded"] = excluded;
  if (c.n > 0) {
    rep["energy_per_token_j"] = {{"mean", c.mean}, {"sd", c.sd}, {"t", c.t}};
    if (c.has_interval()) {
      rep["energy_per_token_j"]["ci95_low"] = c.low;
      rep["energy_per_token_j"]["ci95_high"] = c.high;
      rep["energy_per_token_j"]["ci95_half_width"] = c.half_width;
    }
    rep["mean_measurement_u95_j"] = s.mean_u95_energy_per_token_j;
  }
  j["repeats"] = rep;
  json runs = json::array();
  for (const auto& run : s.runs) {
    json r = run_json(run.m.result);
    r["role"] = run.pilot ? "pilot" : "repeat";
    r["index"] = run.index;
    r["requests_sent"] = run.requests;
    r["seed"] = run.seed;
    r["input_tokens"] = {{"requested_mean", run.mean_input_tokens > 0 ? json(run.mean_input_tokens) : json(nullptr)},
                         {"usage_prompt_mean", usage_prompt_mean(run.m.result)}};
    r["mean_output_tokens"] = run.mean_output_tokens;
    r["sizing_throughput_tok_s"] = run.sizing_tok_s;
    runs.push_back(std::move(r));
  }
  j["runs"] = runs;
  return j.dump(2);
}

}  // namespace wattlab::infer
