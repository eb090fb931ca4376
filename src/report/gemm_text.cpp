#include "report/gemm_text.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <ostream>

#include "lab/progress.h"

namespace wattlab::report {
namespace {

struct Prefix {
  double scale;
  const char* name;
};
Prefix prefix_for(double v) {
  const double a = std::fabs(v);
  if (a >= 1e3) return {1e-3, "k"};
  if (a >= 1 || a == 0 || !std::isfinite(a)) return {1, ""};
  if (a >= 1e-3) return {1e3, "m"};
  if (a >= 1e-6) return {1e6, "u"};
  return {1e9, "n"};
}

std::string opt_num(const std::optional<double>& v, const char* fmt_spec, const char* unit) {
  if (!v) return "not available (no such reading on this device)";
  return fmt::format(fmt::runtime(fmt_spec), *v) + unit;
}

std::string bound_text(double b) { return b == 0 ? "0 (bit-exact)" : fmt::format("{:.0e}", b); }

}  // namespace

std::string si(double v, const char* unit) {
  const Prefix p = prefix_for(v);
  return fmt::format("{:.4g} {}{}", v * p.scale, p.name, unit);
}

std::string si_pm(double v, double u, const char* unit) {
  const Prefix p = prefix_for(v);
  return fmt::format("{:.4g} {}{} ± {:.2g} {}{}", v * p.scale, p.name, unit, u * p.scale, p.name, unit);
}

AccuracyVerdict accuracy(const GemmPointCounts& c, lab::Engine engine, bool simulated) {
  const double bound = lab::spec(engine).rel_error_bound;
  if (c.nonfinite_fraction && *c.nonfinite_fraction > 0)
    return {Accuracy::fail, fmt::format("{:.3g} % of C is inf or NaN: FAIL (never passes)", 100 * *c.nonfinite_fraction)};
  if (c.rel_error_nonfinite) return {Accuracy::fail, "the relative error is not finite: FAIL"};
  if (!c.rel_error)
    return {Accuracy::unchecked, simulated ? "not checked: the SIMULATED executor computes no GEMM output"
                                           : "not checked: the executor reported no spot check"};
  const double e = *c.rel_error;
  const bool ok = bound == 0 ? e == 0 : e <= bound;
  return {ok ? Accuracy::pass : Accuracy::fail,
          fmt::format("{:.3e} (relative Frobenius vs float64) {} bound {} of {}: {}", e, ok ? "<=" : ">",
                      bound_text(bound), lab::spec(engine).name, ok ? "PASS" : "FAIL")};
}

std::size_t failed_accuracy(const std::vector<GemmPointRecord>& points, bool simulated) {
  std::size_t failed = 0;
  for (const auto& p : points)
    if (auto e = lab::parse_engine(p.engine); e && accuracy(p.counts, *e, simulated).verdict == Accuracy::fail) ++failed;
  return failed;
}

void print_point_result(std::ostream& out, const WindowResult& w, const GemmPointRecord& p, lab::Engine engine,
                        bool simulated) {
  const lab::EngineSpec& es = lab::spec(engine);
  const GemmPointCounts& c = p.counts;
  out << (simulated ? "SIMULATED result (not hardware): " : "result: ") << w.name << "\n";
  out << fmt::format("  engine {}: {} x {} -> {}, {} accumulation ({}); shape {}x{}x{}; seed {}\n", es.name,
                     lab::to_string(es.a), lab::to_string(es.b), lab::to_string(es.out), es.accumulate, es.compute, p.m,
                     p.n, p.k, p.seed);
  out << "  A: " << p.recipe_a << "\n  B: " << p.recipe_b << "\n";
  if (c.energy_per_gemm_j && c.energy_per_gemm_u_j) {
    out << "  energy per GEMM:   " << si_pm(*c.energy_per_gemm_j, *c.energy_per_gemm_u_j, "J") << " (expanded ~95 %)";
    if (c.energy_sys_j && c.gemms && *c.gemms > 0)
      out << "; board gain systematic ± " << si(*c.energy_sys_j / *c.gemms, "J");
    out << "\n";
  } else {
    out << "  energy per GEMM:   not available (the GPU domain gave no energy for this window)\n";
  }
  if (c.mean_power_w)
    out << "  mean power:        " << fmt::format("{:.1f} W ± {:.2g} W", *c.mean_power_w, c.mean_power_u_w.value_or(0.0)) << "\n";
  out << fmt::format("  throughput:        {:.2f} TFLOP/s ({:.0f} GEMMs in a {:.3f} s window)\n", c.tflops.value_or(0.0),
                     c.gemms.value_or(0.0), w.dur_s());
  out << "  SM clock (mean):   " << opt_num(c.mean_sm_clock_mhz, "{:.0f}", " MHz") << "\n";
  out << "  temperature:       " << opt_num(c.temperature_c, "{:.1f}", " degC (mean)") << "\n";
  if (c.power_capped_fraction)
    out << fmt::format("  power capped:      {:.1f} % of the window\n", 100 * *c.power_capped_fraction);
  else
    out << "  power capped:      not available (no clock-event reasons on this device)\n";
  out << "  tensor activity:   " << opt_num(c.tensor_activity_pct, "{:.1f}", " % (mean)") << "\n";
  out << "  rel. error:        " << accuracy(c, engine, simulated).text << "\n";
  out << "  non-finite C:      " << opt_num(c.nonfinite_fraction, "{:.3g}", " (fraction of entries)") << "\n";
  if (c.warmup_s && *c.warmup_s > 0)
    out << fmt::format("  warm-up:           {:.1f} s, {}{}\n", *c.warmup_s,
                       c.warmup_steady.value_or(false) ? "temperature steady" : "temperature NOT steady at the limit",
                       c.warmup_drift_c ? fmt::format(" (moved {:+.2f} degC over the last span)", *c.warmup_drift_c) : "");
  else
    out << "  warm-up:           none (fidelity mode)\n";
}

void print_plan_summary(std::ostream& out, const PlanFacts& f) {
  const auto& plan = *f.plan;
  const auto& req = *f.request;
  auto join = [](const auto& v, auto&& conv) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ",") + conv(x);
    return s;
  };
  std::size_t refs = 0;
  for (const auto& p : plan.points) refs += p.reference ? 1 : 0;
  out << fmt::format("plan: {} points ({} reference points, every {}){}\n", plan.points.size(), refs,
                     req.reference_every, f.fidelity ? "; FIDELITY mode (2048^3, synchronized loop, no warm-up)" : "");
  out << "  experiments: " << join(req.experiments, [](const std::string& s) { return s; }) << "\n";
  out << "  engines:     " << join(req.engines, [](lab::Engine e) { return std::string(lab::to_string(e)); }) << "\n";
  out << "  shapes:      " << join(req.shapes, [](const lab::Shape& s) { return lab::to_string(s); }) << "\n";
  out << "  seeds:       " << join(req.seeds, [](uint64_t s) { return std::to_string(s); }) << "\n";
  if (req.max_values > 0) out << fmt::format("  values:      at most {} per sweep\n", req.max_values);
  out << "  sweep id:    " << plan.sweep_id << "\n";
  out << fmt::format("  done:        {} of {} points already in {}; {} left\n", f.done, plan.points.size(), f.db,
                     plan.points.size() - f.done);
  out << fmt::format(
      "  estimate:    {} on the GPU for the points left (per point: window {} s, warm-up {} s, first {} s, "
      "preparation {} s)\n",
      lab::format_duration(f.estimate_s), f.model.window_s, f.model.warmup_s, f.model.first_warmup_s, f.model.prepare_s);
}

