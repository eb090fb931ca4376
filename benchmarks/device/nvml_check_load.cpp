// The load program of scripts/device/nvml_h200.sh (docs/results/nvml-h200.md). Run it under
// `wattlab run --device nvml --marks`. Phases:
//   steady: BF16 GEMMs back to back; after a warm-up, `--windows` marks windows of `--window-s`
//           each, back to back, every edge aligned on an update of the NVML energy counter, which
//           this program also reads itself (the direct reference for each window);
//   step:   `--step-reps` windows of `--step-window-ms`, each a GEMM burst of `--step-busy-ms`
//           then idle, separated by random idle gaps (a random phase against the sensor's grid);
//   cost:   the caller's cost of one window: `--pairs` marks open+close pairs, in-process
//           wattlab::Meter open+close pairs, and energy-counter reads at both edges, while the
//           GEMM load runs.
// Everything measured goes to --results as JSON; python/bench/nvml_check.py compares it with
// wattlab's run JSON. Times are CLOCK_MONOTONIC ns, energies mJ as NVML gives them.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "direct_counter.h"
#include "gemm_load.h"
#include "wattlab/core/clock.h"
#include "wattlab/marks.h"
#include "wattlab/meter/meter.h"
#include "wattlab/sensors/registry.h"

namespace {

using wattlab::device::CounterRead;
using wattlab::device::DirectCounter;
using wattlab::device::GemmLoad;
using wattlab::device::UpdateEdge;
using nlohmann::json;
namespace marks = wattlab::marks;

struct Options {
  std::string phases = "steady,step";
  std::string results;
  int n = 8192;
  double warmup_s = 3;
  double window_s = 10;
  int windows = 6;
  int step_reps = 30;
  double step_busy_ms = 50;
  double step_window_ms = 100;
  double step_gap_min_ms = 150;
  double step_gap_max_ms = 350;
  int pairs = 1000;
  uint64_t seed = 1;
};

void sleep_until_ns(int64_t t_ns) {
  while (true) {
    const int64_t now = marks::monotonic_ns();
    if (now >= t_ns) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(t_ns - now));
  }
}

json to_json(const CounterRead& r) {
  return {{"energy_mj", r.energy_mj}, {"t_begin_ns", r.t_begin_ns}, {"t_end_ns", r.t_end_ns}};
}
json to_json(const UpdateEdge& e) {
  return {{"before", to_json(e.before)}, {"after", to_json(e.after)}, {"reads", e.reads}, {"bracket_ns", e.bracket_ns()}};
}

std::string steady_name(int k) { return "steady " + std::to_string(k + 1); }

// Back-to-back windows under a constant GEMM load; each edge waits for a counter update, so the
// direct delta is the energy between two updates and the marks edge sits just after each.
json run_steady(const Options& o, GemmLoad& load, const DirectCounter& counter) {
  load.start();
  const int64_t t0 = marks::monotonic_ns() + static_cast<int64_t>(o.warmup_s * 1e9);
  json windows = json::array();
  json pending;
  uint64_t launched_at_open = 0;
  for (int k = 0; k <= o.windows; ++k) {
    sleep_until_ns(t0 + static_cast<int64_t>(k * o.window_s * 1e9));
    const UpdateEdge edge = counter.read_at_update();
    const int64_t t_mark = marks::monotonic_ns();
    const uint64_t launched = load.launched();
    if (k > 0) {
      marks::close(steady_name(k - 1), {{"gemms", static_cast<double>(launched - launched_at_open)}});
      pending["t_end_ns"] = t_mark;
      pending["end_edge"] = to_json(edge);
      pending["direct_j"] = static_cast<double>(edge.after.energy_mj - pending["begin_edge"]["after"]["energy_mj"].get<uint64_t>()) / 1000.0;
      pending["gemms_launched"] = launched - launched_at_open;
      windows.push_back(pending);
      std::printf("%s: direct counter %.3f J over %.3f s\n", pending["name"].get<std::string>().c_str(),
                  pending["direct_j"].get<double>(), static_cast<double>(t_mark - pending["t_begin_ns"].get<int64_t>()) * 1e-9);
      std::fflush(stdout);
    }
    if (k < o.windows) {
      marks::open(steady_name(k), {{"phase", "steady"}, {"load", "bf16 gemm " + std::to_string(o.n)}});
      pending = {{"name", steady_name(k)}, {"t_begin_ns", t_mark}, {"begin_edge", to_json(edge)}};
      launched_at_open = launched;
    }
  }
  const uint64_t total = load.launched();
  load.stop();
  return {{"windows", windows}, {"gemms_launched_total", total}};
}

