// How many elements of a generated operand are Inf or NaN: the recipe's inputs regenerated on the
// CPU, bit-identical to what the GPU generator stored (docs/gemm-inputs.md, "RNG"). Bit stages
// (flip, randomize_low, ... on FP16/BF16/FP8 exponents) can make them; the report uses this to tell
// a GEMM fed non-finite inputs from one whose accumulator overflowed (docs/report-gemm.md).
#pragma once
#include <cstdint>

#include "wattlab/core/error.h"
#include "lab/operand.h"
#include "lab/recipe.h"

namespace wattlab::lab {

struct NonfiniteCount {
  int64_t elements = 0;
  int64_t nonfinite = 0;  // elements whose stored value is +-Inf or NaN
  double fraction() const { return elements > 0 ? static_cast<double>(nonfinite) / static_cast<double>(elements) : 0; }
};

// Counts without holding the operand when every stage after the source is element-wise
// (distinct and bit stages: the usual case for E4-E6); other recipes go through generate_cpu.
// Errors (invalid_argument): the recipe does not validate for the shape.
// With `stop_at_first`, counting stops at the first Inf/NaN (nonfinite is then 1, elements the
// elements looked at): enough to say that an operand has one.
Result<NonfiniteCount> count_nonfinite_inputs(const Recipe& recipe, const OperandShape& shape, uint64_t seed,
                                              bool stop_at_first = false);

}  // namespace wattlab::lab
