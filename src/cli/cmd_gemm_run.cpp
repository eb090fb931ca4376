// wattlab gemm run: one GEMM point (engine, shape, recipes or .npy files, seed) measured with the
// point protocol and stored as a run with one gemm_point window (docs/gemm-cli.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <ostream>

#include "gemm_commands.h"
#include "gemm_executor.h"
#include "gemm_options.h"
#include "gemm_recording.h"
#include "stop_signal.h"
#include "report/gemm_text.h"
#include "report/run_report.h"

namespace wattlab::cli {
namespace {

struct GemmRunOptions {
  GemmDeviceOptions dev;
  GemmProtocolFlags proto;
  std::string engine = "bf16";
  std::string shape = "8192";
  std::string recipe_a, recipe_b;
  std::string file_a, file_b;  // --a / --b: operands from .npy files
  uint64_t seed = 1;
  std::string db = "wattlab.db";
  std::string json;
  bool engine_given = false, shape_given = false;
};

std::vector<std::string> command_line(const GemmRunOptions& o, const lab::GemmSpec& s) {
  std::vector<std::string> c{"wattlab", "gemm", "run", "--device", o.dev.device, "--engine",
                             std::string(lab::to_string(s.engine)), "--shape", fmt::format("{}x{}x{}", s.m, s.n, s.k),
                             s.file_a.empty() ? "--recipe-a" : "--a", s.file_a.empty() ? s.recipe_a : s.file_a,
                             s.file_b.empty() ? "--recipe-b" : "--b", s.file_b.empty() ? s.recipe_b : s.file_b,
                             "--seed", std::to_string(s.seed), "--window-s", fmt::format("{}", o.proto.window_s)};
  if (o.proto.fidelity) c.push_back("--fidelity");
  return c;
}

int run_gemm_point(GemmRunOptions o, Io& io) {
  if (o.proto.fidelity) {
    if (!o.engine_given) o.engine = "fp16acc16";
    if (o.shape_given && o.shape != "2048" && o.shape != "2048x2048x2048")
      throw UsageError(fmt::format("--shape {}: --fidelity runs the original's 2048^3 only; leave --shape out", o.shape));
    o.shape = "2048";
  }
  if (!o.file_a.empty() && !o.recipe_a.empty()) throw UsageError("--a and --recipe-a both give A: give one of them");
  if (!o.file_b.empty() && !o.recipe_b.empty()) throw UsageError("--b and --recipe-b both give B: give one of them");
  const lab::Engine engine = usage_or_value(lab::parse_engine(o.engine), "--engine");
  // Without --shape, operand files give it.
  const bool from_files = !o.shape_given && !o.proto.fidelity && !(o.file_a.empty() && o.file_b.empty());
  const lab::Shape shape =
      from_files ? shape_from_operand_files(o.file_a, o.file_b) : usage_or_value(lab::parse_shape(o.shape), "--shape");
  check_shape(engine, shape);
  const lab::SweepValue ref = usage_or_value(lab::reference_value(engine), "reference recipe");
  if (o.recipe_a.empty()) o.recipe_a = ref.recipe_a;
  if (o.recipe_b.empty()) o.recipe_b = ref.recipe_b;
  if (o.file_a.empty()) check_recipe(o.recipe_a, true, engine, shape);
  if (o.file_b.empty()) check_recipe(o.recipe_b, false, engine, shape);

  lab::GemmSpec spec;
  spec.engine = engine;
  spec.m = shape.m;
  spec.n = shape.n;
  spec.k = shape.k;
  spec.recipe_a = o.recipe_a;
  spec.recipe_b = o.recipe_b;
  spec.seed = o.seed;
  spec.fidelity = o.proto.fidelity;
  attach_operand_files(spec, o.file_a, o.file_b);
  lab::SweepPlan plan = usage_or_value(lab::single_point_plan(spec), "plan");
  const lab::PlannedPoint& p = plan.points.front();
  const lab::ProtocolOptions protocol = protocol_options(o.proto);

  auto gpu = try_gpu_executor(o.dev);
  if (!gpu) {
    io.err << "wattlab gemm run: " << gpu.error().message() << "\n";
    return kExitFailure;
  }
  std::unique_ptr<lab::GemmExecutor> exec = std::move(gpu->exec);
  if (!exec) exec = usage_or_value(make_sim(o.dev, {p.spec}, protocol), "SIMULATED executor");
  io.out << executor_header(*exec) << "\n";
  if (!gpu->fallback_note.empty()) io.out << "  (" << gpu->fallback_note << ")\n";
  io.out << std::flush;

  auto store = Store::open(o.db);
  if (!store) {
    io.err << "wattlab: " << store.error().message() << "\n";
    return kExitFailure;
  }
  GemmRecording run(*exec, *store, {o.dev.device, command_line(o, p.spec), {{"gemm.command", "run"}}}, io);
  // Ctrl-C or SIGTERM: the run ends with 128 + the signal, then the process ends by the signal.
  StopSignal stop([&run, &io](int sig) { end_by_signal(run.recording(), sig, io.err); });
  // A single point is a sweep of its own: its id names the run.
  plan.sweep_id = fmt::format("run-{}", run.run_id());
  io.err << fmt::format("measuring {} {}x{}x{} seed {}: warm-up {}, window {} s{}\n", p.engine_label, shape.m, shape.n,
                        shape.k, o.seed,
                        protocol.warmup ? fmt::format("{}..{} s", protocol.first_warmup_min_s, protocol.warmup_max_s)
                                        : std::string("none"),
                        protocol.window_s, exec->simulated() ? " (SIMULATED time)" : "");
  auto outcome = run.measure(plan, plan.points, {protocol});
  if (!outcome) {
    io.err << "wattlab gemm run: " << outcome.error().message() << "\n";
    return outcome.error().kind == ErrorKind::invalid_argument ? kExitUsage : kExitFailure;
  }
  const auto stored = run.stored_points();
  if (stored.empty()) {
    io.err << "wattlab: the point's window is not in the store\n";
    run.end(kExitFailure);
    return kExitFailure;
  }
  const StoredGemmPoint& point = stored.back();
  report::print_point_result(io.out, point.window, point.point, engine, exec->simulated());
  const bool failed =
      report::accuracy(point.point.counts, engine, exec->simulated()).verdict == report::Accuracy::fail;
  const int rc = failed ? kExitFailure : kExitOk;
  run.end(rc);
  if (!o.json.empty()) {
    auto final_rec = store->load_run(run.run_id());
    std::ofstream f(o.json);
    if (final_rec) report::print_run(f, *final_rec, report::Format::json);
    else io.err << "wattlab: " << final_rec.error().message() << "\n";
    if (!f) io.err << "wattlab: could not write " << o.json << "\n";
  }
  io.out << fmt::format("stored as run {} (one gemm_point window) in {}\n", run.run_id(), o.db);
  if (failed) io.err << "wattlab gemm run: the GEMM output failed its accuracy check (stored anyway)\n";
  return rc;
}

}  // namespace

void register_gemm_run(CLI::App& gemm, Action& action) {
  auto o = std::make_shared<GemmRunOptions>();
  auto* sub = gemm.add_subcommand("run", "Measure one GEMM point: energy per GEMM, power, clock, accuracy");
  add_gemm_device_options(*sub, o->dev);
  auto* eng = sub->add_option("--engine", o->engine, "engine: fp32, tf32, fp16, fp16acc16, bf16, fp8e4m3, fp8e4m3f32, fp8e5m2, int8")
                  ->capture_default_str();
  auto* shp = sub->add_option("--shape", o->shape, "N (N x N x N) or MxNxK; default with --a/--b: the files' shape")
                  ->capture_default_str();
  sub->add_option("--recipe-a", o->recipe_a, "A's recipe (docs/gemm-inputs.md); default: the engine's reference");
  sub->add_option("--recipe-b", o->recipe_b, "B's recipe; default: the engine's reference");
  sub->add_option("--a", o->file_a, "A (M x K) from a .npy file instead of a recipe (docs/gemm-inputs.md)");
  sub->add_option("--b", o->file_b, "B (K x N) from a .npy file instead of a recipe");
  sub->add_option("--seed", o->seed, "input seed")->capture_default_str();
  add_gemm_protocol_options(*sub, o->proto, false);
  sub->add_option("--db", o->db, "SQLite database the run is stored in")->capture_default_str();
  sub->add_option("--json", o->json, "also write the run as JSON (docs/json-output.md)");
  sub->callback([o, eng, shp, &action] {
    o->engine_given = eng->count() > 0;
    o->shape_given = shp->count() > 0;
    action = [o](Io& io) { return run_gemm_point(*o, io); };
  });
}

}  // namespace wattlab::cli
