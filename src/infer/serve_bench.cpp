#include "infer/serve_bench.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <regex>

#include "infer/metrics_scrape.h"
#include "store/serve_bench_record.h"

namespace wattlab::infer {
namespace {

// What the steady window carries for wattlab diagnose: its configuration and counts.
SteadyWindowRecord steady_record(const BenchResult& r, int batch_cap, std::optional<double> server_running) {
  const auto& s = r.steady;
  SteadyWindowRecord rec;
  rec.tokens = static_cast<double>(s.tokens);
  rec.requests = static_cast<double>(s.requests_finished);
  rec.phase = SteadyWindowRecord::kSteady;
  rec.batch = batch_cap;
  rec.avg_batch_size = server_running.value_or(s.avg_running_client);
  const auto& l = r.latency;
  if (l.itl_count > 0) {
    rec.median_itl_ms = l.itl_median_s.value * 1e3;
    rec.p90_itl_ms = l.itl_p90_s.value * 1e3;
    rec.p95_itl_ms = l.itl_p95_s.value * 1e3;
    rec.p99_itl_ms = l.itl_p99_s.value * 1e3;
  }
  if (r.metrics && r.metrics->kv_cache_usage) rec.kv_cache_usage = *r.metrics->kv_cache_usage;
  rec.stable = s.stability.stable();
  rec.flags = s.stability.flags;
  return rec;
}

}  // namespace

WindowEnergy summed_energy(const WindowResult& w, std::string& domains) {
  static const std::regex gpu(R"(gpu:\d+)");
  bool any_gpu = false;
  for (const auto& d : w.domains) any_gpu |= std::regex_match(d.domain_id, gpu);
  WindowEnergy e;
  e.available = true;
  double var = 0;
  int used = 0;
  for (const auto& d : w.domains) {
    if (any_gpu && !std::regex_match(d.domain_id, gpu)) continue;
    domains += (domains.empty() ? "" : "+") + d.domain_id;
    if (!d.available) {
      e.available = false;
      e.issue = fmt::format("{}: {}", d.domain_id, d.issues.empty() ? "no estimate" : d.issues.front());
      continue;
    }
    e.energy_j += d.energy_j;
    var += d.uncertainty_j * d.uncertainty_j;
    e.systematic_j += d.systematic_j;
    ++used;
  }
  if (used == 0 && e.issue.empty()) {
    e.available = false;
    e.issue = "no domain measured";
  }
  e.uncertainty_j = std::sqrt(var);
  if (!w.final && e.available) e.issue = "provisional: the timeline did not cover the window's end";
  return e;
}

std::vector<BenchRequest> cycle_requests(const std::vector<BenchRequest>& base, std::size_t n) {
  std::vector<BenchRequest> out;
  if (base.empty()) return out;
  const bool repeats = n > base.size();
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    BenchRequest r = base[i % base.size()];
    if (repeats) r.id += fmt::format(" #{}", i / base.size() + 1);
    out.push_back(std::move(r));
  }
  return out;
}

void label_run(BenchWindows& windows, ServeBenchMeasurement& m, const std::map<std::string, std::string>& labels,
               bool pilot) {
  for (const auto& [k, v] : labels) m.whole.labels[k] = v;
  windows.annotate(m.whole.id, m.whole.labels, m.whole.counts);
  if (!m.steady) return;
  for (const auto& [k, v] : labels) m.steady->labels[k] = v;
  if (pilot) {
    SteadyWindowRecord phase;
    phase.phase = kPilotPhase;
    phase.encode(*m.steady);
  }
  windows.annotate(m.steady->id, m.steady->labels, m.steady->counts);
}

ServeBenchMeasurement measure_serve_bench(BenchWindows& windows, Clock& clock, std::span<const BenchRequest> requests,
                                          const ServeBenchOptions& o) {
  ServeBenchMeasurement m;
  BenchResult& r = m.result;
  r.simulated = o.simulated;
  r.base_url = o.server.base_url;
  r.model = o.server.model;
  r.request_file = o.request_file;
  r.batch_cap = o.batch_cap;
  r.rate_per_s = o.load.rate_per_s;
  r.seed = o.load.seed;
  std::unique_ptr<MetricsScraper> scraper;
  if (!o.metrics_url.empty()) {
    scraper = std::make_unique<MetricsScraper>(o.metrics_url, clock);
    scraper->start();
  }
  const std::string suffix = o.run_name.empty() ? "" : " " + o.run_name;
  const WindowId whole = windows.open("serve-bench" + suffix);
  const int64_t t0 = clock.now_ns();
  r.requests = run_load(requests, o.server, o.load, clock);
  r.bench_dur_s = static_cast<double>(clock.now_ns() - t0) * 1e-9;
  windows.close(whole);
  if (scraper) scraper->stop();

  for (const auto& t : r.requests)
    if (t.ok) r.succeeded.push_back(t);
  const auto window = find_steady_window(r.succeeded, o.batch_cap);
  std::optional<double> server_running;
  if (scraper) {
    const std::vector<MetricsSample> samples = scraper->samples();
    r.metrics_samples = samples.size();
    r.metrics_failures = scraper->failures();
    r.metrics_first_failure = scraper->first_failure();
    if (window.found) {
      r.metrics = mean_over(samples, window.t_begin_ns, window.t_end_ns);
      server_running = r.metrics->running;
    }
  }
  WindowEnergy energy;
  std::optional<WindowId> steady;
  if (window.found) {
    // The span is known only now: read its energy off the timeline as a window with past edges.
    steady = windows.add_window("steady" + suffix, window.t_begin_ns, window.t_end_ns);
    m.steady = windows.result(*steady);
    energy = summed_energy(*m.steady, r.energy_domains);
  } else {
    energy.issue = "no steady-state window";
  }
  r.steady = account_steady_state(r.succeeded, window, energy, server_running, o.min_steady_s);
  r.latency = summarize_latency(r.succeeded);
  r.tokens = reconcile_tokens(r.succeeded);
  m.whole = windows.result(whole);

  const double failed = static_cast<double>(r.requests.size() - r.succeeded.size());
  ServeBenchWholeRecord{static_cast<double>(r.requests.size()), failed}.encode(m.whole);
  m.whole.labels.insert(o.labels.begin(), o.labels.end());
  windows.annotate(whole, m.whole.labels, m.whole.counts);
  if (m.steady) {
    steady_record(r, o.batch_cap, server_running).encode(*m.steady);
    m.steady->labels.insert(o.labels.begin(), o.labels.end());
    windows.annotate(*steady, m.steady->labels, m.steady->counts);
  }
  return m;
}

}  // namespace wattlab::infer
