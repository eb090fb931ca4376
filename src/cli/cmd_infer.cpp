// wattlab infer serve-bench: drive an OpenAI-compatible server with a request set, measure inside
// the meter, and account energy over the study's steady-state window (docs/serve-bench.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <ostream>

#include "cli.h"
#include "device_options.h"
#include "stop_signal.h"
#include "wattlab/core/error.h"
#include "wattlab/infer/serve_bench.h"
#include "wattlab/record/recording.h"
#include "wattlab/report/sensors_text.h"
#include "wattlab/report/serve_bench_text.h"
#include "wattlab/store/serve_bench_record.h"

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

int serve_bench(const ServeBenchArgs& o, Io& io) {
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
  const auto requests = infer::repeat_requests(infer::load_request_set(o.requests), o.repeat);

  RecordingOptions ro;
  ro.devices = o.dev.backend();
  ro.db = o.db;
  ro.command = {"wattlab", "infer", "serve-bench", "--requests", o.requests, "--url", o.server.base_url,
                "--model", o.server.model, "--batch-cap", std::to_string(o.batch_cap)};
  ro.meter.power_interval_ns = static_cast<int64_t>(o.interval_ms) * 1'000'000;
  ro.tags = user_tags;
  ServeBenchRunTags{o.server.model, o.task, o.batch_cap}.encode(ro.tags);
  ro.on_note = [&io](std::string_view n) { io.err << "wattlab infer serve-bench: " << n << "\n"; };
  Recording rec(std::move(ro));
  io.err << "wattlab infer serve-bench: " << report::describe_backends(rec.opened());
  if (!rec.start()) io.err << "wattlab infer serve-bench: warning: some sensors have not answered within 10 s\n";
  infer::ServeBenchMeasurement m;
  {
    // Ctrl-C or SIGTERM: the run ends with 128 + the signal and what was measured so far, then the
    // process ends by the signal.
    StopSignal stop([&rec, &io](int sig) { end_by_signal(rec, sig, io.err); });
    RecordingWindows windows(rec);
    infer::ServeBenchOptions bench{o.server, {o.rate, o.seed}, o.batch_cap, o.requests, o.metrics_url, rec.simulated()};
    m = infer::measure_serve_bench(windows, rec.clock(), requests, bench);
    rec.set_tag(kServeBenchRequestsFailedTag, std::to_string(m.result.requests.size() - m.result.succeeded.size()));
    rec.end(kExitOk);
  }
  infer::BenchResult& r = m.result;
  r.run_id = rec.run_id();

  report::print_serve_bench(io.out, r);
  io.out << fmt::format("stored as run {} in {}\n", rec.run_id(), o.db);
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
  auto o = std::make_shared<ServeBenchArgs>();
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
