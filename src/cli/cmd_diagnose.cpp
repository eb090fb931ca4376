// wattlab diagnose: the "Where Do the Joules Go?" framework over measured configurations.
//   summary | min-energy | explain | compare | frontier | pairs | graph   (docs/diagnose.md)
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>

#include "cli.h"
#include "wattlab/core/error.h"
#include "wattlab/diagnose/capacity.h"
#include "wattlab/diagnose/decompose.h"
#include "wattlab/diagnose/frontier.h"
#include "wattlab/diagnose/graph.h"
#include "wattlab/diagnose/min_energy.h"
#include "wattlab/diagnose/pairs.h"
#include "wattlab/diagnose/readers.h"
#include "wattlab/diagnose/rules.h"
#include "wattlab/diagnose/select.h"
#include "wattlab/diagnose/summary.h"
#include "wattlab/report/diagnose_plots.h"
#include "wattlab/report/plot.h"
#include "wattlab/report/table.h"

namespace wattlab::cli {
using report::frontier_plot;
using report::waterfall_plot;
namespace {

namespace dg = wattlab::diagnose;
using json = nlohmann::ordered_json;

struct Options {
  std::vector<std::string> data;
  bool json = false;
  std::string gpu;
  int gpus = 0;
  double deadline_ms = 0;
  int min_batch = 0;
  std::string task;
  std::string config;
  std::string a, b;
  std::string model;
  std::string plot;
  double power_budget_w = 0;
  std::string kind = "gpu";
  std::string gpu_a = "H100", gpu_b = "B200";
  std::vector<double> deadlines;
};

struct Loaded {
  std::vector<dg::Dataset> datasets;
  dg::Rows rows;
  std::string label() const {
    std::vector<std::string> l;
    for (const auto& d : datasets) l.push_back(d.source_label);
    return fmt::format("{}", fmt::join(l, "; "));
  }
};

Loaded load(const Options& o, Io& io) {
  if (o.data.empty()) throw UsageError("--data FILE is required (a leaderboard task file, a CSV, or a store)");
  Loaded l;
  l.datasets.reserve(o.data.size());
  for (const auto& p : o.data) l.datasets.push_back(dg::read_any(p));
  for (const auto& d : l.datasets) {
    const std::size_t shown = std::min<std::size_t>(d.violations.size(), 20);
    for (std::size_t i = 0; i < shown; ++i) io.err << "wattlab: warning: " << d.violations[i].message() << "\n";
    if (d.violations.size() > shown)
      io.err << fmt::format("wattlab: warning: {} more invariant violations in {}\n", d.violations.size() - shown, d.source);
    for (const auto& r : d.rejected) io.err << "wattlab: warning: " << r.message() << "\n";
  }
  l.rows = dg::all_rows(l.datasets);
  return l;
}

json row_json(const dg::ConfigRecord& r) {
  json j = json::parse(dg::record_to_json(r));
  j["task"] = r.task;
  j["source"] = {{"file", r.source}, {"row", r.row_index}};
  return j;
}

json violations_json(const Loaded& l) {
  json a = json::array();
  for (const auto& d : l.datasets)
    for (const auto& v : d.violations)
      a.push_back({{"file", v.source}, {"row", v.row_index}, {"invariant", v.invariant}, {"stored", v.actual},
                   {"computed", v.expected}, {"relative_error", v.rel_error}});
  return a;
}

std::string g4(double x) { return fmt::format("{:.4g}", x); }
std::string f1(double x) { return fmt::format("{:.1f}", x); }

std::string provenance(const Loaded& l) {
  std::size_t n = 0, v = 0;
  for (const auto& d : l.datasets) {
    n += d.rows.size();
    v += d.violations.size();
  }
  return fmt::format("source: {} ({} rows, {} invariant violations)", l.label(), n, v);
}

dg::Filter filter_from(const Options& o) {
  dg::Filter f;
  if (!o.gpu.empty()) f.gpu_model = o.gpu;
  if (o.gpus > 0) f.num_gpus = o.gpus;
  if (o.deadline_ms > 0) f.deadline_ms = o.deadline_ms;
  if (!o.task.empty()) f.task = o.task;
  f.min_batch = o.min_batch;
  return f;
}

// ---- summary ----------------------------------------------------------------------------------
int run_summary(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  const std::string gpu = o.gpu.empty() ? "B200" : o.gpu;
  std::vector<dg::TaskSummary> sums;
  for (const auto& d : l.datasets) sums.push_back(dg::summarize_task(d, gpu));
  // Energy per response against the cheapest LLM task loaded (the paper: problem solving vs chat, 25x).
  const dg::TaskSummary* base = nullptr;
  for (const auto& s : sums)
    if (s.workload == dg::Workload::llm && !s.minima.empty() &&
        (!base || s.mean_energy_per_response_j < base->mean_energy_per_response_j))
      base = &s;
  if (o.json) {
    json out = {{"command", "diagnose summary"}, {"gpu_model", gpu}, {"tasks", json::array()}};
    for (const auto& s : sums) {
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
        if (base && base != &s) t["energy_per_request_ratio_to_" + base->task] = s.mean_energy_per_response_j / base->mean_energy_per_response_j;
      } else {
        t["mean_energy_per_generation_joules"] = s.mean_energy_per_response_j;
        t["minima_on_one_gpu"] = s.minima_on_one_gpu;
      }
      if (s.lowest) t["lowest"] = row_json(*s.lowest);
      if (s.highest) t["highest"] = row_json(*s.highest);
      t["batch_effect"] = {{"groups", s.batch_groups}, {"median", s.batch_effect_median}, {"min", s.batch_effect_min},
                           {"max", s.batch_effect_max}};
      t["minima"] = json::array();
      for (const auto* r : s.minima) t["minima"].push_back(row_json(*r));
      out["tasks"].push_back(std::move(t));
    }
    out["invariant_violations"] = violations_json(l);
    io.out << out.dump(2) << "\n";
    return kExitOk;
  }
  for (const auto& s : sums) {
    io.out << fmt::format("{} ({}) -- {}: {} rows, {} models, {} invariant violations\n", s.task_display_name, s.task,
                          s.source_label, s.rows, s.models, s.violations);
    if (s.minima.empty()) {
      io.out << fmt::format("  no {} rows\n\n", gpu);
      continue;
    }
    const char* unit = s.minima.front()->unit();
    io.out << fmt::format("  minimum-energy {} configurations (lowest energy per {} per model), {} models:\n", gpu, unit,
                          s.minima.size());
    if (s.workload == dg::Workload::llm) {
      io.out << fmt::format("    mean output length            {:.1f} tokens (avg_output_len)\n", s.mean_output_len_tokens);
      io.out << fmt::format("    mean energy per response      {:.1f} J (energy_per_request_joules)\n", s.mean_energy_per_response_j);
      if (base && base != &s)
        io.out << fmt::format("    energy per response vs {}  {:.1f}x\n", base->task,
                              s.mean_energy_per_response_j / base->mean_energy_per_response_j);
    } else {
      io.out << fmt::format("    mean energy per {}          {:.1f} J\n", unit, s.mean_energy_per_response_j);
      io.out << fmt::format("    minima on one GPU             {} of {}\n", s.minima_on_one_gpu, s.minima.size());
    }
    io.out << fmt::format("    lowest energy per response    {:.1f} J ({}, {})\n", s.lowest->energy_per_response_j(),
                          s.lowest->nickname, s.lowest->where());
    io.out << fmt::format("    highest energy per response   {:.1f} J ({}, {}), {:.1f}x the lowest\n",
                          s.highest->energy_per_response_j(), s.highest->nickname, s.highest->where(),
                          s.highest->energy_per_response_j() / s.lowest->energy_per_response_j());
    io.out << fmt::format("  batch size effect on {} (energy per {} at the smallest batch / group minimum, over {} "
                          "(model, GPU count) groups): median {:.2f}x, range {:.2f}x-{:.2f}x\n\n",
                          gpu, unit, s.batch_groups, s.batch_effect_median, s.batch_effect_min, s.batch_effect_max);
  }
  io.out << provenance(l) << "\n";
  return kExitOk;
}

// ---- min-energy ---------------------------------------------------------------------------------
int run_min_energy(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  const dg::Filter f = filter_from(o);
  const dg::Rows rows = dg::min_energy_per_model(l.rows, f);
  if (o.json) {
    json out = {{"command", "diagnose min-energy"}, {"source", l.label()}, {"rows", json::array()}};
    if (f.gpu_model) out["gpu_model"] = *f.gpu_model;
    if (f.deadline_ms) out["deadline_ms"] = *f.deadline_ms;
    for (const auto* r : rows) {
      json j = row_json(*r);
      j[r->llm ? "throughput_per_watt_tokens_per_sec_per_watt" : "throughput_per_watt_per_sec_per_watt"] = r->throughput_per_watt();
      if (o.power_budget_w > 0) {
        const auto c = dg::capacity_under_budget(*r, o.power_budget_w);
        j["power_budget_watts"] = o.power_budget_w;
        j["requests_per_sec_under_budget"] = c.requests_per_sec;
        j["whole_replicas_under_budget"] = c.whole_replicas;
      }
      out["rows"].push_back(std::move(j));
    }
    out["invariant_violations"] = violations_json(l);
    io.out << out.dump(2) << "\n";
    return kExitOk;
  }
  std::vector<std::string> hdr{"task", "model", "GPU", "batch", "J/unit", "J/response", "latency ms", "power W", "units/s/W"};
  if (o.power_budget_w > 0) hdr.insert(hdr.end(), {"req/s @budget", "replicas"});
  report::Table t(hdr);
  for (const auto* r : rows) {
    std::vector<std::string> c{r->task, r->model_id, fmt::format("{}x{}", r->gpu_model, r->num_gpus),
                               std::to_string(r->batch()), g4(r->energy_per_unit_j()), f1(r->energy_per_response_j()),
                               g4(r->latency_ms()), f1(r->avg_power_watts), fmt::format("{:.3f}", r->throughput_per_watt())};
    if (o.power_budget_w > 0) {
      const auto cap = dg::capacity_under_budget(*r, o.power_budget_w);
      c.push_back(fmt::format("{:.2f}", cap.requests_per_sec));
      c.push_back(std::to_string(cap.whole_replicas));
    }
    t.add_row(std::move(c));
  }
  io.out << fmt::format("Minimum-energy configuration per model{}{}{}{}\n", f.gpu_model ? " on " + *f.gpu_model : "",
                        f.num_gpus ? fmt::format(" x{}", *f.num_gpus) : "",
                        f.deadline_ms ? fmt::format(", latency <= {:g} ms (median ITL for LLMs, batch latency for diffusion)", *f.deadline_ms) : "",
                        f.min_batch ? fmt::format(", batch >= {}", f.min_batch) : "");
  io.out << "J/unit: energy_per_token_joules (LLM) or energy_per_image/video_joules; J/response: energy_per_request_joules or per image; "
            "latency: median_itl_ms or batch_latency_s x 1000; units/s/W = 1 / J/unit\n";
  if (o.power_budget_w > 0)
    io.out << fmt::format("req/s @budget: requests per second a {:g} W GPU power budget serves (budget / J per response); "
                          "replicas: whole copies of the configuration within the budget\n", o.power_budget_w);
  io.out << t.render() << provenance(l) << "\n";
  return rows.empty() ? kExitFailure : kExitOk;
}

// ---- explain --------------------------------------------------------------------------------------
json finding_json(const dg::Finding& f) {
  json p = json::array();
  for (auto n : f.path) p.push_back(dg::CausalGraph::paper().info(n).id);
  json e = json::array();
  for (const auto& x : f.evidence) e.push_back({{"what", x.what}, {"value", x.value}, {"unit", x.unit}, {"from", x.from}});
  return {{"rule", f.rule_id}, {"title", f.title}, {"path", p}, {"path_text", dg::format_path(f.path)},
          {"summary", f.summary}, {"evidence", e}};
}

void print_record(const dg::ConfigRecord& r, Io& io) {
  io.out << fmt::format("{} -- {} ({}), {}\n", r.label(), r.task, r.where(), r.source);
  if (r.llm) {
    const auto& m = *r.llm;
    io.out << fmt::format("  energy_per_token_joules {:.4g} J   energy_per_request_joules {:.1f} J   avg_output_len {:.1f} tokens\n",
                          m.energy_per_token_joules, m.energy_per_request_joules, m.avg_output_len);
    io.out << fmt::format("  avg_power_watts {:.1f} W ({:.1f} W per GPU)   output_throughput {:.1f} tok/s   median_itl {:.2f} ms\n",
                          r.avg_power_watts, r.avg_power_watts / r.num_gpus, m.output_throughput_tokens_per_sec, m.median_itl_ms);
    io.out << fmt::format("  max_num_seqs {}   avg_batch_size {:.1f}   TP {} EP {} DP {}   {} ({:.3g}B active of {:.3g}B)\n",
                          m.max_num_seqs, m.avg_batch_size, m.tensor_parallel, m.expert_parallel, m.data_parallel,
                          r.architecture, r.activated_params_billions, r.total_params_billions);
    io.out << fmt::format("  throughput per watt {:.3f} tok/s/W   steady-decode residual rho = E_tok / (P x ITL / B_eff) = {:.3f}\n",
                          r.throughput_per_watt(), dg::steady_decode_residual(r));
  } else {
    const auto& d = *r.diffusion;
    io.out << fmt::format("  energy_per_{}_joules {:.1f} J   avg_power_watts {:.1f} W   batch_latency_s {:.3f} s   batch_size {}\n",
                          r.unit(), d.energy_per_generation_joules, r.avg_power_watts, d.batch_latency_s, d.batch_size);
    io.out << fmt::format("  {} steps, {}x{} px, ulysses {} ring {}, {:.3g}B params, {:.4f} {}s/s/W\n", d.inference_steps,
                          d.width, d.height, d.ulysses_degree, d.ring_degree, r.total_params_billions, r.throughput_per_watt(), r.unit());
  }
  if (auto lim = dg::power_limit_per_gpu_w(r))
    io.out << fmt::format("  power per GPU / limit {:.0f}% (limit {:.0f} W: {})\n", r.avg_power_watts / r.num_gpus / *lim * 100,
                          *lim, r.measured.power_limit_watts ? "measured" : "TDP of the paper's setup");
  const auto& x = r.measured;
  if (x.any()) {
    io.out << "  measured by wattlab:";
    if (x.cpu_energy_per_unit_joules)
      io.out << fmt::format(" CPU {:.4g} J/{} ({:.0f}% of GPU+CPU)", *x.cpu_energy_per_unit_joules, r.unit(),
                            *x.cpu_energy_per_unit_joules / (*x.cpu_energy_per_unit_joules + r.energy_per_unit_j()) * 100);
    if (x.sm_clock_mhz) io.out << fmt::format(" SM clock {:.0f} MHz", *x.sm_clock_mhz);
    if (x.sm_activity) io.out << fmt::format(" SM activity {:.0f}%", *x.sm_activity * 100);
    if (x.tensor_activity) io.out << fmt::format(" tensor {:.0f}%", *x.tensor_activity * 100);
    if (x.dram_activity) io.out << fmt::format(" DRAM {:.0f}%", *x.dram_activity * 100);
    if (x.gpu_utilization) io.out << fmt::format(" GPU util {:.0f}%", *x.gpu_utilization * 100);
    if (x.kv_cache_usage) io.out << fmt::format(" KV cache {:.0f}%", *x.kv_cache_usage * 100);
    if (x.cpu_utilization) io.out << fmt::format(" CPU busy {:.0f}%", *x.cpu_utilization * 100);
    io.out << "\n";
  }
}

void print_findings(const std::vector<dg::Finding>& fs, Io& io) {
  if (fs.empty()) {
    io.out << "  no rule fired: the configuration is on its frontier and no mechanism stands out in this data\n";
    return;
  }
  for (const auto& f : fs) {
    io.out << fmt::format("  [{}] {}\n    path: {}\n    {}\n", f.rule_id, f.title, dg::format_path(f.path), f.summary);
    for (const auto& e : f.evidence)
      io.out << fmt::format("      - {}: {:.4g}{}{} ({})\n", e.what, e.value, e.unit.empty() ? "" : " ", e.unit, e.from);
  }
}

int run_explain(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  const auto& r = dg::resolve(dg::parse_selector(o.config), l.rows);
  const auto fs = dg::diagnose_record(r, l.rows);
  if (o.json) {
    json out = {{"command", "diagnose explain"}, {"selector", o.config}, {"config", row_json(r)}, {"findings", json::array()}};
    if (r.llm) out["steady_decode_residual_rho"] = dg::steady_decode_residual(r);
    for (const auto& f : fs) out["findings"].push_back(finding_json(f));
    out["invariant_violations"] = violations_json(l);
    io.out << out.dump(2) << "\n";
    return kExitOk;
  }
  print_record(r, io);
  io.out << "findings:\n";
  print_findings(fs, io);
  io.out << provenance(l) << "\n";
  return kExitOk;
}

// ---- compare ----------------------------------------------------------------------------------------
int render_plot(const report::Plot& p, const std::string& path, Io& io) {
  auto res = report::render(p, path);
  if (!res) {
    io.err << "wattlab: " << res.error().message() << "\n";
    return kExitFailure;
  }
  io.out << fmt::format("plot: {}{} (gnuplot {})\n", res->svg_path, res->png_path ? ", " + *res->png_path : "", res->gnuplot_path);
  return kExitOk;
}

int run_compare(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  const auto& a = dg::resolve(dg::parse_selector(o.a), l.rows);
  const auto& b = dg::resolve(dg::parse_selector(o.b), l.rows);
  const auto d = dg::decompose(a, b);
  const auto fa = dg::diagnose_record(a, l.rows), fb = dg::diagnose_record(b, l.rows);
  if (o.json) {
    json out = {{"command", "diagnose compare"}, {"a", row_json(a)}, {"b", row_json(b)},
                {"energy_per_response_joules_a", d.energy_a_j}, {"energy_per_response_joules_b", d.energy_b_j},
                {"ratio_b_over_a", d.total_ratio}, {"factors", json::array()}};
    for (const auto& f : d.factors)
      out["factors"].push_back({{"factor", f.name}, {"field", f.field}, {"a", f.value_a}, {"b", f.value_b}, {"unit", f.unit},
                                {"ratio", f.ratio}, {"log_share", f.log_share}});
    out["findings_a"] = json::array();
    out["findings_b"] = json::array();
    for (const auto& f : fa) out["findings_a"].push_back(finding_json(f));
    for (const auto& f : fb) out["findings_b"].push_back(finding_json(f));
    int rc = kExitOk;
    if (!o.plot.empty()) {
      std::ostringstream sink;
      Io quiet{sink, io.err};
      rc = render_plot(waterfall_plot(d, l.label()), o.plot, quiet);
      out["plot"] = o.plot;
    }
    io.out << out.dump(2) << "\n";
    return rc;
  }
  io.out << "A: ";
  print_record(a, io);
  io.out << "B: ";
  print_record(b, io);
  io.out << fmt::format("\nEnergy per response: A {:.4g} J, B {:.4g} J; B / A = {:.4f}x\n", d.energy_a_j, d.energy_b_j, d.total_ratio);
  io.out << (a.llm ? "Decomposition: E_resp = avg_output_len x avg_power_watts x median_itl / avg_batch_size x rho\n"
                   : "Decomposition: E_gen = avg_power_watts x batch_latency_s / batch_size (x residual)\n");
  report::Table t({"factor", "field", "A", "B", "unit", "ratio B/A", "share of log change"});
  double cum = 1;
  for (const auto& f : d.factors) {
    cum *= f.ratio;
    t.add_row({f.name, f.field, g4(f.value_a), g4(f.value_b), f.unit, fmt::format("{:.4f}", f.ratio),
               fmt::format("{:+.0f}%", f.log_share * 100)});
  }
  t.add_row({"product", "", "", "", "", fmt::format("{:.4f}", cum), ""});
  io.out << t.render();
  io.out << "\nfindings for A:\n";
  print_findings(fa, io);
  io.out << "findings for B:\n";
  print_findings(fb, io);
  io.out << provenance(l) << "\n";
  if (!o.plot.empty()) return render_plot(waterfall_plot(d, l.label()), o.plot, io);
  return kExitOk;
}

// ---- frontier ----------------------------------------------------------------------------------------
std::string resolve_model(const std::string& name, const dg::Rows& rows) {
  const auto m = dg::match(dg::parse_selector("model=" + name), rows);
  std::set<std::string> ids;
  for (const auto* r : m) ids.insert(r->model_id);
  if (ids.size() == 1) return *ids.begin();
  if (ids.empty()) {
    std::set<std::string> all;
    for (const auto* r : rows) all.insert(r->model_id);
    throw UsageError(fmt::format("--model {}: no such model in the data; models: {}", name, fmt::join(all, ", ")));
  }
  throw UsageError(fmt::format("--model {}: ambiguous, matches {}", name, fmt::join(ids, ", ")));
}

int run_frontier(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  dg::Filter f = filter_from(o);
  f.deadline_ms.reset();
  const std::string model = resolve_model(o.model, l.rows);
  f.model = model;
  const dg::Rows rows = dg::filter(l.rows, f);
  std::set<std::string> tasks;
  for (const auto* r : rows) tasks.insert(r->task);
  if (tasks.size() > 1)
    throw UsageError(fmt::format("--model {} appears in several tasks ({}); add --task", model, fmt::join(tasks, ", ")));
  const std::optional<double> dl = o.deadline_ms > 0 ? std::optional<double>(o.deadline_ms) : std::nullopt;
  const auto frs = dg::frontiers_for_model(rows, model, dl);
  if (o.json) {
    json out = {{"command", "diagnose frontier"}, {"model_id", model}, {"source", l.label()}, {"frontiers", json::array()}};
    if (dl) out["deadline_ms"] = *dl;
    for (const auto& fr : frs) {
      json j = {{"gpu_model", fr.gpu_model}, {"num_gpus", fr.num_gpus == 0 ? json("all") : json(fr.num_gpus)},
                {"points", fr.points.size()}, {"frontier", json::array()}};
      for (const auto* r : fr.frontier) j["frontier"].push_back(row_json(*r));
      if (fr.min_energy) j["min_energy"] = row_json(*fr.min_energy);
      if (dl) {
        j["feasible_under_deadline"] = fr.feasible;
        j["best_under_deadline"] = fr.best_under_deadline ? row_json(*fr.best_under_deadline) : json(nullptr);
      }
      out["frontiers"].push_back(std::move(j));
    }
    int rc = kExitOk;
    if (!o.plot.empty()) {
      std::ostringstream sink;
      Io quiet{sink, io.err};
      rc = render_plot(frontier_plot(frs, model, l.label()), o.plot, quiet);
      out["plot"] = o.plot;
    }
    io.out << out.dump(2) << "\n";
    return rc;
  }
  for (const auto& fr : frs) {
    io.out << fmt::format("{} on {} x{}: {} configurations, {} on the time-energy frontier\n", model, fr.gpu_model,
                          fr.num_gpus == 0 ? std::string("(all counts)") : std::to_string(fr.num_gpus), fr.points.size(),
                          fr.frontier.size());
    if (fr.frontier.empty()) continue;
    report::Table t({"GPUs", "batch", fmt::format("{} ms", fr.frontier.front()->latency_name()),
                     fmt::format("J/{}", fr.frontier.front()->unit()), "J/response", "power W", "mark"});
    for (const auto* r : fr.frontier) {
      std::string mark;
      if (r == fr.min_energy) mark = "min energy";
      if (r == fr.best_under_deadline) mark += mark.empty() ? "best <= deadline" : ", best <= deadline";
      else if (dl && r->latency_ms() <= *dl) mark += mark.empty() ? "feasible" : ", feasible";
      t.add_row({std::to_string(r->num_gpus), std::to_string(r->batch()), g4(r->latency_ms()), g4(r->energy_per_unit_j()),
                 f1(r->energy_per_response_j()), f1(r->avg_power_watts), mark});
    }
    io.out << t.render();
    if (dl)
      io.out << fmt::format("  deadline {:g} ms: {} of {} configurations feasible{}\n", *dl, fr.feasible, fr.points.size(),
                            fr.best_under_deadline ? fmt::format(", best {:.4g} J/{} ({})", fr.best_under_deadline->energy_per_unit_j(),
                                                                 fr.best_under_deadline->unit(), fr.best_under_deadline->where())
                                                   : std::string(", none"));
    io.out << "\n";
  }
  io.out << provenance(l) << "\n";
  if (!o.plot.empty()) return render_plot(frontier_plot(frs, model, l.label()), o.plot, io);
  return kExitOk;
}

// ---- pairs ---------------------------------------------------------------------------------------------
int run_pairs(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  std::vector<dg::PairStats> stats;
  if (o.kind == "gpu") {
    std::vector<double> dls = o.deadlines;
    if (dls.empty()) dls = {50, 100, 250, 10000, 30000, 60000};
    for (double d : dls) {
      auto s = dg::compare_gpus(l.rows, o.gpu_a, o.gpu_b, d, o.min_batch);
      if (s.n) stats.push_back(std::move(s));
    }
  } else if (o.kind == "fp8") {
    for (auto [lo, hi] : {std::pair{8, 16}, {17, 64}, {65, 256}}) stats.push_back(dg::compare_fp8_bf16(l.rows, lo, hi));
  } else if (o.kind == "gpus") {
    stats.push_back(dg::compare_gpu_counts(l.rows));
  } else if (o.kind == "moe") {
    stats.push_back(dg::compare_moe_dense(l.rows, o.gpu.empty() ? "B200" : o.gpu));
  } else {
    throw UsageError(fmt::format("--kind {}: accepted: gpu, fp8, gpus, moe", o.kind));
  }
  if (o.json) {
    json out = {{"command", "diagnose pairs"}, {"kind", o.kind}, {"source", l.label()}, {"comparisons", json::array()}};
    for (const auto& s : stats) {
      json j = {{"label", s.label}, {"pairs", s.n}, {"b_wins_energy", s.b_wins_energy}, {"b_wins_latency", s.b_wins_latency},
                {"median_energy_change", s.median_energy_change}, {"min_energy_change", s.min_energy_change},
                {"max_energy_change", s.max_energy_change}, {"median_latency_change", s.median_latency_change},
                {"rows", json::array()}};
      for (const auto& p : s.pairs)
        j["rows"].push_back({{"context", p.context}, {"a", row_json(*p.a)}, {"b", row_json(*p.b)},
                             {"energy_change", p.energy_change()}, {"latency_change", p.latency_change()}});
      out["comparisons"].push_back(std::move(j));
    }
    io.out << out.dump(2) << "\n";
    return kExitOk;
  }
  report::Table t({"comparison (B vs A)", "pairs", "B lower energy", "B lower latency", "median dE", "range dE", "median dLatency"});
  for (const auto& s : stats)
    t.add_row({s.label, std::to_string(s.n), std::to_string(s.b_wins_energy), std::to_string(s.b_wins_latency),
               fmt::format("{:+.1f}%", s.median_energy_change * 100),
               fmt::format("{:+.0f}%..{:+.0f}%", s.min_energy_change * 100, s.max_energy_change * 100),
               fmt::format("{:+.1f}%", s.median_latency_change * 100)});
  io.out << "dE: change of energy per unit (token / image), B / A - 1; latency: median ITL (LLM) or batch latency (diffusion)\n";
  io.out << t.render() << provenance(l) << "\n";
  return kExitOk;
}

// ---- graph ----------------------------------------------------------------------------------------------
int run_graph(const Options& o, Io& io) {
  const auto& g = dg::CausalGraph::paper();
  if (o.json) {
    json out = {{"nodes", json::array()}, {"edges", json::array()}, {"rules", json::array()}};
    for (const auto& n : g.nodes()) out["nodes"].push_back({{"id", n.id}, {"name", n.name}, {"kind", dg::to_string(n.kind)}});
    for (const auto& e : g.edges())
      out["edges"].push_back({{"number", e.number}, {"from", g.info(e.from).id}, {"to", g.info(e.to).id},
                              {"bidirectional", e.bidirectional}, {"why", e.why}});
    for (const auto& r : dg::rules()) {
      json p = json::array();
      for (auto n : r.path) p.push_back(g.info(n).id);
      out["rules"].push_back({{"id", r.id}, {"title", r.title}, {"meaning", r.meaning}, {"path", p}});
    }
    io.out << out.dump(2) << "\n";
    return kExitOk;
  }
  io.out << "Causal graph of \"Where Do the Joules Go?\" (arXiv 2601.22076, section 2)\nnodes:\n";
  for (const auto& n : g.nodes()) io.out << fmt::format("  {:<24} {}\n", n.name, dg::to_string(n.kind));
  io.out << "edges:\n";
  for (const auto& e : g.edges())
    io.out << fmt::format("  {:>2}. {} {} {}  ({})\n", e.number, g.info(e.from).name, e.bidirectional ? "\u2194" : "\u2192",
                          g.info(e.to).name, e.why);
  io.out << "rules:\n";
  for (const auto& r : dg::rules()) io.out << fmt::format("  {:<26} {}\n", r.id, dg::format_path(r.path));
  return kExitOk;
}

template <class F>
void bind(CLI::App* sub, Action& action, std::shared_ptr<Options> o, F f) {
  sub->callback([&action, o, f] { action = [o, f](Io& io) { return f(*o, io); }; });
}

void data_opts(CLI::App* s, Options& o) {
  s->add_option("--data", o.data, "leaderboard task file(s) (.json), CSV (.csv) or store (.db)")->required()->expected(1, -1);
  s->add_flag("--json", o.json, "JSON output (rows keep the leaderboard's field names and units)");
}

}  // namespace

