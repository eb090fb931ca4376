// A run written straight into a temporary store for the HTML report tests: a SIMULATED gpu:0 with
// power and telemetry every 100 ms over 12 s, a whole-run window, a warm-up window with a name
// that needs escaping, GEMM points of two experiments (numeric and categorical sweeps, two
// engines) and three token windows of one model (a batch sweep: a frontier).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "store/gemm_point_record.h"
#include "wattlab/store/store.h"

namespace wattlab::sample {

inline constexpr const char* kNastyWindow = "<b>warm&up\"</b>";

inline WindowResult sample_window(WindowId id, std::string name, double t0_s, double t1_s, double power_w) {
  WindowResult w;
  w.id = id;
  w.name = std::move(name);
  w.t_begin_ns = static_cast<int64_t>(t0_s * 1e9);
  w.t_end_ns = static_cast<int64_t>(t1_s * 1e9);
  w.final = true;
  DomainEnergy d;
  d.domain_id = "gpu:0";
  d.simulated = true;
  d.available = true;
  d.energy_j = power_w * (t1_s - t0_s);
  d.uncertainty_j = 0.01 * d.energy_j + 0.5;
  d.systematic_j = 0.05 * d.energy_j;
  d.mean_power_w = power_w;
  d.peak_power_w = power_w + 20;
  d.estimator = Estimator::counter_samples;
  w.domains.push_back(d);
  return w;
}

// Writes the run into `store` and returns its id.
inline RunId write_sample_run(Store& store) {
  RunInfo info;
  info.command = {"python3", "bench.py", "--size", "<4096>"};
  info.host = "testhost";
  info.start_utc = "2026-12-03T07:00:00.000Z";
  info.simulated = true;
  info.device_selection = "sim";
  const RunId run = store.begin_run(info).value();
  Domain d;
  d.id = "gpu:0";
  d.vendor = "wattlab-sim";
  d.name = "wattlab simulated GPU";
  d.scope = "gpu";
  d.simulated = true;
  (void)store.add_domains(run, std::vector<Domain>{d});
  std::vector<TimedReading> rs;
  for (int i = 0; i <= 120; ++i) {
    const int64_t t = i * 100'000'000LL;
    const double p = 120 + 300 * (i >= 20 ? 1 : 0) + 40 * std::sin(i * 0.3);
    rs.push_back({0, {t, ReadingKind::power_instant_w, p, 0, 0}});
    rs.push_back({0, {t, ReadingKind::energy_counter_j, 40.0 * i, 0, 0}});
    rs.push_back({0, {t + 1000, ReadingKind::sm_clock_mhz, 1980.0 - (i > 60 ? 200 : 0), 0, 0}});
    rs.push_back({0, {t + 2000, ReadingKind::temperature_c, 40 + 0.2 * i, 0, 0}});
    rs.push_back({0, {t + 3000, ReadingKind::utilization_gpu_pct, i >= 20 ? 100.0 : 0.0, 0, 0}});
    rs.push_back({0, {t + 4000, ReadingKind::gpm_tensor_activity_pct, i >= 20 ? 80.0 : 0.0, 0, 0}});
  }
  (void)store.append_readings(run, rs);
  WindowId id = 1;
  (void)store.add_window(run, sample_window(id++, "run", 0, 12, 380));
  (void)store.add_window(run, sample_window(id++, kNastyWindow, 0, 2, 130));
  // GEMM points as the lab stores them (through their record's codec).
  auto gemm_point = [&](WindowResult& w, const char* experiment, const char* engine, const char* param,
                        const std::string& value, int index) {
    GemmPointRecord r;
    r.experiment = experiment;
    r.engine = engine;
    r.m = r.n = r.k = 1024;
    r.recipe_a = r.recipe_b = "normal(mean=0, std=1)";
    r.seed = 1;
    r.param = param;
    r.param_value = value;
    r.sweep = "sample";
    r.point = index;
    r.simulated = true;
    r.counts.energy_per_gemm_j = w.counts["energy_per_gemm_j"];
    r.counts.energy_per_gemm_u_j = w.counts["energy_per_gemm_u_j"];
    r.counts.mean_power_w = w.counts["mean_power_w"];
    if (auto t = w.counts.find("tflops"); t != w.counts.end()) r.counts.tflops = t->second;
    w.counts.clear();
    r.encode(w);
  };
  double t = 2;
  int index = 0;
  for (const char* engine : {"bf16", "fp8"}) {
    for (int k : {256, 1024, 4096}) {
      auto w = sample_window(id++, std::string("E1 ") + engine + " k=" + std::to_string(k), t, t + 0.5, 400 + k / 64.0);
      const double e = 1e-6 * k * (engine[0] == 'b' ? 2 : 1);
      w.counts = {{"energy_per_gemm_j", e}, {"energy_per_gemm_u_j", 0.05 * e}, {"mean_power_w", 400 + k / 64.0},
                  {"tflops", 500}};
      gemm_point(w, "E1", engine, "k", std::to_string(k), index++);
      (void)store.add_window(run, w);
      t += 0.5;
    }
  }
  for (const char* dist : {"zeros", "gaussian", "uniform"}) {
    auto w = sample_window(id++, std::string("E2 ") + dist, t, t + 0.5, 450);
    w.counts = {{"energy_per_gemm_j", dist[0] == 'z' ? 1e-3 : 2e-3}, {"energy_per_gemm_u_j", 1e-4}, {"mean_power_w", 450}};
    gemm_point(w, "E2", "bf16", "distribution", dist, index++);
    (void)store.add_window(run, w);
    t += 0.5;
  }
  // A batch sweep with token counts: configurations for the diagnose frontier.
  for (int batch : {8, 32, 64}) {
    auto w = sample_window(id++, "batch " + std::to_string(batch), t, t + 1, 300 + 3.0 * batch);
    w.labels = {{"model", "test/llm-8b"}, {"task", "chat"}, {"batch", std::to_string(batch)}};
    w.counts = {{"tokens", 200.0 * batch}, {"requests", 2.0 * batch}};
    (void)store.add_window(run, w);
    t += 1;
  }
  (void)store.end_run(run, 12'000'000'000LL, 0);
  return run;
}

}  // namespace wattlab::sample
