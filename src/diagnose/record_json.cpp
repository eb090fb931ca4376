// A ConfigRecord back into a leaderboard row: the same field names and units.
#include <nlohmann/json.hpp>

#include "diagnose/readers.h"

namespace wattlab::diagnose {

std::string record_to_json(const ConfigRecord& r) {
  nlohmann::ordered_json j;
  j["model_id"] = r.model_id;
  j["nickname"] = r.nickname;
  if (!r.architecture.empty()) j["architecture"] = r.architecture;
  j["total_params_billions"] = r.total_params_billions;
  j["activated_params_billions"] = r.activated_params_billions;
  j["weight_precision"] = r.weight_precision;
  j["gpu_model"] = r.gpu_model;
  j["num_gpus"] = r.num_gpus;
  if (r.llm) {
    const auto& m = *r.llm;
    j["tensor_parallel"] = m.tensor_parallel;
    j["expert_parallel"] = m.expert_parallel;
    j["data_parallel"] = m.data_parallel;
    j["max_num_seqs"] = m.max_num_seqs;
    j["avg_batch_size"] = m.avg_batch_size;
    j["avg_output_len"] = m.avg_output_len;
    j["energy_per_token_joules"] = m.energy_per_token_joules;
    j["energy_per_request_joules"] = m.energy_per_request_joules;
    j["avg_power_watts"] = r.avg_power_watts;
    j["output_throughput_tokens_per_sec"] = m.output_throughput_tokens_per_sec;
    j["median_itl_ms"] = m.median_itl_ms;
    if (m.p90_itl_ms) j["p90_itl_ms"] = *m.p90_itl_ms;
    if (m.p95_itl_ms) j["p95_itl_ms"] = *m.p95_itl_ms;
    if (m.p99_itl_ms) j["p99_itl_ms"] = *m.p99_itl_ms;
  }
  if (r.diffusion) {
    const auto& d = *r.diffusion;
    j["ulysses_degree"] = d.ulysses_degree;
    j["ring_degree"] = d.ring_degree;
    j["batch_size"] = d.batch_size;
    j["inference_steps"] = d.inference_steps;
    j[d.video ? "video_height" : "image_height"] = d.height;
    j[d.video ? "video_width" : "image_width"] = d.width;
    if (d.num_frames) j["num_frames"] = *d.num_frames;
    if (d.fps) j["fps"] = *d.fps;
    j["batch_latency_s"] = d.batch_latency_s;
    j[d.video ? "throughput_videos_per_sec" : "throughput_images_per_sec"] = d.throughput_per_sec;
    j[d.video ? "energy_per_video_joules" : "energy_per_image_joules"] = d.energy_per_generation_joules;
    j["avg_power_watts"] = r.avg_power_watts;
  }
  const auto& x = r.measured;
  auto put = [&](const char* k, const std::optional<double>& v) {
    if (v) j[k] = *v;
  };
  put("cpu_energy_per_unit_joules", x.cpu_energy_per_unit_joules);
  put("sm_clock_mhz", x.sm_clock_mhz);
  put("sm_activity", x.sm_activity);
  put("tensor_activity", x.tensor_activity);
  put("dram_activity", x.dram_activity);
  put("gpu_utilization", x.gpu_utilization);
  put("power_limit_watts", x.power_limit_watts);
  put("kv_cache_usage", x.kv_cache_usage);
  put("cpu_utilization", x.cpu_utilization);
  for (const auto& [k, v] : r.extra_json) j[k] = nlohmann::ordered_json::parse(v);
  // Text from a store or a file need not be UTF-8: such bytes become U+FFFD rather than an error.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace wattlab::diagnose
