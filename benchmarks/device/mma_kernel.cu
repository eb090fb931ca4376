#include "mma_kernel.h"

#include <cuda_bf16.h>
#include <mma.h>

#include "cuda_check.h"

namespace wattlab::device {
namespace {

// Shared memory each block asks for: more than half of an H100/H200 SM's 228 KiB, so no second
// block fits beside it and `blocks` blocks keep `blocks` SMs busy.
constexpr int kPadBytes = 120 * 1024;

__device__ float hash_unit(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return static_cast<float>(x & 0xffffU) / 32768.0f - 1.0f;
}

__global__ void __launch_bounds__(kMmaThreads) mma_unit_kernel(float* out, int iters, uint32_t seed) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> a0, a1;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> b0, b1;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c0, c1, c2, c3;
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t base = seed * 2654435761U + tid * 256U;
  // Random operands: constant ones would draw less power (input-dependent power, docs/gemm-lab.md).
  for (int i = 0; i < a0.num_elements; ++i) {
    a0.x[i] = __float2bfloat16(hash_unit(base + 4U * i));
    a1.x[i] = __float2bfloat16(hash_unit(base + 4U * i + 1U));
  }
  for (int i = 0; i < b0.num_elements; ++i) {
    b0.x[i] = __float2bfloat16(hash_unit(base + 4U * i + 2U));
    b1.x[i] = __float2bfloat16(hash_unit(base + 4U * i + 3U));
  }
  wmma::fill_fragment(c0, 0.0f);
  wmma::fill_fragment(c1, 0.0f);
  wmma::fill_fragment(c2, 0.0f);
  wmma::fill_fragment(c3, 0.0f);
  // Four independent accumulator chains per warp keep the tensor cores fed.
  for (int k = 0; k < iters; ++k) {
    wmma::mma_sync(c0, a0, b0, c0);
    wmma::mma_sync(c1, a0, b1, c1);
    wmma::mma_sync(c2, a1, b0, c2);
    wmma::mma_sync(c3, a1, b1, c3);
  }
  float s = 0.0f;
  for (int i = 0; i < c0.num_elements; ++i) s += c0.x[i] + c1.x[i] + c2.x[i] + c3.x[i];
  out[tid] = s;  // the result is stored, so the loop cannot be dropped
}

}  // namespace

double mma_unit_flop(int blocks, int iters) {
  return static_cast<double>(blocks) * (kMmaThreads / 32) * static_cast<double>(iters) * 4.0 * 2.0 * 16 * 16 * 16;
}

void mma_kernel_setup() {
  cuda_check(cudaFuncSetAttribute(mma_unit_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kPadBytes),
             "cudaFuncSetAttribute(mma_unit_kernel, MaxDynamicSharedMemorySize)");
}

void mma_kernel_launch(void* stream, int blocks, int iters, uint32_t seed, float* out) {
  mma_unit_kernel<<<blocks, kMmaThreads, kPadBytes, static_cast<cudaStream_t>(stream)>>>(out, iters, seed);
  cuda_check(cudaGetLastError(), "mma_unit_kernel launch");
}

}  // namespace wattlab::device
