// GPU generator (CUDA builds only: WATTLAB_LAB_HAVE_CUDA). Same bytes as generate_cpu.
#pragma once
#include <cstdint>

#include "wattlab/core/error.h"
#include "lab/operand.h"
#include "lab/recipe.h"

namespace wattlab::lab {

// Writes storage_bytes(shape) bytes at device_out (device memory) on cuda_stream (a cudaStream_t;
// nullptr = the default stream), then synchronizes that stream. Scratch memory is allocated and
// freed inside (about 30 bytes per element when the recipe sorts or zeroes, 8 otherwise).
// Errors: invalid_argument for a recipe that fails validate(); unavailable for CUDA failures.
Status generate_gpu(const Recipe& recipe, const OperandShape& shape, uint64_t seed, void* device_out,
                    void* cuda_stream);

}  // namespace wattlab::lab
