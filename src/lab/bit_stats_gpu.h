// Bit statistics computed on the GPU (CUDA builds only: WATTLAB_LAB_HAVE_CUDA); identical to the
// CPU versions in bit_stats.h. Both synchronize cuda_stream (a cudaStream_t; nullptr = default).
#pragma once
#include "wattlab/core/error.h"
#include "lab/bit_stats.h"

namespace wattlab::lab {

// distinct_values: a 2^bits flag table for <= 16-bit types, a radix sort of a copy for f32.
Result<BitStats> bit_stats_gpu(const void* device_data, const OperandShape& shape, void* cuda_stream);

// Same definition as ab_bit_agreement_cpu; invalid_argument for mismatched dtype or K.
Result<double> ab_bit_agreement_gpu(const void* device_a, const OperandShape& a_shape, const void* device_b,
                                    const OperandShape& b_shape, void* cuda_stream);

}  // namespace wattlab::lab
