// JSON of `wattlab diagnose` (docs/diagnose.md): key order as written here, two-space indent.
// A configuration is its leaderboard row (diagnose::record_to_json) plus `task` and
// `source: {file, row}`; commands that load data list every invariant violation they found.
#include <nlohmann/json.hpp>

#include "diagnose/capacity.h"
#include "diagnose/readers.h"
#include "report/diagnose_report.h"

namespace wattlab::report {

namespace dg = wattlab::diagnose;
using json = nlohmann::ordered_json;

namespace {

json row_json(const dg::ConfigRecord& r) {
  json j = json::parse(dg::record_to_json(r));
  j["task"] = r.task;
  j["source"] = {{"file", r.source}, {"row", r.row_index}};
  return j;
}

json violations_json(DiagnoseSources sources) {
  json a = json::array();
  for (const auto& d : sources)
    for (const auto& v : d.violations)
      a.push_back({{"file", v.source}, {"row", v.row_index}, {"invariant", v.invariant}, {"stored", v.actual},
                   {"computed", v.expected}, {"relative_error", v.rel_error}});
  return a;
}

json finding_json(const dg::Finding& f) {
  json p = json::array();
  for (auto n : f.path) p.push_back(dg::CausalGraph::paper().info(n).id);
  json e = json::array();
  for (const auto& x : f.evidence) e.push_back({{"what", x.what}, {"value", x.value}, {"unit", x.unit}, {"from", x.from}});
  return {{"rule", f.rule_id}, {"title", f.title}, {"path", p}, {"path_text", dg::format_path(f.path)},
          {"summary", f.summary}, {"evidence", e}};
}

// A task or model name from a store need not be UTF-8: such bytes become U+FFFD.
std::string dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; }

}  // namespace

std::string render_json(const SummaryReport& r) {
  const dg::TaskSummary* base = cheapest_llm_task(r);
  json out = {{"command", "diagnose summary"}, {"gpu_model", r.gpu_model}, {"tasks", json::array()}};
  for (const auto& s : r.tasks) {
    json t = {{"task", s.task},
              {"task_display_name", s.task_display_name},
              {"source", s.source_label},
              {"workload", dg::to_string(s.workload)},
              {"rows", s.rows},
              {"models", s.models},
              {"invariant_violations", s.violations},
              {"gpu_model", s.gpu_model},
              {"models_with_minimum", s.minima.size()}};
    if (s.workload == dg::Workload::llm) {
      t["mean_avg_output_len"] = s.mean_output_len_tokens;
      t["mean_energy_per_request_joules"] = s.mean_energy_per_response_j;
      if (base && base != &s)
        t["energy_per_request_ratio_to_" + base->task] = s.mean_energy_per_response_j / base->mean_energy_per_response_j;
    } else {
      t["mean_energy_per_generation_joules"] = s.mean_energy_per_response_j;
      t["minima_on_one_gpu"] = s.minima_on_one_gpu;
    }
    if (s.lowest) t["lowest"] = row_json(*s.lowest);
    if (s.highest) t["highest"] = row_json(*s.highest);
    t["batch_effect"] = {{"groups", s.batch_groups}, {"median", s.batch_effect_median}, {"min", s.batch_effect_min},
                         {"max", s.batch_effect_max}};
    t["minima"] = json::array();
    for (const auto* m : s.minima) t["minima"].push_back(row_json(*m));
    out["tasks"].push_back(std::move(t));
  }
  out["invariant_violations"] = violations_json(r.sources);
  return dump(out);
}

std::string render_json(const MinEnergyReport& r) {
  const dg::Filter& f = r.filter;
  json out = {{"command", "diagnose min-energy"}, {"source", source_label(r.sources)}, {"rows", json::array()}};
  if (f.gpu_model) out["gpu_model"] = *f.gpu_model;
  if (f.deadline_ms) out["deadline_ms"] = *f.deadline_ms;
  for (const auto* row : r.rows) {
    json j = row_json(*row);
    j[row->llm ? "throughput_per_watt_tokens_per_sec_per_watt" : "throughput_per_watt_per_sec_per_watt"] = row->throughput_per_watt();
    if (r.power_budget_w) {
      const auto c = dg::capacity_under_budget(*row, *r.power_budget_w);
      j["power_budget_watts"] = *r.power_budget_w;
      j["requests_per_sec_under_budget"] = c.requests_per_sec;
      j["whole_replicas_under_budget"] = c.whole_replicas;
    }
    out["rows"].push_back(std::move(j));
  }
  out["invariant_violations"] = violations_json(r.sources);
  return dump(out);
}

