// meter_validate: proves wattlab's meter on a real GPU (scripts/device/meter_validate_h200.sh,
// docs/results/meter-validation-h200.md). An in-process wattlab::Meter on the NVML device measures
// windows over loads whose work is known, and every window is also measured two other ways: the
// energy counter read at its edges on this thread (Zeus's method) and 10 ms power polls
// integrated. Parts (--parts): levels (idle and each level's steady phase: the reference rates,
// and windows of every short length inside the phase), short (isolated bursts), memory (HBM copies,
// the memory domain), edges (load->idle windows, split phases, shifted windows), linearity (N
// bursts, duty cycles), calib (chained windows of 1-20 counter updates: the exact truth for short
// windows, the calibration of wattlab's uncertainty). Levels (--levels): below, near and at the power cap, chosen without
// changing any GPU setting. Writes windows-<half>.csv (one row per window), state-<half>.json
// (GPU state at start and end, the levels, the plan, what was skipped) and trace-<half>.csv (every
// poll); python/bench/meter_validate.py makes the tables. With --db it also stores the meter's
// readings and every window (labels and references as in the CSV) as one run of a wattlab store,
// for `wattlab report --holdout` (docs/holdout.md).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "build_commit.h"
#include "gpu_state.h"
#include "validate_context.h"
#include "wattlab/core/clock.h"
#include "wattlab/marks.h"
#include "wattlab/record/recording.h"
#include "wattlab/sensors/registry.h"

namespace {

using namespace wattlab::device;
using nlohmann::json;

std::vector<std::string> split_list(const std::string& csv) {
  std::vector<std::string> out;
  std::stringstream ss(csv);
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) out.push_back(t);
  return out;
}

// Exit-2 check of a comma list against the names accepted.
bool check_names(const char* flag, const std::string& csv, const std::set<std::string>& accepted) {
  for (const auto& x : split_list(csv))
    if (accepted.count(x) == 0) {
      std::string acc;
      for (const auto& a : accepted) acc += (acc.empty() ? "" : ", ") + a;
      std::fprintf(stderr, "meter_validate: unknown '%s' in %s (accepted: %s)\n", x.c_str(), flag, acc.c_str());
      return false;
    }
  return true;
}

bool check_positive(const char* flag, const std::vector<double>& v, double max) {
  for (double x : v)
    if (!(x > 0 && x <= max)) {
      std::fprintf(stderr, "meter_validate: %s value %g is outside (0, %g]\n", flag, x, max);
      return false;
    }
  if (v.empty()) {
    std::fprintf(stderr, "meter_validate: %s is empty\n", flag);
    return false;
  }
  return true;
}

void write_trace(const std::string& path, const std::vector<PollSample>& polls) {
  std::ofstream f(path);
  f << "t_ns,usage_w,instant_w,mem_instant_w,mem_average_w,sm_clock_mhz,clock_event_reasons\n";
  auto v = [](double x) { return std::isfinite(x) ? std::to_string(x) : std::string(); };
  for (const auto& s : polls)
    f << s.t_ns << "," << v(s.usage_w) << "," << v(s.instant_w) << "," << v(s.mem_instant_w) << "," << v(s.mem_average_w)
      << "," << v(s.sm_clock_mhz) << "," << (s.reasons_ok ? std::to_string(s.reasons) : std::string()) << "\n";
  if (!f) throw std::runtime_error("cannot write " + path);
}

// The meter's options: the defaults, with the counter read at --counter-interval-ms. A counter
// read costs 3-15 ms on the H200, so a shorter interval gets a CPU share that pays for it
// (10 ms a read), and the sampler's totals grow by the same.
wattlab::MeterOptions meter_options(const Options& o) {
  wattlab::MeterOptions m;
  m.counter_interval_ns = wattlab::device::s_to_ns(o.counter_interval_ms * 1e-3);
  if (o.counter_interval_ms < 1000) {
    const double share = 0.010 / (o.counter_interval_ms * 1e-3);
    m.sampler_cpu_share += share - m.counter_cpu_share;
    m.sampler_thread_cpu_share += share - m.counter_cpu_share;
    m.counter_cpu_share = share;
  }
  return m;
}

