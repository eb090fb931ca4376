// CPU reference generator: bit-identical to generate_gpu (docs/gemm-inputs.md, "RNG").
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lab/operand.h"
#include "lab/recipe.h"

namespace wattlab::lab {

// Fills one operand (elements(shape) * size_bytes(dtype) bytes, layout as operand.h says).
// A and B draw from separate streams, so one seed serves both. Throws UsageError when
// validate(recipe, shape) fails.
std::vector<std::byte> generate_cpu(const Recipe& recipe, const OperandShape& shape, uint64_t seed);

}  // namespace wattlab::lab
