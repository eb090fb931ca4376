// Turns a failed CUDA runtime call into an exception that names the call (device programs only).
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace wattlab::device {

inline void cuda_check(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(rc));
}

}  // namespace wattlab::device
