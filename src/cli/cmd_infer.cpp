// wattlab infer serve-bench: drive an OpenAI-compatible server with a request file or a synthetic
// workload, in pilot-sized runs repeated --repeats times, measured inside the meter, and account
// energy over the study's steady-state window of each run (docs/serve-bench.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <optional>
#include <ostream>

#include "cli.h"
#include "device_options.h"
#include "infer_workload.h"
#include "stop_signal.h"
#include "wattlab/core/error.h"
#include "infer/series.h"
#include "wattlab/record/recording.h"
#include "report/sensors_text.h"
#include "report/serve_bench_text.h"
#include "store/serve_bench_record.h"

namespace wattlab::cli {
namespace {

// The benchmark's windows as windows of the run's recording: stored as their results become final.
class RecordingWindows final : public infer::BenchWindows {
 public:
  explicit RecordingWindows(Recording& rec) : rec_(rec) {}
  WindowId open(std::string_view name) override { return rec_.open(name); }
  void close(WindowId id) override { rec_.close(id); }
  WindowId add_window(std::string_view name, int64_t t_begin_ns, int64_t t_end_ns) override {
    return rec_.add_window(name, t_begin_ns, t_end_ns);
  }
  WindowResult result(WindowId id) override { return rec_.result(id); }
  void annotate(WindowId id, const std::map<std::string, std::string>& labels,
                const std::map<std::string, double>& counts) override {
    rec_.annotate(id, labels, counts);
  }

