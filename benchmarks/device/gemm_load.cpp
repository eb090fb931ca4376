#include "gemm_load.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace wattlab::device {
namespace {

void check(cudaError_t rc, const char* call) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(rc));
}
void check(cublasStatus_t rc, const char* call) {
  if (rc != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(call) + " failed: cublasStatus " + std::to_string(static_cast<int>(rc)));
}

// BF16 bits of uniform values in [-1, 1): the top half of an FP32 (round toward zero).
std::vector<uint16_t> random_bf16(std::size_t count, uint64_t seed) {
  std::vector<uint16_t> v(count);
  uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& x : v) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const float f = static_cast<float>(static_cast<double>(s >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    uint32_t bits = 0;
    static_assert(sizeof bits == sizeof f);
    std::memcpy(&bits, &f, sizeof bits);
    x = static_cast<uint16_t>(bits >> 16);
  }
  return v;
}

std::string uuid_string(const cudaUUID_t& u) {
  // NVML's form: GPU-8-4-4-4-12 hex digits.
  std::string s = "GPU-";
  char buf[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(u.bytes[i]));
    s += buf;
  }
  return s;
}

}  // namespace

GemmLoad::GemmLoad(int n, uint64_t seed) : n_(n) {
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  name_ = prop.name;
  uuid_ = uuid_string(prop.uuid);
  const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::size_t bytes = count * sizeof(uint16_t);
  check(cudaMalloc(&a_, bytes), "cudaMalloc(A)");
  check(cudaMalloc(&b_, bytes), "cudaMalloc(B)");
  check(cudaMalloc(&c_, bytes), "cudaMalloc(C)");
  {
    const auto a = random_bf16(count, seed), b = random_bf16(count, seed + 1);
    check(cudaMemcpy(a_, a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy(A)");
    check(cudaMemcpy(b_, b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy(B)");
  }
  check(cudaMemset(c_, 0, bytes), "cudaMemset(C)");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  stream_ = stream;
  cublasHandle_t h = nullptr;
  check(cublasCreate(&h), "cublasCreate");
  handle_ = h;
  check(cublasSetStream(h, stream), "cublasSetStream");
  for (auto& e : events_) {
    cudaEvent_t ev = nullptr;
    // Blocking sync: the feeder thread sleeps while it waits instead of spinning a core.
    check(cudaEventCreateWithFlags(&ev, cudaEventBlockingSync | cudaEventDisableTiming), "cudaEventCreate");
    e = ev;
  }
  launch_one();  // cuBLAS picks its kernel and loads it before anything is timed
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

GemmLoad::~GemmLoad() {
  stop();
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  for (auto& e : events_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  cublasDestroy(static_cast<cublasHandle_t>(handle_));
  cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
  cudaFree(a_);
  cudaFree(b_);
  cudaFree(c_);
}

void GemmLoad::launch_one() {
  // Before reusing an event slot, wait for the GEMM it marks: at most kDepth in flight.
  auto ev = static_cast<cudaEvent_t>(events_[next_event_ % kDepth]);
  if (next_event_ >= kDepth) check(cudaEventSynchronize(ev), "cudaEventSynchronize");
  const float alpha = 1.0f, beta = 0.0f;
  check(cublasGemmEx(static_cast<cublasHandle_t>(handle_), CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &alpha, a_,
                     CUDA_R_16BF, n_, b_, CUDA_R_16BF, n_, &beta, c_, CUDA_R_16BF, n_, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx(BF16, FP32 accumulation)");
  check(cudaEventRecord(ev, static_cast<cudaStream_t>(stream_)), "cudaEventRecord");
  ++next_event_;
  launched_.fetch_add(1);
}

void GemmLoad::start() {
  if (feeder_.joinable()) return;
  stop_.store(false);
  feeder_ = std::thread([this] {
    while (!stop_.load()) launch_one();
  });
}

void GemmLoad::stop() {
  if (!feeder_.joinable()) return;
  stop_.store(true);
  feeder_.join();
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
}

int64_t GemmLoad::burst(int64_t busy_ns) {
  const auto t0 = std::chrono::steady_clock::now();
  int64_t count = 0;
  while (std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count() < busy_ns) {
    launch_one();
    ++count;
  }
  check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)), "cudaStreamSynchronize");
  return count;
}

double GemmLoad::time_gemms_ms(int count) {
  cudaEvent_t t0 = nullptr, t1 = nullptr;
  check(cudaEventCreate(&t0), "cudaEventCreate");
  check(cudaEventCreate(&t1), "cudaEventCreate");
  auto s = static_cast<cudaStream_t>(stream_);
  check(cudaEventRecord(t0, s), "cudaEventRecord");
  for (int i = 0; i < count; ++i) launch_one();
  check(cudaEventRecord(t1, s), "cudaEventRecord");
  check(cudaEventSynchronize(t1), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  return static_cast<double>(ms) / count;
}

}  // namespace wattlab::device
