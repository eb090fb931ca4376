// wattlab diagnose summary | min-energy | explain | compare | frontier | pairs | graph
// (docs/diagnose.md): each loads the data, calls the diagnose library, and hands its results to a
// renderer of src/report (report/diagnose_report.h) in the format --format picks.
#include <fmt/format.h>

#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include "diagnose_options.h"
#include "wattlab/core/error.h"
#include "diagnose/min_energy.h"
#include "diagnose/readers.h"
#include "diagnose/select.h"
#include "report/diagnose_plots.h"
#include "report/diagnose_report.h"
#include "report/plot.h"

namespace wattlab::cli {
namespace {

namespace dg = wattlab::diagnose;
using Options = DiagnoseOptions;

struct Loaded {
  std::vector<dg::Dataset> datasets;
  dg::Rows rows;
};

// Reads every --data file; invariant violations and rejected rows are warnings on stderr.
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

dg::Filter filter_from(const Options& o) {
  dg::Filter f;
  if (!o.gpu.empty()) f.gpu_model = o.gpu;
  if (o.gpus > 0) f.num_gpus = o.gpus;
  if (o.deadline_ms > 0) f.deadline_ms = o.deadline_ms;
  if (!o.task.empty()) f.task = o.task;
  f.min_batch = o.min_batch;
  return f;
}

template <class Report>
void emit(const Options& o, const Report& r, Io& io) {
  io.out << (o.json() ? report::render_json(r) : report::render_text(r));
}

int render_plot(const report::Plot& p, const std::string& path, Io& io) {
  auto res = report::render(p, path);
  if (!res) {
    io.err << "wattlab: " << res.error().message() << "\n";
    return kExitFailure;
  }
  io.out << fmt::format("plot: {}{} (gnuplot {})\n", res->svg_path, res->png_path ? ", " + *res->png_path : "", res->gnuplot_path);
  return kExitOk;
}

// The report, and the plot when --plot asks for one: in JSON the plot is drawn first, quietly,
// and the document names its path; in text the "plot:" line follows the report.
template <class Report, class MakePlot>
int emit_with_plot(const Options& o, Report& r, MakePlot make_plot, Io& io) {
  if (o.plot.empty()) {
    emit(o, r, io);
    return kExitOk;
  }
  if (o.json()) {
    std::ostringstream sink;
    Io quiet{sink, io.err};
    const int rc = render_plot(make_plot(), o.plot, quiet);
    r.plot_path = o.plot;
    io.out << report::render_json(r);
    return rc;
  }
  io.out << report::render_text(r);
  return render_plot(make_plot(), o.plot, io);
}

}  // namespace

int diagnose_summary(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  report::SummaryReport r{l.datasets, o.gpu.empty() ? std::string(dg::kPaperGpuModel) : o.gpu, {}};
  for (const auto& d : l.datasets) r.tasks.push_back(dg::summarize_task(d, r.gpu_model));
  emit(o, r, io);
  return kExitOk;
}

int diagnose_min_energy(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  report::MinEnergyReport r{l.datasets, filter_from(o), {}, std::nullopt};
  if (o.power_budget_w > 0) r.power_budget_w = o.power_budget_w;
  r.rows = dg::min_energy_per_model(l.rows, r.filter);
  emit(o, r, io);
  return o.json() || !r.rows.empty() ? kExitOk : kExitFailure;
}

int diagnose_explain(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  const auto& rec = dg::resolve(dg::parse_selector(o.config), l.rows);
  emit(o, report::ExplainReport{l.datasets, o.config, &rec, dg::diagnose_record(rec, l.rows)}, io);
  return kExitOk;
}

int diagnose_compare(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  const auto& a = dg::resolve(dg::parse_selector(o.a), l.rows);
  const auto& b = dg::resolve(dg::parse_selector(o.b), l.rows);
  report::CompareReport r{l.datasets, dg::decompose(a, b), dg::diagnose_record(a, l.rows), dg::diagnose_record(b, l.rows), {}};
  return emit_with_plot(o, r, [&] { return report::waterfall_plot(r.decomposition, report::source_label(l.datasets)); }, io);
}

namespace {

// The model_id that --model names (exactly, or as the unique part of one); UsageError otherwise.
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

}  // namespace

int diagnose_frontier(const Options& o, Io& io) {
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
  report::FrontierReport r{l.datasets, model, std::nullopt, {}, {}};
  if (o.deadline_ms > 0) r.deadline_ms = o.deadline_ms;
  r.frontiers = dg::frontiers_for_model(rows, model, r.deadline_ms);
  return emit_with_plot(o, r, [&] { return report::frontier_plot(r.frontiers, model, report::source_label(l.datasets)); }, io);
}

namespace {

// The comparisons --kind asks for, over the paper's deadlines and batch bins unless given.
std::vector<dg::PairStats> pair_stats(const Options& o, const dg::Rows& rows) {
  std::vector<dg::PairStats> stats;
  if (o.kind == "gpu") {
    std::vector<double> dls = o.deadlines;
    if (dls.empty()) dls.assign(dg::kPaperDeadlinesMs.begin(), dg::kPaperDeadlinesMs.end());
    for (double d : dls) {
      auto s = dg::compare_gpus(rows, o.gpu_a, o.gpu_b, d, o.min_batch);
      if (s.n) stats.push_back(std::move(s));
    }
  } else if (o.kind == "fp8") {
    for (auto [lo, hi] : dg::kPaperFp8BatchBins) stats.push_back(dg::compare_fp8_bf16(rows, lo, hi));
  } else if (o.kind == "gpus") {
    stats.push_back(dg::compare_gpu_counts(rows));
  } else if (o.kind == "moe") {
    stats.push_back(dg::compare_moe_dense(rows, o.gpu.empty() ? std::string(dg::kPaperGpuModel) : o.gpu));
  } else {
    throw UsageError(fmt::format("--kind {}: accepted: gpu, fp8, gpus, moe", o.kind));
  }
  return stats;
}

}  // namespace

int diagnose_pairs(const Options& o, Io& io) {
  const Loaded l = load(o, io);
  emit(o, report::PairsReport{l.datasets, o.kind, pair_stats(o, l.rows)}, io);
  return kExitOk;
}

int diagnose_graph(const Options& o, Io& io) {
  emit(o, report::GraphReport{}, io);
  return kExitOk;
}

}  // namespace wattlab::cli
