#include "report/gemm_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/gemm_original.h"
#include "report/html.h"
#include "report/table.h"

namespace wattlab::report {
namespace {

std::string sim(const GemmSweepAnalysis& a) { return a.simulated ? " (SIMULATED)" : ""; }

std::string opt_num(const std::optional<double>& v, const char* spec = "{:.4g}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : "n/a";
}

std::string pct(const Stat& s) { return mean_sd(s, "{:+.2f}"); }
std::string pct(const std::optional<Stat>& s) { return s ? pct(*s) : "n/a"; }

// "-23.7 % [-25.1, -22.2]", "+0.3 % [-0.4, +1.0]": ΔE and its 95 % CI, signed like the other Δ columns; "(1 seed)" when the CI spans the reference points only.
std::string ci_text(const std::optional<DeltaCi>& ci) {
  if (!ci) return "n/a";
  return fmt::format("{:+.1f} % [{:+.1f}, {:+.1f}]{}", ci->mean_pct, ci->lo_pct, ci->hi_pct, ci->references_only ? " (1 seed)" : "");
}

// Which of a row's points had a non-finite output, and why.
std::string nonfinite_text(const GemmRow& r) {
  const std::size_t n = r.nonfinite_input_points + r.overflow_points + r.unchecked_points;
  if (n == 0) return "-";
  return r.nonfinite_label + (n < r.points ? fmt::format(" ({} of {} points)", n, r.points) : "");
}

std::string ci_note(const GemmAnalysisOptions& o) {
  return fmt::format("ΔE [95 % CI]: each point against its reference drift-corrected in time (linear between the nearest "
                     "reference points before and after it in its run), mean over seeds; the CI is a percentile bootstrap "
                     "over the seeds and over each seed's reference points ({} resamples, RNG seed {}). '(1 seed)': one "
                     "seed, so the CI covers the reference points only, not the spread between seeds.",
                     o.ci.resamples, o.ci.rng_seed);
}

const Stat& val(const GemmRow& r, GemmQty q) { return r.value[idx(q)]; }
const Stat& del(const GemmRow& r, GemmQty q) { return r.delta[idx(q)]; }

GemmTable references_table(const GemmSweepAnalysis& a, const GemmAnalysisOptions& o) {
  GemmTable t;
  t.title = "Reference points per shape and engine" + sim(a);
  t.notes = {fmt::format("Across seeds: mean ± SD of each seed's mean over its reference points. CV = SD / mean across "
                         "seeds; PASS when the CV of energy per GEMM is <= {:g} % (the study's target; n/a below 2 seeds). "
                         "Drift: the largest (max - min) / mean of one seed's reference points over the sweep.",
                         o.cv_target_pct)};
  t.headers = {"shape",         "engine",         "seeds",         "ref points",      "energy/GEMM (mJ)",
               "CV energy (%)", "power (W)",      "CV power (%)",  "drift energy (%)", "drift power (%)",
               "SM clock (MHz)", "capped fraction", "CV <= target"};
  for (const auto& r : a.references) {
    t.rows.push_back({r.shape, r.engine, std::to_string(r.seeds), std::to_string(r.points),
                      mean_sd(r.value[idx(GemmQty::energy_per_gemm)], nullptr, 1e3), opt_num(r.cv_energy_pct, "{:.2f}"),
                      mean_sd(r.value[idx(GemmQty::power)], "{:.1f}"), opt_num(r.cv_power_pct, "{:.2f}"),
                      opt_num(r.drift_energy_pct, "{:.2f}"), opt_num(r.drift_power_pct, "{:.2f}"),
                      mean_sd(r.value[idx(GemmQty::sm_clock)], "{:.0f}"),
                      mean_sd(r.value[idx(GemmQty::capped_fraction)], "{:.2f}"),
                      r.cv_pass ? (*r.cv_pass ? "PASS" : "FAIL") : "n/a"});
  }
  return t;
}

GemmTable experiment_table(const GemmSweepAnalysis& a, const std::string& exp, const GemmAnalysisOptions& o) {
  GemmTable t;
  std::string param;
  for (const auto& r : a.rows)
    if (r.experiment == exp) param = r.param;
  t.title = fmt::format("{} over {}: each value against the reference{}", exp, param, sim(a));
  if (auto orig = original_effect(exp))
    t.notes.push_back(fmt::format("Original study (input-dependent-power.md §3, A100): {}. Expected on the H200 (§7): {}.",
                                  orig->a100, orig->h200));
  t.notes.push_back("Mean ± SD across seeds; Δ per seed against that seed's reference points of the same shape and engine "
                    "in this sweep, drift-corrected in time (%, capped fraction: difference).");
  t.notes.push_back(ci_note(o));
  t.notes.push_back("Non-finite: the accuracy check found Inf/NaN in C; the inputs regenerated from the recipes tell why. "
                    "Points with non-finite inputs are kept out of every Δ (their energy is still shown); an overflow with "
                    "finite inputs keeps its Δ.");
  t.headers = {"shape", "engine", param, "seeds", "energy/GEMM (mJ)", "ΔE [95 % CI]", "power (W)", "ΔP (%)", "TFLOP/s",
               "ΔTFLOP/s (%)", "SM clock (MHz)", "Δclock (%)", "capped fraction", "Δcapped", "max rel. error", "max non-finite",
               "non-finite"};
  for (const auto& r : a.rows) {
    if (r.experiment != exp) continue;
    t.rows.push_back({r.shape, r.engine, r.param_value,
                      r.referenced_seeds == r.seeds ? std::to_string(r.seeds)
                                                    : fmt::format("{} ({} without reference)", r.seeds, r.seeds - r.referenced_seeds),
                      mean_sd(val(r, GemmQty::energy_per_gemm), nullptr, 1e3),
                      r.all_excluded() ? std::string("n/a (non-finite inputs)") : ci_text(r.energy_ci),
                      mean_sd(val(r, GemmQty::power), "{:.1f}"), pct(del(r, GemmQty::power)),
                      mean_sd(val(r, GemmQty::tflops)), pct(del(r, GemmQty::tflops)),
                      mean_sd(val(r, GemmQty::sm_clock), "{:.0f}"), pct(del(r, GemmQty::sm_clock)),
                      mean_sd(val(r, GemmQty::capped_fraction), "{:.2f}"), mean_sd(del(r, GemmQty::capped_fraction), "{:+.2f}"),
                      opt_num(r.max_rel_error, "{:.2e}"), opt_num(r.max_nonfinite_fraction, "{:.3g}"), nonfinite_text(r)});
  }
  return t;
}

GemmTable effects_table(const GemmSweepAnalysis& a, const GemmAnalysisOptions& o) {
  GemmTable t;
  t.title = "Effects per experiment and engine, next to the original study" + sim(a);
  t.notes = {
      "Start -> end: the last value of the sweep against the first, seed by seed (%). Largest: the value with the "
      "largest |mean Δ| against the reference, ΔE with its 95 % CI (as in the experiment tables). Points with non-finite "
      "inputs take no part.",
      fmt::format("Shows in: 'power' when |ΔP| >= {0:g} % at the largest-|ΔE| value; else 'clock/throughput (at the cap)' "
                  "when the reference's capped fraction is > {1:g} and |ΔSM clock| or |ΔTFLOP/s| >= {2:g} % there (the cap "
                  "turned the effect into clock and throughput); 'clock/throughput' for the same without the cap; "
                  "'energy only' or 'not resolved' (|Δ| < {0:g} %) otherwise.",
                  o.flat_pct, o.capped_fraction, o.moved_pct),
      fmt::format("Curve: power over the sweep against its start (flat: within ±{:g} %); expected: the original study's "
                  "(input-dependent-power.md §3, §7).",
                  o.flat_pct)};
  t.headers = {"experiment", "shape", "engine", "values", "seeds", "ΔP start->end (%)", "ΔE start->end (%)",
               "largest ΔP (%)", "at", "largest ΔE [95 % CI]", "at", "Δclock / ΔTFLOP/s there (%)", "ref capped", "shows in",
               "power curve", "expected", "agrees", "original (A100, §3)"};
  for (const auto& e : a.effects) {
    const auto orig = original_effect(e.experiment);
    const Curve expected = orig ? orig->expected : Curve::unknown;
    t.rows.push_back({e.experiment, e.shape, e.engine, std::to_string(e.values), std::to_string(e.seeds),
                      pct(e.start_to_end_power_pct), pct(e.start_to_end_energy_pct), pct(e.max_power_pct), e.max_power_at,
                      e.max_energy_ci ? ci_text(e.max_energy_ci) : pct(e.max_energy_pct), e.max_energy_at,
                      opt_num(e.clock_at_max_energy_pct, "{:+.1f}") + " / " + opt_num(e.tflops_at_max_energy_pct, "{:+.1f}"),
                      e.reference_capped ? "yes" : "no", e.shows_in, std::string(to_string(e.power_curve)),
                      std::string(to_string(expected)), std::string(curve_agrees(expected, e.power_curve)),
                      orig ? std::string(orig->a100) : "(not in the study)"});
  }
  return t;
}

GemmTable controls_table(const GemmSweepAnalysis& a) {
  GemmTable t;
  t.title = "Controls X1-X3 against idle" + sim(a);
  t.notes = {"Mean ± SD across seeds; Δ per seed against the mean of that seed's idle reference points (%)."};
  if (a.control_reference)
    t.notes.push_back(fmt::format("Idle reference: {} W over {} seeds ({} points), CV {} %.",
                                  mean_sd(a.control_reference->value[idx(GemmQty::power)], "{:.1f}"),
                                  a.control_reference->seeds, a.control_reference->points,
                                  opt_num(a.control_reference->cv_power_pct, "{:.2f}")));
  t.headers = {"experiment", "param", "value", "seeds", "power (W)", "ΔP vs idle (%)", "temperature (degC)", "expected (§3, §7)"};
  for (const auto& r : a.controls) {
    const auto orig = original_effect(r.experiment);
    t.rows.push_back({r.experiment, r.param, r.param_value, std::to_string(r.seeds), mean_sd(val(r, GemmQty::power), "{:.1f}"),
                      pct(del(r, GemmQty::power)), mean_sd(val(r, GemmQty::temperature), "{:.1f}"),
                      orig ? fmt::format("{}; H200: {}", orig->a100, orig->h200) : "(not in the study)"});
  }
  return t;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string mean_sd(const Stat& s, const char* spec, double scale) {
  if (s.n == 0) return "n/a";
  if (spec == nullptr) {  // 4 significant digits on the mean, the SD to the same decimals
    const double m = s.mean * scale;
    const int mag = m == 0 || !std::isfinite(m) ? 0 : static_cast<int>(std::floor(std::log10(std::fabs(m))));
    const int dec = std::clamp(3 - mag, 0, 12);
    return fmt::format("{:.{}f} ± ", m, dec) + (s.sd ? fmt::format("{:.{}f}", *s.sd * scale, dec) : "n/a");
  }
  const std::string m = fmt::format(fmt::runtime(spec), s.mean * scale);
  const std::string sd = s.sd ? fmt::format(fmt::runtime(spec), *s.sd * scale) : "n/a";
  // An SD needs no sign.
  return m + " ± " + (sd.size() > 1 && sd[0] == '+' ? sd.substr(1) : sd);
}

std::string gemm_sweep_heading(const GemmSweepAnalysis& a) {
  std::string runs;
  for (auto r : a.runs) runs += (runs.empty() ? "" : ", ") + std::to_string(r);
  return fmt::format("GEMM sweep {}{}: {} points from run{} {}", a.sweep.empty() ? "(no sweep id)" : a.sweep, sim(a), a.points,
                     a.runs.size() == 1 ? "" : "s", runs);
}

std::vector<GemmTable> gemm_tables(const GemmSweepAnalysis& a, const GemmAnalysisOptions& o) {
  std::vector<GemmTable> out;
  if (!a.references.empty()) out.push_back(references_table(a, o));
  if (!a.effects.empty()) out.push_back(effects_table(a, o));
  std::vector<std::string> exps;
  for (const auto& e : a.effects)
    if (std::find(exps.begin(), exps.end(), e.experiment) == exps.end()) exps.push_back(e.experiment);
  std::sort(exps.begin(), exps.end(), experiment_less);
  for (const auto& x : exps) out.push_back(experiment_table(a, x, o));
  if (!a.controls.empty()) out.push_back(controls_table(a));
  return out;
}

std::string render_text(const std::vector<GemmTable>& tables) {
  std::string s;
  for (const auto& t : tables) {
    s += t.title + "\n";
    for (const auto& n : t.notes) s += "  " + n + "\n";
    Table tab(t.headers);
    for (const auto& r : t.rows) tab.add_row(r);
    s += tab.render() + "\n";
  }
  return s;
}

std::string render_markdown(const std::vector<GemmTable>& tables) {
  std::string s;
  for (const auto& t : tables) {
    s += "#### " + t.title + "\n\n";
    for (const auto& n : t.notes) s += n + "\n";
    if (!t.notes.empty()) s += "\n";
    std::string head = "|", rule = "|";
    for (const auto& h : t.headers) head += " " + md_cell(h) + " |", rule += "---|";
    s += head + "\n" + rule + "\n";
    for (const auto& r : t.rows) {
      std::string line = "|";
      for (const auto& c : r) line += " " + md_cell(c) + " |";
      s += line + "\n";
    }
    s += "\n";
  }
  return s;
}

std::string render_html(const std::vector<GemmTable>& tables) {
  std::string s;
  for (const auto& t : tables) {
    s += "<h3>" + html_escape(t.title) + "</h3>\n";
    for (const auto& n : t.notes) s += "<p class=\"note\">" + html_escape(n) + "</p>\n";
    s += "<table class=\"gemm\"><tr>";
    for (const auto& h : t.headers) s += "<th>" + html_escape(h) + "</th>";
    s += "</tr>\n";
    for (const auto& r : t.rows) {
      s += "<tr>";
      for (const auto& c : r) s += "<td>" + html_escape(c) + "</td>";
      s += "</tr>\n";
    }
    s += "</table>\n";
  }
  return s;
}

}  // namespace wattlab::report
