// Row invariants of the leaderboard data (docs/joules-framework.md §6), checked on every load.
#include <fmt/format.h>

#include <cmath>

#include "diagnose/records.h"

namespace wattlab::diagnose {
namespace {

void check(std::vector<InvariantViolation>& out, const ConfigRecord& r, const char* name,
           double stored, double computed, double rel_tol) {
  const double scale = std::max(std::abs(stored), std::abs(computed));
  const double rel = scale > 0 ? std::abs(stored - computed) / scale : 0.0;
  if (!(rel <= rel_tol)) {
    out.push_back({r.source, r.row_index, name, computed, stored, rel});
  }
}

}  // namespace

std::vector<InvariantViolation> check_invariants(const ConfigRecord& r, double rel_tol) {
  std::vector<InvariantViolation> v;
  if (r.llm) {
    const auto& m = *r.llm;
    check(v, r, "energy_per_request_joules = energy_per_token_joules x avg_output_len",
          m.energy_per_request_joules, m.energy_per_token_joules * m.avg_output_len, rel_tol);
    check(v, r, "avg_power_watts = energy_per_token_joules x output_throughput_tokens_per_sec",
          r.avg_power_watts, m.energy_per_token_joules * m.output_throughput_tokens_per_sec, rel_tol);
  }
  if (r.diffusion) {
    const auto& d = *r.diffusion;
    const char* e_name = d.video ? "energy_per_video_joules = avg_power_watts x batch_latency_s / batch_size"
                                 : "energy_per_image_joules = avg_power_watts x batch_latency_s / batch_size";
    const char* t_name = d.video ? "throughput_videos_per_sec = batch_size / batch_latency_s"
                                 : "throughput_images_per_sec = batch_size / batch_latency_s";
    if (d.batch_size > 0 && d.batch_latency_s > 0) {
      check(v, r, e_name, d.energy_per_generation_joules,
            r.avg_power_watts * d.batch_latency_s / d.batch_size, rel_tol);
      check(v, r, t_name, d.throughput_per_sec, d.batch_size / d.batch_latency_s, rel_tol);
    }
  }
  // Per-GPU power must stay below the GPU's limit (TDP, or the measured enforced limit).
  if (auto limit = power_limit_per_gpu_w(r); limit && r.num_gpus > 0) {
    const double per_gpu = r.avg_power_watts / r.num_gpus;
    if (per_gpu > *limit * (1 + rel_tol)) {
      v.push_back({r.source, r.row_index, "avg_power_watts / num_gpus <= per-GPU power limit", *limit,
                   per_gpu, (per_gpu - *limit) / *limit});
    }
  }
  return v;
}

}  // namespace wattlab::diagnose
