// What a measurement window costs the caller's thread: Meter::open + Meter::close, and the RAII
// ScopedWindow. The sampler runs on real time against the sim device (SIMULATED H200, its read
// costs spent as CPU time on the sampler thread) and builds a result for every window.
//
// Targets, on the caller's thread (BM_OpenClosePercentiles): the median open+close <= 1 us, and at
// one window every 100 us also p99.9 <= 20 us and max <= 1 ms: the caller never waits for the
// sampler (open and close push their edge onto a lock-free queue and take no lock the sampler holds
// while it reads or builds results). On a 2-core host the tail also holds what the host does to the
// caller's core (interrupts, other threads, cold caches after them). main() prints each figure
// against its target and a result line (exit 0 on PASS, 1 on FAIL).
//
// BM_OpenClose, BM_ScopedWindow: windows back to back; Google Benchmark's mean wall time per
// iteration. It is a throughput figure, not the target: a loop making windows back to back makes
// hundreds of thousands a second, and the sampler builds a result for each one on its own
// thread, so on a 2-core host the mean includes the caller sharing a core with that work.
// BM_OpenClosePercentiles/<gap_us>: every open+close timed on its own with two clock reads, windows
// <gap_us> apart; counters p50_ns, p99_ns, p999_ns, max_ns (the clock-read pair's own cost is in
// them; clock_pair_ns says how much that is).
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <utility>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/meter/meter.h"
#include "wattlab/sensors/registry.h"

