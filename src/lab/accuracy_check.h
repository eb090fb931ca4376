// The accuracy check of `wattlab gemm check` (docs/gemm-cli.md): every engine on fresh random
// inputs (N(0,1); INT8 rounded N(0,20): the inputs its bound is stated for, docs/gemm-lab.md
// "Bounds"), its output spot-checked against the float64 reference and the engine's bound. Needs
// an executor that computes GEMM output (the GPU one).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/executor.h"
#include "lab/plan.h"

namespace wattlab::lab {

enum class CheckVerdict {
  pass,
  nonfinite_output,  // C holds inf or NaN: never passes
  no_spot_check,     // the executor reported no relative error
  nonfinite_error,   // the relative error is inf or NaN
  above_bound,
  error,             // the point could not be prepared (`error` says why)
};

struct AccuracyCheck {
  Engine engine = Engine::bf16;
  Shape shape;
  CheckVerdict verdict = CheckVerdict::error;
  std::optional<double> rel_error;  // relative Frobenius error of the spot-checked entries
  double nonfinite_fraction = 0;
  std::optional<Error> error;
  bool passed() const { return verdict == CheckVerdict::pass; }
};

// One check per (engine, shape), engines outermost; `on_check` (optional) sees each as it ends.
std::vector<AccuracyCheck> check_accuracy(GemmExecutor& exec, const std::vector<Engine>& engines,
                                          const std::vector<Shape>& shapes, uint64_t seed,
                                          const std::function<void(const AccuracyCheck&)>& on_check = {});

}  // namespace wattlab::lab
