#include "export/monitor.h"

#include "export/live.h"

namespace wattlab {
namespace {

std::optional<double> latest(const DomainLive& l, ReadingKind k) {
  const auto& r = current_reading(l, k);
  if (!r) return std::nullopt;
  return r->value;
}

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

}  // namespace wattlab
