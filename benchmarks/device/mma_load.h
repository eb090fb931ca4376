// The tensor-core kernel of mma_kernel.h as a UnitLoad: one launch is one unit. The number of
// blocks (SMs) and the rounds per warp can be changed between phases, never while units run.
#pragma once
#include <string>

#include "unit_load.h"

namespace wattlab::device {

class MmaLoad final : public UnitLoad {
 public:
  // Throws std::runtime_error naming the failed CUDA call, or for blocks outside 1..SM count.
  MmaLoad(int blocks, int iters);
  ~MmaLoad() override;

  void configure(int blocks, int iters);
  int blocks() const { return blocks_; }
  int iters() const { return iters_; }
  double flop_per_unit() const;
  std::string describe() const override;

 protected:
  void enqueue_unit() override;

 private:
  int blocks_;
  int iters_;
  uint32_t seed_ = 1;
  float* out_ = nullptr;  // sm_count() * kMmaThreads floats
};

}  // namespace wattlab::device