namespace {

wattlab::Meter* g_meter = nullptr;
// Every run of BM_OpenClosePercentiles, by pace (us between windows), for the verdict.
struct RunPercentiles {
  int64_t pace_us = 0;
  double p50_ns = 0, p999_ns = 0, max_ns = 0;
};
std::vector<RunPercentiles> g_runs;

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void BM_OpenClose(benchmark::State& state) {
  wattlab::Meter& m = *g_meter;
  for (auto _ : state) {
    const wattlab::WindowId id = m.open("bench");
    m.close(id);
  }
  state.SetItemsProcessed(state.iterations());
}
// Fixed iteration counts: every window gets a result built by the sampler (tens of us each), so a
// time-based loop making millions of windows left the sampler, and Meter::stop(), minutes of work
// (on the H200 host the benchmark did not finish in 220 s).
BENCHMARK(BM_OpenClose)->Iterations(20'000)->Unit(benchmark::kNanosecond);

void BM_ScopedWindow(benchmark::State& state) {
  wattlab::Meter& m = *g_meter;
  for (auto _ : state) {
    wattlab::ScopedWindow w(m, "bench");
    benchmark::DoNotOptimize(w.id());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ScopedWindow)->Iterations(20'000)->Unit(benchmark::kNanosecond);

double percentile(const std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto i = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1));
  return static_cast<double>(sorted[i]);
}

void BM_OpenClosePercentiles(benchmark::State& state) {
  wattlab::Meter& m = *g_meter;
  const int64_t gap_ns = state.range(0) * 1'000;
  std::vector<int64_t> dur_ns;
  dur_ns.reserve(static_cast<std::size_t>(state.max_iterations));
  int64_t next_ns = now_ns();
  for (auto _ : state) {
    if (gap_ns > 0) {
      // Pace by spinning, not sleeping: a sleep's wake-up would land in the next measurement's cache state.
      next_ns += gap_ns;
      while (now_ns() < next_ns) {
      }
    }
    const int64_t t0 = now_ns();
    const wattlab::WindowId id = m.open("bench");
    m.close(id);
    const int64_t t1 = now_ns();
    dur_ns.push_back(t1 - t0);
  }
  // The cost of the two clock reads alone, so a reader can tell it apart.
  std::vector<int64_t> pair_ns;
  pair_ns.reserve(10'000);
  for (int i = 0; i < 10'000; ++i) {
    const int64_t t0 = now_ns();
    const int64_t t1 = now_ns();
    pair_ns.push_back(t1 - t0);
  }
  std::sort(dur_ns.begin(), dur_ns.end());
  std::sort(pair_ns.begin(), pair_ns.end());
  const RunPercentiles run{state.range(0), percentile(dur_ns, 0.50), percentile(dur_ns, 0.999),
                           dur_ns.empty() ? 0 : static_cast<double>(dur_ns.back())};
  g_runs.push_back(run);
  state.counters["p50_ns"] = run.p50_ns;
  state.counters["p99_ns"] = percentile(dur_ns, 0.99);
  state.counters["p999_ns"] = run.p999_ns;
  state.counters["max_ns"] = run.max_ns;
  state.counters["clock_pair_ns"] = percentile(pair_ns, 0.50);
  state.counters["windows"] = static_cast<double>(dur_ns.size());
}
// Back to back, and 10,000 windows/s (a window per kernel launch of a busy loop).
BENCHMARK(BM_OpenClosePercentiles)->Arg(0)->Iterations(20'000)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_OpenClosePercentiles)->Arg(100)->Iterations(10'000)->Unit(benchmark::kNanosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  wattlab::BackendOptions o;
  o.device = "sim";
  wattlab::OpenedSensors opened = wattlab::open_sensors(o);
  wattlab::Meter meter(std::move(opened.sensors), wattlab::MonotonicClock::instance());
  meter.start();
  if (!meter.wait_first_reads(std::chrono::seconds(30))) {
    std::fprintf(stderr, "bench_meter_window: the sampler did not read every reading within 30 s\n");
    return 1;
  }
  g_meter = &meter;
  benchmark::AddCustomContext("device", "sim: SIMULATED H200, read costs spent on the sampler thread");
  benchmark::AddCustomContext("sampler", "running on real time (MonotonicClock), default MeterOptions");
  const int64_t cpu0_ns = meter.sampler_cpu_ns();
  const int64_t t0_ns = now_ns();
  benchmark::RunSpecifiedBenchmarks();
  const int64_t t1_ns = now_ns();
  const int64_t cpu1_ns = meter.sampler_cpu_ns();
  const int64_t stop0_ns = now_ns();
  meter.stop();
  std::printf("Meter::stop (builds the results still pending): %.3f s\n", static_cast<double>(now_ns() - stop0_ns) * 1e-9);
  const double wall_s = static_cast<double>(t1_ns - t0_ns) * 1e-9;
  std::printf("sampler CPU during the benchmarks: %.3f s over %.3f s wall = %.2f %% of one core\n",
              static_cast<double>(cpu1_ns - cpu0_ns) * 1e-9, wall_s,
              wall_s > 0 ? 100.0 * static_cast<double>(cpu1_ns - cpu0_ns) * 1e-9 / wall_s : 0.0);
  // The verdict: the p50 and p99.9 are medians over the runs (repetitions) of a pace, the max the
  // largest of them all.
  auto median_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  auto verdict = [](bool ok) { return ok ? "PASS" : "FAIL"; };
  bool pass = !g_runs.empty();
  for (const int64_t pace_us : {0, 100}) {
    std::vector<double> p50, p999, max;
    for (const RunPercentiles& r : g_runs)
      if (r.pace_us == pace_us) {
        p50.push_back(r.p50_ns);
        p999.push_back(r.p999_ns);
        max.push_back(r.max_ns);
      }
    if (p50.empty()) continue;
    const char* pace = pace_us == 0 ? "back to back" : "one window every 100 us";
    const double med = median_of(p50);
    pass = pass && med <= 1000.0;
    std::printf("open+close p50 (%s, median of %zu run(s)): %.0f ns, target <= 1000 ns: %s\n", pace, p50.size(), med,
                verdict(med <= 1000.0));
    if (pace_us != 100) continue;
    // At a steady pace the tail says whether the caller ever waits: for the sampler's lock, or a core.
    for (const RunPercentiles& r : g_runs)
      if (r.pace_us == pace_us)
        std::printf("  run: p50 %.0f ns, p99.9 %.0f ns, max %.0f ns\n", r.p50_ns, r.p999_ns, r.max_ns);
    const double tail = median_of(p999), worst = *std::max_element(max.begin(), max.end());
    const bool tail_ok = tail <= 20'000.0 && worst <= 1'000'000.0;
    pass = pass && tail_ok;
    std::printf("open+close tail (%s, %zu run(s)): p50 %.0f ns and p99.9 %.0f ns (medians), max %.0f ns (of all); "
                "targets p50 <= 1000 ns, p99.9 <= 20000 ns, max <= 1000000 ns: %s\n",
                pace, p999.size(), med, tail, worst, verdict(med <= 1000.0 && tail_ok));
  }
  std::printf("result: %s (open+close on the caller's thread: median <= 1 us; at one window every 100 us "
              "p99.9 <= 20 us and max <= 1 ms)\n",
              g_runs.empty() ? "FAIL (BM_OpenClosePercentiles did not run)" : verdict(pass));
  benchmark::Shutdown();
  return pass ? 0 : 1;
}
