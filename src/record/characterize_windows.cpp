#include "wattlab/record/characterize_windows.h"

#include <string>

namespace wattlab {
namespace {

WindowResult idle_window(const DomainCharacter& d) {
  WindowResult w;
  w.name = "characterize:idle " + d.domain_id;
  w.t_begin_ns = d.idle.t_begin_ns;
  w.t_end_ns = d.idle.t_end_ns;
  w.final = true;
  w.labels = {{"domain", d.domain_id}, {"reading", std::string(to_string(d.idle.power_kind))},
              {"settled", d.idle.settled ? "yes" : "no"}};
  w.counts = {{"idle_power_w", d.idle.power_w}, {"idle_power_sd_w", d.idle.power_sd_w},
              {"waited_s", static_cast<double>(d.idle.waited_ns) * 1e-9}};
  if (d.idle.counter_power_w) w.counts["counter_power_w"] = *d.idle.counter_power_w;
  return w;
}

WindowResult reading_window(const DomainCharacter& d, const ReadingCharacter& r) {
  WindowResult w;
  w.name = "characterize:reading " + d.domain_id + " " + std::string(to_string(r.kind));
  w.final = true;
  w.labels = {{"domain", d.domain_id}, {"reading", std::string(to_string(r.kind))}};
  if (!r.first_error.empty()) w.labels["first_error"] = r.first_error;
  w.counts = {{"reads", static_cast<double>(r.reads)}, {"failed_reads", static_cast<double>(r.failed_reads)},
              {"changes", static_cast<double>(r.changes)}};
  if (r.read_cost_ns.n) {
    w.counts["read_cost_median_us"] = r.read_cost_ns.median * 1e-3;
    w.counts["read_cost_p99_us"] = r.read_cost_ns.p99 * 1e-3;
  }
  if (r.update_period_ns.n) {
    w.counts["update_period_median_ms"] = r.update_period_ns.median * 1e-6;
    w.counts["update_period_p10_ms"] = r.update_period_ns.p10 * 1e-6;
    w.counts["update_period_p90_ms"] = r.update_period_ns.p90 * 1e-6;
  }
  if (r.sample_spacing_ns.n) {
    w.counts["sample_spacing_median_ms"] = r.sample_spacing_ns.median * 1e-6;
    w.counts["sample_spacing_p10_ms"] = r.sample_spacing_ns.p10 * 1e-6;
    w.counts["sample_spacing_p90_ms"] = r.sample_spacing_ns.p90 * 1e-6;
    w.counts["buffer_depth_samples"] = static_cast<double>(r.depth_samples);
  }
  return w;
}

// The counter's energy over the load, with the integrated instant power as its cross-check.
WindowResult load_window(const DomainCharacter& d) {
  WindowResult w;
  w.name = "characterize:load " + d.domain_id;
  w.t_begin_ns = d.load.t_a_ns;
  w.t_end_ns = d.load.t_b_ns;
  w.final = true;
  DomainEnergy e;
  e.domain_id = d.domain_id;
  e.simulated = d.simulated;
  e.available = true;
  e.energy_j = d.load.counter_j;
  e.mean_power_w = d.load.counter_power_w;
  e.estimator = "counter";
  for (const auto& a : d.load.rows)
    if (a.kind == ReadingKind::power_instant_w && a.available) {
      e.cross_check_j = a.integrated_j;
      e.cross_check_estimator = "integrated(power_instant_w)";
    }
  w.domains.push_back(e);
  w.labels = {{"domain", d.domain_id}, {"load", d.load.load}, {"load_report", d.load.load_report}};
  for (const auto& a : d.load.rows)
    if (a.available) {
      const std::string k(to_string(a.kind));
      w.counts[k + ".ratio"] = a.ratio;
      w.counts[k + ".diff_pct"] = a.diff_pct;
      w.counts[k + ".uncertainty_pct"] = a.uncertainty_pct;
    }
  return w;
}

}  // namespace

std::vector<WindowResult> characterization_windows(const std::vector<DomainCharacter>& result) {
  std::vector<WindowResult> out;
  for (const auto& d : result) {
    if (d.idle.measured) out.push_back(idle_window(d));
    for (const auto& r : d.readings) out.push_back(reading_window(d, r));
    if (d.load.ran && d.load.skipped.empty()) out.push_back(load_window(d));
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i].id = i + 1;
  return out;
}

}  // namespace wattlab
