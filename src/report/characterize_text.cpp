#include "report/characterize.h"

#include <fmt/format.h>

#include <ostream>

#include "report/table.h"

namespace wattlab::report {
namespace {

double ms(double ns) { return ns * 1e-6; }
double us(double ns) { return ns * 1e-3; }

nlohmann::json stats_json(const Stats& s, double scale) {
  if (s.n == 0) return nullptr;
  return {{"n", s.n}, {"median", s.median * scale}, {"p10", s.p10 * scale}, {"p90", s.p90 * scale},
          {"p99", s.p99 * scale}, {"min", s.min * scale}, {"max", s.max * scale}};
}

std::string period_text(const ReadingCharacter& r) {
  if (r.reads == r.failed_reads) return "reads failed";
  if (r.update_period_ns.n == 0) return fmt::format("no change in {:.1f} s", static_cast<double>(r.poll_dur_ns) * 1e-9);
  return fmt::format("{:.1f} [{:.1f}-{:.1f}] n={}", ms(r.update_period_ns.median), ms(r.update_period_ns.p10),
                     ms(r.update_period_ns.p90), r.update_period_ns.n);
}

}  // namespace

nlohmann::json characterization_to_json(const std::vector<DomainCharacter>& result, bool simulated,
                                        const std::vector<std::string>& notes) {
  nlohmann::json j;
  j["schema"] = "wattlab.characterize/1";
  j["simulated"] = simulated;
  j["notes"] = notes;
  j["units"] = "update_period_ms, read_cost_us, sample_spacing_ms: median/p10/p90/p99/min/max over n; power W; energy J";
  for (const auto& d : result) {
    nlohmann::json dj{{"domain", d.domain_id}, {"name", d.name}, {"simulated", d.simulated}};
    const auto& i = d.idle;
    dj["idle"] = {{"measured", i.measured}, {"skipped", i.skipped}, {"reading", to_string(i.power_kind)},
                  {"settled", i.settled}, {"waited_s", static_cast<double>(i.waited_ns) * 1e-9},
                  {"block_means_w", i.block_means_w}, {"power_w", i.power_w}, {"power_sd_w", i.power_sd_w},
                  {"power_reads", i.power_reads},
                  {"measure_s", static_cast<double>(i.t_end_ns - i.t_begin_ns) * 1e-9},
                  {"counter_power_w", i.counter_power_w ? nlohmann::json(*i.counter_power_w) : nlohmann::json(nullptr)},
                  {"counter_edge_ms", ms(i.counter_edge_ns)}};
    for (const auto& r : d.readings) {
      nlohmann::json rj{{"reading", to_string(r.kind)}, {"unit", unit_of(r.kind)},
                        {"poll_s", static_cast<double>(r.poll_dur_ns) * 1e-9}, {"reads", r.reads},
                        {"failed_reads", r.failed_reads}, {"first_error", r.first_error},
                        {"read_cost_us", stats_json(r.read_cost_ns, 1e-3)},
                        {"read_interval_us", us(static_cast<double>(r.read_interval_ns))}, {"changes", r.changes},
                        {"update_period_ms", stats_json(r.update_period_ns, 1e-6)},
                        {"model", {{"update_period_ms", ms(static_cast<double>(r.model.update_period_ns))},
                                   {"averaging_window_ms", ms(static_cast<double>(r.model.averaging_window_ns))},
                                   {"read_cost_us", us(static_cast<double>(r.model.read_cost_ns))},
                                   {"note", r.model.note}}}};
      if (r.kind == ReadingKind::power_sample_w)
        rj["sample_buffer"] = {{"samples", r.samples}, {"spacing_ms", stats_json(r.sample_spacing_ns, 1e-6)},
                               {"samples_per_update", stats_json(r.samples_per_update, 1)},
                               {"depth_samples", r.depth_samples},
                               {"depth_left_alone_s", static_cast<double>(r.depth_left_alone_ns) * 1e-9},
                               {"depth_is_lower_bound", r.depth_is_lower_bound}};
      dj["readings"].push_back(rj);
    }
    const auto& l = d.load;
    nlohmann::json lj{{"ran", l.ran}, {"skipped", l.skipped}, {"load", l.load}, {"load_report", l.load_report},
                      {"simulated", l.simulated}};
    if (l.ran && l.skipped.empty()) {
      lj["window_s"] = static_cast<double>(l.t_b_ns - l.t_a_ns) * 1e-9;
      lj["window_starts_s_after_load_start"] = static_cast<double>(l.t_a_ns - l.t_start_ns) * 1e-9;
      lj["counter_j"] = l.counter_j;
      lj["counter_power_w"] = l.counter_power_w;
      lj["counter_edge_ms"] = ms(l.counter_edge_ns);
      for (const auto& a : l.rows)
        lj["agreement"].push_back({{"reading", to_string(a.kind)}, {"available", a.available}, {"reason", a.reason},
                                   {"integrated_j", a.integrated_j}, {"ratio", a.ratio}, {"diff_pct", a.diff_pct},
                                   {"uncertainty_pct", a.uncertainty_pct}, {"values", a.values},
                                   {"covered", a.covered}, {"expected_bias", a.bias}});
    }
    dj["load"] = lj;
    j["domains"].push_back(dj);
  }
  return j;
}

void print_characterization(std::ostream& out, const std::vector<DomainCharacter>& result, bool simulated) {
  const std::string sim = simulated ? "SIMULATED " : "";
  for (const auto& d : result) {
    out << fmt::format("\n{}{} ({}){}\n", sim, d.domain_id, d.name, d.simulated ? "  [SIMULATED]" : "");
    const auto& i = d.idle;
    if (i.measured) {
      out << fmt::format("  idle power: {:.2f} W ± {:.2f} W (mean ± sd of {} {} reads over {:.1f} s)", i.power_w,
                         i.power_sd_w, i.power_reads, to_string(i.power_kind),
                         static_cast<double>(i.t_end_ns - i.t_begin_ns) * 1e-9);
      if (i.counter_power_w) out << fmt::format("; energy counter: {:.2f} W", *i.counter_power_w);
      out << fmt::format("\n  idle settle: {} after waiting {:.1f} s (1 s block means must agree within max(1 W, 1%))\n",
                         i.settled ? "settled" : "NOT settled", static_cast<double>(i.waited_ns) * 1e-9);
    } else {
      out << "  idle power: not measured: " << i.skipped << "\n";
    }
    Table t({"reading", "update period ms median [p10-p90]", "model ms", "read cost us median", "p99", "reads",
                     "failed"});
    for (const auto& r : d.readings)
      t.add_row({std::string(to_string(r.kind)), period_text(r), fmt::format("{:.1f}", ms(static_cast<double>(r.model.update_period_ns))),
                 r.read_cost_ns.n ? fmt::format("{:.1f}", us(r.read_cost_ns.median)) : "-",
                 r.read_cost_ns.n ? fmt::format("{:.1f}", us(r.read_cost_ns.p99)) : "-", std::to_string(r.reads),
                 std::to_string(r.failed_reads)});
    out << t.render();
    for (const auto& r : d.readings) {
      if (!r.first_error.empty()) out << fmt::format("  {} failed: {}\n", to_string(r.kind), r.first_error);
      if (r.kind != ReadingKind::power_sample_w) continue;
      const auto& s = r.sample_spacing_ns;
      if (s.n == 0) {
        out << "  sample buffer: no samples seen\n";
        continue;
      }
      out << fmt::format("  sample buffer spacing: {:.2f} ms median [{:.2f}-{:.2f}], {} samples; {:.0f} samples per update; "
                         "one read after {:.1f} s left alone returned {} samples ({:.2f} s){}\n",
                         ms(s.median), ms(s.p10), ms(s.p90), r.samples, r.samples_per_update.median,
                         static_cast<double>(r.depth_left_alone_ns) * 1e-9, r.depth_samples,
                         static_cast<double>(r.depth_samples) * ms(s.median) * 1e-3,
                         r.depth_is_lower_bound ? " (all of that time: depth is at least this)" : " (truncated: this is the buffer's depth)");
    }
    const auto& l = d.load;
    if (!l.ran || !l.skipped.empty()) {
      out << "  load agreement: skipped: " << (l.skipped.empty() ? "did not run" : l.skipped) << "\n";
      continue;
    }
    out << fmt::format("  load: {}; {}\n", l.load, l.load_report);
    out << fmt::format("  energy counter over {:.2f} s (ticks from {:.2f} s into the load): {:.1f} J, {:.1f} W; edges ±{:.1f} ms\n",
                       static_cast<double>(l.t_b_ns - l.t_a_ns) * 1e-9, static_cast<double>(l.t_a_ns - l.t_start_ns) * 1e-9,
                       l.counter_j, l.counter_power_w, ms(l.counter_edge_ns));
    Table a({"integrated reading", "energy J", "ratio to counter", "diff %", "± % (1σ)", "values"});
    for (const auto& r : l.rows)
      a.add_row({std::string(to_string(r.kind)), r.available ? fmt::format("{:.1f}", r.integrated_j) : "-",
                 r.available ? fmt::format("{:.4f}", r.ratio) : "-", r.available ? fmt::format("{:+.2f}", r.diff_pct) : "-",
                 r.available ? fmt::format("{:.2f}", r.uncertainty_pct) : "-", std::to_string(r.values)});
    out << a.render();
    for (const auto& r : l.rows) {
      if (!r.available) out << fmt::format("  {}: {}\n", to_string(r.kind), r.reason);
      out << fmt::format("  expected for {}: {}\n", to_string(r.kind), r.bias);
    }
  }
}

}  // namespace wattlab::report