// 100 ms windows over a step: a GEMM burst, then idle, repeated with random idle gaps between.
json run_step(const Options& o, GemmLoad& load) {
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> gap_ms(o.step_gap_min_ms, o.step_gap_max_ms);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // idle first: every burst starts from idle
  json windows = json::array();
  for (int r = 0; r < o.step_reps; ++r) {
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(gap_ms(rng) * 1000)));
    char name[32];
    std::snprintf(name, sizeof name, "step %02d", r + 1);
    const int64_t t_open = marks::monotonic_ns();
    marks::open(name, {{"phase", "step"}});
    const int64_t gemms = load.burst(static_cast<int64_t>(o.step_busy_ms * 1e6));
    const int64_t t_busy_end = marks::monotonic_ns();
    sleep_until_ns(t_open + static_cast<int64_t>(o.step_window_ms * 1e6));
    const int64_t t_close = marks::monotonic_ns();
    marks::close(name, {{"gemms", static_cast<double>(gemms)}});
    windows.push_back({{"name", name}, {"t_begin_ns", t_open}, {"t_busy_end_ns", t_busy_end}, {"t_end_ns", t_close},
                       {"gemms", gemms}});
  }
  std::printf("step: %d windows of %.0f ms (%.0f ms busy)\n", o.step_reps, o.step_window_ms, o.step_busy_ms);
  return {{"windows", windows}, {"busy_ms", o.step_busy_ms}, {"window_ms", o.step_window_ms}};
}

