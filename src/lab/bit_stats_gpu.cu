// Bit statistics on the GPU: integer sums by warp reduction and atomics, divided on the host once,
// so the result equals bit_stats_cpu's.
#include <limits>

#include "cuda_check.h"
#include "elementwise.h"
#include "radix_gpu.h"
#include "lab/bit_stats_gpu.h"

namespace wattlab::lab {
namespace {

using detail::grid_for;
using ull = unsigned long long;

__device__ inline uint32_t load(const void* d, int bytes, int64_t i) {
  if (bytes == 4) return static_cast<const uint32_t*>(d)[i];
  if (bytes == 2) return static_cast<const uint16_t*>(d)[i];
  return static_cast<const uint8_t*>(d)[i];
}

__device__ inline void warp_add(ull* target, ull v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xFFFFFFFFu, v, o);
  if ((threadIdx.x & 31) == 0 && v) atomicAdd(target, v);
}

// sums: popcount, zeros, hamming along K, hamming along MN. Loops run whole warps (no early exit)
// so the shuffles see every lane.
__global__ void k_stats(const void* d, int64_t n, int64_t K, int64_t on, int bytes, uint32_t mag_mask, ull* sums) {
  ull pop = 0, zeros = 0, hk = 0, hmn = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t x = load(d, bytes, i);
    pop += static_cast<ull>(__popc(x));
    zeros += (x & mag_mask) == 0;
    if (i % K != K - 1) hk += static_cast<ull>(__popc(x ^ load(d, bytes, i + 1)));
    if (i / K < on - 1) hmn += static_cast<ull>(__popc(x ^ load(d, bytes, i + K)));
  }
  warp_add(&sums[0], pop);
  warp_add(&sums[1], zeros);
  warp_add(&sums[2], hk);
  warp_add(&sums[3], hmn);
}
__global__ void k_flags(const void* d, int64_t n, int bytes, uint32_t* flags) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    flags[load(d, bytes, i)] = 1u;
}
__global__ void k_count_flags(const uint32_t* flags, int64_t size, ull* out) {
  ull c = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < size; i += int64_t(gridDim.x) * blockDim.x)
    c += flags[i];
  warp_add(out, c);
}
__global__ void k_keys(const void* d, int64_t n, uint64_t* keys, uint32_t* vals) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    keys[i] = static_cast<const uint32_t*>(d)[i];
    vals[i] = 0;
  }
}
__global__ void k_count_unique(const uint64_t* sorted, int64_t n, ull* out) {
  ull c = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    c += i == 0 || sorted[i] != sorted[i - 1];
  warp_add(out, c);
}
__global__ void k_agree(const void* a, const void* b, int64_t count, int bytes, int w, ull* out) {
  ull c = 0;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < count; t += int64_t(gridDim.x) * blockDim.x)
    c += static_cast<ull>(w - __popc(load(a, bytes, t) ^ load(b, bytes, t)));
  warp_add(out, c);
}

double ratio(uint64_t num, uint64_t den) {
  return den == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(num) / static_cast<double>(den);
}

struct DeviceMem {
  void* p[4] = {};
  detail::SortScratch scratch;
  ~DeviceMem() {
    for (void* q : p)
      if (q) cudaFree(q);
    scratch.release();
  }
};

}  // namespace

