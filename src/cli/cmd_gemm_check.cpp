// wattlab gemm check: every engine's output spot-checked against the float64 reference and its
// documented bound (lab::check_accuracy). Needs the GPU executor: the SIMULATED one computes no
// GEMM output (docs/gemm-cli.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ostream>

#include "gemm_commands.h"
#include "gemm_executor.h"
#include "gemm_options.h"
#include "lab/accuracy_check.h"
#include "report/gemm_text.h"

namespace wattlab::cli {
namespace {

struct GemmCheckOptions {
  GemmDeviceOptions dev;
  std::string engines = "all";
  std::string shapes = "256,1024x1024x4096";
  uint64_t seed = 1;
};

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
  io.out << executor_header(*gpu->exec) << "\n";
  report::print_accuracy_check_header(io.out, o.seed);
  const auto checks = lab::check_accuracy(*gpu->exec, engines, shapes, o.seed,
                                          [&](const lab::AccuracyCheck& c) { report::print_accuracy_check(io.out, c); });
  report::print_accuracy_check_total(io.out, checks);
  for (const auto& c : checks)
    if (!c.passed()) return kExitFailure;
  return kExitOk;
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
