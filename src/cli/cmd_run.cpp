// wattlab run [options] -- CMD ARGS...: the energy of a command. Starts it without a shell,
// forwards SIGINT/SIGTERM, records it through wattlab::Recording (readings stored every 500 ms,
// windows as they close), prints the run's summary and exits with the command's status.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <ostream>

#include "cli.h"
#include "device_options.h"
#include "run_processes.h"
#include "record/marks_recorder.h"
#include "wattlab/record/recording.h"
#include "report/process_text.h"
#include "report/run_json.h"
#include "report/run_report.h"
#include "report/sensors_text.h"

extern char** environ;

namespace wattlab::cli {
namespace {

struct RunOptions {
  DeviceOptions dev;
  std::string db = "wattlab.db";
  std::string json;
  int interval_ms = 20;
  bool marks = false;
  ProcessOptions processes;
  std::vector<std::string> command;
};

std::atomic<pid_t> g_child{0};
void forward_signal(int sig) {
  const pid_t c = g_child.load();
  if (c > 0) kill(c, sig);
}

// The environment of the command: ours, plus the marks channel's variable when there is one.
std::vector<std::string> child_environment(const MarksRecorder* marks) {
  std::vector<std::string> env;
  const std::string key = std::string(marks::kFdEnv) + "=";
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, key.c_str(), key.size()) != 0) env.emplace_back(*e);
  if (marks) env.push_back(marks->env_entry());
  return env;
}

// Starts the command, forwards SIGINT/SIGTERM to it while it runs and returns its exit status:
// its code, 128 + the signal that ended it, or 127 when it cannot start.
int run_child(const std::vector<std::string>& command, MarksRecorder* marks, Io& io) {
  std::vector<std::string> env_strings = child_environment(marks);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  struct sigaction sa {}, old_int{}, old_term{};
  sa.sa_handler = forward_signal;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  const int spawn_rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
  if (marks) marks->close_write_end();
  int exit_status = 127;
  if (spawn_rc != 0) {
    io.err << fmt::format("wattlab run: cannot start '{}': {}\n", command[0], std::strerror(spawn_rc));
  } else {
    g_child.store(pid);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  g_child.store(0);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return exit_status;
}

// The command succeeded but the store lacks part of its run (EX_IOERR of sysexits.h).
constexpr int kExitStoreFailed = 74;

int run_command(const RunOptions& o, Io& io) {
  if (o.command.empty()) throw UsageError("run: no command given; usage: wattlab run [options] -- CMD [ARGS...]");
  if (o.db.empty()) throw UsageError("--db '': the run needs a database file");
  RecordingOptions ro;
  ro.devices = o.dev.backend();
  ro.db = o.db;
  ro.command = o.command;
  ro.meter.power_interval_ns = static_cast<int64_t>(o.interval_ms) * 1'000'000;
  ro.cpu_cost_tags = true;
  ro.on_note = [&io](std::string_view n) { io.err << "wattlab run: " << n << "\n"; };
  Recording rec(std::move(ro));
  io.err << "wattlab run: " << report::describe_backends(rec.opened());
  RunProcesses processes(rec, o.processes);  // GPUs that list their processes (NVML); none on the simulator
  if (!rec.start())
    io.err << "wattlab run: warning: some sensors have not answered within 10 s; the command starts anyway\n";
  // Marks: windows the command opens and closes through the pipe (docs/marks.md).
  std::unique_ptr<MarksRecorder> marks;
  if (o.marks) marks = std::make_unique<MarksRecorder>(rec);
  processes.start();

  const WindowId window = rec.open("run");
  const int exit_status = run_child(o.command, marks.get(), io);
  rec.close(window);
  processes.stop();
  bool store_failed = false;
  try {
    if (marks) marks->finish();
    rec.end(exit_status);
  } catch (const WattlabError& e) {
    // The command's status still wins; the summary comes from memory where the store lacks it.
    io.err << "wattlab run: " << e.what() << "\n";
    store_failed = true;
    rec.end(exit_status);
  }
  const RunRecord run = rec.summary();
  // The run window's GPU energy per process, where the GPUs listed processes (docs/per-process.md).
  const std::vector<GpuAttribution> split = processes.attribute(rec.result(window));
  for (const auto& n : processes.notes()) io.err << "wattlab run: per process: " << n << "\n";
  report::print_run(io.err, run, report::Format::text);
  report::print_process_split(io.err, split);
  if (!o.json.empty()) {
    std::ofstream f(o.json);
    if (split.empty()) {
      report::print_run(f, run, report::Format::json);
    } else {
      auto j = report::run_to_json(run);
      j["per_process"] = report::process_split_to_json(split);
      f << j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    }
    if (!f) io.err << "wattlab: could not write " << o.json << "\n";
  }
  if (!store_failed) {
    io.err << fmt::format("stored as run {} in {}\n", rec.run_id(), o.db);
    return exit_status;
  }
  io.err << fmt::format("run {} in {} is incomplete: the store failed (exit {} when the command succeeded)\n",
                        rec.run_id(), o.db, kExitStoreFailed);
  return exit_status == 0 ? kExitStoreFailed : exit_status;
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
  add_process_options(*sub, opts->processes);
  sub->add_option("command", opts->command, "the command and its arguments, after --")->required();
  sub->positionals_at_end();
  sub->callback([opts, &action] { action = [opts](Io& io) { return run_command(*opts, io); }; });
}

}  // namespace wattlab::cli
