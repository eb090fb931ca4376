#include "report/run_text.h"

#include <fmt/format.h>

#include <ostream>

namespace wattlab::report {
namespace {

std::string num(double v) { return fmt::format("{:.6g}", v); }

// Run tags (configuration facts), and what the marks channel saw (docs/marks.md).
void print_run_tags(std::ostream& out, const RunRecord& run) {
  std::string user;
  for (const auto& [k, v] : run.info.tags)
    if (k.rfind("marks.", 0) != 0 && k.rfind("wattlab.", 0) != 0) user += fmt::format("{}{}={}", user.empty() ? "" : " ", k, v);
  if (!user.empty()) out << "  tags: " << user << "\n";
  const auto& t = run.info.tags;
  auto get = [&](const char* k) { auto it = t.find(k); return it == t.end() ? std::string("0") : it->second; };
  if (t.count("marks.lines")) {
    out << fmt::format("  marks: {} lines, {} windows, {} malformed lines, {} windows left open at exit, {} marks "
                       "without t_ns (stamped on arrival)\n",
                       get("marks.lines"), get("marks.windows"), get("marks.malformed"), get("marks.unclosed"),
                       get("marks.arrival_stamped"));
    if (auto it = t.find("marks.malformed_first"); it != t.end()) out << "    malformed: " << it->second << "\n";
  }
  // What measuring cost (set by `wattlab run`): CPU time as a share of one core.
  if (t.count("wattlab.sampler_cpu_pct"))
    out << fmt::format("  wattlab CPU: sampler thread {} s = {}% of one core over {} s; whole wattlab process "
                       "{} s = {}% of one core (sampler, flusher, marks reader, store)\n",
                       get("wattlab.sampler_cpu_s"), get("wattlab.sampler_cpu_pct"), get("wattlab.sampler_span_s"),
                       get("wattlab.process_cpu_s"), get("wattlab.process_cpu_pct"));
  if (t.count("wattlab.sampler_read_pct") && t.count("wattlab.sampler_read_budget_pct"))
    out << fmt::format("    sampler: inside sensor reads {}% of one core (wall time); outside the reads it paid for "
                       "{}%, so the thread CPU governor let the reads use {}%\n",
                       get("wattlab.sampler_read_pct"), get("wattlab.sampler_rest_pct"),
                       get("wattlab.sampler_read_budget_pct"));
}

// Counts, labels, and energy per unit of each count: J/unit ± the window's 95% uncertainty ± gain.
void print_window_counts(std::ostream& out, const WindowResult& w) {
  if (!w.labels.empty()) {
    std::string l;
    for (const auto& [k, v] : w.labels) l += fmt::format("{}{}={}", l.empty() ? "" : " ", k, v);
    out << "    labels: " << l << "\n";
  }
  if (w.counts.empty()) return;
  std::string c;
  for (const auto& [k, v] : w.counts) c += fmt::format("{}{} {}", c.empty() ? "" : ", ", k, num(v));
  out << "    counts: " << c << "\n";
  for (const auto& d : w.domains) {
    if (!d.available) continue;
    for (const auto& [k, v] : w.counts) {
      if (v <= 0) continue;
      out << fmt::format("    {:<16} {:>12} J/{} ± {} (95%) ± {} gain{}\n", d.domain_id + (d.simulated ? "*" : ""),
                         num(d.energy_j / v), k, num(d.uncertainty_j / v), num(d.systematic_j / v),
                         w.dur_s() > 0 ? fmt::format("   {} {}/s", num(v / w.dur_s()), k) : "");
    }
  }
}

}  // namespace

void print_run_summary(std::ostream& out, const RunRecord& run) {
  std::string cmd;
  for (const auto& a : run.info.command) cmd += (cmd.empty() ? "" : " ") + a;
  out << fmt::format("run {} ({}): {}\n", run.run_id, run.state(), cmd);
  if (run.info.simulated) out << "  SIMULATED: these numbers come from wattlab's simulated GPU, not hardware\n";
  if (run.exit_status) out << fmt::format("  exit status {}\n", *run.exit_status);
  print_run_tags(out, run);
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
                         d.mean_power_w, d.peak_power_w, to_string(d.estimator));
      const auto& t = d.telemetry;
      std::string tel;
      if (t.mean_sm_clock_mhz) tel += fmt::format("SM {:.0f} MHz  ", *t.mean_sm_clock_mhz);
      if (t.mean_temperature_c) tel += fmt::format("{:.1f} degC  ", *t.mean_temperature_c);
      if (t.power_capped_fraction) tel += fmt::format("power-capped {:.0f}%  ", 100 * *t.power_capped_fraction);
      if (t.mean_tensor_activity_pct) tel += fmt::format("tensor {:.0f}%  ", *t.mean_tensor_activity_pct);
      if (!tel.empty()) out << "      telemetry: " << tel << "\n";
      for (const auto& i : d.issues) out << "      note: " << i << "\n";
    }
    print_window_counts(out, w);
  }
  if (!run.windows.empty() && run.info.simulated) out << "  * SIMULATED domain\n";
  out << "  ± (95%): timing, shaping and noise of this window; ± gain: the sensor's gain tolerance (a bias\n"
         "  shared by every window of the board). Energy from the counter where there is one (estimators:\n"
         "  docs/estimators.md).\n";
  for (const auto& e : run.events) out << fmt::format("  event {} {} {}: {}\n", e.kind, e.domain_id, e.reading, e.message);
}

}  // namespace wattlab::report
