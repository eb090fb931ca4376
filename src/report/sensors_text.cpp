#include "report/sensors_text.h"

#include <fmt/format.h>

#include <ostream>

namespace wattlab::report {

std::string describe_backends(const OpenedSensors& opened) {
  std::string out;
  if (opened.simulated()) out += "SIMULATED GPU (wattlab-sim, not hardware): every number below is simulated\n";
  for (const auto& st : opened.statuses)
    out += std::string(st.loaded ? "  loaded " : "  not loaded ") + st.backend + ": " + st.detail + "\n";
  if (opened.domain_count() == 0) out += "  nothing to measure here; try --device sim for the simulated GPU\n";
  return out;
}

void print_sensor_list(std::ostream& out, const OpenedSensors& opened) {
  out << describe_backends(opened);
  for (const auto& sensor : opened.sensors) {
    for (const auto& d : sensor->domains()) {
      out << fmt::format("{}  {} {}{}  scope {}{}\n", d.id, d.vendor, d.name, d.uuid.empty() ? "" : " (" + d.uuid + ")",
                         d.scope, d.parent.empty() ? "" : ", inside " + d.parent);
      out << fmt::format("  gain tolerance ±{:.0f}%, unseen power {:.1f} W; model from {}\n",
                         100 * d.model.gain_tolerance, d.model.unseen_power_w, d.model.source);
      out << fmt::format("  {:<24} {:>10} {:>10} {:>10}  {}\n", "reading", "update ms", "window ms", "cost us", "note");
      for (const auto& r : d.model.readings)
        out << fmt::format("  {:<24} {:>10.1f} {:>10.1f} {:>10.1f}  {}\n", to_string(r.kind),
                           static_cast<double>(r.update_period_ns) * 1e-6,
                           static_cast<double>(r.averaging_window_ns) * 1e-6,
                           static_cast<double>(r.read_cost_ns) * 1e-3, r.note);
    }
    for (const auto& [k, v] : sensor->properties()) out << fmt::format("  {}: {}\n", k, v);
  }
}

}  // namespace wattlab::report