void print_plan_table(std::ostream& out, const lab::SweepPlan& plan, const std::set<int>& done) {
  out << fmt::format("{:>6}  {:<11} {:<18} {:>5}  {:<4} {:<10} {:<26} {}\n", "index", "engine", "shape", "seed", "exp",
                     "state", "param=value", "recipes");
  for (const auto& p : plan.points) {
    std::string recipes;
    switch (p.spec.control) {
      case lab::Control::none: recipes = "A: " + p.spec.recipe_a + "   B: " + p.spec.recipe_b; break;
      case lab::Control::idle: recipes = "(idle: no kernel)"; break;
      case lab::Control::rest: recipes = fmt::format("(buffer of {} B at rest, byte 0x{:02X})", p.spec.rest_bytes, p.spec.fill_byte); break;
      case lab::Control::toggle: recipes = fmt::format("(toggle kernel over {} B, {} bits)", p.spec.rest_bytes, p.spec.toggle_bits); break;
    }
    const std::string shape = p.spec.control == lab::Control::none ? fmt::format("{}x{}x{}", p.spec.m, p.spec.n, p.spec.k) : "-";
    out << fmt::format("{:>6}  {:<11} {:<18} {:>5}  {:<4} {:<10} {:<26} {}\n", p.index, p.engine_label, shape, p.spec.seed,
                       p.experiment, done.count(p.index) ? "done" : "planned", p.param + "=" + p.param_value, recipes);
  }
}

