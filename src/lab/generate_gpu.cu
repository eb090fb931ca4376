// The GPU generator: element-wise parts from elementwise.h (the CPU reference's code), sorts as
// stable radix sorts by (value key, position), so the bytes equal generate_cpu's.
#include <cmath>
#include <utility>

#include "cuda_check.h"
#include "elementwise.h"
#include "radix_gpu.h"
#include "lab/generate_gpu.h"

namespace wattlab::lab {
namespace {

using detail::grid_for;

constexpr int kMaxBitStages = 16;
struct BitPlan {
  Stage st[kMaxBitStages];
  uint32_t step[kMaxBitStages];
  int count;
};

#define GRID_STRIDE(i, n) for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

__global__ void k_initial(double* v, int64_t n, Stage src, Stage dist, bool has_dist, uint64_t seed, uint32_t op) {
  GRID_STRIDE(i, n) v[i] = detail::initial_value(src, has_dist ? &dist : nullptr, seed, op, static_cast<uint64_t>(i));
}
__global__ void k_sort_keys(const double* v, uint64_t* keys, uint32_t* vals, int64_t n, bool along_k, int64_t on, int64_t K) {
  GRID_STRIDE(j, n) {
    keys[j] = detail::orderable(v[detail::seq_to_storage(j, along_k, on, K)]);
    vals[j] = static_cast<uint32_t>(j);
  }
}
__global__ void k_seg_keys(const uint32_t* order, uint64_t* keys, int64_t n, int64_t S) {
  GRID_STRIDE(p, n) keys[p] = order[p] / static_cast<uint64_t>(S);
}
// Selected (rank r < kk) go to r; the rest to kk + their position: one more sort places them.
__global__ void k_final_keys(const uint32_t* order, uint64_t* keys, int64_t n, int64_t S, int64_t kk) {
  GRID_STRIDE(p, n) {
    const int64_t seg = p / S, r = p - seg * S, j = order[p];
    keys[p] = static_cast<uint64_t>(seg * 2 * S + (r < kk ? r : kk + (j - seg * S)));
  }
}
__global__ void k_gather(const double* v, double* out, const uint32_t* fin, int64_t n, bool along_k, int64_t on, int64_t K) {
  GRID_STRIDE(p, n) out[detail::seq_to_storage(p, along_k, on, K)] = v[detail::seq_to_storage(fin[p], along_k, on, K)];
}
__global__ void k_priority(uint64_t* keys, uint32_t* vals, int64_t n, uint64_t seed, uint32_t stream) {
  GRID_STRIDE(i, n) {
    keys[i] = rng::word64(seed, stream, static_cast<uint64_t>(i));
    vals[i] = static_cast<uint32_t>(i);
  }
}
__global__ void k_zero_first(double* v, const uint32_t* order, int64_t kk) {
  GRID_STRIDE(r, kk) v[order[r]] = 0.0;
}
__global__ void k_sparse24(double* v, int64_t groups, Stage s, uint64_t seed, uint32_t op, uint32_t step) {
  GRID_STRIDE(g, groups) {
    const uint32_t zm = detail::sparse24_zero_mask(s, v + 4 * g, seed, op, step, static_cast<uint64_t>(g));
    for (int q = 0; q < 4; ++q)
      if (zm & (1u << q)) v[4 * g + q] = 0.0;
  }
}
__global__ void k_convert(const double* v, void* out, int64_t n, DType t, BitPlan plan, uint64_t seed, uint32_t op) {
  const int w = convert::width_of(t);
  GRID_STRIDE(i, n) {
    uint32_t x = convert::encode(v[i], t);
    for (int b = 0; b < plan.count; ++b) x = detail::apply_bits(plan.st[b], x, w, seed, op, plan.step[b], static_cast<uint64_t>(i));
    if (w == 32) static_cast<uint32_t*>(out)[i] = x;
    else if (w == 16) static_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(x);
    else static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(x);
  }
}

// Device scratch freed on every return.
struct Buffers {
  double* v = nullptr;
  double* v2 = nullptr;
  uint64_t* k1 = nullptr;
  uint64_t* k2 = nullptr;
  uint32_t* a = nullptr;
  uint32_t* b = nullptr;
  detail::SortScratch scratch;
  ~Buffers() {
    for (void* p : {static_cast<void*>(v), static_cast<void*>(v2), static_cast<void*>(k1), static_cast<void*>(k2),
                    static_cast<void*>(a), static_cast<void*>(b)})
      if (p) cudaFree(p);
    scratch.release();
  }
  cudaError_t sort_buffers(int64_t n) {
    if (k1) return cudaSuccess;
    cudaError_t e;
    if ((e = cudaMalloc(&v2, n * sizeof(double))) != cudaSuccess) return e;
    if ((e = cudaMalloc(&k1, n * sizeof(uint64_t))) != cudaSuccess) return e;
    if ((e = cudaMalloc(&k2, n * sizeof(uint64_t))) != cudaSuccess) return e;
    if ((e = cudaMalloc(&a, n * sizeof(uint32_t))) != cudaSuccess) return e;
    return cudaMalloc(&b, n * sizeof(uint32_t));
  }
};

int64_t count_of(double fraction, int64_t total) {
  return static_cast<int64_t>(std::floor(fraction * static_cast<double>(total) + 0.5));
}

}  // namespace

Status generate_gpu(const Recipe& recipe, const OperandShape& shape, uint64_t seed, void* device_out, void* cuda_stream) {
  if (Status st = validate(recipe, shape); !st) return st;
  cudaStream_t s = static_cast<cudaStream_t>(cuda_stream);
  const uint32_t op = shape.which == Operand::A ? 0u : 1u;
  const int64_t n = elements(shape), on = outer(shape), K = shape.K;
  const int ni = static_cast<int>(n);
  const int G = grid_for(n);
  const std::vector<Stage>& st = recipe.stages;
  const bool has_dist = st.size() > 1 && st[1].kind == StageKind::distinct;
  Buffers buf;
  WATTLAB_CUDA_TRY(cudaMalloc(&buf.v, n * sizeof(double)));
  k_initial<<<G, 256, 0, s>>>(buf.v, n, st[0], has_dist ? st[1] : st[0], has_dist, seed, op);
  WATTLAB_CUDA_TRY(cudaGetLastError());
  std::size_t step = has_dist ? 2 : 1;
  for (; step < st.size() && !is_bit_stage(st[step].kind); ++step) {
    const Stage& sg = st[step];
    const auto s32 = static_cast<uint32_t>(step);
    if (sg.kind == StageKind::sparse24) {
      k_sparse24<<<grid_for(n / 4), 256, 0, s>>>(buf.v, n / 4, sg, seed, op, s32);
      WATTLAB_CUDA_TRY(cudaGetLastError());
    } else if (sg.kind == StageKind::zero) {
      const int64_t kk = count_of(sg.fraction, n);
      if (kk == 0) continue;
      WATTLAB_CUDA_TRY(buf.sort_buffers(n));
      k_priority<<<G, 256, 0, s>>>(buf.k1, buf.a, n, seed, rng::stream_id(op, s32, 0));
      WATTLAB_CUDA_TRY(detail::radix_sort_pairs(buf.scratch, buf.k1, buf.k2, buf.a, buf.b, ni, 64, s));
      k_zero_first<<<grid_for(kk), 256, 0, s>>>(buf.v, buf.b, kk);
      WATTLAB_CUDA_TRY(cudaGetLastError());
    } else if (sg.kind == StageKind::sort) {
      const bool along_k = sg.along == Along::K;
      const int64_t S = sg.scope == SortScope::matrix ? n : (along_k ? K : on);
      const int64_t kk = count_of(sg.fraction, S);
      if (kk == 0) continue;
      WATTLAB_CUDA_TRY(buf.sort_buffers(n));
      k_sort_keys<<<G, 256, 0, s>>>(buf.v, buf.k1, buf.a, n, along_k, on, K);
      WATTLAB_CUDA_TRY(detail::radix_sort_pairs(buf.scratch, buf.k1, buf.k2, buf.a, buf.b, ni, 64, s));
      uint32_t* order = buf.b;
      uint32_t* spare = buf.a;
      if (S < n) {  // group by segment, keeping the value order inside each
        k_seg_keys<<<G, 256, 0, s>>>(order, buf.k1, n, S);
        WATTLAB_CUDA_TRY(detail::radix_sort_pairs(buf.scratch, buf.k1, buf.k2, order, spare, ni,
                                                  detail::bit_width(static_cast<uint64_t>(n / S - 1)), s));
        std::swap(order, spare);
      }
      k_final_keys<<<G, 256, 0, s>>>(order, buf.k1, n, S, kk);
      WATTLAB_CUDA_TRY(detail::radix_sort_pairs(buf.scratch, buf.k1, buf.k2, order, spare, ni,
                                                detail::bit_width(static_cast<uint64_t>(2 * n)), s));
      k_gather<<<G, 256, 0, s>>>(buf.v, buf.v2, spare, n, along_k, on, K);
      WATTLAB_CUDA_TRY(cudaGetLastError());
      std::swap(buf.v, buf.v2);
    }
  }
  BitPlan plan{};
  plan.count = 0;
  for (std::size_t b = step; b < st.size(); ++b) {
    if (plan.count == kMaxBitStages) {
      Error e;
      e.kind = ErrorKind::invalid_argument;
      e.what = "recipe has more than 16 bit stages (the GPU generator's limit)";
      return e;
    }
    plan.st[plan.count] = st[b];
    plan.step[plan.count++] = static_cast<uint32_t>(b);
  }
  k_convert<<<G, 256, 0, s>>>(buf.v, device_out, n, shape.dtype, plan, seed, op);
  WATTLAB_CUDA_TRY(cudaGetLastError());
  WATTLAB_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::success();
}

}  // namespace wattlab::lab
