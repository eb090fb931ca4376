// Terminal text of `wattlab diagnose` summary, min-energy, frontier, pairs and graph
// (explain and compare: diagnose_text_record.cpp). Every output but graph ends with the
// provenance line.
#include <fmt/format.h>

#include <sstream>

#include "diagnose_text_common.h"
#include "diagnose/capacity.h"
#include "report/diagnose_report.h"
#include "report/table.h"

namespace wattlab::report {

namespace dg = wattlab::diagnose;
using diagnose_text::f1;
using diagnose_text::g4;

std::string render_text(const SummaryReport& r) {
  std::ostringstream os;
  const dg::TaskSummary* base = cheapest_llm_task(r);
  const std::string& gpu = r.gpu_model;
  for (const auto& s : r.tasks) {
    os << fmt::format("{} ({}) -- {}: {} rows, {} models, {} invariant violations\n", s.task_display_name, s.task,
                      s.source_label, s.rows, s.models, s.violations);
    if (s.minima.empty()) {
      os << fmt::format("  no {} rows\n\n", gpu);
      continue;
    }
    const char* unit = s.minima.front()->unit();
    os << fmt::format("  minimum-energy {} configurations (lowest energy per {} per model), {} models:\n", gpu, unit,
                      s.minima.size());
    if (s.workload == dg::Workload::llm) {
      os << fmt::format("    mean output length            {:.1f} tokens (avg_output_len)\n", s.mean_output_len_tokens);
      os << fmt::format("    mean energy per response      {:.1f} J (energy_per_request_joules)\n", s.mean_energy_per_response_j);
      if (base && base != &s)
        os << fmt::format("    energy per response vs {}  {:.1f}x\n", base->task,
                          s.mean_energy_per_response_j / base->mean_energy_per_response_j);
    } else {
      os << fmt::format("    mean energy per {}          {:.1f} J\n", unit, s.mean_energy_per_response_j);
      os << fmt::format("    minima on one GPU             {} of {}\n", s.minima_on_one_gpu, s.minima.size());
    }
    os << fmt::format("    lowest energy per response    {:.1f} J ({}, {})\n", s.lowest->energy_per_response_j(),
                      s.lowest->nickname, s.lowest->where());
    os << fmt::format("    highest energy per response   {:.1f} J ({}, {}), {:.1f}x the lowest\n",
                      s.highest->energy_per_response_j(), s.highest->nickname, s.highest->where(),
                      s.highest->energy_per_response_j() / s.lowest->energy_per_response_j());
    os << fmt::format("  batch size effect on {} (energy per {} at the smallest batch / group minimum, over {} "
                      "(model, GPU count) groups): median {:.2f}x, range {:.2f}x-{:.2f}x\n\n",
                      gpu, unit, s.batch_groups, s.batch_effect_median, s.batch_effect_min, s.batch_effect_max);
  }
  os << provenance_line(r.sources) << "\n";
  return os.str();
}

std::string render_text(const MinEnergyReport& r) {
  const dg::Filter& f = r.filter;
  const double budget_w = r.power_budget_w.value_or(0);
  std::vector<std::string> hdr{"task", "model", "GPU", "batch", "J/unit", "J/response", "latency ms", "power W", "units/s/W"};
  if (r.power_budget_w) hdr.insert(hdr.end(), {"req/s @budget", "replicas"});
  Table t(hdr);
  for (const auto* row : r.rows) {
    std::vector<std::string> c{row->task, row->model_id, fmt::format("{}x{}", row->gpu_model, row->num_gpus),
                               std::to_string(row->batch()), g4(row->energy_per_unit_j()), f1(row->energy_per_response_j()),
                               g4(row->latency_ms()), f1(row->avg_power_watts), fmt::format("{:.3f}", row->throughput_per_watt())};
    if (r.power_budget_w) {
      const auto cap = dg::capacity_under_budget(*row, budget_w);
      c.push_back(fmt::format("{:.2f}", cap.requests_per_sec));
      c.push_back(std::to_string(cap.whole_replicas));
    }
    t.add_row(std::move(c));
  }
  std::ostringstream os;
  os << fmt::format("Minimum-energy configuration per model{}{}{}{}\n", f.gpu_model ? " on " + *f.gpu_model : "",
                    f.num_gpus ? fmt::format(" x{}", *f.num_gpus) : "",
                    f.deadline_ms ? fmt::format(", latency <= {:g} ms (median ITL for LLMs, batch latency for diffusion)", *f.deadline_ms) : "",
                    f.min_batch ? fmt::format(", batch >= {}", f.min_batch) : "");
  os << "J/unit: energy_per_token_joules (LLM) or energy_per_image/video_joules; J/response: energy_per_request_joules or per image; "
        "latency: median_itl_ms or batch_latency_s x 1000; units/s/W = 1 / J/unit\n";
  if (r.power_budget_w)
    os << fmt::format("req/s @budget: requests per second a {:g} W GPU power budget serves (budget / J per response); "
                      "replicas: whole copies of the configuration within the budget\n", budget_w);
  os << t.render() << provenance_line(r.sources) << "\n";
  return os.str();
}

std::string render_text(const FrontierReport& r) {
  std::ostringstream os;
  const auto& dl = r.deadline_ms;
  for (const auto& fr : r.frontiers) {
    os << fmt::format("{} on {} x{}: {} configurations, {} on the time-energy frontier\n", r.model_id, fr.gpu_model,
                      fr.num_gpus == 0 ? std::string("(all counts)") : std::to_string(fr.num_gpus), fr.points.size(),
                      fr.frontier.size());
    if (fr.frontier.empty()) continue;
    Table t({"GPUs", "batch", fmt::format("{} ms", fr.frontier.front()->latency_name()),
             fmt::format("J/{}", fr.frontier.front()->unit()), "J/response", "power W", "mark"});
    for (const auto* row : fr.frontier) {
      std::string mark;
      if (row == fr.min_energy) mark = "min energy";
      if (row == fr.best_under_deadline) mark += mark.empty() ? "best <= deadline" : ", best <= deadline";
      else if (dl && row->latency_ms() <= *dl) mark += mark.empty() ? "feasible" : ", feasible";
      t.add_row({std::to_string(row->num_gpus), std::to_string(row->batch()), g4(row->latency_ms()),
                 g4(row->energy_per_unit_j()), f1(row->energy_per_response_j()), f1(row->avg_power_watts), mark});
    }
    os << t.render();
    if (dl)
      os << fmt::format("  deadline {:g} ms: {} of {} configurations feasible{}\n", *dl, fr.feasible, fr.points.size(),
                        fr.best_under_deadline ? fmt::format(", best {:.4g} J/{} ({})", fr.best_under_deadline->energy_per_unit_j(),
                                                             fr.best_under_deadline->unit(), fr.best_under_deadline->where())
                                               : std::string(", none"));
    os << "\n";
  }
  os << provenance_line(r.sources) << "\n";
  return os.str();
}

std::string render_text(const PairsReport& r) {
  Table t({"comparison (B vs A)", "pairs", "B lower energy", "B lower latency", "median dE", "range dE", "median dLatency"});
  for (const auto& s : r.comparisons)
    t.add_row({s.label, std::to_string(s.n), std::to_string(s.b_wins_energy), std::to_string(s.b_wins_latency),
               fmt::format("{:+.1f}%", s.median_energy_change * 100),
               fmt::format("{:+.0f}%..{:+.0f}%", s.min_energy_change * 100, s.max_energy_change * 100),
               fmt::format("{:+.1f}%", s.median_latency_change * 100)});
  return "dE: change of energy per unit (token / image), B / A - 1; latency: median ITL (LLM) or batch latency (diffusion)\n" +
         t.render() + provenance_line(r.sources) + "\n";
}

std::string render_text(const GraphReport& r) {
  const auto& g = r.graph;
  std::ostringstream os;
  os << "Causal graph of \"Where Do the Joules Go?\" (arXiv 2601.22076, section 2)\nnodes:\n";
  for (const auto& n : g.nodes()) os << fmt::format("  {:<24} {}\n", n.name, dg::to_string(n.kind));
  os << "edges:\n";
  for (const auto& e : g.edges())
    os << fmt::format("  {:>2}. {} {} {}  ({})\n", e.number, g.info(e.from).name, e.bidirectional ? "\u2194" : "\u2192",
                      g.info(e.to).name, e.why);
  os << "rules:\n";
  for (const auto& rule : r.rules) os << fmt::format("  {:<26} {}\n", rule.id, dg::format_path(rule.path));
  return os.str();
}

}  // namespace wattlab::report