void register_diagnose(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand("diagnose", "explain configurations, compare two, find time-energy frontiers");
  sub->require_subcommand(1);
  auto o = std::make_shared<Options>();

  auto* s = sub->add_subcommand("summary", "per task, the paper's headline figures");
  data_opts(s, *o);
  s->add_option("--gpu", o->gpu, "GPU type of the minimum-energy figures (default B200)");
  bind(s, action, o, run_summary);

  auto* m = sub->add_subcommand("min-energy", "the minimum-energy configuration per model");
  data_opts(m, *o);
  m->add_option("--gpu", o->gpu, "only this GPU type (H100, B200)");
  m->add_option("--gpus", o->gpus, "only this GPU count");
  m->add_option("--deadline-ms", o->deadline_ms, "latency deadline: median ITL (LLM) or batch latency (diffusion), ms")
      ->check(CLI::PositiveNumber);
  m->add_option("--min-batch", o->min_batch, "drop batch sizes below this (the paper often uses 16)");
  m->add_option("--task", o->task, "only this task");
  m->add_option("--power-budget-w", o->power_budget_w, "GPU power budget (W): requests/s it serves")->check(CLI::PositiveNumber);
  bind(m, action, o, run_min_energy);

  auto* e = sub->add_subcommand("explain", "why one configuration uses the energy it uses");
  data_opts(e, *o);
  e->add_option("--config", o->config, "selector, e.g. model=Qwen/Qwen3-8B,gpu=B200,gpus=1,batch=64")->required();
  bind(e, action, o, run_explain);

  auto* c = sub->add_subcommand("compare", "decompose the energy ratio of two configurations (B / A)");
  c->add_option("A", o->a, "selector of the baseline")->required();
  c->add_option("B", o->b, "selector of the alternative")->required();
  data_opts(c, *o);
  c->add_option("--plot", o->plot, "write the waterfall plot (SVG, and PNG beside it) with gnuplot");
  bind(c, action, o, run_compare);

  auto* f = sub->add_subcommand("frontier", "time-energy Pareto frontier of a model");
  data_opts(f, *o);
  f->add_option("--model", o->model, "model_id or nickname (or a unique part of one)")->required();
  f->add_option("--gpu", o->gpu, "only this GPU type");
  f->add_option("--task", o->task, "the task, when several files have the model");
  f->add_option("--deadline-ms", o->deadline_ms, "mark the feasible set under this latency (ms)")->check(CLI::PositiveNumber);
  f->add_option("--plot", o->plot, "write the plot (SVG, and PNG beside it) with gnuplot");
  bind(f, action, o, run_frontier);

  auto* p = sub->add_subcommand("pairs", "paired comparisons: gpu (A vs B at deadlines), fp8, gpus, moe");
  data_opts(p, *o);
  p->add_option("--kind", o->kind, "gpu | fp8 | gpus | moe")->check(CLI::IsMember({"gpu", "fp8", "gpus", "moe"}));
  p->add_option("--gpu-a", o->gpu_a, "baseline GPU for --kind gpu (default H100)");
  p->add_option("--gpu-b", o->gpu_b, "alternative GPU for --kind gpu (default B200)");
  p->add_option("--deadline-ms", o->deadlines, "deadlines for --kind gpu (default 50 100 250 10000 30000 60000)");
  p->add_option("--min-batch", o->min_batch, "drop batch sizes below this");
  p->add_option("--gpu", o->gpu, "GPU type for --kind moe (default B200)");
  bind(p, action, o, run_pairs);

  auto* g = sub->add_subcommand("graph", "print the causal graph and the rules' paths");
  g->add_flag("--json", o->json, "JSON output");
  bind(g, action, o, run_graph);
}

}  // namespace wattlab::cli
