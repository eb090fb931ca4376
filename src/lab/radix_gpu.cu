#include <cub/device/device_radix_sort.cuh>

#include "radix_gpu.h"

namespace wattlab::lab::detail {

void SortScratch::release() {
  if (ptr) cudaFree(ptr);
  ptr = nullptr;
  bytes = 0;
}

cudaError_t radix_sort_pairs(SortScratch& scratch, const uint64_t* keys_in, uint64_t* keys_out,
                             const uint32_t* vals_in, uint32_t* vals_out, int n, int end_bit, cudaStream_t stream) {
  std::size_t need = 0;
  cudaError_t e = cub::DeviceRadixSort::SortPairs(nullptr, need, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit, stream);
  if (e != cudaSuccess) return e;
  if (need > scratch.bytes) {
    scratch.release();
    e = cudaMalloc(&scratch.ptr, need);
    if (e != cudaSuccess) return e;
    scratch.bytes = need;
  }
  return cub::DeviceRadixSort::SortPairs(scratch.ptr, need, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit, stream);
}

}  // namespace wattlab::lab::detail
