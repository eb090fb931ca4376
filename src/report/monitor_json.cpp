#include "report/monitor_json.h"

#include <nlohmann/json.hpp>

namespace wattlab::report {
namespace {

nlohmann::ordered_json opt(const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); }

}  // namespace

std::string monitor_json_line(const MonitorUpdate& u) {
  nlohmann::ordered_json j;
  j["schema"] = kMonitorJsonSchema;
  j["seq"] = u.seq;
  j["t_s"] = u.t_s;
  j["simulated"] = u.simulated;
  auto& ds = j["domains"] = nlohmann::ordered_json::array();
  for (const auto& r : u.rows) {
    nlohmann::ordered_json o;
    o["domain"] = r.domain;
    o["name"] = r.name;
    o["uuid"] = r.uuid;
    o["simulated"] = r.simulated;
    o["up"] = r.up;
    o["energy_j"] = opt(r.energy_j);
    o["energy_estimator"] = r.energy_estimator;
    o["power_interval_w"] = opt(r.power_interval_w);
    o["power_instant_w"] = opt(r.power_instant_w);
    o["power_average_w"] = opt(r.power_average_w);
    o["power_sample_w"] = opt(r.power_sample_w);
    o["gain_tolerance"] = r.gain_tolerance;
    o["sm_clock_mhz"] = opt(r.sm_clock_mhz);
    o["mem_clock_mhz"] = opt(r.mem_clock_mhz);
    o["temperature_c"] = opt(r.temperature_c);
    o["utilization_gpu_pct"] = opt(r.utilization_gpu_pct);
    o["gpm_sm_activity_pct"] = opt(r.gpm_sm_activity_pct);
    o["gpm_tensor_activity_pct"] = opt(r.gpm_tensor_activity_pct);
    o["gpm_dram_bw_pct"] = opt(r.gpm_dram_bw_pct);
    o["power_limit_w"] = opt(r.power_limit_w);
    o["memory_used_bytes"] = opt(r.memory_used_bytes);
    o["clock_event_reasons"] = r.clock_event_reasons;
    o["read_errors"] = r.read_errors;
    ds.push_back(std::move(o));
  }
  return j.dump();
}

}  // namespace wattlab::report
