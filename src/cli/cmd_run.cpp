// wattlab run [options] -- CMD ARGS...: the energy of a command. Starts it without a shell,
// forwards SIGINT/SIGTERM, stores readings at least once a second, exits with its status.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <thread>

#include "cli.h"
#include "device_options.h"
#include "run_summary.h"
#include "store_flusher.h"
#include "wattlab/meter/marks.h"
#include "wattlab/meter/meter.h"
#include "wattlab/store/run_json.h"
#include "wattlab/store/store.h"

extern char** environ;

namespace wattlab::cli {
namespace {

struct RunOptions {
  DeviceOptions dev;
  std::string db = "wattlab.db";
  std::string json;
  int interval_ms = 20;
  bool marks = false;
  std::vector<std::string> command;
};

std::atomic<pid_t> g_child{0};
void forward_signal(int sig) {
  const pid_t c = g_child.load();
  if (c > 0) kill(c, sig);
}

// The environment of the command: ours, plus the marks channel's variable when there is one.
std::vector<std::string> child_environment(const marks::MarkChannel* channel) {
  std::vector<std::string> env;
  const std::string key = std::string(marks::kFdEnv) + "=";
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, key.c_str(), key.size()) != 0) env.emplace_back(*e);
  if (channel) env.push_back(channel->env_entry());
  return env;
}

// CPU time of this whole process (every wattlab thread; the command is a child, not counted), ns.
int64_t process_cpu_ns() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return (static_cast<int64_t>(ru.ru_utime.tv_sec) + ru.ru_stime.tv_sec) * 1'000'000'000 +
         (static_cast<int64_t>(ru.ru_utime.tv_usec) + ru.ru_stime.tv_usec) * 1'000;
}