// What one window costs the caller's thread, three ways, each timed pair by pair.
json run_cost(const Options& o, GemmLoad& load, const DirectCounter& counter) {
  json out;
  load.start();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::vector<int64_t> marks_ns, meter_ns, counter_ns, counter_read_ns;
  marks::Client& c = marks::client();
  for (int i = 0; i < o.pairs; ++i) {
    const int64_t a = marks::monotonic_ns();
    c.open("cost");
    c.close("cost");
    marks_ns.push_back(marks::monotonic_ns() - a);
  }
  out["marks_pair_ns"] = marks_ns;
  // In-process meter on the same GPU through NVML, its sampler running as in a real program.
  try {
    wattlab::BackendOptions bo;
    bo.device = "nvml";
    auto opened = wattlab::open_sensors(bo);
    if (opened.sensors.empty()) throw std::runtime_error("no NVML sensor opened");
    wattlab::Meter meter(std::move(opened.sensors), wattlab::MonotonicClock::instance());
    meter.start();
    meter.wait_first_reads(std::chrono::seconds(10));
    for (int i = 0; i < o.pairs; ++i) {
      const int64_t a = marks::monotonic_ns();
      const auto id = meter.open("cost");
      meter.close(id);
      meter_ns.push_back(marks::monotonic_ns() - a);
    }
    meter.stop();
    out["meter_pair_ns"] = meter_ns;
  } catch (const std::exception& e) {
    out["meter_pair_ns"] = nullptr;
    out["meter_error"] = e.what();
    std::fprintf(stderr, "nvml_check_load: in-process meter not timed: %s\n", e.what());
  }
  for (int i = 0; i < o.pairs; ++i) {
    const int64_t a = marks::monotonic_ns();
    const CounterRead r1 = counter.read();
    const CounterRead r2 = counter.read();
    counter_ns.push_back(marks::monotonic_ns() - a);
    counter_read_ns.push_back(r1.t_end_ns - r1.t_begin_ns);
    counter_read_ns.push_back(r2.t_end_ns - r2.t_begin_ns);
  }
  load.stop();
  out["counter_pair_ns"] = counter_ns;
  out["counter_read_ns"] = counter_read_ns;
  out["pairs"] = o.pairs;
  std::printf("cost: %d pairs each of marks, meter and counter windows timed\n", o.pairs);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"BF16 GEMM load and window timings for the NVML check (docs/results/nvml-h200.md)"};
  app.add_option("--phases", o.phases, "comma-separated: steady, step, cost")->capture_default_str();
  app.add_option("--results", o.results, "write what was measured here, as JSON")->required();
  app.add_option("--n", o.n, "GEMM size n (n x n x n)")->check(CLI::Range(256, 32768))->capture_default_str();
  app.add_option("--warmup-s", o.warmup_s, "load before the first steady window, s")->check(CLI::Range(0.0, 600.0))->capture_default_str();
  app.add_option("--window-s", o.window_s, "steady window length, s")->check(CLI::Range(0.5, 600.0))->capture_default_str();
  app.add_option("--windows", o.windows, "steady windows")->check(CLI::Range(1, 100))->capture_default_str();
  app.add_option("--step-reps", o.step_reps, "step windows")->check(CLI::Range(2, 1000))->capture_default_str();
  app.add_option("--step-busy-ms", o.step_busy_ms, "GEMM burst per step window, ms")->check(CLI::Range(1.0, 10000.0))->capture_default_str();
  app.add_option("--step-window-ms", o.step_window_ms, "step window, ms")->check(CLI::Range(1.0, 10000.0))->capture_default_str();
  app.add_option("--pairs", o.pairs, "window pairs timed per method in the cost phase")->check(CLI::Range(10, 100000))->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the matrices and of the step gaps")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (o.step_busy_ms > o.step_window_ms) {
    std::fprintf(stderr, "nvml_check_load: --step-busy-ms %.1f is longer than --step-window-ms %.1f\n", o.step_busy_ms,
                 o.step_window_ms);
    return 2;
  }
  bool steady = false, step = false, cost = false;
  std::stringstream ss(o.phases);
  for (std::string p; std::getline(ss, p, ',');) {
    if (p == "steady") steady = true;
    else if (p == "step") step = true;
    else if (p == "cost") cost = true;
    else {
      std::fprintf(stderr, "nvml_check_load: unknown phase '%s' in --phases (accepted: steady, step, cost)\n", p.c_str());
      return 2;
    }
  }
  if (!marks::client().enabled()) {
    std::fprintf(stderr, "nvml_check_load: no marks channel (WATTLAB_MARKS_FD): run it under `wattlab run --marks`\n");
    return 2;
  }
  try {
    GemmLoad load(o.n, o.seed);
    DirectCounter counter(load.device_uuid());
    const double gemm_ms = load.time_gemms_ms(50);
    json res = {{"schema", "wattlab.nvml_check_load/1"},
                {"device_name", load.device_name()},
                {"device_uuid", load.device_uuid()},
                {"nvml_uuid", counter.uuid()},
                {"nvml_library", counter.library_path()},
                {"gemm", {{"n", o.n}, {"dtype", "bf16 in/out, fp32 accumulation"}, {"api", "cublasGemmEx"},
                          {"mean_ms", gemm_ms}, {"tflops", load.flop_per_gemm() / (gemm_ms * 1e-3) / 1e12}}}};
    std::printf("GEMM %d^3 BF16 (FP32 accumulation) on %s: %.3f ms each, %.1f TFLOP/s\n", o.n, load.device_name().c_str(),
                gemm_ms, load.flop_per_gemm() / (gemm_ms * 1e-3) / 1e12);
    marks::tag({{"task", "nvml-check"}, {"gemm_n", std::to_string(o.n)}});
    if (steady) res["steady"] = run_steady(o, load, counter);
    if (step) res["step"] = run_step(o, load);
    if (cost) res["cost"] = run_cost(o, load, counter);
    std::ofstream f(o.results);
    f << res.dump() << "\n";
    if (!f) {
      std::fprintf(stderr, "nvml_check_load: could not write %s\n", o.results.c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nvml_check_load: %s\n", e.what());
    return 1;
  }
  return 0;
}
