// A BF16 tensor-core load: C = A·B with n×n×n BF16 inputs and FP32 accumulation (cublasGemmEx);
// one GEMM is one unit of a UnitLoad (launched back to back, in bursts, or counted).
#pragma once
#include <cstdint>
#include <string>

#include "unit_load.h"

namespace wattlab::device {

class GemmLoad final : public UnitLoad {
 public:
  // Allocates A, B, C on CUDA device 0 and fills A and B with uniform random values in [-1, 1).
  // Throws std::runtime_error naming the failed CUDA or cuBLAS call.
  explicit GemmLoad(int n, uint64_t seed = 1);
  ~GemmLoad() override;

  // Runs `count` GEMMs and waits: the mean time of one, in ms (for TFLOP/s).
  double time_gemms_ms(int count) { return time_units_ms(count); }
  // cuBLAS's target number of SMs (cublasSetSmCountTarget); 0 lets it use all of them. Only while
  // no GEMM is in flight.
  void set_sm_count_target(int sms);
  int sm_count_target() const { return sm_target_; }

  double flop_per_gemm() const { return 2.0 * n_ * static_cast<double>(n_) * n_; }
  int n() const { return n_; }
  std::string describe() const override;

 protected:
  void enqueue_unit() override;

 private:
  int n_;
  int sm_target_ = 0;
  void* a_ = nullptr;
  void* b_ = nullptr;
  void* c_ = nullptr;
  void* handle_ = nullptr;  // cublasHandle_t
};

}  // namespace wattlab::device