 private:
  Recording& rec_;
};

struct ServeBenchArgs {
  DeviceOptions dev;
  infer::ServerOptions server;
  std::string requests;
  WorkloadArgs workload;
  infer::SeriesPlan plan;
  std::optional<int64_t> requests_per_run;
  std::optional<double> expect_tok_s;
  int batch_cap = 0;
  double rate = 0;
  uint64_t seed = 1;
  std::string metrics_url;
  std::string task;
  std::vector<std::string> tags;
  std::string db = "wattlab.db";
  std::string json;
  int interval_ms = 20;
};

// Where each run's requests come from: the file cycled to n, or n synthetic requests drawn with the
// run's seed. `mean_output` is what sizes the first run.
infer::RequestSource request_source(const ServeBenchArgs& o, infer::SeriesDescription& d, std::string& task,
                                    double& mean_output) {
  if (o.workload.synthetic()) {
    if (!o.requests.empty()) throw UsageError("--requests and a synthetic workload (--workload, --output-mean) exclude each other");
    d.spec = build_workload(o.workload, task);
    mean_output = infer::capped_mean(d.spec->output);
    return [spec = *d.spec](std::size_t n, uint64_t seed) { return infer::synthetic_requests(spec, n, seed); };
  }
  if (o.requests.empty()) throw UsageError("give --requests FILE or a synthetic workload (--workload FILE or --output-mean N)");
  auto base = infer::load_request_set(o.requests);
  d.request_file = o.requests;
  d.plan.base_set_size = static_cast<int64_t>(base.size());
  double sum = 0;
  for (const auto& r : base) sum += r.max_tokens;
  mean_output = sum / static_cast<double>(base.size());  // an upper bound: a model may stop before max_tokens
  return [base = std::move(base)](std::size_t n, uint64_t) { return infer::cycle_requests(base, n); };
}

// The series' outcome as run tags, for whoever reads the store.
void tag_series(Recording& rec, const infer::SeriesResult& s) {
  std::size_t failed = 0;
  for (const auto& run : s.runs) failed += run.m.result.requests.size() - run.m.result.succeeded.size();
  rec.set_tag(kServeBenchRequestsFailedTag, std::to_string(failed));
  rec.set_tag("serve_bench.requests_per_run", std::to_string(s.requests_per_run));
  const auto& c = s.energy_per_token_j;
  rec.set_tag("serve_bench.repeats_stable", std::to_string(c.n));
  if (c.n > 0) rec.set_tag("serve_bench.energy_per_token_mean_j", fmt::format("{:.9g}", c.mean));
  if (c.has_interval()) {
    rec.set_tag("serve_bench.energy_per_token_ci95_low_j", fmt::format("{:.9g}", c.low));
    rec.set_tag("serve_bench.energy_per_token_ci95_high_j", fmt::format("{:.9g}", c.high));
    rec.set_tag("serve_bench.ci_method", fmt::format("Student t over {} stable repeats", c.n));
  }
  if (!s.failure.empty()) rec.set_tag("serve_bench.failure", s.failure);
}

int serve_bench(const ServeBenchArgs& o, Io& io) {
  if (o.batch_cap < 1) throw UsageError(fmt::format("--batch-cap {}: must be at least 1", o.batch_cap));
  if (o.server.model.empty()) throw UsageError("--model: the served model's name is required");
  if (o.requests_per_run && o.expect_tok_s) throw UsageError("--requests-per-run and --expect-tok-s exclude each other");
  std::map<std::string, std::string> user_tags;
  for (const auto& t : o.tags) {
    const auto eq = t.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError(fmt::format("--tag '{}': expected KEY=VALUE", t));
    user_tags[t.substr(0, eq)] = t.substr(eq + 1);
  }
  infer::split_url(o.server.base_url);  // usage errors before anything starts
  if (!o.metrics_url.empty()) infer::split_url(o.metrics_url);
  infer::SeriesDescription d;
  d.plan = o.plan;
  d.plan.fixed_requests = o.requests_per_run;
  d.plan.expect_tok_s = o.expect_tok_s;
  std::string task;
  double mean_output = 0;
  const auto source = request_source(o, d, task, mean_output);
  if (!o.task.empty()) task = o.task;
  if (task.empty()) task = "serve-bench";
  infer::ServerOptions server = o.server;
  if (d.spec) server.ignore_eos = true;  // the drawn max_tokens is the output length

  RecordingOptions ro;
  ro.devices = o.dev.backend();
  ro.db = o.db;
  ro.command = {"wattlab", "infer", "serve-bench"};
  if (!o.requests.empty()) ro.command.insert(ro.command.end(), {"--requests", o.requests});
  if (!o.workload.leaderboard.empty()) ro.command.insert(ro.command.end(), {"--workload", o.workload.leaderboard});
  ro.command.insert(ro.command.end(), {"--url", o.server.base_url, "--model", o.server.model, "--batch-cap",
                                       std::to_string(o.batch_cap)});
  ro.meter.power_interval_ns = static_cast<int64_t>(o.interval_ms) * 1'000'000;
  ro.tags = user_tags;
  ServeBenchRunTags{o.server.model, task, o.batch_cap}.encode(ro.tags);
  if (d.spec) ro.tags["serve_bench.workload"] = d.spec->source;
  ro.on_note = [&io](std::string_view n) { io.err << "wattlab infer serve-bench: " << n << "\n"; };
  Recording rec(std::move(ro));
  io.err << "wattlab infer serve-bench: " << report::describe_backends(rec.opened());
  if (!rec.start()) io.err << "wattlab infer serve-bench: warning: some sensors have not answered within 10 s\n";
  infer::SeriesResult s;
  {
    // Ctrl-C or SIGTERM: the run ends with 128 + the signal and what was measured so far, then the
    // process ends by the signal.
    StopSignal stop([&rec, &io](int sig) { end_by_signal(rec, sig, io.err); });
    RecordingWindows windows(rec);
    infer::ServeBenchOptions bench{server, {o.rate, o.seed}, o.batch_cap, o.requests, o.metrics_url, rec.simulated(),
                                   d.plan.min_steady_s};
    s = infer::measure_series(windows, rec.clock(), source, mean_output, bench, d.plan);
    tag_series(rec, s);
    rec.end(s.failure.empty() ? kExitOk : kExitFailure);
  }
  d.run_id = rec.run_id();
  report::print_serve_bench_series(io.out, s, d);
  io.out << fmt::format("stored as run {} in {}\n", rec.run_id(), o.db);
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    f << infer::series_to_json(s, d) << "\n";
    if (!f) {
      io.err << "wattlab: could not write " << o.json << "\n";
      return kExitFailure;
    }
  }
  return s.failure.empty() ? kExitOk : kExitFailure;
}

}  // namespace

