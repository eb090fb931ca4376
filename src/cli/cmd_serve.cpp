// wattlab serve: a Prometheus exporter. One sampler thread measures every domain; GET /metrics
// answers the text exposition (src/export) from a cache rebuilt at most every --cache-ms, so
// scrapers never hold the meter's lock for more than one snapshot at a time.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <ostream>

#include "cli.h"
#include "device_options.h"
#include "serve_processes.h"
#include "stop_signal.h"
#include "export/live.h"
#include "export/metrics_server.h"
#include "export/prometheus.h"
#include "record/host.h"
#include "wattlab/record/recording.h"
#include "report/sensors_text.h"

namespace wattlab::cli {
namespace {

constexpr const char* kTokenEnv = "WATTLAB_SERVE_TOKEN";

struct ServeOptions {
  DeviceOptions dev;
  std::string listen = "127.0.0.1:9464";
  std::string token_file;
  bool token_file_given = false;  // --token-file named, even as ''
  std::string host_label;
  int interval_ms = 20;
  double duration_s = 0;
  int http_threads = 256;
  double http_timeout_s = 5;
  int cache_ms = 10;
  ProcessOptions processes{.interval_ms = 1000};
};

struct ListenAddress {
  std::string address;
  int port = 0;
};

// "127.0.0.1:9464", "0.0.0.0:9464", "[::1]:9464", "localhost:9464".
ListenAddress parse_listen(const std::string& s) {
  const auto bad = [&](const std::string& why) {
    return UsageError("--listen '" + s + "': " + why + "; expected ADDR:PORT, e.g. 127.0.0.1:9464 or [::1]:9464");
  };
  ListenAddress l;
  std::string port;
  if (!s.empty() && s[0] == '[') {
    const auto close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':') throw bad("unclosed [IPv6]");
    l.address = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos) throw bad("no port");
    l.address = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  if (l.address.empty()) throw bad("no address");
  if (port.empty() || port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5) throw bad("port is not a number");
  l.port = std::stoi(port);
  if (l.port > 65535) throw bad("port above 65535");
  return l;
}

// A token as read, trimmed of surrounding white space; `source` names where it came from. An empty
// token would let anyone in, and a control character cannot travel in a header: both are errors.
std::string checked_token(std::string token, const std::string& source) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!token.empty() && space(token.back())) token.pop_back();
  std::size_t lead = 0;
  while (lead < token.size() && space(token[lead])) ++lead;
  token.erase(0, lead);
  if (token.empty())
    throw UsageError(source + " is empty: an empty bearer token would let anyone in; give a token, or none to serve without one");
  for (const char c : token)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      throw UsageError(source + " contains a control character, which no client can send in an Authorization header");
  return token;
}

// The bearer token: --token-file's first line, else $WATTLAB_SERVE_TOKEN; none when neither is given.
std::optional<std::string> read_token(const ServeOptions& o) {
  if (o.token_file_given) {
    if (o.token_file.empty()) throw UsageError("--token-file '': give the path of the file whose first line is the token");
    std::ifstream f(o.token_file);
    if (!f) throw UsageError("--token-file '" + o.token_file + "' cannot be read");
    std::string line;
    std::getline(f, line);
    return checked_token(line, "--token-file '" + o.token_file + "': the first line (the token)");
  }
  if (const char* e = std::getenv(kTokenEnv); e != nullptr)
    return checked_token(e, std::string("$") + kTokenEnv + " (set, so a token is asked for)");
  return std::nullopt;
}

