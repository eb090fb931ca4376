#include "diagnose/decompose.h"

#include <fmt/format.h>

#include <cmath>

#include "wattlab/core/error.h"

namespace wattlab::diagnose {

double steady_decode_residual(const ConfigRecord& r) {
  const auto& m = *r.llm;
  return m.energy_per_token_joules / (r.avg_power_watts * (m.median_itl_ms * 1e-3) / m.avg_batch_size);
}

namespace {
Factor make(std::string name, std::string field, double a, double b, std::string unit, bool inverse) {
  Factor f{std::move(name), std::move(field), a, b, std::move(unit), inverse ? a / b : b / a, 0};
  return f;
}
}  // namespace

Decomposition decompose(const ConfigRecord& a, const ConfigRecord& b) {
  if (a.workload != b.workload)
    throw UsageError(fmt::format("cannot decompose {} ({}) against {} ({}): one is an LLM and the other diffusion",
                                 a.where(), to_string(a.workload), b.where(), to_string(b.workload)));
  Decomposition d;
  d.a = &a;
  d.b = &b;
  d.energy_a_j = a.energy_per_response_j();
  d.energy_b_j = b.energy_per_response_j();
  d.total_ratio = d.energy_b_j / d.energy_a_j;
  if (a.llm) {
    const auto &ma = *a.llm, &mb = *b.llm;
    d.factors.push_back(make("output length", "avg_output_len", ma.avg_output_len, mb.avg_output_len, "tokens", false));
    d.factors.push_back(make("power", "avg_power_watts", a.avg_power_watts, b.avg_power_watts, "W", false));
    d.factors.push_back(make("median ITL", "median_itl_ms", ma.median_itl_ms, mb.median_itl_ms, "ms", false));
    d.factors.push_back(make("1 / batch", "avg_batch_size", ma.avg_batch_size, mb.avg_batch_size, "requests", true));
    d.factors.push_back(make("residual rho", "energy_per_token_joules / (P*ITL/B_eff)", steady_decode_residual(a),
                             steady_decode_residual(b), "", false));
  } else {
    const auto &da = *a.diffusion, &db = *b.diffusion;
    d.factors.push_back(make("power", "avg_power_watts", a.avg_power_watts, b.avg_power_watts, "W", false));
    d.factors.push_back(make("batch latency", "batch_latency_s", da.batch_latency_s, db.batch_latency_s, "s", false));
    d.factors.push_back(make("1 / batch", "batch_size", da.batch_size, db.batch_size, "images", true));
    const double ra = da.energy_per_generation_joules / (a.avg_power_watts * da.batch_latency_s / da.batch_size);
    const double rb = db.energy_per_generation_joules / (b.avg_power_watts * db.batch_latency_s / db.batch_size);
    d.factors.push_back(make("residual", "stored / (P*latency/batch)", ra, rb, "", false));
  }
  const double lt = std::log(d.total_ratio);
  for (auto& f : d.factors) f.log_share = std::abs(lt) > 1e-12 ? std::log(f.ratio) / lt : 0.0;
  return d;
}

}  // namespace wattlab::diagnose
