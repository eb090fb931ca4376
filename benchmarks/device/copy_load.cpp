#include "copy_load.h"

#include <cuda_runtime.h>

#include <exception>

#include "cuda_check.h"

namespace wattlab::device {

CopyLoad::CopyLoad(std::size_t bytes) : bytes_(bytes) {
  cuda_check(cudaMalloc(&buf_, 2 * bytes), "cudaMalloc(copy buffer)");
  cuda_check(cudaMemset(buf_, 0x5a, 2 * bytes), "cudaMemset(copy buffer)");
  finish_setup();
}

CopyLoad::~CopyLoad() {
  try {
    stop();
  } catch (const std::exception&) {  // a failed synchronize at exit: nothing left to do about it
  }
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream()));
  cudaFree(buf_);
}

std::string CopyLoad::describe() const {
  return "cudaMemcpyAsync device to device, " + std::to_string(bytes_ >> 20) + " MiB per copy";
}

void CopyLoad::enqueue_unit() {
  cuda_check(cudaMemcpyAsync(static_cast<char*>(buf_) + bytes_, buf_, bytes_, cudaMemcpyDeviceToDevice,
                             static_cast<cudaStream_t>(stream())),
             "cudaMemcpyAsync(device to device)");
}

}  // namespace wattlab::device
