// The lab's built-in GPU load (gpu_load.h): every thread runs 8 independent FP32 FMA chains until
// the GPU's global timer passes its deadline, so the kernel is compute-bound and lasts the time
// asked. The chains use fmaf() explicitly, so the lab's --fmad=false leaves them fused.
#include <cuda_runtime.h>

#include <cstdio>

#include "lab/gpu_load.h"

namespace wattlab::lab {
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void fma_loop(unsigned long long dur_ns, float seed, float* sink, unsigned long long* iterations) {
  const unsigned long long end = global_ns() + dur_ns;
  float a[8];
  for (int i = 0; i < 8; ++i) a[i] = seed + 0.001f * static_cast<float>(threadIdx.x + i);
  const float b = 0.999999f, c = 1e-7f;
  unsigned long long n = 0;
  do {
#pragma unroll 64
    for (int k = 0; k < 256; ++k)
#pragma unroll
      for (int i = 0; i < 8; ++i) a[i] = fmaf(a[i], b, c);
    ++n;
  } while (global_ns() < end);
  float s = 0;
  for (int i = 0; i < 8; ++i) s += a[i];
  if (s == 1234.5f) sink[threadIdx.x] = s;  // keeps the chains alive; practically never true
  atomicAdd(iterations, n);
}

Error err(const char* what, cudaError_t e) {
  return Error{ErrorKind::unavailable, std::string(what) + ": " + cudaGetErrorString(e), ""};
}

std::string uuid_text(const cudaUUID_t& u) {
  char buf[64];
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(buf, sizeof buf, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

}  // namespace

struct FmaLoad::Impl {
  int device = 0;
  cudaDeviceProp prop{};
  int blocks = 0, threads = 256;
  float* sink = nullptr;
  unsigned long long* iterations = nullptr;
  cudaEvent_t begin{}, end{};
  ~Impl() {
    if (sink) cudaFree(sink);
    if (iterations) cudaFree(iterations);
  }
};

Result<std::unique_ptr<FmaLoad>> FmaLoad::open(const std::string& uuid, const std::string& pci_bus_id) {
  int n = 0;
  if (auto e = cudaGetDeviceCount(&n); e != cudaSuccess) return err("cudaGetDeviceCount", e);
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    if (!uuid.empty() && uuid_text(p.uuid) == uuid) {
      auto impl = std::make_unique<Impl>();
      impl->device = d;
      impl->prop = p;
      return std::unique_ptr<FmaLoad>(new FmaLoad(std::move(impl)));
    }
  }
  int d = -1;
  if (!pci_bus_id.empty() && cudaDeviceGetByPCIBusId(&d, pci_bus_id.c_str()) == cudaSuccess && d >= 0) {
    auto impl = std::make_unique<Impl>();
    impl->device = d;
    cudaGetDeviceProperties(&impl->prop, d);
    return std::unique_ptr<FmaLoad>(new FmaLoad(std::move(impl)));
  }
  return Error{ErrorKind::unavailable,
               "no CUDA device has UUID '" + uuid + "' or PCI bus id '" + pci_bus_id + "' (" + std::to_string(n) +
                   " CUDA devices visible; check CUDA_VISIBLE_DEVICES)",
               ""};
}

FmaLoad::FmaLoad(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FmaLoad::~FmaLoad() = default;

std::string FmaLoad::describe() const {
  return std::string("FMA loop kernel (FP32, compute-bound) on ") + impl_->prop.name + ", CUDA device " +
         std::to_string(impl_->device);
}

Status FmaLoad::prepare() {
  if (auto e = cudaSetDevice(impl_->device); e != cudaSuccess) return err("cudaSetDevice", e);
  int per_sm = 0;
  if (auto e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fma_loop, impl_->threads, 0); e != cudaSuccess)
    return err("cudaOccupancyMaxActiveBlocksPerMultiprocessor", e);
  impl_->blocks = impl_->prop.multiProcessorCount * (per_sm > 0 ? per_sm : 1);  // one wave: all start together
  if (auto e = cudaMalloc(&impl_->sink, sizeof(float) * 1024); e != cudaSuccess) return err("cudaMalloc", e);
  if (auto e = cudaMalloc(&impl_->iterations, sizeof(unsigned long long)); e != cudaSuccess) return err("cudaMalloc", e);
  cudaEventCreate(&impl_->begin);
  cudaEventCreate(&impl_->end);
  fma_loop<<<impl_->blocks, impl_->threads>>>(1'000'000ull, 1.0f, impl_->sink, impl_->iterations);  // warm-up: 1 ms
  if (auto e = cudaDeviceSynchronize(); e != cudaSuccess) return err("warm-up kernel", e);
  return {};
}

Status FmaLoad::start(int64_t dur_ns) {
  cudaMemset(impl_->iterations, 0, sizeof(unsigned long long));
  cudaEventRecord(impl_->begin);
  fma_loop<<<impl_->blocks, impl_->threads>>>(static_cast<unsigned long long>(dur_ns), 1.0f, impl_->sink,
                                              impl_->iterations);
  cudaEventRecord(impl_->end);
  if (auto e = cudaGetLastError(); e != cudaSuccess) return err("kernel launch", e);
  return {};
}

Status FmaLoad::finish(std::string& report) {
  if (auto e = cudaEventSynchronize(impl_->end); e != cudaSuccess) return err("kernel", e);
  float ms = 0;
  cudaEventElapsedTime(&ms, impl_->begin, impl_->end);
  unsigned long long it = 0;
  cudaMemcpy(&it, impl_->iterations, sizeof it, cudaMemcpyDeviceToHost);
  // Per iteration each thread does 256 x 8 FMAs = 4096 FLOP.
  const double flop = static_cast<double>(it) * 4096.0;
  char buf[200];
  std::snprintf(buf, sizeof buf, "kernel ran %.3f s (CUDA events), %d blocks x %d threads, %.1f TFLOP/s FP32", ms * 1e-3,
                impl_->blocks, impl_->threads, ms > 0 ? flop / (ms * 1e-3) * 1e-12 : 0.0);
  report = buf;
  return {};
}

}  // namespace wattlab::lab
