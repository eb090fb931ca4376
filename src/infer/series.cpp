#include "infer/series.h"

#include <fmt/format.h>

namespace wattlab::infer {

double sizing_throughput(const BenchResult& r) {
  if (r.steady.window.found && r.steady.throughput_tok_s > 0) return r.steady.throughput_tok_s;
  return r.bench_dur_s > 0 ? static_cast<double>(r.tokens.chunk_tokens) / r.bench_dur_s : 0;
}

namespace {

SeriesRun run_one(BenchWindows& windows, Clock& clock, const RequestSource& source, const ServeBenchOptions& base,
                  int run_no, int64_t n, uint64_t seed) {
  SeriesRun run;
  run.requests = n;
  run.seed = seed;
  ServeBenchOptions o = base;
  o.load.seed = seed;
  o.run_name = fmt::format("run{}", run_no);
  o.labels[kRunLabel] = std::to_string(run_no);
  o.labels[kRequestsPerRunLabel] = std::to_string(n);
  const auto requests = source(static_cast<std::size_t>(n), seed);
  double input = 0;
  for (const auto& q : requests) input += q.input_tokens;
  if (!requests.empty()) run.mean_input_tokens = input / static_cast<double>(requests.size());
  run.m = measure_serve_bench(windows, clock, requests, o);
  const auto& r = run.m.result;
  if (!r.succeeded.empty())
    run.mean_output_tokens = static_cast<double>(r.tokens.chunk_tokens) / static_cast<double>(r.succeeded.size());
  run.sizing_tok_s = sizing_throughput(r);
  return run;
}

bool long_enough(const BenchResult& r, double min_steady_s) {
  return r.steady.window.found && r.steady.window.dur_s() >= min_steady_s;
}

// What the run turned out to be, on the run and on its windows.
void settle(BenchWindows& windows, SeriesRun& run, bool pilot, int index) {
  run.pilot = pilot;
  run.index = index;
  std::map<std::string, std::string> labels{{kRoleLabel, pilot ? "pilot" : "repeat"}};
  if (!pilot) labels[kRepeatLabel] = std::to_string(index);
  label_run(windows, run.m, labels, pilot);
}

}  // namespace

SeriesResult measure_series(BenchWindows& windows, Clock& clock, const RequestSource& source,
                            double mean_output_tokens, const ServeBenchOptions& o, const SeriesPlan& plan) {
  SeriesResult s;
  int64_t n = first_request_count(plan, o.batch_cap, mean_output_tokens);
  uint64_t seed = o.load.seed;
  int pilots = 0, repeats = 0;
  while (repeats < plan.repeats) {
    // Until a run is long enough (or the count is fixed), each run may turn out to be a pilot.
    const bool sizing = !plan.fixed_requests && repeats == 0;
    SeriesRun run = run_one(windows, clock, source, o, static_cast<int>(s.runs.size()) + 1, n, seed++);
    if (sizing && !long_enough(run.m.result, plan.min_steady_s)) {
      settle(windows, run, true, ++pilots);
      const double out = run.mean_output_tokens > 0 ? run.mean_output_tokens : mean_output_tokens;
      const int64_t last = n;
      n = next_request_count(n, o.batch_cap, out, run.sizing_tok_s, plan);
      s.runs.push_back(std::move(run));
      if (pilots > plan.max_pilots) {
        s.failure = fmt::format("after {} pilot runs the steady window is still shorter than {} s (last: {} requests); "
                                "give --requests-per-run or --expect-tok-s", pilots, plan.min_steady_s, last);
      } else if (n > plan.max_requests) {
        s.failure = fmt::format("a {} s window at {:.4g} tok/s needs {} requests per run, more than the {} a run may "
                                "send (--max-requests-per-run)", plan.min_steady_s, s.runs.back().sizing_tok_s, n,
                                plan.max_requests);
      }
      if (!s.failure.empty()) {
        n = last;
        break;
      }
      continue;
    }
    settle(windows, run, false, ++repeats);
    s.runs.push_back(std::move(run));
  }
  s.requests_per_run = n;
  summarize_repeats(s);
  return s;
}

void summarize_repeats(SeriesResult& s) {
  std::vector<double> ept;
  double u95 = 0;
  s.included.clear();
  s.excluded.clear();
  for (const auto& run : s.runs) {
    if (run.pilot) continue;
    const auto& st = run.m.result.steady;
    std::string why;
    if (!st.window.found) why = "no steady window: " + st.window.reason;
    else if (!st.energy.available) why = "no energy: " + st.energy.issue;
    else if (!st.stability.stable()) why = "unstable (the study's run filter)";
    if (!why.empty()) {
      s.excluded.emplace_back(run.index, why);
      continue;
    }
    s.included.push_back(run.index);
    ept.push_back(st.energy_per_token_j);
    u95 += st.energy_per_token_uncertainty_j;
  }
  s.energy_per_token_j = mean_ci95(ept);
  s.mean_u95_energy_per_token_j = ept.empty() ? 0 : u95 / static_cast<double>(ept.size());
}

}  // namespace wattlab::infer