Result<BitStats> bit_stats_gpu(const void* device_data, const OperandShape& shape, void* cuda_stream) {
  cudaStream_t s = static_cast<cudaStream_t>(cuda_stream);
  const int64_t n = elements(shape), on = outer(shape), K = shape.K;
  const int bytes = static_cast<int>(size_bytes(shape.dtype));
  const int w = bits(shape.dtype);
  const uint32_t mag_mask = is_float(shape.dtype) ? detail::width_mask(w) >> 1 : detail::width_mask(w);
  DeviceMem mem;
  WATTLAB_CUDA_TRY(cudaMalloc(&mem.p[0], 5 * sizeof(ull)));
  ull* sums = static_cast<ull*>(mem.p[0]);
  WATTLAB_CUDA_TRY(cudaMemsetAsync(sums, 0, 5 * sizeof(ull), s));
  k_stats<<<grid_for(n), 256, 0, s>>>(device_data, n, K, on, bytes, mag_mask, sums);
  WATTLAB_CUDA_TRY(cudaGetLastError());
  if (w <= 16) {
    const int64_t size = int64_t(1) << w;
    WATTLAB_CUDA_TRY(cudaMalloc(&mem.p[1], size * sizeof(uint32_t)));
    WATTLAB_CUDA_TRY(cudaMemsetAsync(mem.p[1], 0, size * sizeof(uint32_t), s));
    k_flags<<<grid_for(n), 256, 0, s>>>(device_data, n, bytes, static_cast<uint32_t*>(mem.p[1]));
    k_count_flags<<<grid_for(size), 256, 0, s>>>(static_cast<uint32_t*>(mem.p[1]), size, sums + 4);
  } else {
    WATTLAB_CUDA_TRY(cudaMalloc(&mem.p[1], n * sizeof(uint64_t)));
    WATTLAB_CUDA_TRY(cudaMalloc(&mem.p[2], n * sizeof(uint64_t)));
    WATTLAB_CUDA_TRY(cudaMalloc(&mem.p[3], 2 * n * sizeof(uint32_t)));
    auto* k_in = static_cast<uint64_t*>(mem.p[1]);
    auto* k_out = static_cast<uint64_t*>(mem.p[2]);
    auto* vals = static_cast<uint32_t*>(mem.p[3]);
    k_keys<<<grid_for(n), 256, 0, s>>>(device_data, n, k_in, vals);
    WATTLAB_CUDA_TRY(detail::radix_sort_pairs(mem.scratch, k_in, k_out, vals, vals + n, static_cast<int>(n), 32, s));
    k_count_unique<<<grid_for(n), 256, 0, s>>>(k_out, n, sums + 4);
  }
  WATTLAB_CUDA_TRY(cudaGetLastError());
  ull host[5];
  WATTLAB_CUDA_TRY(cudaMemcpyAsync(host, sums, sizeof host, cudaMemcpyDeviceToHost, s));
  WATTLAB_CUDA_TRY(cudaStreamSynchronize(s));
  BitStats r;
  r.elements = n;
  r.width_bits = w;
  r.popcount_sum = host[0];
  r.zero_count = host[1];
  r.hamming_k_sum = host[2];
  r.hamming_mn_sum = host[3];
  r.distinct_values = static_cast<int64_t>(host[4]);
  r.hamming_k_pairs = static_cast<uint64_t>(on * (K - 1));
  r.hamming_mn_pairs = static_cast<uint64_t>((on - 1) * K);
  r.mean_popcount_bits = ratio(r.popcount_sum, static_cast<uint64_t>(n));
  r.zero_fraction = ratio(r.zero_count, static_cast<uint64_t>(n));
  r.mean_hamming_along_k_bits = ratio(r.hamming_k_sum, r.hamming_k_pairs);
  r.mean_hamming_along_mn_bits = ratio(r.hamming_mn_sum, r.hamming_mn_pairs);
  return r;
}

Result<double> ab_bit_agreement_gpu(const void* device_a, const OperandShape& a_shape, const void* device_b,
                                    const OperandShape& b_shape, void* cuda_stream) {
  if (a_shape.dtype != b_shape.dtype || a_shape.K != b_shape.K) {
    Error e;
    e.kind = ErrorKind::invalid_argument;
    e.what = "A-B bit agreement needs the same dtype and K in A and B";
    return e;
  }
  cudaStream_t s = static_cast<cudaStream_t>(cuda_stream);
  const int64_t on_a = outer(a_shape), on_b = outer(b_shape);
  const int64_t count = (on_a < on_b ? on_a : on_b) * a_shape.K;
  const int w = bits(a_shape.dtype);
  DeviceMem mem;
  WATTLAB_CUDA_TRY(cudaMalloc(&mem.p[0], sizeof(ull)));
  WATTLAB_CUDA_TRY(cudaMemsetAsync(mem.p[0], 0, sizeof(ull), s));
  k_agree<<<grid_for(count), 256, 0, s>>>(device_a, device_b, count, static_cast<int>(size_bytes(a_shape.dtype)), w,
                                           static_cast<ull*>(mem.p[0]));
  WATTLAB_CUDA_TRY(cudaGetLastError());
  ull host = 0;
  WATTLAB_CUDA_TRY(cudaMemcpyAsync(&host, mem.p[0], sizeof host, cudaMemcpyDeviceToHost, s));
  WATTLAB_CUDA_TRY(cudaStreamSynchronize(s));
  return ratio(host, static_cast<uint64_t>(count) * static_cast<uint64_t>(w));
}

}  // namespace wattlab::lab