void register_infer(CLI::App& app, Action& action) {
  auto* infer = app.add_subcommand("infer", "Inference energy: serving benchmarks (docs/serve-bench.md)");
  infer->require_subcommand(1);
  auto o = std::make_shared<ServeBenchArgs>();
  auto* sub = infer->add_subcommand(
      "serve-bench", "Drive an OpenAI-compatible server with a request set; energy per token over the steady state");
  add_device_options(*sub, o->dev);
  sub->add_option("--requests", o->requests, "request set, JSON lines (docs/serve-bench.md); cycled to each run's count");
  add_workload_options(*sub, o->workload);
  sub->add_option("--url", o->server.base_url, "server base URL; requests go to URL/chat/completions or URL/completions")
      ->capture_default_str();
  sub->add_option("--model", o->server.model, "model name sent in each request (also the run's 'model' tag)")->required();
  sub->add_option("--batch-cap", o->batch_cap, "the server's batch cap B (vLLM --max-num-seqs)")->required()->check(CLI::Range(1, 1 << 20));
  sub->add_option("--rate", o->rate, "Poisson arrivals at R requests/s; 0: all at once (the study)")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  sub->add_option("--seed", o->seed, "base seed of the synthetic requests and Poisson arrivals (run k uses seed + k)")
      ->capture_default_str();
  sub->add_option("--repeats", o->plan.repeats, "runs that count, each with the same request count; 95% t-interval over them")
      ->check(CLI::Range(1, 1000))->capture_default_str();
  sub->add_option("--min-steady-s", o->plan.min_steady_s, "size runs for a steady window this long; also the run filter's window rule (the study's 20 s)")
      ->check(CLI::Range(0.0, 1e6))->capture_default_str();
  sub->add_option("--margin", o->plan.margin, "size runs for margin x --min-steady-s")->check(CLI::Range(1.0, 100.0))
      ->capture_default_str();
  sub->add_option("--max-pilots", o->plan.max_pilots, "re-sized runs before giving up")->check(CLI::Range(0, 100))
      ->capture_default_str();
  sub->add_option("--max-requests-per-run", o->plan.max_requests, "a sizing that asks for more ends the series")
      ->check(CLI::Range(int64_t{2}, int64_t{10'000'000}))->capture_default_str();
  sub->add_option("--requests-per-run", o->requests_per_run, "send exactly N requests per run (no sizing, no pilots)")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  sub->add_option("--expect-tok-s", o->expect_tok_s, "size the first run from this output throughput instead of a pilot")
      ->check(CLI::Range(1e-3, 1e9));
  sub->add_option("--timeout-s", o->server.timeout_s, "per-request timeout in s")->check(CLI::Range(0.001, 1e6))->capture_default_str();
  sub->add_flag("--ignore-eos", o->server.ignore_eos, "ask the server (vLLM) to generate exactly max_tokens");
  sub->add_option("--api-key", o->server.api_key, "sent as 'Authorization: Bearer KEY'");
  sub->add_option("--metrics-url", o->metrics_url, "scrape this Prometheus endpoint once a second (e.g. http://127.0.0.1:8000/metrics)");
  sub->add_option("--task", o->task, "the run's 'task' tag (for wattlab diagnose); default the --workload file's task, else serve-bench");
  sub->add_option("--tag", o->tags, "run tag KEY=VALUE (gpu, precision, tp, ...), repeatable");
  sub->add_option("--db", o->db, "SQLite database the run is stored in")->capture_default_str();
  sub->add_option("--json", o->json, "also write the result as JSON (docs/serve-bench.md)");
  sub->add_option("--interval-ms", o->interval_ms, "power polling interval in ms")->check(CLI::Range(1, 10000))->capture_default_str();
  sub->callback([o, &action] { action = [o](Io& io) { return serve_bench(*o, io); }; });
}

}  // namespace wattlab::cli
