// wattlab infer serve-bench: drive an OpenAI-compatible server with a request set, measure inside
// the meter, and account energy over the study's steady-state window (docs/serve-bench.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <ostream>
#include <regex>
#include <thread>

#include "cli.h"
#include "device_options.h"
#include "store_flusher.h"
#include "wattlab/core/error.h"
#include "wattlab/infer/bench_result.h"
#include "wattlab/infer/client.h"
#include "wattlab/infer/request_set.h"
#include "wattlab/meter/meter.h"
#include "wattlab/store/store.h"

namespace wattlab::cli {
namespace {

struct ServeBenchOptions {
  DeviceOptions dev;
  infer::ServerOptions server;
  std::string requests;
  int batch_cap = 0;
  double rate = 0;
  uint64_t seed = 1;
  int repeat = 1;
  std::string metrics_url;
  std::string task = "serve-bench";
  std::vector<std::string> tags;
  std::string db = "wattlab.db";
  std::string json;
  int interval_ms = 20;
};

std::string num(double v) { return fmt::format("{:.6g}", v); }
std::string ms(const infer::Quantile& q) {
  if (q.n == 0) return "n/a (no samples)";
  return fmt::format("{} ms (95% CI {}..{} ms, n={})", num(q.value * 1e3), num(q.lo * 1e3), num(q.hi * 1e3), q.n);
}

// Sum of the GPU domains' energy (all domains when there is no GPU), as the study sums GPUs.
infer::WindowEnergy sum_energy(const WindowResult& w, std::string& domains) {
  static const std::regex gpu(R"(gpu:\d+)");
  bool any_gpu = false;
  for (const auto& d : w.domains) any_gpu |= std::regex_match(d.domain_id, gpu);
  infer::WindowEnergy e;
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

void print_summary(std::ostream& out, const infer::BenchResult& r) {
  const auto& s = r.steady;
  if (r.simulated) out << "SIMULATED: energy numbers come from wattlab's simulated GPU, not hardware\n";
  out << fmt::format("serve-bench: {} requests to {} (model {}), batch cap {}, {}\n", r.requests.size(), r.base_url,
                     r.model, r.batch_cap,
                     r.rate_per_s > 0 ? fmt::format("Poisson arrivals at {} req/s (seed {})", num(r.rate_per_s), r.seed)
                                      : std::string("all sent at t = 0"));
  const std::size_t failed = r.requests.size() - r.succeeded.size();
  out << fmt::format("  requests: {} succeeded, {} failed (excluded from every number below); benchmark {} s\n",
                     r.succeeded.size(), failed, num(r.bench_dur_s));
  int shown = 0;
  for (const auto& t : r.requests)
    if (!t.ok && shown++ < 10) out << fmt::format("    failed #{} '{}': {}\n", t.index, t.id, t.error);
  if (failed > 10) out << fmt::format("    ... and {} more (see --json)\n", failed - 10);
  const auto& tk = r.tokens;
  out << fmt::format("  output tokens: {} stream chunks; server usage {} tokens over {} requests that reported it "
                     "(chunks for those: {}); {} without usage; {} requests differ\n",
                     tk.chunk_tokens, tk.usage_tokens, tk.requests_with_usage, tk.chunk_tokens_with_usage,
                     tk.requests_without_usage, tk.differences.size());
  for (std::size_t i = 0; i < tk.differences.size() && i < 5; ++i)
    out << fmt::format("    #{} '{}': {} chunks vs usage {}\n", tk.differences[i].index, tk.differences[i].id,
                       tk.differences[i].chunks, tk.differences[i].usage);
  const auto& l = r.latency;
  out << "  latency (exact sample statistics; CI = 95% order-statistic interval):\n";
  out << "    TTFT median " << ms(l.ttft_median_s) << "; p90 " << ms(l.ttft_p90_s) << "\n";
  out << "    ITL  median " << ms(l.itl_median_s) << "; p90 " << ms(l.itl_p90_s) << "\n";
  out << "         p95 " << ms(l.itl_p95_s) << "; p99 " << ms(l.itl_p99_s) << "\n";
  out << "    end-to-end median " << ms(l.e2e_median_s) << "\n";
  if (!s.window.found) {
    out << "  steady state: none (" << s.window.reason << ")\n";
  } else {
    out << fmt::format("  steady state (B-th first token to (N-B-1)-th finish, N={}, B={}): {} s (edges are client-side "
                       "arrival times of stream chunks; the lag behind the server is not included)\n",
                       s.window.n_requests, s.window.batch_cap, num(s.window.dur_s()));
    out << fmt::format("    tokens in window {} (exact count), requests active {}, finished {}; throughput {} tok/s\n",
                       s.tokens, s.requests_active, s.requests_finished, num(s.throughput_tok_s));
    out << fmt::format("    mean running requests: client {}{}\n", num(s.avg_running_client),
                       s.avg_running_server ? fmt::format(", server {}", num(*s.avg_running_server)) : "");
    if (s.energy.available) {
      const double d = s.window.dur_s();
      out << fmt::format("    energy ({}): {} J ± {} J (95%) ± {} J gain{}\n", r.energy_domains, num(s.energy.energy_j),
                         num(s.energy.uncertainty_j), num(s.energy.systematic_j),
                         s.energy.issue.empty() ? "" : " [" + s.energy.issue + "]");
      out << fmt::format("    energy per output token: {} J ± {} J (95%) ± {} J gain\n", num(s.energy_per_token_j),
                         num(s.energy_per_token_uncertainty_j), num(s.energy_per_token_systematic_j));
      out << fmt::format("    mean power: {} W ± {} W (95%) ± {} W gain\n", num(s.avg_power_w),
                         num(s.energy.uncertainty_j / d), num(s.energy.systematic_j / d));
      double mean_app = 0, mean_tok = 0;
      for (const auto& p : s.per_request) mean_app += p.apportioned_j, mean_tok += p.token_share_j;
      if (!s.per_request.empty()) {
        const double n = static_cast<double>(s.per_request.size());
        const double rel = s.energy.energy_j > 0 ? s.energy.uncertainty_j / s.energy.energy_j : 0;
        out << fmt::format("    energy per request in the window ({} requests; ± {}% (95%) as the window's energy):\n",
                           s.per_request.size(), num(rel * 100));
        out << fmt::format("      apportioned by active time: mean {} J; by token share: mean {} J\n", num(mean_app / n),
                           num(mean_tok / n));
      }
    } else {
      out << "    energy: not available (" << s.energy.issue << ")\n";
    }
    if (r.metrics)
      out << fmt::format("    server metrics over the window ({} samples): running {}, waiting {}, KV-cache use {}\n",
                         r.metrics->samples, r.metrics->running ? num(*r.metrics->running) : "n/a",
                         r.metrics->waiting ? num(*r.metrics->waiting) : "n/a",
                         r.metrics->kv_cache_usage ? num(*r.metrics->kv_cache_usage) : "n/a");
  }
  if (r.metrics_failures) out << fmt::format("  metrics scrape: {} failures (first: {})\n", r.metrics_failures, r.metrics_first_failure);
  const auto& st = s.stability;
  out << fmt::format("  stability (study's run filter): {}\n", st.stable() ? "STABLE" : "UNSTABLE: the study would drop this run");
  for (const auto& f : st.flags) out << "    FLAG: " << f << "\n";
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

int serve_bench(const ServeBenchOptions& o, Io& io) {
  if (o.batch_cap < 1) throw UsageError(fmt::format("--batch-cap {}: must be at least 1", o.batch_cap));
  if (o.server.model.empty()) throw UsageError("--model: the served model's name is required");
  std::map<std::string, std::string> user_tags;
  for (const auto& t : o.tags) {
    const auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError(fmt::format("--tag '{}': expected KEY=VALUE", t));
    user_tags[t.substr(0, eq)] = t.substr(eq + 1);
  }
  infer::split_url(o.server.base_url);  // usage errors before anything starts
  if (!o.metrics_url.empty()) infer::split_url(o.metrics_url);
  const auto base = infer::load_request_set(o.requests);
  std::vector<infer::BenchRequest> requests;
  for (int k = 0; k < o.repeat; ++k)
    for (auto r : base) {
      if (o.repeat > 1) r.id += fmt::format(" #{}", k + 1);
      requests.push_back(std::move(r));
    }

  OpenedSensors opened = open_sensors(o.dev.backend());
  io.err << "wattlab infer serve-bench: " << describe(opened);
  auto store = Store::open(o.db);
  if (!store) {
    io.err << "wattlab: " << store.error().message() << "\n";
    return kExitFailure;
  }
  auto& clock = MonotonicClock::instance();
  RunInfo info;
  info.command = {"wattlab", "infer", "serve-bench", "--requests", o.requests, "--url", o.server.base_url,
                  "--model", o.server.model, "--batch-cap", std::to_string(o.batch_cap)};
  info.host = hostname();
  info.start_utc = utc_iso8601(std::chrono::system_clock::now());
  info.start_t_ns = clock.now_ns();
  info.simulated = opened.simulated();
  info.device_selection = o.dev.device;
  for (const auto& s : opened.sensors) info.devices.push_back({s->backend(), s->properties()});
  info.tags = user_tags;
  info.tags.emplace("model", o.server.model);
  info.tags.emplace("task", o.task);
  info.tags["batch"] = std::to_string(o.batch_cap);
  info.tags["workload"] = "llm";
  auto run_id = store->begin_run(info);
  if (!run_id) {
    io.err << "wattlab: " << run_id.error().message() << "\n";
    return kExitFailure;
  }
  MeterOptions mopt;
  mopt.power_interval_ns = static_cast<int64_t>(o.interval_ms) * 1'000'000;
  Meter meter(std::move(opened.sensors), clock, mopt);
  store->add_domains(*run_id, meter.domains());
  meter.start();
  if (!meter.wait_first_reads(std::chrono::seconds(10)))
    io.err << "wattlab infer serve-bench: warning: some sensors have not answered within 10 s\n";
  StoreFlusher flusher(meter, *store, *run_id);

  infer::BenchResult r;
  r.simulated = info.simulated;
  r.base_url = o.server.base_url;
  r.model = o.server.model;
  r.request_file = o.requests;
  r.batch_cap = o.batch_cap;
  r.rate_per_s = o.rate;
  r.seed = o.seed;
  std::unique_ptr<infer::MetricsScraper> scraper;
  if (!o.metrics_url.empty()) {
    scraper = std::make_unique<infer::MetricsScraper>(o.metrics_url, clock);
    scraper->start();
  }
  const WindowId whole = meter.open("serve-bench");
  const int64_t t0 = clock.now_ns();
  r.requests = infer::run_load(requests, o.server, {o.rate, o.seed}, clock);
  r.bench_dur_s = static_cast<double>(clock.now_ns() - t0) * 1e-9;
  meter.close(whole);
  if (scraper) scraper->stop();

  for (const auto& t : r.requests)
    if (t.ok) r.succeeded.push_back(t);
  const auto window = infer::find_steady_window(r.succeeded, o.batch_cap);
  std::optional<double> server_running;
  std::vector<infer::MetricsSample> samples;
  if (scraper) {
    samples = scraper->samples();
    r.metrics_samples = samples.size();
    r.metrics_failures = scraper->failures();
    r.metrics_first_failure = scraper->first_failure();
    if (window.found) {
      r.metrics = infer::mean_over(samples, window.t_begin_ns, window.t_end_ns);
      server_running = r.metrics->running;
    }
  }
  infer::WindowEnergy energy;
  std::optional<WindowResult> steady_result;
  if (window.found) {
    // The span is known only now: read its energy off the timeline as a window with past edges.
    const WindowId id = meter.add_window("steady", window.t_begin_ns, window.t_end_ns);
    steady_result = meter.wait_result(id, std::chrono::seconds(5));
    energy = sum_energy(*steady_result, r.energy_domains);
  } else {
    energy.issue = "no steady-state window";
  }
  r.steady = infer::account_steady_state(r.succeeded, window, energy, server_running);
  r.latency = infer::summarize_latency(r.succeeded);
  r.tokens = infer::reconcile_tokens(r.succeeded);
  WindowResult whole_result = meter.wait_result(whole, std::chrono::seconds(5));
  meter.stop();
  flusher.finish();
  store->append_events(*run_id, meter.events());

  whole_result.labels["phase"] = "whole";  // diagnose uses steady windows only
  whole_result.counts["requests_sent"] = static_cast<double>(r.requests.size());
  whole_result.counts["requests_failed"] = static_cast<double>(r.requests.size() - r.succeeded.size());
  store->add_window(*run_id, whole_result);
  if (steady_result) {
    auto& w = *steady_result;
    const auto& s = r.steady;
    w.counts["tokens"] = static_cast<double>(s.tokens);
    w.counts["requests"] = static_cast<double>(s.requests_finished);
    w.labels["phase"] = "steady";
    w.labels["batch"] = std::to_string(o.batch_cap);
    w.labels["avg_batch_size"] = num(server_running.value_or(s.avg_running_client));
    const auto& l = r.latency;
    if (l.itl_count > 0) {
      w.labels["median_itl_ms"] = num(l.itl_median_s.value * 1e3);
      w.labels["p90_itl_ms"] = num(l.itl_p90_s.value * 1e3);
      w.labels["p95_itl_ms"] = num(l.itl_p95_s.value * 1e3);
      w.labels["p99_itl_ms"] = num(l.itl_p99_s.value * 1e3);
    }
    if (r.metrics && r.metrics->kv_cache_usage) w.labels["kv_cache_usage"] = num(*r.metrics->kv_cache_usage);
    w.labels["serve_bench.stable"] = s.stability.stable() ? "true" : "false";
    std::string flags;
    for (const auto& f : s.stability.flags) flags += (flags.empty() ? "" : " | ") + f;
    if (!flags.empty()) w.labels["serve_bench.flags"] = flags;
    store->add_window(*run_id, w);
  }
  store->set_run_tag(*run_id, "serve_bench.requests_failed", std::to_string(r.requests.size() - r.succeeded.size()));
  store->end_run(*run_id, clock.now_ns(), 0);
  r.run_id = *run_id;

  print_summary(io.out, r);
  io.out << fmt::format("stored as run {} in {}\n", *run_id, o.db);
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << infer::bench_to_json(r) << "\n";
    if (!f) {
      io.err << "wattlab: could not write " << o.json << "\n";
      return kExitFailure;
    }
  }
  return kExitOk;
}

}  // namespace

void register_infer(CLI::App& app, Action& action) {
  auto* infer = app.add_subcommand("infer", "Inference energy: serving benchmarks (docs/serve-bench.md)");
  infer->require_subcommand(1);
  auto o = std::make_shared<ServeBenchOptions>();
  auto* sub = infer->add_subcommand(
      "serve-bench", "Drive an OpenAI-compatible server with a request set; energy per token over the steady state");
  add_device_options(*sub, o->dev);
  sub->add_option("--requests", o->requests, "request set, JSON lines (docs/serve-bench.md)")->required();
  sub->add_option("--url", o->server.base_url, "server base URL; requests go to URL/chat/completions or URL/completions")
      ->capture_default_str();
  sub->add_option("--model", o->server.model, "model name sent in each request (also the run's 'model' tag)")->required();
  sub->add_option("--batch-cap", o->batch_cap, "the server's batch cap B (vLLM --max-num-seqs)")->required()->check(CLI::Range(1, 1 << 20));
  sub->add_option("--rate", o->rate, "Poisson arrivals at R requests/s; 0: all at once (the study)")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the Poisson arrivals")->capture_default_str();
  sub->add_option("--repeat", o->repeat, "send the request set K times (the study repeats sets for large B)")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  sub->add_option("--timeout-s", o->server.timeout_s, "per-request timeout in s")->check(CLI::Range(0.001, 1e6))->capture_default_str();
  sub->add_flag("--ignore-eos", o->server.ignore_eos, "ask the server (vLLM) to generate exactly max_tokens");
  sub->add_option("--api-key", o->server.api_key, "sent as 'Authorization: Bearer KEY'");
  sub->add_option("--metrics-url", o->metrics_url, "scrape this Prometheus endpoint once a second (e.g. http://127.0.0.1:8000/metrics)");
  sub->add_option("--task", o->task, "the run's 'task' tag (for wattlab diagnose)")->capture_default_str();
  sub->add_option("--tag", o->tags, "run tag KEY=VALUE (gpu, precision, tp, ...), repeatable");
  sub->add_option("--db", o->db, "SQLite database the run is stored in")->capture_default_str();
  sub->add_option("--json", o->json, "also write the result as JSON (docs/serve-bench.md)");
  sub->add_option("--interval-ms", o->interval_ms, "power polling interval in ms")->check(CLI::Range(1, 10000))->capture_default_str();
  sub->callback([o, &action] { action = [o](Io& io) { return serve_bench(*o, io); }; });
}

}  // namespace wattlab::cli
