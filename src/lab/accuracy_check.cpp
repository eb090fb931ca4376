#include "lab/accuracy_check.h"

#include <cmath>

namespace wattlab::lab {
namespace {

// The inputs the bounds are stated for (docs/gemm-lab.md, "Bounds").
std::string check_recipe_for(DType t) { return t == DType::i8 ? "normal(mean=0, std=20)" : "normal(mean=0, std=1)"; }

// A replay this short keeps the check quick: only the spot check's output matters here.
constexpr double kCheckReplayS = 0.02;

}  // namespace

std::vector<AccuracyCheck> check_accuracy(GemmExecutor& exec, const std::vector<Engine>& engines,
                                          const std::vector<Shape>& shapes, uint64_t seed,
                                          const std::function<void(const AccuracyCheck&)>& on_check) {
  std::vector<AccuracyCheck> out;
  for (Engine e : engines) {
    const EngineSpec& es = spec(e);
    for (const auto& sh : shapes) {
      AccuracyCheck c;
      c.engine = e;
      c.shape = sh;
      GemmSpec s;
      s.engine = e;
      s.m = sh.m;
      s.n = sh.n;
      s.k = sh.k;
      s.recipe_a = check_recipe_for(es.a);
      s.recipe_b = check_recipe_for(es.b);
      s.seed = seed;
      auto p = exec.prepare(s, kCheckReplayS);
      if (!p) {
        c.error = p.error();
      } else {
        c.rel_error = p->rel_error;
        c.nonfinite_fraction = p->nonfinite_fraction;
        if (p->nonfinite_fraction > 0) c.verdict = CheckVerdict::nonfinite_output;
        else if (!p->rel_error) c.verdict = CheckVerdict::no_spot_check;
        else if (!std::isfinite(*p->rel_error)) c.verdict = CheckVerdict::nonfinite_error;
        else if (es.rel_error_bound == 0 ? *p->rel_error == 0 : *p->rel_error <= es.rel_error_bound)
          c.verdict = CheckVerdict::pass;
        else c.verdict = CheckVerdict::above_bound;
      }
      if (on_check) on_check(c);
      out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace wattlab::lab
