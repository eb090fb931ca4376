// wattlab gemm check: every engine on fresh random inputs (N(0,1); INT8 rounded N(0,20)), its
// output spot-checked against the float64 reference and the engine's documented bound. Needs the
// GPU executor: the SIMULATED one computes no GEMM output (docs/gemm-cli.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "gemm_commands.h"
#include "gemm_executor.h"
#include "gemm_options.h"

namespace wattlab::cli {
namespace {

struct GemmCheckOptions {
  GemmDeviceOptions dev;
  std::string engines = "all";
  std::string shapes = "256,1024x1024x4096";
  uint64_t seed = 1;
};

// The inputs the bounds are stated for (docs/gemm-lab.md, "Bounds").
std::string check_recipe_for(lab::DType t) {
  return t == lab::DType::i8 ? "normal(mean=0, std=20)" : "normal(mean=0, std=1)";
}

constexpr const char* kNoOutput =
    "the SIMULATED executor computes no GEMM output, so it cannot check accuracy; run on a GPU (--device nvml)";

int run_check(const GemmCheckOptions& o, Io& io) {
  const auto engines = parse_engines(o.engines);
  const auto shapes = parse_shapes(o.shapes);
  for (lab::Engine e : engines)
    for (const auto& s : shapes) check_shape(e, s);
  if (o.dev.device == "sim") {
    io.err << "wattlab gemm check: " << kNoOutput << "\n";
    return kExitUsage;
  }
  auto gpu = try_gpu_executor(o.dev);
  if (!gpu) {
    io.err << "wattlab gemm check: " << gpu.error().message() << "\n";
    return kExitFailure;
  }
  if (!gpu->exec) {
    io.err << "wattlab gemm check: " << gpu->fallback_note << "; " << kNoOutput << "\n";
    return kExitFailure;
  }
  lab::GemmExecutor& exec = *gpu->exec;
  io.out << executor_header(exec) << "\n";
  io.out << fmt::format("accuracy check, seed {}: inputs N(0,1) (INT8: rounded N(0,20)); relative Frobenius error of "
                        "spot-checked C entries vs float64\n",
                        o.seed);
  io.out << fmt::format("{:<11} {:<18} {:>12} {:>14} {:>12}  {}\n", "engine", "shape", "rel_error", "bound",
                        "non-finite", "verdict");
  std::size_t failed = 0;
  for (lab::Engine e : engines) {
    const lab::EngineSpec& es = lab::spec(e);
    for (const auto& sh : shapes) {
      lab::GemmSpec spec;
      spec.engine = e;
      spec.m = sh.m;
      spec.n = sh.n;
      spec.k = sh.k;
      spec.recipe_a = check_recipe_for(es.a);
      spec.recipe_b = check_recipe_for(es.b);
      spec.seed = o.seed;
      const std::string bound = es.rel_error_bound == 0 ? "0 (exact)" : fmt::format("{:.0e}", es.rel_error_bound);
      auto p = exec.prepare(spec, 0.02);
      if (!p) {
        ++failed;
        io.out << fmt::format("{:<11} {:<18} {:>12} {:>14} {:>12}  ERROR: {}\n", es.name, lab::to_string(sh), "-", bound,
                              "-", p.error().message());
        continue;
      }
      std::string verdict;
      bool ok = false;
      if (p->nonfinite_fraction > 0) verdict = "FAIL (inf/NaN in C)";
      else if (!p->rel_error) verdict = "FAIL (no spot check reported)";
      else if (!std::isfinite(*p->rel_error)) verdict = "FAIL (error not finite)";
      else {
        ok = es.rel_error_bound == 0 ? *p->rel_error == 0 : *p->rel_error <= es.rel_error_bound;
        verdict = ok ? "PASS" : "FAIL (above the bound)";
      }
      if (!ok) ++failed;
      io.out << fmt::format("{:<11} {:<18} {:>12} {:>14} {:>12.3g}  {}\n", es.name, lab::to_string(sh),
                            p->rel_error ? fmt::format("{:.3e}", *p->rel_error) : "-", bound, p->nonfinite_fraction,
                            verdict);
    }
  }
  const std::size_t total = engines.size() * shapes.size();
  io.out << fmt::format("{} of {} checks passed\n", total - failed, total);
  return failed == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void register_gemm_check(CLI::App& gemm, Action& action) {
  auto o = std::make_shared<GemmCheckOptions>();
  auto* sub = gemm.add_subcommand("check", "Check every engine's output against the float64 reference (needs a GPU)");
  add_gemm_device_options(*sub, o->dev);
  sub->add_option("--engines", o->engines, "engines, comma-separated, or all")->capture_default_str();
  sub->add_option("--shapes", o->shapes, "shapes: N or MxNxK, comma-separated")->capture_default_str();
  sub->add_option("--seed", o->seed, "input seed")->capture_default_str();
  sub->callback([o, &action] { action = [o](Io& io) { return run_check(*o, io); }; });
}

}  // namespace wattlab::cli
