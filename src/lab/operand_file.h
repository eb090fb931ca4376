// The operands of a GemmSpec that come from .npy files: what the executors load in place of
// generating from a recipe (docs/gemm-inputs.md, "Your own operands").
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "lab/executor.h"
#include "lab/operand.h"

namespace wattlab::lab {

// The file of operand `which` of `spec`; empty when the operand comes from its recipe.
const std::string& operand_file(const GemmSpec& spec, Operand which);

// The operand `shape.which` of `spec` read from its file, in storage layout. Errors
// (invalid_argument): the file's problem (npy.h), or a file whose SHA-256 is no longer the one
// recorded in the spec (it changed after the point was planned and labelled).
Result<std::vector<std::byte>> load_operand_file(const GemmSpec& spec, const OperandShape& shape);

}  // namespace wattlab::lab
