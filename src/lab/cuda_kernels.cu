#include "cuda_kernels.h"

#include "cuda_check.h"

namespace wattlab::lab::detail {
namespace {

// Exponent field all ones = inf or NaN, for each IEEE-like output type.
__device__ bool nonfinite_bits(const void* c, OutType t, std::size_t i) {
  switch (t) {
    case OutType::f32: return (static_cast<const uint32_t*>(c)[i] & 0x7F800000u) == 0x7F800000u;
    case OutType::f16: return (static_cast<const uint16_t*>(c)[i] & 0x7C00u) == 0x7C00u;
    case OutType::bf16: return (static_cast<const uint16_t*>(c)[i] & 0x7F80u) == 0x7F80u;
    case OutType::i32: return false;
  }
  return false;
}

__global__ void nonfinite_kernel(const void* c, OutType t, std::size_t count, unsigned long long* out) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    local += nonfinite_bits(c, t, i) ? 1 : 0;
  if (local) atomicAdd(out, local);
}

// 16 bytes per thread and step: the buffer streams through at memory bandwidth.
__global__ void xor_kernel(uint4* buf, std::size_t vecs, uint32_t mask32) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < vecs;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    uint4 v = buf[i];
    v.x ^= mask32;
    v.y ^= mask32;
    v.z ^= mask32;
    v.w ^= mask32;
    buf[i] = v;
  }
}

__global__ void xor_tail_kernel(uint8_t* buf, std::size_t bytes, uint8_t mask) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < bytes) buf[i] ^= mask;
}

}  // namespace

Result<uint64_t> count_nonfinite(const void* c, OutType t, std::size_t count, cudaStream_t stream) {
  if (t == OutType::i32 || count == 0) return uint64_t{0};
  unsigned long long* d = nullptr;
  WATTLAB_CUDA_TRY(cudaMallocAsync(&d, sizeof(*d), stream));
  WATTLAB_CUDA_TRY(cudaMemsetAsync(d, 0, sizeof(*d), stream));
  nonfinite_kernel<<<grid_for(static_cast<int64_t>(count)), 256, 0, stream>>>(c, t, count, d);
  unsigned long long h = 0;
  WATTLAB_CUDA_TRY(cudaGetLastError());
  WATTLAB_CUDA_TRY(cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, stream));
  WATTLAB_CUDA_TRY(cudaFreeAsync(d, stream));
  WATTLAB_CUDA_TRY(cudaStreamSynchronize(stream));
  return static_cast<uint64_t>(h);
}

Status launch_xor_bytes(void* buf, std::size_t bytes, uint8_t mask, cudaStream_t stream) {
  const std::size_t vecs = bytes / 16;
  const uint32_t mask32 = 0x01010101u * mask;
  if (vecs) xor_kernel<<<grid_for(static_cast<int64_t>(vecs)) * 4, 256, 0, stream>>>(static_cast<uint4*>(buf), vecs, mask32);
  const std::size_t tail = bytes - vecs * 16;
  if (tail) xor_tail_kernel<<<1, 256, 0, stream>>>(static_cast<uint8_t*>(buf) + vecs * 16, tail, mask);
  WATTLAB_CUDA_TRY(cudaGetLastError());
  return {};
}

}  // namespace wattlab::lab::detail
