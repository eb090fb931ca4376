#include "gemm_print.h"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "wattlab/lab/progress.h"

namespace wattlab::cli {
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

const double* count(const WindowResult& w, const char* key) {
  auto it = w.counts.find(key);
  return it == w.counts.end() ? nullptr : &it->second;
}
std::string label(const WindowResult& w, const char* key) {
  auto it = w.labels.find(key);
  return it == w.labels.end() ? "" : it->second;
}

std::string opt_num(const WindowResult& w, const char* key, const char* fmt_spec, const char* unit) {
  const double* v = count(w, key);
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

AccuracyVerdict accuracy(const WindowResult& w, lab::Engine engine, bool simulated) {
  const double bound = lab::spec(engine).rel_error_bound;
  const double* nf = count(w, "nonfinite_fraction");
  if (nf && *nf > 0)
    return {Accuracy::fail, fmt::format("{:.3g} % of C is inf or NaN: FAIL (never passes)", 100 * *nf)};
  if (count(w, "rel_error_nonfinite")) return {Accuracy::fail, "the relative error is not finite: FAIL"};
  const double* e = count(w, "rel_error");
  if (!e)
    return {Accuracy::unchecked, simulated ? "not checked: the SIMULATED executor computes no GEMM output"
                                           : "not checked: the executor reported no spot check"};
  const bool ok = bound == 0 ? *e == 0 : *e <= bound;
  return {ok ? Accuracy::pass : Accuracy::fail,
          fmt::format("{:.3e} (relative Frobenius vs float64) {} bound {} of {}: {}", *e, ok ? "<=" : ">",
                      bound_text(bound), lab::spec(engine).name, ok ? "PASS" : "FAIL")};
}

void print_point_result(std::ostream& out, const WindowResult& w, lab::Engine engine, bool simulated) {
  const lab::EngineSpec& es = lab::spec(engine);
  out << (simulated ? "SIMULATED result (not hardware): " : "result: ") << w.name << "\n";
  out << fmt::format("  engine {}: {} x {} -> {}, {} accumulation ({}); shape {}x{}x{}; seed {}\n", es.name,
                     lab::to_string(es.a), lab::to_string(es.b), lab::to_string(es.out), es.accumulate, es.compute,
                     label(w, "M"), label(w, "N"), label(w, "K"), label(w, "seed"));
  out << "  A: " << label(w, "recipe_a") << "\n  B: " << label(w, "recipe_b") << "\n";
  const double* e = count(w, "energy_per_gemm_j");
  const double* eu = count(w, "energy_per_gemm_u_j");
  const double* gemms = count(w, "gemms");
  if (e && eu) {
    const double* sys = count(w, "energy_sys_j");
    out << "  energy per GEMM:   " << si_pm(*e, *eu, "J") << " (expanded ~95 %)";
    if (sys && gemms && *gemms > 0) out << "; board gain systematic ± " << si(*sys / *gemms, "J");
    out << "\n";
  } else {
    out << "  energy per GEMM:   not available (the GPU domain gave no energy for this window)\n";
  }
  if (const double* p = count(w, "mean_power_w"))
    out << "  mean power:        " << fmt::format("{:.1f} W ± {:.2g} W", *p, count(w, "mean_power_u_w") ? *count(w, "mean_power_u_w") : 0.0) << "\n";
  out << fmt::format("  throughput:        {:.2f} TFLOP/s ({:.0f} GEMMs in a {:.3f} s window)\n",
                     count(w, "tflops") ? *count(w, "tflops") : 0.0, gemms ? *gemms : 0.0, w.dur_s());
  out << "  SM clock (mean):   " << opt_num(w, "mean_sm_clock_mhz", "{:.0f}", " MHz") << "\n";
  out << "  temperature:       " << opt_num(w, "temperature_c", "{:.1f}", " degC (mean)") << "\n";
  if (const double* c = count(w, "power_capped_fraction"))
    out << fmt::format("  power capped:      {:.1f} % of the window\n", 100 * *c);
  else
    out << "  power capped:      not available (no clock-event reasons on this device)\n";
  out << "  tensor activity:   " << opt_num(w, "tensor_activity_pct", "{:.1f}", " % (mean)") << "\n";
  out << "  rel. error:        " << accuracy(w, engine, simulated).text << "\n";
  out << "  non-finite C:      " << opt_num(w, "nonfinite_fraction", "{:.3g}", " (fraction of entries)") << "\n";
  const double* wu = count(w, "warmup_s");
  const double* steady = count(w, "warmup_steady");
  const double* drift = count(w, "warmup_drift_c");
  if (wu && *wu > 0)
    out << fmt::format("  warm-up:           {:.1f} s, {}{}\n", *wu,
                       steady && *steady > 0 ? "temperature steady" : "temperature NOT steady at the limit",
                       drift ? fmt::format(" (moved {:+.2f} degC over the last span)", *drift) : "");
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

void print_results_table(std::ostream& out, const std::vector<WindowResult>& windows, bool simulated) {
  out << (simulated ? "SIMULATED results (not hardware), " : "results, ") << windows.size()
      << " points measured now (energy per GEMM ± expanded uncertainty):\n";
  out << fmt::format("{:>6}  {:<11} {:<18} {:>5}  {:<4} {:<26} {:>26} {:>9} {:>10} {:>9}  {}\n", "index", "engine",
                     "shape", "seed", "exp", "param=value", "energy/GEMM", "power W", "TFLOP/s", "SM MHz", "accuracy");
  for (const auto& w : windows) {
    const double* e = count(w, "energy_per_gemm_j");
    const double* eu = count(w, "energy_per_gemm_u_j");
    const double* p = count(w, "mean_power_w");
    const double* t = count(w, "tflops");
    const double* clk = count(w, "mean_sm_clock_mhz");
    std::string acc = "-";
    if (auto eng = lab::parse_engine(label(w, "engine"))) {
      const auto v = accuracy(w, *eng, simulated);
      acc = v.verdict == Accuracy::pass ? "PASS" : v.verdict == Accuracy::fail ? "FAIL" : "unchecked";
    }
    const bool gemm = label(w, "engine") != "control";
    out << fmt::format("{:>6}  {:<11} {:<18} {:>5}  {:<4} {:<26} {:>26} {:>9} {:>10} {:>9}  {}\n", label(w, "point"),
                       label(w, "engine"),
                       gemm ? label(w, "M") + "x" + label(w, "N") + "x" + label(w, "K") : "-", label(w, "seed"),
                       label(w, "experiment"), label(w, "param") + "=" + label(w, "param_value"),
                       gemm && e && eu ? si_pm(*e, *eu, "J") : "-", p ? fmt::format("{:.1f}", *p) : "-",
                       gemm && t ? fmt::format("{:.2f}", *t) : "-", clk ? fmt::format("{:.0f}", *clk) : "-", acc);
  }
}

}  // namespace wattlab::cli
