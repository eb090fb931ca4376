#include "lab/protocol.h"

#include <fmt/format.h>

#include <cmath>

namespace wattlab::lab {
namespace {

int64_t s_to_ns(double s) { return static_cast<int64_t>(std::llround(s * 1e9)); }
double ns_to_s(int64_t ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace

std::optional<std::size_t> gpu_domain_index(const std::vector<Domain>& domains) {
  for (std::size_t i = 0; i < domains.size(); ++i)
    if (domains[i].parent.empty() && domains[i].id.rfind("gpu:", 0) == 0) return i;
  return std::nullopt;
}

std::optional<double> temperature_drift_c(const Meter& meter, std::size_t d, double span_s) {
  const int64_t now = meter.clock().now_ns();
  const WindowResult r = meter.estimate(now - s_to_ns(span_s), now, "warmup");
  if (d >= r.domains.size()) return std::nullopt;
  const auto& t = r.domains[d].telemetry;
  if (!t.temperature_begin_c || !t.temperature_end_c) return std::nullopt;
  return *t.temperature_end_c - *t.temperature_begin_c;
}

Result<PendingPoint> run_point(GemmExecutor& exec, const GemmSpec& spec, const ProtocolOptions& opt, bool first,
                               const std::string& window_name) {
  if (!(opt.window_s > 0)) return Error{ErrorKind::invalid_argument, fmt::format("window {} s must be positive", opt.window_s), ""};
  Clock& clock = exec.clock();
  const int64_t t_prepare_ns = clock.now_ns();
  auto prepared = exec.prepare(spec, opt.replay_target_s);
  if (!prepared) return prepared.error();
  PendingPoint p;
  p.prepare_s = ns_to_s(clock.now_ns() - t_prepare_ns);
  p.spec = spec;
  p.prepared = *prepared;
  const double replay_s = std::max(p.prepared.replay_s, 1e-6);
  Meter& meter = exec.meter();
  const auto d = gpu_domain_index(meter.domains());

  if (opt.warmup) {
    const int64_t t0 = clock.now_ns();
    const double min_s = first ? std::max(opt.first_warmup_min_s, opt.warmup_min_s) : opt.warmup_min_s;
    const double max_s = std::max(opt.warmup_max_s, min_s);
    const auto chunk = std::max<int64_t>(1, std::llround(opt.warmup_chunk_s / replay_s));
    for (;;) {
      if (auto st = exec.launch(chunk); !st) return st.error();
      if (auto st = exec.synchronize(); !st) return st.error();
      p.warmup_s = ns_to_s(clock.now_ns() - t0);
      if (p.warmup_s + 1e-9 < min_s) continue;
      if (d) {
        // Only a span inside the warm-up counts: earlier points ran other inputs.
        p.warmup_drift_c = temperature_drift_c(meter, *d, std::min(opt.slope_window_s, p.warmup_s));
        if (p.warmup_drift_c && std::fabs(*p.warmup_drift_c) < opt.max_drift_c) {
          p.warmup_steady = true;
          break;
        }
      }
      if (p.warmup_s >= max_s) break;
    }
  }

  p.replays = std::max<int64_t>(1, std::llround(opt.window_s / replay_s));
  p.gemms = p.replays * p.prepared.gemms_per_replay;
  Status launched;
  auto sync = [&] { (void)exec.synchronize(); };
  p.window = meter.open(window_name, sync);
  launched = exec.launch(p.replays);
  meter.close(p.window, sync);
  if (!launched) return launched.error();
  return p;
}

CollectedPoint collect(GemmExecutor& exec, const PendingPoint& p) {
  CollectedPoint out{exec.window_result(p.window), {}};
  const WindowResult& r = out.window;
  GemmPointCounts& c = out.counts;
  const double dur_s = r.dur_s();
  c.gemms = static_cast<double>(p.gemms);
  c.replays = static_cast<double>(p.replays);
  c.gemms_per_replay = static_cast<double>(p.prepared.gemms_per_replay);
  c.replay_s = p.prepared.replay_s;
  c.window_s = dur_s;
  c.prepare_s = p.prepare_s;
  c.warmup_s = p.warmup_s;
  c.warmup_steady = p.warmup_steady;
  c.warmup_drift_c = p.warmup_drift_c;
  c.tflops = dur_s > 0 ? gemm_flops(p.spec.m, p.spec.n, p.spec.k) * static_cast<double>(p.gemms) / dur_s * 1e-12 : 0;
  // No number stands in for an unchecked point: the count is absent instead.
  if (p.prepared.rel_error && std::isfinite(*p.prepared.rel_error)) c.rel_error = *p.prepared.rel_error;
  else if (p.prepared.rel_error) c.rel_error_nonfinite = true;
  c.nonfinite_fraction = p.prepared.nonfinite_fraction;
  c.input_stats = p.prepared.input_stats;
  c.prepare_steps_s = p.prepared.step_s;
  const auto d = gpu_domain_index(exec.meter().domains());
  if (d && *d < r.domains.size() && r.domains[*d].available) {
    const DomainEnergy& e = r.domains[*d];
    c.energy_j = e.energy_j;
    c.energy_u_j = e.uncertainty_j;
    c.energy_sys_j = e.systematic_j;
    c.mean_power_w = e.mean_power_w;
    c.mean_power_u_w = dur_s > 0 ? e.uncertainty_j / dur_s : 0;
    if (p.gemms > 0) {
      c.energy_per_gemm_j = e.energy_j / static_cast<double>(p.gemms);
      c.energy_per_gemm_u_j = e.uncertainty_j / static_cast<double>(p.gemms);
    }
    const auto& t = e.telemetry;
    c.mean_sm_clock_mhz = t.mean_sm_clock_mhz;
    c.temperature_c = t.mean_temperature_c;
    c.power_capped_fraction = t.power_capped_fraction;
    c.tensor_activity_pct = t.mean_tensor_activity_pct;
    c.power_limit_w = t.power_limit_w;
  }
  return out;
}

}  // namespace wattlab::lab