void print_results_table(std::ostream& out, const std::vector<GemmPointRecord>& points, bool simulated) {
  out << (simulated ? "SIMULATED results (not hardware), " : "results, ") << points.size()
      << " points measured now (energy per GEMM ± expanded uncertainty):\n";
  out << fmt::format("{:>6}  {:<11} {:<18} {:>5}  {:<4} {:<26} {:>26} {:>9} {:>10} {:>9}  {}\n", "index", "engine",
                     "shape", "seed", "exp", "param=value", "energy/GEMM", "power W", "TFLOP/s", "SM MHz", "accuracy");
  for (const auto& pt : points) {
    const GemmPointCounts& c = pt.counts;
    std::string acc = "-";
    if (auto eng = lab::parse_engine(pt.engine)) {
      const auto v = accuracy(c, *eng, simulated);
      acc = v.verdict == Accuracy::pass ? "PASS" : v.verdict == Accuracy::fail ? "FAIL" : "unchecked";
    }
    const bool gemm = pt.engine != "control";
    out << fmt::format("{:>6}  {:<11} {:<18} {:>5}  {:<4} {:<26} {:>26} {:>9} {:>10} {:>9}  {}\n", pt.point, pt.engine,
                       gemm ? fmt::format("{}x{}x{}", pt.m, pt.n, pt.k) : "-", pt.seed, pt.experiment,
                       pt.param + "=" + pt.param_value,
                       gemm && c.energy_per_gemm_j && c.energy_per_gemm_u_j
                           ? si_pm(*c.energy_per_gemm_j, *c.energy_per_gemm_u_j, "J")
                           : "-",
                       c.mean_power_w ? fmt::format("{:.1f}", *c.mean_power_w) : "-",
                       gemm && c.tflops ? fmt::format("{:.2f}", *c.tflops) : "-",
                       c.mean_sm_clock_mhz ? fmt::format("{:.0f}", *c.mean_sm_clock_mhz) : "-", acc);
  }
}

void print_accuracy_check_header(std::ostream& out, uint64_t seed) {
  out << fmt::format("accuracy check, seed {}: inputs N(0,1) (INT8: rounded N(0,20)); relative Frobenius error of "
                     "spot-checked C entries vs float64\n",
                     seed);
  out << fmt::format("{:<11} {:<18} {:>12} {:>14} {:>12}  {}\n", "engine", "shape", "rel_error", "bound", "non-finite",
                     "verdict");
}

void print_accuracy_check(std::ostream& out, const lab::AccuracyCheck& c) {
  const lab::EngineSpec& es = lab::spec(c.engine);
  const std::string bound = es.rel_error_bound == 0 ? "0 (exact)" : fmt::format("{:.0e}", es.rel_error_bound);
  if (c.error) {
    out << fmt::format("{:<11} {:<18} {:>12} {:>14} {:>12}  ERROR: {}\n", es.name, lab::to_string(c.shape), "-", bound,
                       "-", c.error->message());
    return;
  }
  const char* verdict = "PASS";
  switch (c.verdict) {
    case lab::CheckVerdict::pass: break;
    case lab::CheckVerdict::nonfinite_output: verdict = "FAIL (inf/NaN in C)"; break;
    case lab::CheckVerdict::no_spot_check: verdict = "FAIL (no spot check reported)"; break;
    case lab::CheckVerdict::nonfinite_error: verdict = "FAIL (error not finite)"; break;
    case lab::CheckVerdict::above_bound: verdict = "FAIL (above the bound)"; break;
    case lab::CheckVerdict::error: verdict = "ERROR"; break;
  }
  out << fmt::format("{:<11} {:<18} {:>12} {:>14} {:>12.3g}  {}\n", es.name, lab::to_string(c.shape),
                     c.rel_error ? fmt::format("{:.3e}", *c.rel_error) : "-", bound, c.nonfinite_fraction, verdict);
}

void print_accuracy_check_total(std::ostream& out, const std::vector<lab::AccuracyCheck>& checks) {
  std::size_t passed = 0;
  for (const auto& c : checks) passed += c.passed() ? 1 : 0;
  out << fmt::format("{} of {} checks passed\n", passed, checks.size());
}

void print_sweep_end(std::ostream& out, const SweepEnd& e) {
  const lab::SweepOutcome& o = *e.outcome;
  if (o.measured > 0) {
    const double n = static_cast<double>(o.measured);
    out << fmt::format(
        "time{}: {} points, per point {:.2f} s preparing, {:.2f} s warming up ({} of {} ended steady), {:.2f} s in "
        "windows, {:.2f} s storing\n",
        e.simulated ? " (SIMULATED clock)" : " (host wall clock)", o.measured, o.prepare_s / n, o.warmup_s / n,
        o.warmup_steady, o.measured, o.window_s / n, o.store_s / n);
  }
  const char* again = "run the same command again to resume";
  if (!o.stopped)
    out << fmt::format("sweep complete: {} of {} points stored in {} (sweep id {})\n", e.done, e.total, e.db, e.sweep_id);
  else if (e.why == lab::SweepStop::Why::signal)
    out << fmt::format("stopped by a signal: {} of {} points done; {}\n", e.done, e.total, again);
  else if (e.why == lab::SweepStop::Why::budget)
    out << fmt::format("stopped at budget: {} of {} points done; {}\n", e.done, e.total, again);
  else
    out << fmt::format("stopped after --max-points {}: {} of {} points done; {}\n", e.max_points, e.done, e.total, again);
  if (e.failed > 0)
    out << fmt::format("WARNING: {} points failed their accuracy check (stored; see the accuracy column)\n", e.failed);
}

}  // namespace wattlab::report