int serve(const ServeOptions& o, Io& io) {
  const ListenAddress where = parse_listen(o.listen);
  const std::optional<std::string> token = read_token(o);
  RecordingOptions ro;  // measured, not stored
  ro.devices = o.dev.backend();
  ro.meter.power_interval_ns = static_cast<int64_t>(o.interval_ms) * 1'000'000;
  Recording rec(std::move(ro));
  io.err << "wattlab serve: " << report::describe_backends(rec.opened());
  if (rec.domain_count() == 0) return kExitFailure;
  if (!is_loopback_address(where.address))
    io.err << fmt::format(
        "wattlab serve: warning: listening on {}, which other machines can reach; {}\n", where.address,
        !token ? "anyone there can read the metrics (give --token-file FILE or $WATTLAB_SERVE_TOKEN)"
                      : "requests need the bearer token");

  StopSignal stop;
  ServeProcesses processes(rec, o.processes);  // GPUs that list their processes (NVML); none on the simulator
  if (!rec.start()) io.err << "wattlab serve: warning: some sensors have not answered within 10 s; serving anyway\n";
  LiveMeter live(rec.meter());
  processes.start();
  ExpositionInfo info;
  info.host = o.host_label.empty() ? host_name() : o.host_label;
  info.device_selection = o.dev.device;

  MetricsServerOptions sopt;
  sopt.address = where.address;
  sopt.port = where.port;
  sopt.token = token;
  sopt.max_threads = static_cast<std::size_t>(o.http_threads);
  sopt.timeout_ms = static_cast<int64_t>(o.http_timeout_s * 1000);
  sopt.min_age_ns = static_cast<int64_t>(o.cache_ms) * 1'000'000;
  MetricsServer server(
      sopt,
      [&](const ServerCounters& c) {
        ExpositionInfo i = info;
        i.http = c;
        return format_prometheus(live.domains(), live.sample(), i) + processes.format(i.host);
      },
      MonotonicClock::instance());

  if (auto st = server.start(); !st) {
    io.err << "wattlab serve: " << st.error().message() << "\n";
    processes.stop();
    rec.end(kExitFailure);
    return kExitFailure;
  }
  const bool v6 = where.address.find(':') != std::string::npos;
  io.err << fmt::format("wattlab serve: listening on http://{}{}{}:{}/metrics (host label \"{}\"{})\n", v6 ? "[" : "",
                        where.address, v6 ? "]" : "", server.port(), info.host,
                        token ? ", bearer token required" : "");
  io.err.flush();
  const auto deadline = o.duration_s > 0
                            ? std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                     std::chrono::duration<double>(o.duration_s))
                            : std::chrono::steady_clock::time_point::max();
  stop.sleep_until(deadline);
  server.stop();
  processes.stop();
  rec.end(kExitOk);
  const ServerCounters c = server.counters();
  io.err << fmt::format(
      "wattlab serve: stopped after {} scrape(s), {} unauthorized request(s), {} refused request(s) (a body, a "
      "method other than GET/HEAD, a head over 16 KiB), {} connection(s) closed at the timeout\n",
      c.scrapes, c.unauthorized, c.refused, c.timed_out);
  return kExitOk;
}

}  // namespace

void register_serve(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ServeOptions>();
  auto* sub = app.add_subcommand("serve", "Prometheus exporter: per-domain energy, power and telemetry on /metrics");
  add_device_options(*sub, opts->dev);
  sub->add_option("--listen", opts->listen, "ADDR:PORT to listen on (another address than loopback only when asked)")
      ->capture_default_str();
  auto* token_file = sub->add_option(
      "--token-file", opts->token_file,
      std::string("file whose first line is the bearer token requests must send (else $") + kTokenEnv + "; an empty token is an error)");
  sub->add_option("--host-label", opts->host_label, "value of the host label (default: this machine's hostname)");
  sub->add_option("--interval-ms", opts->interval_ms, "power polling interval in ms")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  sub->add_option("--duration-s", opts->duration_s, "stop after this many seconds (default: until SIGINT/SIGTERM)")
      ->check(CLI::Range(0.0, 1e9));
  sub->add_option("--http-threads", opts->http_threads,
                  "most connection threads (started as needed; each keep-alive scraper holds one)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  sub->add_option("--http-timeout-s", opts->http_timeout_s,
                  "a connection must send its request head within this of connecting or of its previous answer, "
                  "and take each answer within it; else it is closed")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  sub->add_option("--cache-ms", opts->cache_ms, "serve an exposition younger than this without a new snapshot")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  add_process_options(*sub, opts->processes, true);
  sub->callback([opts, token_file, &action] {
    opts->token_file_given = token_file->count() > 0;
    action = [opts](Io& io) { return serve(*opts, io); };
  });
}

}  // namespace wattlab::cli
