// wattlab monitor: live per-domain power, energy and telemetry. Redraws in place on a terminal,
// plain lines otherwise; --format json (or --json, --jsonl) streams one JSON object per update
// (docs/export.md). Both renderers live in src/report (monitor_text.h, monitor_json.h).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <ostream>

#include "cli.h"
#include "device_options.h"
#include "format_option.h"
#include "stop_signal.h"
#include "export/live.h"
#include "export/monitor.h"
#include "wattlab/record/recording.h"
#include "report/monitor_json.h"
#include "report/monitor_text.h"
#include "report/sensors_text.h"

namespace wattlab::cli {
namespace {

struct MonitorOptions {
  DeviceOptions dev;
  int interval_ms = 1000;
  double duration_s = 0;
  FormatChoice format;  // text (redrawn on a terminal) or json (JSON lines)
  bool virtual_clock = false;
};

int monitor(const MonitorOptions& o, Io& io) {
  if (o.virtual_clock && o.dev.device != "sim")
    throw UsageError("monitor: --virtual-clock needs --device sim (real sensors run on real time)");
  if (o.virtual_clock && o.duration_s <= 0)
    throw UsageError("monitor: --virtual-clock needs --duration-s (virtual time runs as fast as it can)");
  VirtualClock vclock(1'000'000'000);
  RecordingOptions ro;  // measured, not stored
  ro.devices = o.dev.backend();
  if (o.virtual_clock) ro.devices.clock = &vclock;
  Recording rec(std::move(ro));
  io.err << "wattlab monitor: " << report::describe_backends(rec.opened());
  if (rec.domain_count() == 0) return kExitFailure;
  const bool jsonl = o.format.format == report::Format::json;
  const bool redraw = !jsonl && &io.out == &std::cout && isatty(STDOUT_FILENO);
  const int64_t interval_ns = static_cast<int64_t>(o.interval_ms) * 1'000'000;
  const int64_t duration_ns = static_cast<int64_t>(o.duration_s * 1e9);

  StopSignal stop;
  rec.start();  // real time: the sampler runs and every sensor has been read once (or 10 s passed)
  Meter& meter = rec.meter();
  Clock& clock = rec.clock();
  LiveMeter live(meter);
  MonitorView view(meter.domains());
  const int64_t t0 = clock.now_ns();
  const auto real_t0 = std::chrono::steady_clock::now();
  std::size_t drawn = 0;
  for (int64_t k = 1;; ++k) {
    const int64_t t_next = t0 + k * interval_ns;
    if (duration_ns > 0 && t_next - t0 > duration_ns) break;
    if (o.virtual_clock) {
      meter.advance_to(t_next);
      if (stop.requested()) break;
    } else if (stop.sleep_until(real_t0 + std::chrono::nanoseconds(k * interval_ns))) {
      break;
    }
    const MonitorUpdate u = view.update(live.sample());
    if (jsonl) {
      io.out << report::monitor_json_line(u) << "\n";
    } else {
      const auto lines = report::monitor_lines(u);
      // Back to the first line of the previous update, clear to the end, draw again.
      if (redraw && drawn > 0) io.out << fmt::format("\x1b[{}F\x1b[J", drawn);
      for (const auto& l : lines) io.out << l << "\n";
      drawn = lines.size();
      if (!redraw) io.out << "\n";
    }
    io.out.flush();
    if (!io.out) {
      io.err << "wattlab monitor: output closed; stopping\n";
      break;
    }
  }
  rec.end(kExitOk);
  return kExitOk;
}

}  // namespace

void register_monitor(CLI::App& app, Action& action) {
  auto opts = std::make_shared<MonitorOptions>();
  auto* sub = app.add_subcommand("monitor", "Live per-domain power, energy and telemetry (or JSON lines with --format json)");
  add_device_options(*sub, opts->dev);
  sub->add_option("--interval-ms", opts->interval_ms, "time between updates in ms")
      ->check(CLI::Range(10, 3'600'000))
      ->capture_default_str();
  sub->add_option("--duration-s", opts->duration_s, "stop after this many seconds (default: until Ctrl-C)")
      ->check(CLI::Range(0.0, 1e9));
  // Before --format: CLI11 runs option callbacks in definition order, so --format sees it.
  sub->add_flag_callback(
      "--jsonl",
      [opts] {
        opts->format.format = report::Format::json;
        opts->format.given = true;
      },
      "one JSON object per update on stdout (schema wattlab.monitor/1, docs/export.md): --format json");
  add_format_option(sub, opts->format, {report::Format::text, report::Format::json},
                    "json: one object per update (JSON lines)");
  sub->add_flag("--virtual-clock", opts->virtual_clock,
                "run the simulated device on virtual time, as fast as possible (tests; needs --device sim and --duration-s)");
  sub->callback([opts, &action] { action = [opts](Io& io) { return monitor(*opts, io); }; });
}

}  // namespace wattlab::cli
