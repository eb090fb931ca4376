#include "report/monitor_text.h"

#include <fmt/format.h>

namespace wattlab::report {
namespace {

std::string num(const std::optional<double>& v, const char* fmt_spec, const char* unit) {
  if (!v) return "n/a";
  return fmt::format(fmt::runtime(fmt_spec), *v) + unit;
}

}  // namespace

std::vector<std::string> monitor_lines(const MonitorUpdate& u) {
  std::vector<std::string> out;
  out.push_back(fmt::format("wattlab monitor  t = {:.1f} s  update {}{}", u.t_s, u.seq,
                            u.simulated ? "  SIMULATED (software GPU, not hardware)" : ""));
  for (const auto& r : u.rows) {
    std::string line = fmt::format("{:<14}{} ", r.domain, r.simulated ? " SIMULATED" : "");
    if (!r.up) line += "LOST ";
    line += "power " + num(r.power_interval_w, "{:.1f}", " W") + " (mean since last update, from energy; instant " +
            num(r.power_instant_w, "{:.1f}", " W") + ", 1 s avg " + num(r.power_average_w, "{:.1f}", " W") + ")";
    line += "  energy " + num(r.energy_j, "{:.1f}", " J");
    if (r.energy_j) line += fmt::format(" +-{:.0f}% gain tolerance [{}]", r.gain_tolerance * 100, r.energy_estimator);
    line += "  SM " + num(r.sm_clock_mhz, "{:.0f}", " MHz") + "  " + num(r.temperature_c, "{:.0f}", " C") + "  util " +
            num(r.utilization_gpu_pct, "{:.0f}", " %");
    if (r.gpm_sm_activity_pct) line += "  SM activity " + num(r.gpm_sm_activity_pct, "{:.0f}", " %");
    if (r.gpm_tensor_activity_pct) line += "  tensor " + num(r.gpm_tensor_activity_pct, "{:.0f}", " %");
    if (!r.clock_event_reasons.empty()) line += "  throttle " + fmt::format("{}", fmt::join(r.clock_event_reasons, ","));
    if (r.read_errors > 0) line += fmt::format("  read errors {}", r.read_errors);
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace wattlab::report