// What measuring cost: the sampler thread's and the whole wattlab process's CPU time over the
// span the sampler ran, as run tags (docs/json-output.md, "Run tags written by wattlab run").
std::map<std::string, std::string> cpu_cost_tags(const SamplerStats& sampler, int64_t process_cpu_ns, int64_t span_ns) {
  const double span_s = static_cast<double>(span_ns) * 1e-9;
  auto pct = [&](int64_t cpu_ns) { return span_ns > 0 ? 100.0 * static_cast<double>(cpu_ns) / static_cast<double>(span_ns) : 0.0; };
  return {{"wattlab.sampler_cpu_s", fmt::format("{:.6f}", static_cast<double>(sampler.cpu_ns) * 1e-9)},
          {"wattlab.sampler_cpu_pct", fmt::format("{:.4f}", pct(sampler.cpu_ns))},
          {"wattlab.sampler_read_pct", fmt::format("{:.4f}", pct(sampler.read_ns))},
          {"wattlab.sampler_rest_pct", fmt::format("{:.4f}", 100.0 * sampler.rest_cpu_share)},
          {"wattlab.sampler_read_budget_pct", fmt::format("{:.4f}", 100.0 * sampler.read_cpu_share)},
          {"wattlab.process_cpu_s", fmt::format("{:.6f}", static_cast<double>(process_cpu_ns) * 1e-9)},
          {"wattlab.process_cpu_pct", fmt::format("{:.4f}", pct(process_cpu_ns))},
          {"wattlab.sampler_span_s", fmt::format("{:.6f}", span_s)}};
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

int run_command(const RunOptions& o, Io& io) {
  if (o.command.empty()) throw UsageError("run: no command given; usage: wattlab run [options] -- CMD [ARGS...]");
  OpenedSensors opened = open_sensors(o.dev.backend());
  io.err << "wattlab run: " << describe(opened);
  const bool simulated = opened.simulated();
  auto store = Store::open(o.db);
  if (!store) {
    io.err << "wattlab: " << store.error().message() << "\n";
    return kExitFailure;
  }
  RunInfo info;
  info.command = o.command;
  info.host = hostname();
  info.start_utc = utc_iso8601(std::chrono::system_clock::now());
  info.start_t_ns = MonotonicClock::instance().now_ns();
  info.simulated = simulated;
  info.device_selection = o.dev.device;
  for (const auto& s : opened.sensors) info.devices.push_back({s->backend(), s->properties()});
  auto run_id = store->begin_run(info);
  if (!run_id) {
    io.err << "wattlab: " << run_id.error().message() << "\n";
    return kExitFailure;
  }
  MeterOptions mopt;
  mopt.power_interval_ns = static_cast<int64_t>(o.interval_ms) * 1'000'000;
  Meter meter(std::move(opened.sensors), MonotonicClock::instance(), mopt);
  if (auto st = store->add_domains(*run_id, meter.domains()); !st) io.err << "wattlab: " << st.error().message() << "\n";
  // Marks: windows the command opens and closes through the pipe (docs/marks.md).
  std::mutex marks_mu;
  marks::MarkCollector collector(info.start_t_ns);
  std::vector<std::pair<WindowId, marks::MarkedWindow>> marked;
  std::map<std::string, std::string> stored_tags;
  auto add_marked = [&](std::vector<marks::MarkedWindow> ws) {
    for (auto& w : ws) marked.emplace_back(meter.add_window(w.name, w.t_begin_ns, w.t_end_ns), std::move(w));
  };
  std::unique_ptr<marks::MarkChannel> channel;  // declared last: its reader thread stops first
  if (o.marks) {
    auto ch = marks::MarkChannel::create();
    if (!ch) {
      io.err << "wattlab: " << ch.error().message() << "\n";
      return kExitFailure;
    }
    channel = std::move(*ch);
    channel->start(MonotonicClock::instance(), [&](std::string_view line, int64_t t_ns) {
      std::lock_guard lk(marks_mu);
      add_marked(collector.feed(line, t_ns));
      // Run tags reach the store as they arrive, so a killed run keeps its configuration.
      for (const auto& [k, v] : collector.report().run_tags) {
        auto& old = stored_tags[k];
        if (old != v && store->set_run_tag(*run_id, k, v)) old = v;
      }
    });
  }
  const int64_t cpu0_ns = process_cpu_ns();
  const int64_t span0_ns = MonotonicClock::instance().now_ns();
  meter.start();
  // Every sensor read once before the command starts, so the window's begin edge has a reading
  // before it (a counter without power readings cannot be extended backwards).
  if (!meter.wait_first_reads(std::chrono::seconds(10)))
    io.err << "wattlab run: warning: some sensors have not answered within 10 s; the command starts anyway\n";

  // Readings reach the database every 500 ms, so a killed run keeps what it measured.
  StoreFlusher flusher(meter, *store, *run_id);

  std::vector<std::string> env_strings = child_environment(channel.get());
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  const WindowId window = meter.open("run");
  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  struct sigaction sa {}, old_int{}, old_term{};
  sa.sa_handler = forward_signal;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  const int spawn_rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
  if (channel) channel->close_write_end();
  int exit_status = 127;
  if (spawn_rc != 0) {
    io.err << fmt::format("wattlab run: cannot start '{}': {}\n", o.command[0], std::strerror(spawn_rc));
  } else {
    g_child.store(pid);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  g_child.store(0);
  meter.close(window);
  if (channel) {
    channel->stop();
    std::lock_guard lk(marks_mu);
    add_marked(collector.finish(MonotonicClock::instance().now_ns()));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  const WindowResult result = meter.wait_result(window, std::chrono::seconds(5));
  std::vector<WindowResult> marked_results;
  for (auto& [id, w] : marked) {
    WindowResult r = meter.wait_result(id, std::chrono::seconds(5));
    r.counts = w.counts;
    r.labels = w.labels;
    marked_results.push_back(std::move(r));
  }
  meter.stop();
  const int64_t span_ns = MonotonicClock::instance().now_ns() - span0_ns;
  flusher.finish();
  const auto cost_tags = cpu_cost_tags(meter.snapshot().sampler, process_cpu_ns() - cpu0_ns, span_ns);
  const auto events = meter.events();
  store->append_events(*run_id, events);
  store->add_window(*run_id, result);
  for (const auto& r : marked_results) store->add_window(*run_id, r);
  if (o.marks)
    for (const auto& [k, v] : collector.report().as_run_tags()) store->set_run_tag(*run_id, k, v);
  for (const auto& [k, v] : cost_tags) store->set_run_tag(*run_id, k, v);
  store->end_run(*run_id, MonotonicClock::instance().now_ns(), exit_status);
  auto rec = store->load_run(*run_id);
  if (rec) {
    print_run_summary(io.err, *rec);
    if (!o.json.empty()) {
      std::ofstream f(o.json);
      f << run_to_json_string(*rec) << "\n";
      if (!f) io.err << "wattlab: could not write " << o.json << "\n";
    }
  } else {
    io.err << "wattlab: " << rec.error().message() << "\n";
  }
  io.err << fmt::format("stored as run {} in {}\n", *run_id, o.db);
  return exit_status;
}

}  // namespace

void register_run(CLI::App& app, Action& action) {
  auto opts = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand("run", "Measure the energy of a command: wattlab run [options] -- CMD [ARGS...]");
  add_device_options(*sub, opts->dev);
  sub->add_option("--db", opts->db, "SQLite database the run is stored in")->capture_default_str();
  sub->add_option("--json", opts->json, "also write the run as JSON (docs/json-output.md)");
  sub->add_option("--interval-ms", opts->interval_ms, "power polling interval in ms")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  sub->add_flag("--marks", opts->marks,
                "let the command open/close windows and report counts through the pipe in $WATTLAB_MARKS_FD "
                "(docs/marks.md)");
  sub->add_option("command", opts->command, "the command and its arguments, after --")->required();
  sub->positionals_at_end();
  sub->callback([opts, &action] { action = [opts](Io& io) { return run_command(*opts, io); }; });
}

}  // namespace wattlab::cli
