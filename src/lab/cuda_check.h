// CUDA runtime errors as wattlab Errors (kind unavailable, the CUDA code kept).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "wattlab/core/error.h"

namespace wattlab::lab::detail {

inline Error cuda_error(cudaError_t e, const char* what) {
  Error err;
  err.kind = ErrorKind::unavailable;
  err.what = std::string(what) + " failed: " + cudaGetErrorString(e);
  err.vendor_code = static_cast<int>(e);
  return err;
}

inline int grid_for(int64_t n) {
  const int64_t blocks = (n + 255) / 256;
  return static_cast<int>(blocks < 4096 ? (blocks < 1 ? 1 : blocks) : 4096);
}

inline int bit_width(uint64_t x) {
  int b = 0;
  while (x) {
    ++b;
    x >>= 1;
  }
  return b < 1 ? 1 : b;
}

}  // namespace wattlab::lab::detail

#define WATTLAB_CUDA_TRY(call)                                                  \
  do {                                                                          \
    cudaError_t wattlab_e_ = (call);                                            \
    if (wattlab_e_ != cudaSuccess) return ::wattlab::lab::detail::cuda_error(wattlab_e_, #call); \
  } while (0)
