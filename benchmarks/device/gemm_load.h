// A BF16 tensor-core load: C = A·B with n×n×n BF16 inputs and FP32 accumulation (cublasGemmEx),
// launched back to back, either continuously from a feeder thread or in timed bursts.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace wattlab::device {

class GemmLoad {
 public:
  // Allocates A, B, C on CUDA device 0 and fills A and B with uniform random values in [-1, 1).
  // Throws std::runtime_error naming the failed CUDA or cuBLAS call.
  explicit GemmLoad(int n, uint64_t seed = 1);
  ~GemmLoad();
  GemmLoad(const GemmLoad&) = delete;
  GemmLoad& operator=(const GemmLoad&) = delete;

  // GEMMs launched back to back on a feeder thread (at most kDepth in flight) until stop().
  void start();
  void stop();
  // Launches GEMMs while less than `busy_ns` has passed since the call, then waits for them.
  // Returns the number launched.
  int64_t burst(int64_t busy_ns);
  // Runs `count` GEMMs and waits: the mean time of one, in ms (for TFLOP/s).
  double time_gemms_ms(int count);

  uint64_t launched() const { return launched_.load(); }
  double flop_per_gemm() const { return 2.0 * n_ * static_cast<double>(n_) * n_; }
  int n() const { return n_; }
  const std::string& device_name() const { return name_; }
  const std::string& device_uuid() const { return uuid_; }  // "GPU-xxxxxxxx-...", as NVML writes it

 private:
  void launch_one();
  static constexpr int kDepth = 4;
  int n_;
  std::string name_, uuid_;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* c_ = nullptr;
  void* stream_ = nullptr;  // cudaStream_t
  void* handle_ = nullptr;  // cublasHandle_t
  void* events_[kDepth] = {};
  uint64_t next_event_ = 0;
  std::atomic<uint64_t> launched_{0};
  std::atomic<bool> stop_{false};
  std::thread feeder_;
};

}  // namespace wattlab::device
