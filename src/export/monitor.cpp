#include "wattlab/export/monitor.h"

#include <nlohmann/json.hpp>

#include "wattlab/export/live.h"

namespace wattlab {
namespace {

std::optional<double> latest(const DomainLive& l, ReadingKind k) {
  const auto& r = l.health(k).latest;
  if (!r) return std::nullopt;
  return r->value;
}

nlohmann::ordered_json opt(const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); }

}  // namespace

MonitorView::MonitorView(std::vector<Domain> domains) : domains_(std::move(domains)), prev_(domains_.size()) {}

MonitorUpdate MonitorView::update(const MeterSnapshot& s) {
  MonitorUpdate u;
  u.seq = seq_++;
  u.t_s = static_cast<double>(s.t_ns - s.start_t_ns) * 1e-9;
  for (std::size_t i = 0; i < domains_.size() && i < s.domains.size(); ++i) {
    const Domain& d = domains_[i];
    const DomainLive& l = s.domains[i];
    MonitorRow r;
    r.domain = d.id;
    r.name = d.name;
    r.uuid = d.uuid;
    r.simulated = d.simulated;
    u.simulated = u.simulated || d.simulated;
    r.up = !l.lost;
    if (l.energy_ok) {
      r.energy_j = l.energy_j;
      r.energy_estimator = l.energy_estimator;
      if (prev_[i] && l.energy_t_ns > prev_[i]->first)
        r.power_interval_w = (l.energy_j - prev_[i]->second) / (static_cast<double>(l.energy_t_ns - prev_[i]->first) * 1e-9);
      prev_[i] = std::make_pair(l.energy_t_ns, l.energy_j);
    }
    r.power_instant_w = latest(l, ReadingKind::power_instant_w);
    r.power_average_w = latest(l, ReadingKind::power_average_w);
    r.power_sample_w = latest(l, ReadingKind::power_sample_w);
    r.sm_clock_mhz = latest(l, ReadingKind::sm_clock_mhz);
    r.mem_clock_mhz = latest(l, ReadingKind::mem_clock_mhz);
    r.temperature_c = latest(l, ReadingKind::temperature_c);
    r.utilization_gpu_pct = latest(l, ReadingKind::utilization_gpu_pct);
    r.gpm_sm_activity_pct = latest(l, ReadingKind::gpm_sm_activity_pct);
    r.gpm_tensor_activity_pct = latest(l, ReadingKind::gpm_tensor_activity_pct);
    r.gpm_dram_bw_pct = latest(l, ReadingKind::gpm_dram_bw_pct);
    r.power_limit_w = latest(l, ReadingKind::power_limit_w);
    r.memory_used_bytes = latest(l, ReadingKind::memory_used_bytes);
    if (const auto m = latest(l, ReadingKind::clock_event_reasons))
      r.clock_event_reasons = clock_event_reason_names(static_cast<uint64_t>(*m));
    r.gain_tolerance = d.model.gain_tolerance;
    for (const auto& h : l.readings) r.read_errors += h.read_errors;
    u.rows.push_back(std::move(r));
  }
  return u;
}

std::string monitor_json_line(const MonitorUpdate& u) {
  nlohmann::ordered_json j;
  j["schema"] = "wattlab.monitor/1";
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

}  // namespace wattlab