// One run in the store at --db over the program's meter: readings every 500 ms (the recording's
// flush thread), windows as WindowLog writes them.
std::unique_ptr<wattlab::Recording> start_recording(const Options& o, wattlab::Meter& meter,
                                                    std::vector<wattlab::DeviceProperties> devices,
                                                    std::vector<std::string> argv) {
  wattlab::RecordingOptions ro;
  ro.db = o.db;
  ro.devices.device = "nvml";
  ro.command = std::move(argv);
  ro.tags = {{"meter_validate.half", o.half},
             {"meter_validate.parts", o.parts},
             {"meter_validate.build_commit", WATTLAB_BUILD_COMMIT},
             {"meter_validate.counter_interval_ms", fmt_len(o.counter_interval_ms)}};
  ro.on_note = [](std::string_view note) { std::fprintf(stderr, "meter_validate: store: %.*s\n", static_cast<int>(note.size()), note.data()); };
  auto rec = std::make_unique<wattlab::Recording>(meter, std::move(devices), false, std::move(ro));
  rec->start();
  return rec;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"wattlab's meter against the energy counter and power polling on a real GPU"};
  app.set_version_flag("--version", "meter_validate (wattlab commit " WATTLAB_BUILD_COMMIT ")");
  app.add_option("--half", o.half, "label of this device command in the CSV (a, b, ...)")->capture_default_str();
  app.add_option("--parts", o.parts, "comma list: levels, short, memory, edges, linearity, calib (levels always runs)")
      ->capture_default_str();
  app.add_option("--levels", o.levels, "comma list: below, near, cap")->capture_default_str();
  app.add_option("--out", o.out_dir, "folder for windows-<half>.csv, state-<half>.json, trace-<half>.csv")->required();
  app.add_option("--deadline-s", o.deadline_s, "stop starting work after this; what ran is written")
      ->check(CLI::Range(30.0, 3600.0))->capture_default_str();
  app.add_option("--seed", o.seed, "seed of gaps, window placement and order")->capture_default_str();
  app.add_option("--gemm-n", o.gemm_n, "GEMM size of the cap level")->check(CLI::Range(1024, 16384))->capture_default_str();
  app.add_option("--unit-ms", o.unit_ms, "tensor kernel unit length, ms")->check(CLI::Range(0.05, 20.0))->capture_default_str();
  app.add_option("--below-blocks", o.below_blocks, "SMs of the below level (0: a quarter)")->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_option("--near-blocks", o.near_blocks, "SMs of the near level (0: chosen by probes)")->check(CLI::Range(0, 1024))->capture_default_str();
  app.add_option("--near-target", o.near_target, "near level's target, share of the power limit")->check(CLI::Range(0.3, 0.95))->capture_default_str();
  app.add_option("--settle-s", o.settle_s, "idle wait before the idle measurement")->check(CLI::Range(0.0, 60.0))->capture_default_str();
  app.add_option("--idle-s", o.idle_s, "idle measurement")->check(CLI::Range(0.5, 60.0))->capture_default_str();
  app.add_option("--warm-s", o.warm_s, "load before a steady phase's first edge")->check(CLI::Range(0.2, 30.0))->capture_default_str();
  app.add_option("--steady-s", o.steady_s, "steady phase between its first and last edge")->check(CLI::Range(2.0, 600.0))->capture_default_str();
  app.add_option("--steady-lengths", o.steady_lengths, "window lengths inside steady phases, s")->delimiter(',')->capture_default_str();
  app.add_option("--steady-reps", o.steady_reps, "windows per length per steady phase")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_flag("!--no-steady-windows", o.steady_windows, "no windows inside the steady phases");
  app.add_option("--burst-lengths", o.burst_lengths, "isolated burst lengths, s")->delimiter(',')->capture_default_str();
  app.add_option("--burst-reps", o.burst_reps, "bursts per length under 1 s")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--long-burst-reps", o.long_burst_reps, "bursts per length of 1 s and more")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--gap-min-s", o.gap_min_s, "shortest idle gap before a burst")->check(CLI::Range(0.0, 30.0))->capture_default_str();
  app.add_option("--gap-max-s", o.gap_max_s, "longest idle gap before a burst")->check(CLI::Range(0.0, 30.0))->capture_default_str();
  app.add_option("--nburst-max", o.nburst_max, "largest N of the N-burst windows")->check(CLI::Range(1, 200))->capture_default_str();
  app.add_option("--nburst-reps", o.nburst_reps, "windows per N")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--nburst-busy-s", o.nburst_busy_s, "load per burst")->check(CLI::Range(0.001, 10.0))->capture_default_str();
  app.add_option("--nburst-period-s", o.nburst_period_s, "one burst per this")->check(CLI::Range(0.002, 20.0))->capture_default_str();
  app.add_option("--duty-hz", o.duty_hz, "duty-cycle frequencies")->delimiter(',')->capture_default_str();
  app.add_option("--duty-pct", o.duty_pct, "duty cycles, % on")->delimiter(',')->capture_default_str();
  app.add_option("--duty-window-s", o.duty_window_s, "duty-cycled window (at least two periods)")->check(CLI::Range(0.1, 60.0))->capture_default_str();
  app.add_option("--afterload-levels", o.afterload_levels, "levels of the load-then-idle windows")->capture_default_str();
  app.add_option("--afterload-reps", o.afterload_reps, "repeats")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--afterload-load-s", o.afterload_load_s, "load before the idle window")->check(CLI::Range(0.1, 120.0))->capture_default_str();
  app.add_option("--afterload-idle-s", o.afterload_idle_s, "the idle window")->check(CLI::Range(0.1, 120.0))->capture_default_str();
  app.add_option("--split-levels", o.split_levels, "levels of the split phases")->capture_default_str();
  app.add_option("--shift-levels", o.shift_levels, "levels of the shifted windows")->capture_default_str();
  app.add_option("--shifts-ms", o.shifts_ms, "shifts against the transition, ms")->delimiter(',')->capture_default_str();
  app.add_option("--shift-window-s", o.shift_window_s, "shifted window length")->check(CLI::Range(0.05, 0.9))->capture_default_str();
  app.add_option("--shift-reps", o.shift_reps, "repeats of each shift")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--calib-levels", o.calib_levels, "levels of the chained calibration windows (idle, below, near, cap)")
      ->capture_default_str();
  app.add_option("--calib-updates", o.calib_updates, "calibration window lengths, in counter updates")
      ->delimiter(',')->check(CLI::Range(1, 600))->capture_default_str();
  app.add_option("--calib-reps", o.calib_reps, "calibration windows per length and level")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--memory-load-s", o.memory_load_s, "HBM copy phase between its edges")->check(CLI::Range(1.0, 120.0))->capture_default_str();
  app.add_option("--copy-mib", o.copy_mib, "bytes per copy, MiB")->check(CLI::Range(16.0, 32768.0))->capture_default_str();
  app.add_option("--poll-ms", o.poll_ms, "power polling interval, ms")->check(CLI::Range(1.0, 1000.0))->capture_default_str();
  app.add_option("--db", o.db, "also store the meter's readings and every window as one run of this wattlab store");
  app.add_option("--counter-interval-ms", o.counter_interval_ms,
                 "the meter's energy-counter interval (100: every update, for wattlab report --holdout)")
      ->check(CLI::Range(100.0, 10000.0))->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const std::set<std::string> level_names = {"below", "near", "cap"};
  if (!check_names("--parts", o.parts, {"levels", "short", "memory", "edges", "linearity", "calib"}) ||
      !check_names("--calib-levels", o.calib_levels, {"idle", "below", "near", "cap"}) ||
      !check_names("--levels", o.levels, level_names) || !check_names("--afterload-levels", o.afterload_levels, level_names) ||
      !check_names("--split-levels", o.split_levels, level_names) ||
      !check_names("--shift-levels", o.shift_levels, level_names) ||
      !check_positive("--steady-lengths", o.steady_lengths, 600) || !check_positive("--burst-lengths", o.burst_lengths, 60) ||
      !check_positive("--duty-hz", o.duty_hz, 500) || !check_positive("--duty-pct", o.duty_pct, 100))
    return 2;
  for (double s : o.shifts_ms)
    if (std::abs(s) * 1e-3 >= 1.0 || std::abs(s) * 1e-3 + o.shift_window_s > 1.0) {
      std::fprintf(stderr, "meter_validate: --shifts-ms %g with --shift-window-s %g leaves the idle before or after the load\n",
                   s, o.shift_window_s);
      return 2;
    }
  if (o.gap_min_s > o.gap_max_s) {
    std::fprintf(stderr, "meter_validate: --gap-min-s %g is longer than --gap-max-s %g\n", o.gap_min_s, o.gap_max_s);
    return 2;
  }
  const std::vector<std::string> parts = split_list(o.parts);
  std::vector<std::string> levels;
  for (const char* l : {"below", "near", "cap"})
    if (("," + o.levels + ",").find("," + std::string(l) + ",") != std::string::npos) levels.push_back(l);
  const json planned = plan(o, parts, levels);
  std::printf("meter_validate %s (commit %s): parts %s, levels %s\n", o.half.c_str(), WATTLAB_BUILD_COMMIT, o.parts.c_str(),
              o.levels.c_str());
  for (const char* part : {"setup", "levels", "short", "memory", "edges", "linearity", "calib", "final_wait"}) {
    if (!planned.contains(part)) continue;
    const json& v = planned[part];
    if (v.is_number()) {
      std::printf("plan: %-10s %6.1f s\n", part, v.get<double>());
    } else {
      for (const auto& [what, s] : v.items()) std::printf("plan: %-10s %-16s %6.1f s\n", part, what.c_str(), s.get<double>());
    }
  }
  const double total_s = planned["total_s"].get<double>();
  std::printf("plan: total %.1f s, deadline %.1f s%s\n", total_s, o.deadline_s,
              total_s > o.deadline_s ? ": LONGER than the deadline, the last sets will be left out" : "");
  std::fflush(stdout);
  install_stop_handler();

  const int64_t t_start = wattlab::marks::monotonic_ns();
  try {
    Loads loads;
    loads.cap = std::make_unique<GemmLoad>(o.gemm_n, o.seed);
    DirectCounter counter(loads.cap->device_uuid());
    {
      // The tensor kernel's rounds per unit: time it on every SM, scale to --unit-ms.
      constexpr int kIters = 2048;
      MmaLoad timing(loads.cap->sm_count(), kIters);
      timing.time_units_ms(20);
      const double ms = timing.time_units_ms(20);
      loads.mma_iters = std::max(16, static_cast<int>(std::lround(kIters * o.unit_ms / ms)));
      std::printf("tensor kernel: %d rounds per warp for %.3f ms on %d SMs\n", loads.mma_iters, o.unit_ms, loads.cap->sm_count());
    }
    NvmlPoller poller(counter, wattlab::device::s_to_ns(o.poll_ms * 1e-3));
    poller.start();
    json state = {{"schema", "wattlab.meter_validate/1"}, {"half", o.half}, {"build_commit", WATTLAB_BUILD_COMMIT},
                  {"parts", o.parts}, {"levels_asked", o.levels}, {"plan", planned}, {"device_name", loads.cap->device_name()},
                  {"argv", std::vector<std::string>(argv, argv + argc)}};
    state["gpu_start"] = read_gpu_state(counter);

    wattlab::BackendOptions bo;
    bo.device = "nvml";
    bo.gpus = {counter.uuid()};
    auto opened = wattlab::open_sensors(bo);
    for (const auto& s : opened.statuses) state["backends"].push_back({{"backend", s.backend}, {"loaded", s.loaded}, {"detail", s.detail}});
    if (opened.sensors.empty()) throw std::runtime_error("no NVML sensor opened for " + counter.uuid());
    std::vector<wattlab::DeviceProperties> devices;
    for (const auto& s : opened.sensors) devices.push_back({s->backend(), s->properties()});
    wattlab::Meter meter(std::move(opened.sensors), wattlab::MonotonicClock::instance(), meter_options(o));
    std::string gpu_domain, mem_domain;
    for (const auto& d : meter.domains()) {
      state["domains"].push_back({{"id", d.id}, {"scope", d.scope}, {"uuid", d.uuid}, {"parent", d.parent}});
      if (d.scope == "gpu" && (gpu_domain.empty() || d.uuid == counter.uuid())) gpu_domain = d.id;
    }
    for (const auto& d : meter.domains())
      if (d.parent == gpu_domain && d.scope == "memory") mem_domain = d.id;
    if (gpu_domain.empty()) throw std::runtime_error("the meter has no GPU domain for " + counter.uuid());
    if (mem_domain.empty()) mem_domain = gpu_domain + "/memory";
    meter.start();
    if (!meter.wait_first_reads(std::chrono::seconds(10))) std::printf("warning: not every reading was read within 10 s\n");
    WindowLog log(meter, poller, gpu_domain, mem_domain, o.out_dir + "/windows-" + o.half + ".csv", o.half);
    // Declared after the meter: destroyed first (a run left unended is ended as abandoned).
    std::unique_ptr<wattlab::Recording> recording;
    if (!o.db.empty()) {
      recording = start_recording(o, meter, std::move(devices), std::vector<std::string>(argv, argv + argc));
      log.store_into(recording.get());
      state["db"] = {{"path", o.db}, {"run_id", recording->run_id()}};
      std::printf("storing readings and windows in %s, run %lld\n", o.db.c_str(), static_cast<long long>(recording->run_id()));
    }
    Context c(o, meter, counter, poller, log, loads, t_start);
    c.power_limit_w = enforced_power_limit_w(counter);
    std::printf("%s %s, power limit %.1f W, meter domains %s and %s\n", loads.cap->device_name().c_str(), counter.uuid().c_str(),
                c.power_limit_w, gpu_domain.c_str(), mem_domain.c_str());
    std::fflush(stdout);

    run_levels(c);
    auto has = [&](const char* p) { return std::find(parts.begin(), parts.end(), p) != parts.end(); };
    if (has("short")) run_short(c);
    if (has("memory")) run_memory(c);
    if (has("edges")) run_edges(c);
    if (has("linearity")) run_linearity(c);
    if (has("calib")) run_calib(c);

    c.progress("end", "", "waiting for the last results");
    // After a signal the caller's timeout is near: take what is final within a few seconds.
    log.finish(wattlab::marks::monotonic_ns() + wattlab::device::s_to_ns(stop_requested() ? 3.0 : Context::kReserveS - 4));
    state["gpu_end"] = read_gpu_state(counter);
    state["idle_w"] = c.idle_w;
    state["power_limit_w"] = c.power_limit_w;
    for (const char* l : {"below", "near", "cap"})
      if (c.levels.count(l) > 0) state["levels"][l] = c.levels[l].to_json();
    state["notes"] = c.notes;
    state["rows"] = log.rows();
    state["provisional_rows"] = log.provisional_rows();
    state["sampler_cpu_s"] = static_cast<double>(meter.sampler_cpu_ns()) * 1e-9;
    state["poller_status"] = json::object();
    for (const auto& [k, v] : poller.status()) state["poller_status"][k] = v;
    meter.stop();
    poller.stop();
    if (recording) recording->end(stop_requested() ? 143 : 0);  // the last readings, the run's end
    const double wall_s = static_cast<double>(wattlab::marks::monotonic_ns() - t_start) * 1e-9;
    state["wall_s"] = wall_s;
    state["meter_events"] = json::array();
    for (const auto& e : meter.events())
      state["meter_events"].push_back({{"t_ns", e.t_ns}, {"domain", e.domain_id}, {"reading", e.reading}, {"kind", e.kind},
                                       {"message", e.message}});
    write_trace(o.out_dir + "/trace-" + o.half + ".csv", poller.samples());
    std::ofstream f(o.out_dir + "/state-" + o.half + ".json");
    f << state.dump(1) << "\n";
    if (!f) throw std::runtime_error("cannot write " + o.out_dir + "/state-" + o.half + ".json");
    std::printf("done: %d rows (%d provisional), sampler CPU %.3f s, wall %.1f s (planned %.1f s)%s\n", log.rows(),
                log.provisional_rows(), state["sampler_cpu_s"].get<double>(), wall_s, total_s,
                c.notes.contains("skipped") ? "; some sets were left out (state JSON, notes.skipped)" : "");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "meter_validate: %s\n", e.what());
    return 1;
  }
  return 0;
}
