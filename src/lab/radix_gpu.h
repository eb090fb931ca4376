// One stable radix sort of (uint64 key, uint32 value) pairs on the device, shared by the generator
// and the bit statistics so CUB is instantiated once (build size).
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

namespace wattlab::lab::detail {

// Scratch that grows as needed; free with release().
struct SortScratch {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  void release();
};

// Sorts keys in [0, end_bit) bits, stably (equal keys keep their input order).
cudaError_t radix_sort_pairs(SortScratch& scratch, const uint64_t* keys_in, uint64_t* keys_out,
                             const uint32_t* vals_in, uint32_t* vals_out, int n, int end_bit, cudaStream_t stream);

}  // namespace wattlab::lab::detail
