#include "run_summary.h"

#include <fmt/format.h>

#include <ostream>

namespace wattlab::cli {

void print_run_summary(std::ostream& out, const RunRecord& run) {
  std::string cmd;
  for (const auto& a : run.info.command) cmd += (cmd.empty() ? "" : " ") + a;
  out << fmt::format("run {} ({}): {}\n", run.run_id, run.state(), cmd);
  if (run.info.simulated) out << "  SIMULATED: these numbers come from wattlab's simulated GPU, not hardware\n";
  if (run.exit_status) out << fmt::format("  exit status {}\n", *run.exit_status);
  for (const auto& w : run.windows) {
    out << fmt::format("  window '{}': {:.3f} s{}\n", w.name, w.dur_s(), w.final ? "" : " (provisional)");
    out << fmt::format("    {:<16} {:>14} {:>12} {:>12} {:>10} {:>10}  {}\n", "domain", "energy J", "± (95%) J",
                       "± gain J", "mean W", "peak W", "estimator");
    for (const auto& d : w.domains) {
      if (!d.available) {
        out << fmt::format("    {:<16} {:>14}  {}\n", d.domain_id + (d.simulated ? "*" : ""), "unavailable",
                           d.issues.empty() ? "" : d.issues.front());
        continue;
      }
      out << fmt::format("    {:<16} {:>14.3f} {:>12.3f} {:>12.3f} {:>10.1f} {:>10.1f}  {}\n",
                         d.domain_id + (d.simulated ? "*" : ""), d.energy_j, d.uncertainty_j, d.systematic_j,
                         d.mean_power_w, d.peak_power_w, d.estimator);
      const auto& t = d.telemetry;
      std::string tel;
      if (t.mean_sm_clock_mhz) tel += fmt::format("SM {:.0f} MHz  ", *t.mean_sm_clock_mhz);
      if (t.mean_temperature_c) tel += fmt::format("{:.1f} degC  ", *t.mean_temperature_c);
      if (t.power_capped_fraction) tel += fmt::format("power-capped {:.0f}%  ", 100 * *t.power_capped_fraction);
      if (t.mean_tensor_activity_pct) tel += fmt::format("tensor {:.0f}%  ", *t.mean_tensor_activity_pct);
      if (!tel.empty()) out << "      telemetry: " << tel << "\n";
      for (const auto& i : d.issues) out << "      note: " << i << "\n";
    }
  }
  if (!run.windows.empty() && run.info.simulated) out << "  * SIMULATED domain\n";
  out << "  ± (95%): timing, shaping and noise of this window; ± gain: the sensor's gain tolerance (a bias\n"
         "  shared by every window of the board). Energy from the counter where there is one (estimators:\n"
         "  docs/estimators.md).\n";
  for (const auto& e : run.events) out << fmt::format("  event {} {} {}: {}\n", e.kind, e.domain_id, e.reading, e.message);
}

}  // namespace wattlab::cli
