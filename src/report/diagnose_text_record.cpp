// Terminal text of `wattlab diagnose` explain and compare: one configuration's fields (with what
// wattlab measured beyond the leaderboard), the rules' findings with their evidence, and the
// decomposition table of B / A.
#include <fmt/format.h>

#include <sstream>

#include "diagnose_text_common.h"
#include "report/diagnose_report.h"
#include "report/table.h"

namespace wattlab::report {

namespace dg = wattlab::diagnose;

namespace {

void print_record(const dg::ConfigRecord& r, std::ostream& os) {
  os << fmt::format("{} -- {} ({}), {}\n", r.label(), r.task, r.where(), r.source);
  if (r.llm) {
    const auto& m = *r.llm;
    os << fmt::format("  energy_per_token_joules {:.4g} J   energy_per_request_joules {:.1f} J   avg_output_len {:.1f} tokens\n",
                      m.energy_per_token_joules, m.energy_per_request_joules, m.avg_output_len);
    os << fmt::format("  avg_power_watts {:.1f} W ({:.1f} W per GPU)   output_throughput {:.1f} tok/s   median_itl {:.2f} ms\n",
                      r.avg_power_watts, r.avg_power_watts / r.num_gpus, m.output_throughput_tokens_per_sec, m.median_itl_ms);
    os << fmt::format("  max_num_seqs {}   avg_batch_size {:.1f}   TP {} EP {} DP {}   {} ({:.3g}B active of {:.3g}B)\n",
                      m.max_num_seqs, m.avg_batch_size, m.tensor_parallel, m.expert_parallel, m.data_parallel,
                      r.architecture, r.activated_params_billions, r.total_params_billions);
    os << fmt::format("  throughput per watt {:.3f} tok/s/W   steady-decode residual rho = E_tok / (P x ITL / B_eff) = {:.3f}\n",
                      r.throughput_per_watt(), dg::steady_decode_residual(r));
  } else {
    const auto& d = *r.diffusion;
    os << fmt::format("  energy_per_{}_joules {:.1f} J   avg_power_watts {:.1f} W   batch_latency_s {:.3f} s   batch_size {}\n",
                      r.unit(), d.energy_per_generation_joules, r.avg_power_watts, d.batch_latency_s, d.batch_size);
    os << fmt::format("  {} steps, {}x{} px, ulysses {} ring {}, {:.3g}B params, {:.4f} {}s/s/W\n", d.inference_steps,
                      d.width, d.height, d.ulysses_degree, d.ring_degree, r.total_params_billions, r.throughput_per_watt(), r.unit());
  }
  if (auto lim = dg::power_limit_per_gpu_w(r))
    os << fmt::format("  power per GPU / limit {:.0f}% (limit {:.0f} W: {})\n", r.avg_power_watts / r.num_gpus / *lim * 100,
                      *lim, r.measured.power_limit_watts ? "measured" : "TDP of the paper's setup");
  const auto& x = r.measured;
  if (x.any()) {
    os << "  measured by wattlab:";
    if (x.cpu_energy_per_unit_joules)
      os << fmt::format(" CPU {:.4g} J/{} ({:.0f}% of GPU+CPU)", *x.cpu_energy_per_unit_joules, r.unit(),
                        *x.cpu_energy_per_unit_joules / (*x.cpu_energy_per_unit_joules + r.energy_per_unit_j()) * 100);
    if (x.sm_clock_mhz) os << fmt::format(" SM clock {:.0f} MHz", *x.sm_clock_mhz);
    if (x.sm_activity) os << fmt::format(" SM activity {:.0f}%", *x.sm_activity * 100);
    if (x.tensor_activity) os << fmt::format(" tensor {:.0f}%", *x.tensor_activity * 100);
    if (x.dram_activity) os << fmt::format(" DRAM {:.0f}%", *x.dram_activity * 100);
    if (x.gpu_utilization) os << fmt::format(" GPU util {:.0f}%", *x.gpu_utilization * 100);
    if (x.kv_cache_usage) os << fmt::format(" KV cache {:.0f}%", *x.kv_cache_usage * 100);
    if (x.cpu_utilization) os << fmt::format(" CPU busy {:.0f}%", *x.cpu_utilization * 100);
    os << "\n";
  }
}

void print_findings(const std::vector<dg::Finding>& fs, std::ostream& os) {
  if (fs.empty()) {
    os << "  no rule fired: the configuration is on its frontier and no mechanism stands out in this data\n";
    return;
  }
  for (const auto& f : fs) {
    os << fmt::format("  [{}] {}\n    path: {}\n    {}\n", f.rule_id, f.title, dg::format_path(f.path), f.summary);
    for (const auto& e : f.evidence)
      os << fmt::format("      - {}: {:.4g}{}{} ({})\n", e.what, e.value, e.unit.empty() ? "" : " ", e.unit, e.from);
  }
}

}  // namespace

std::string render_text(const ExplainReport& r) {
  std::ostringstream os;
  print_record(*r.record, os);
  os << "findings:\n";
  print_findings(r.findings, os);
  os << provenance_line(r.sources) << "\n";
  return os.str();
}

std::string render_text(const CompareReport& r) {
  const auto& d = r.decomposition;
  std::ostringstream os;
  os << "A: ";
  print_record(*d.a, os);
  os << "B: ";
  print_record(*d.b, os);
  os << fmt::format("\nEnergy per response: A {:.4g} J, B {:.4g} J; B / A = {:.4f}x\n", d.energy_a_j, d.energy_b_j, d.total_ratio);
  os << (d.a->llm ? "Decomposition: E_resp = avg_output_len x avg_power_watts x median_itl / avg_batch_size x rho\n"
                  : "Decomposition: E_gen = avg_power_watts x batch_latency_s / batch_size (x residual)\n");
  Table t({"factor", "field", "A", "B", "unit", "ratio B/A", "share of log change"});
  double cum = 1;
  for (const auto& f : d.factors) {
    cum *= f.ratio;
    t.add_row({f.name, f.field, diagnose_text::g4(f.value_a), diagnose_text::g4(f.value_b), f.unit,
               fmt::format("{:.4f}", f.ratio), fmt::format("{:+.0f}%", f.log_share * 100)});
  }
  t.add_row({"product", "", "", "", "", fmt::format("{:.4f}", cum), ""});
  os << t.render();
  os << "\nfindings for A:\n";
  print_findings(r.findings_a, os);
  os << "findings for B:\n";
  print_findings(r.findings_b, os);
  os << provenance_line(r.sources) << "\n";
  return os.str();
}

}  // namespace wattlab::report
