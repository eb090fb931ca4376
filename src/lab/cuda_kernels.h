// Small kernels the cuBLASLt executor needs besides the GEMM: the non-finite count of C and the
// X2 toggle kernel. CUDA builds only.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "wattlab/core/error.h"
#include "lab/number_format.h"

namespace wattlab::lab::detail {

// Entries of C (`count` elements of type `t`) that are inf or NaN; synchronizes `stream`.
// i32 outputs are always finite.
Result<uint64_t> count_nonfinite(const void* c, OutType t, std::size_t count, cudaStream_t stream);

// Enqueues one pass that XORs every byte of `buf` with `mask` (X2: switching without arithmetic).
Status launch_xor_bytes(void* buf, std::size_t bytes, uint8_t mask, cudaStream_t stream);

}  // namespace wattlab::lab::detail
