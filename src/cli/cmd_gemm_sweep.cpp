// wattlab gemm sweep / study: a plan of GEMM points (lab::make_plan) measured point by point into
// the store, resumable under the same sweep id, stoppable between points by a signal, a point
// count or a time budget (docs/gemm-cli.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <ostream>

#include "gemm_commands.h"
#include "gemm_executor.h"
#include "gemm_options.h"
#include "gemm_recording.h"
#include "stop_signal.h"
#include "lab/sweep_stop.h"
#include "report/gemm_points_csv.h"
#include "report/gemm_text.h"

namespace wattlab::cli {
namespace {

struct GemmSweepOptions {
  std::string name;  // "sweep" or "study"
  GemmDeviceOptions dev;
  GemmProtocolFlags proto;
  std::string experiments;
  std::string engines = "bf16";
  std::string shapes = "8192";
  std::string seeds = "1";
  int max_values = 0;
  int reference_every = 6;
  std::string db = "wattlab.db";
  bool dry_run = false;
  bool no_resume = false;
  std::string resume_from;  // a points CSV whose points of this sweep count as done
  std::size_t max_points = 0;
  double budget_min = 0;
  bool engines_given = false, shapes_given = false;
};

// The points of `sweep_id` in the points CSV that --resume-from names (python/bench/gemm_points_csv.py):
// done, as if they were in the store. A CSV that does not read is bad input (exit 2).
std::set<int> completed_in_csv(const std::string& path, const std::string& sweep_id) {
  auto runs = report::load_gemm_points_csv(path);
  if (!runs) throw UsageError("--resume-from: " + runs.error().message());
  std::set<int> done;
  for (const auto& r : *runs)
    for (const auto& w : r.windows)
      if (auto p = GemmPointRecord::decode(w); p && p->sweep == sweep_id) done.insert(p->point);
  return done;
}

std::vector<std::string> command_line(const GemmSweepOptions& o) {
  std::vector<std::string> c{"wattlab", "gemm", o.name, "--device", o.dev.device, "--experiment", o.experiments,
                             "--engines", o.engines, "--shapes", o.shapes, "--seeds", o.seeds,
                             "--window-s", fmt::format("{}", o.proto.window_s)};
  if (o.max_values > 0) c.insert(c.end(), {"--max-values", std::to_string(o.max_values)});
  if (o.proto.fidelity) c.push_back("--fidelity");
  return c;
}

// What defines the measurement besides the points: a different protocol or executor kind is a
// different sweep, so a SIMULATED sweep never resumes a GPU one (and the other way round).
std::string id_salt(const GemmSweepOptions& o, const std::string& executor_kind) {
  return fmt::format("window={} warmup={} first={} max={} drift={} fidelity={} executor={}", o.proto.window_s,
                     o.proto.warmup_min_s, o.proto.first_warmup_min_s, o.proto.warmup_max_s, o.proto.max_drift_c,
                     o.proto.fidelity ? 1 : 0, executor_kind);
}

lab::PlanRequest plan_request(GemmSweepOptions& o) {
  if (o.no_resume && !o.resume_from.empty())
    throw UsageError("--resume-from skips the points a CSV holds, --no-resume measures every point: give one of them");
  if (o.proto.fidelity) {
    if (!o.engines_given) o.engines = "fp16acc16";
    if (o.shapes_given && o.shapes != "2048" && o.shapes != "2048x2048x2048")
      throw UsageError(fmt::format("--shapes {}: --fidelity runs the original's 2048^3 only; leave --shapes out", o.shapes));
    o.shapes = "2048";
  }
  lab::PlanRequest r;
  r.experiments = parse_experiments(o.experiments);
  r.engines = parse_engines(o.engines);
  r.shapes = parse_shapes(o.shapes);
  r.seeds = parse_seeds(o.seeds);
  r.max_values = o.max_values;
  r.reference_every = o.reference_every;
  for (lab::Engine e : r.engines)
    for (const auto& s : r.shapes) check_shape(e, s);
  return r;
}

int run_sweep_command(GemmSweepOptions o, Io& io) {
  const auto wall0 = std::chrono::steady_clock::now();
  lab::PlanRequest req = plan_request(o);
  const lab::ProtocolOptions protocol = protocol_options(o.proto);
  const lab::TimeModel model = time_model(o.proto);

  // The GPU executor first: whether it opens decides the executor kind, which is part of the id.
  GpuAttempt gpu;
  if (!o.dry_run) {
    auto g = try_gpu_executor(o.dev);
    if (!g) {
      io.err << "wattlab gemm " << o.name << ": " << g.error().message() << "\n";
      return kExitFailure;
    }
    gpu = std::move(*g);
  }
  const std::string kind = o.dry_run ? expected_executor_kind(o.dev) : gpu.exec ? "gpu" : "sim";
  req.id_salt = id_salt(o, kind);
  lab::SweepPlan plan = usage_or_value(lab::make_plan(req), "plan");
  for (auto& p : plan.points) p.spec.fidelity = o.proto.fidelity;

  if (o.dry_run) {
    std::set<int> done;
    if (!o.no_resume) {
      auto d = lab::completed_points_in_file(o.db, plan.sweep_id);
      if (!d) {
        io.err << "wattlab: " << d.error().message() << "\n";
        return kExitFailure;
      }
      done = std::move(*d);
    }
    if (!o.resume_from.empty()) done.merge(completed_in_csv(o.resume_from, plan.sweep_id));
    io.out << fmt::format("dry run: nothing is measured (the executor would be {})\n",
                          kind == "sim" ? "the SIMULATED one" : "the GPU one");
    report::print_plan_summary(io.out, {&plan, &req, done.size(), lab::estimate_plan_s(plan, model, done.size()), model,
                                        o.db, o.proto.fidelity});
    report::print_plan_table(io.out, plan, done);
    return kExitOk;
  }

  auto store = Store::open(o.db);
  if (!store) {
    io.err << "wattlab: " << store.error().message() << "\n";
    return kExitFailure;
  }
  std::set<int> done;
  if (!o.no_resume) done = usage_or_value(lab::completed_points(*store, plan.sweep_id), "resume");
  if (!o.resume_from.empty()) done.merge(completed_in_csv(o.resume_from, plan.sweep_id));
  const std::vector<lab::PlannedPoint> rest = lab::remaining_points(plan, done);

  std::unique_ptr<lab::GemmExecutor> exec = std::move(gpu.exec);
  if (!exec) exec = usage_or_value(make_sim(o.dev, lab::specs_to_run(rest, o.max_points), protocol), "SIMULATED executor");
  io.out << executor_header(*exec) << "\n";
  if (!gpu.fallback_note.empty()) io.out << "  (" << gpu.fallback_note << ")\n";
  const double estimate_s = lab::estimate_plan_s(plan, model, done.size());
  report::print_plan_summary(io.out, {&plan, &req, done.size(), estimate_s, model, o.db, o.proto.fidelity});
  io.out << std::flush;
  const std::size_t total = plan.points.size();
  if (rest.empty()) {
    io.out << fmt::format("nothing to run: all {} points are already in {} (--no-resume measures them again)\n", total,
                          o.db);
    return kExitOk;
  }

  GemmRecording run(*exec, *store,
                    {o.dev.device, command_line(o),
                     {{"gemm.command", o.name}, {"gemm.sweep", plan.sweep_id}, {"gemm.plan_points", std::to_string(total)}}},
                    io);
  // Stop between points: a signal, or the time budget. Time is the executor's: virtual on the
  // SIMULATED one.
  StopSignal stop_signal;
  const int64_t exec0_ns = exec->clock().now_ns();
  lab::SweepStop stop(
      model, o.budget_min * 60,
      [&] {
        if (exec->simulated()) return static_cast<double>(exec->clock().now_ns() - exec0_ns) * 1e-9;
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
      },
      [&] { return stop_signal.requested(); });
  const double per_point_s = estimate_s / static_cast<double>(rest.size());
  lab::Progress progress(io.err, lab::Progress::stderr_is_tty(), total, total - rest.size(), per_point_s,
                         exec->simulated());
  auto outcome = run.measure(plan, rest, {protocol, &progress, o.max_points, [&] { return stop(); }});
  std::vector<GemmPointRecord> points;
  for (auto& p : run.stored_points()) points.push_back(std::move(p.point));
  if (!points.empty()) report::print_results_table(io.out, points, exec->simulated());
  const std::size_t now_done = total - rest.size() + points.size();
  if (!outcome) {
    io.err << fmt::format("wattlab gemm {}: {}\n  {} of {} points are stored; run the same command again to resume\n",
                          o.name, outcome.error().message(), now_done, total);
    return kExitFailure;
  }
  report::print_sweep_end(io.out, {&*outcome, stop.why(), now_done, total, o.max_points,
                                   report::failed_accuracy(points, exec->simulated()), o.db, plan.sweep_id,
                                   exec->simulated()});
  const int rc = outcome->stopped && stop.why() == lab::SweepStop::Why::signal ? 130 : kExitOk;
  run.end(rc);
  io.out << fmt::format("stored as run {} in {}\n", run.run_id(), o.db);
  return rc;
}

void add_sweep_options(CLI::App* sub, const std::shared_ptr<GemmSweepOptions>& o, bool study, Action& action) {
  add_gemm_device_options(*sub, o->dev);
  auto* exp = sub->add_option(study ? "--experiments" : "--experiment,--experiments", o->experiments,
                              "experiments E1..E15 and controls X1..X3, comma-separated, or all");
  if (study) exp->capture_default_str();
  else exp->required();
  auto* eng = sub->add_option("--engines", o->engines, "engines, comma-separated, or all")->capture_default_str();
  auto* shp = sub->add_option("--shapes", o->shapes, "shapes: N or MxNxK, comma-separated")->capture_default_str();
  sub->add_option("--seeds", o->seeds, "input seeds, comma-separated")->capture_default_str();
  sub->add_option("--max-values", o->max_values, "keep at most N values per sweep (ends kept, spread evenly); 0: all")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  sub->add_option("--reference-every", o->reference_every, "a reference point after every N points")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  add_gemm_protocol_options(*sub, o->proto, true);
  sub->add_option("--db", o->db, "SQLite database the points are stored in")->capture_default_str();
  sub->add_flag("--dry-run", o->dry_run, "print the plan (summary and every point) and exit");
  sub->add_flag("--no-resume", o->no_resume, "measure every point again, even those already stored");
  sub->add_option("--resume-from", o->resume_from,
                  "also skip the points of this sweep in a points CSV (python/bench/gemm_points_csv.py): resume without the store");
  sub->add_option("--max-points", o->max_points, "stop after this many points (0: no limit)")->capture_default_str();
  sub->add_option("--budget-min", o->budget_min,
                  "stop between points before the elapsed time would pass this many minutes (0: no limit)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  sub->callback([o, eng, shp, &action] {
    o->engines_given = eng->count() > 0;
    o->shapes_given = shp->count() > 0;
    action = [o](Io& io) { return run_sweep_command(*o, io); };
  });
}

}  // namespace

void register_gemm_sweep(CLI::App& gemm, Action& action) {
  auto sweep = std::make_shared<GemmSweepOptions>();
  sweep->name = "sweep";
  auto* s = gemm.add_subcommand("sweep", "Measure a sweep: experiments x engines x shapes x seeds, resumable");
  add_sweep_options(s, sweep, false, action);

  auto study = std::make_shared<GemmSweepOptions>();
  study->name = "study";
  study->experiments = "all";
  study->engines = "bf16,fp16,fp16acc16,fp32,fp8e4m3,int8";
  study->shapes = "2048,8192";
  study->seeds = "1,2,3";
  auto* t = gemm.add_subcommand("study", "The H200 grid: every experiment E1-E15 and control X1-X3 (docs/gemm-cli.md)");
  add_sweep_options(t, study, true, action);
}

}  // namespace wattlab::cli
