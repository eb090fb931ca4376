// wattlab diagnose: the "Where Do the Joules Go?" framework over measured configurations.
//   summary | min-energy | explain | compare | frontier | pairs | graph   (docs/diagnose.md)
// This file parses; cmd_diagnose_run.cpp runs each subcommand. Defaults that come from the paper
// are named in src/diagnose/paper_defaults.h.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "diagnose_options.h"

namespace wattlab::cli {
namespace {

namespace dg = wattlab::diagnose;
using report::Format;

template <class F>
void bind(CLI::App* sub, Action& action, std::shared_ptr<DiagnoseOptions> o, F f) {
  sub->callback([&action, o, f] { action = [o, f](Io& io) { return f(*o, io); }; });
}

void data_opts(CLI::App* s, DiagnoseOptions& o) {
  s->add_option("--data", o.data, "leaderboard task file(s) (.json), CSV (.csv) or store (.db)")->required()->expected(1, -1);
  add_format_option(s, o.format, {Format::text, Format::json}, "JSON rows keep the leaderboard's field names and units");
}

}  // namespace

void register_diagnose(CLI::App& app, Action& action) {
  auto* sub = app.add_subcommand("diagnose", "explain configurations, compare two, find time-energy frontiers");
  sub->require_subcommand(1);
  auto o = std::make_shared<DiagnoseOptions>();
  const std::string paper_gpu(dg::kPaperGpuModel);

  auto* s = sub->add_subcommand("summary", "per task, the paper's headline figures");
  data_opts(s, *o);
  s->add_option("--gpu", o->gpu, "GPU type of the minimum-energy figures (default " + paper_gpu + ")");
  bind(s, action, o, diagnose_summary);

  auto* m = sub->add_subcommand("min-energy", "the minimum-energy configuration per model");
  data_opts(m, *o);
  m->add_option("--gpu", o->gpu,
                fmt::format("only this GPU type ({}, {})", dg::kPaperBaselineGpuModel, dg::kPaperAlternativeGpuModel));
  m->add_option("--gpus", o->gpus, "only this GPU count");
  m->add_option("--deadline-ms", o->deadline_ms, "latency deadline: median ITL (LLM) or batch latency (diffusion), ms")
      ->check(CLI::PositiveNumber);
  m->add_option("--min-batch", o->min_batch,
                fmt::format("drop batch sizes below this (the paper often uses {})", dg::kPaperMinBatch));
  m->add_option("--task", o->task, "only this task");
  m->add_option("--power-budget-w", o->power_budget_w, "GPU power budget (W): requests/s it serves")->check(CLI::PositiveNumber);
  bind(m, action, o, diagnose_min_energy);

  auto* e = sub->add_subcommand("explain", "why one configuration uses the energy it uses");
  data_opts(e, *o);
  e->add_option("--config", o->config, "selector, e.g. model=Qwen/Qwen3-8B,gpu=B200,gpus=1,batch=64")->required();
  bind(e, action, o, diagnose_explain);

  auto* c = sub->add_subcommand("compare", "decompose the energy ratio of two configurations (B / A)");
  c->add_option("A", o->a, "selector of the baseline")->required();
  c->add_option("B", o->b, "selector of the alternative")->required();
  data_opts(c, *o);
  c->add_option("--plot", o->plot, "write the waterfall plot (SVG, and PNG beside it) with gnuplot");
  bind(c, action, o, diagnose_compare);

  auto* f = sub->add_subcommand("frontier", "time-energy Pareto frontier of a model");
  data_opts(f, *o);
  f->add_option("--model", o->model, "model_id or nickname (or a unique part of one)")->required();
  f->add_option("--gpu", o->gpu, "only this GPU type");
  f->add_option("--task", o->task, "the task, when several files have the model");
  f->add_option("--deadline-ms", o->deadline_ms, "mark the feasible set under this latency (ms)")->check(CLI::PositiveNumber);
  f->add_option("--plot", o->plot, "write the plot (SVG, and PNG beside it) with gnuplot");
  bind(f, action, o, diagnose_frontier);

  auto* p = sub->add_subcommand("pairs", "paired comparisons: gpu (A vs B at deadlines), fp8, gpus, moe");
  data_opts(p, *o);
  p->add_option("--kind", o->kind, "gpu | fp8 | gpus | moe")->check(CLI::IsMember({"gpu", "fp8", "gpus", "moe"}));
  p->add_option("--gpu-a", o->gpu_a, fmt::format("baseline GPU for --kind gpu (default {})", dg::kPaperBaselineGpuModel));
  p->add_option("--gpu-b", o->gpu_b, fmt::format("alternative GPU for --kind gpu (default {})", dg::kPaperAlternativeGpuModel));
  p->add_option("--deadline-ms", o->deadlines,
                fmt::format("deadlines for --kind gpu (default {:g})", fmt::join(dg::kPaperDeadlinesMs, " ")));
  p->add_option("--min-batch", o->min_batch, "drop batch sizes below this");
  p->add_option("--gpu", o->gpu, "GPU type for --kind moe (default " + paper_gpu + ")");
  bind(p, action, o, diagnose_pairs);

  auto* g = sub->add_subcommand("graph", "print the causal graph and the rules' paths");
  add_format_option(g, o->format, {Format::text, Format::json});
  bind(g, action, o, diagnose_graph);
}

}  // namespace wattlab::cli