std::string render_json(const ExplainReport& r) {
  json out = {{"command", "diagnose explain"}, {"selector", r.selector}, {"config", row_json(*r.record)}, {"findings", json::array()}};
  if (r.record->llm) out["steady_decode_residual_rho"] = dg::steady_decode_residual(*r.record);
  for (const auto& f : r.findings) out["findings"].push_back(finding_json(f));
  out["invariant_violations"] = violations_json(r.sources);
  return dump(out);
}

std::string render_json(const CompareReport& r) {
  const auto& d = r.decomposition;
  json out = {{"command", "diagnose compare"}, {"a", row_json(*d.a)}, {"b", row_json(*d.b)},
              {"energy_per_response_joules_a", d.energy_a_j}, {"energy_per_response_joules_b", d.energy_b_j},
              {"ratio_b_over_a", d.total_ratio}, {"factors", json::array()}};
  for (const auto& f : d.factors)
    out["factors"].push_back({{"factor", f.name}, {"field", f.field}, {"a", f.value_a}, {"b", f.value_b}, {"unit", f.unit},
                              {"ratio", f.ratio}, {"log_share", f.log_share}});
  out["findings_a"] = json::array();
  out["findings_b"] = json::array();
  for (const auto& f : r.findings_a) out["findings_a"].push_back(finding_json(f));
  for (const auto& f : r.findings_b) out["findings_b"].push_back(finding_json(f));
  if (!r.plot_path.empty()) out["plot"] = r.plot_path;
  return dump(out);
}

std::string render_json(const FrontierReport& r) {
  const auto& dl = r.deadline_ms;
  json out = {{"command", "diagnose frontier"}, {"model_id", r.model_id}, {"source", source_label(r.sources)},
              {"frontiers", json::array()}};
  if (dl) out["deadline_ms"] = *dl;
  for (const auto& fr : r.frontiers) {
    json j = {{"gpu_model", fr.gpu_model}, {"num_gpus", fr.num_gpus == 0 ? json("all") : json(fr.num_gpus)},
              {"points", fr.points.size()}, {"frontier", json::array()}};
    for (const auto* row : fr.frontier) j["frontier"].push_back(row_json(*row));
    if (fr.min_energy) j["min_energy"] = row_json(*fr.min_energy);
    if (dl) {
      j["feasible_under_deadline"] = fr.feasible;
      j["best_under_deadline"] = fr.best_under_deadline ? row_json(*fr.best_under_deadline) : json(nullptr);
    }
    out["frontiers"].push_back(std::move(j));
  }
  if (!r.plot_path.empty()) out["plot"] = r.plot_path;
  return dump(out);
}

std::string render_json(const PairsReport& r) {
  json out = {{"command", "diagnose pairs"}, {"kind", r.kind}, {"source", source_label(r.sources)}, {"comparisons", json::array()}};
  for (const auto& s : r.comparisons) {
    json j = {{"label", s.label}, {"pairs", s.n}, {"b_wins_energy", s.b_wins_energy}, {"b_wins_latency", s.b_wins_latency},
              {"median_energy_change", s.median_energy_change}, {"min_energy_change", s.min_energy_change},
              {"max_energy_change", s.max_energy_change}, {"median_latency_change", s.median_latency_change},
              {"rows", json::array()}};
    for (const auto& p : s.pairs)
      j["rows"].push_back({{"context", p.context}, {"a", row_json(*p.a)}, {"b", row_json(*p.b)},
                           {"energy_change", p.energy_change()}, {"latency_change", p.latency_change()}});
    out["comparisons"].push_back(std::move(j));
  }
  return dump(out);
}

std::string render_json(const GraphReport& r) {
  const auto& g = r.graph;
  json out = {{"nodes", json::array()}, {"edges", json::array()}, {"rules", json::array()}};
  for (const auto& n : g.nodes()) out["nodes"].push_back({{"id", n.id}, {"name", n.name}, {"kind", dg::to_string(n.kind)}});
  for (const auto& e : g.edges())
    out["edges"].push_back({{"number", e.number}, {"from", g.info(e.from).id}, {"to", g.info(e.to).id},
                            {"bidirectional", e.bidirectional}, {"why", e.why}});
  for (const auto& rule : r.rules) {
    json p = json::array();
    for (auto n : rule.path) p.push_back(g.info(n).id);
    out["rules"].push_back({{"id", rule.id}, {"title", rule.title}, {"meaning", rule.meaning}, {"path", p}});
  }
  return dump(out);
}

}  // namespace wattlab::report
