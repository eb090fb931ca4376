// Device self-check of the cuBLASLt executor (CUDA builds; scripts/device/gemm_h200.sh runs it
// before the study): every engine on fresh N(0,1) inputs (INT8: rounded N(0,20)) against the
// float64 reference and its documented bound, then one short measured point per engine at a
// large shape, the three controls, and the fidelity loop. Exits 1 when an accuracy check fails.
#include <fmt/format.h>

#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "lab/cuda_executor.h"
#include "lab/plan.h"
#include "lab/protocol.h"

using namespace wattlab;
using namespace wattlab::lab;

namespace {

std::string fresh_recipe(DType t) { return t == DType::i8 ? "normal(mean=0,std=20)" : "normal(mean=0,std=1)"; }

double or_nan(const std::optional<double>& v) { return v.value_or(std::numeric_limits<double>::quiet_NaN()); }

}  // namespace

int main(int argc, char** argv) {
  const int64_t big = argc > 1 ? std::atoll(argv[1]) : 8192;
  CudaExecutorOptions opt;
  opt.backend.device = "nvml";
  auto made = make_cuda_executor(opt);
  if (!made) {
    fmt::print(stderr, "executor: {}\n", made.error().message());
    return 1;
  }
  GemmExecutor& exec = **made;
  fmt::print("executor: {}\n", exec.description());

  int failures = 0;
  fmt::print("\n## accuracy on fresh random inputs (spot check of 16x16 entries against float64)\n");
  fmt::print("{:<11} {:>16} {:>12} {:>9} {:>10} {:>8} {:>10} {:>9}\n", "engine", "shape", "rel_error", "bound",
             "nonfinite", "verdict", "gemms/rep", "TFLOP/s");
  for (const EngineSpec& es : all_engines()) {
    for (int64_t k : {int64_t{1024}, int64_t{4096}}) {
      GemmSpec s;
      s.engine = es.engine;
      s.m = s.n = 2048;
      s.k = k;
      s.recipe_a = fresh_recipe(es.a);
      s.recipe_b = fresh_recipe(es.b);
      s.seed = 7;
      auto p = exec.prepare(s, 0.075);
      if (!p) {
        ++failures;
        fmt::print("{:<11} {:>16} ERROR {}\n", es.name, fmt::format("2048x2048x{}", k), p.error().message());
        continue;
      }
      const double rel = p->rel_error.value_or(std::numeric_limits<double>::quiet_NaN());
      const bool ok = p->nonfinite_fraction == 0 && rel == rel && rel <= es.rel_error_bound;
      failures += ok ? 0 : 1;
      fmt::print("{:<11} {:>16} {:>12.3e} {:>9.1e} {:>10.4f} {:>8} {:>10} {:>9.1f}\n", es.name,
                 fmt::format("2048x2048x{}", k), rel, es.rel_error_bound, p->nonfinite_fraction, ok ? "PASS" : "FAIL",
                 p->gemms_per_replay,
                 gemm_flops(s.m, s.n, s.k) * static_cast<double>(p->gemms_per_replay) / p->replay_s * 1e-12);
    }
  }

  fmt::print("\n## one measured point per engine at {}^3 (reference recipes; warm-up >= 2 s, 2 s window)\n", big);
  ProtocolOptions po;
  po.window_s = 2;
  po.first_warmup_min_s = 5;
  po.warmup_min_s = 2;
  po.warmup_max_s = 6;
  po.slope_window_s = 4;
  auto measure = [&](const GemmSpec& s, const std::string& what, bool first) {
    auto pt = run_point(exec, s, po, first, what);
    if (!pt) {
      ++failures;
      fmt::print("{:<28} ERROR {}\n", what, pt.error().message());
      return;
    }
    const GemmPointCounts c = collect(exec, *pt).counts;
    fmt::print("{:<28} E/GEMM {:.4e} J +- {:.1e}  P {:.1f} W  {:.1f} TFLOP/s  SM {:.0f} MHz  T {:.1f} C  capped {:.2f}  "
               "tensor {:.1f}%  rel_err {:.2e}  nonfinite {:.3f}  warmup {:.1f} s steady {}\n",
               what, or_nan(c.energy_per_gemm_j), or_nan(c.energy_per_gemm_u_j), or_nan(c.mean_power_w),
               or_nan(c.tflops), or_nan(c.mean_sm_clock_mhz), or_nan(c.temperature_c), or_nan(c.power_capped_fraction),
               or_nan(c.tensor_activity_pct), or_nan(c.rel_error), or_nan(c.nonfinite_fraction),
               pt->warmup_s, pt->warmup_steady ? "yes" : "no");
  };
  bool first = true;
  for (Engine e : {Engine::bf16, Engine::fp16, Engine::fp16acc16, Engine::fp32, Engine::tf32, Engine::fp8e4m3,
                   Engine::fp8e5m2, Engine::int8}) {
    auto ref = reference_value(e);
    GemmSpec s;
    s.engine = e;
    s.m = s.n = s.k = big;
    s.recipe_a = ref->recipe_a;
    s.recipe_b = ref->recipe_b;
    measure(s, fmt::format("{} {}^3", to_string(e), big), first);
    first = false;
  }
  {
    GemmSpec z;
    z.engine = Engine::bf16;
    z.m = z.n = z.k = big;
    z.recipe_a = z.recipe_b = "constant(value=0)";
    measure(z, fmt::format("bf16 {}^3 zeros", big), false);
  }
  po.warmup = false;
  po.window_s = 1;
  GemmSpec c;
  c.control = Control::rest;
  c.rest_bytes = 1ull << 30;
  c.fill_byte = 0xFF;
  measure(c, "X1 1 GiB of 0xFF at rest", false);
  c.control = Control::toggle;
  c.toggle_bits = 8;
  measure(c, "X2 toggle 8 bits", false);
  c.control = Control::idle;
  c.hold_context = false;
  measure(c, "X3 idle without context", false);
  c.hold_context = true;
  measure(c, "X3 idle with context", false);
  GemmSpec f;
  f.engine = Engine::fp16acc16;
  f.m = f.n = f.k = 2048;
  f.recipe_a = f.recipe_b = "normal(mean=0,std=1)";
  f.fidelity = true;
  measure(f, "fidelity fp16acc16 2048^3", false);
  fmt::print("\n{}\n", failures ? fmt::format("FAIL: {} checks failed", failures) : std::string("PASS: every check"));
  return failures ? 1 : 0;
}
