#include "mma_load.h"

#include <cuda_runtime.h>

#include <stdexcept>

#include "cuda_check.h"
#include "mma_kernel.h"

namespace wattlab::device {

MmaLoad::MmaLoad(int blocks, int iters) : blocks_(blocks), iters_(iters) {
  mma_kernel_setup();
  cuda_check(cudaMalloc(&out_, static_cast<std::size_t>(sm_count()) * kMmaThreads * sizeof(float)), "cudaMalloc(mma out)");
  configure(blocks, iters);
  finish_setup();
}

MmaLoad::~MmaLoad() {
  try {
    stop();
  } catch (const std::exception&) {  // a failed synchronize at exit: nothing left to do about it
  }
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream()));
  cudaFree(out_);
}

void MmaLoad::configure(int blocks, int iters) {
  if (running()) throw std::runtime_error("MmaLoad::configure while units run");
  if (blocks < 1 || blocks > sm_count())
    throw std::runtime_error("mma load: " + std::to_string(blocks) + " blocks, accepted 1.." + std::to_string(sm_count()));
  if (iters < 1) throw std::runtime_error("mma load: " + std::to_string(iters) + " rounds per warp, accepted >= 1");
  blocks_ = blocks;
  iters_ = iters;
}

double MmaLoad::flop_per_unit() const { return mma_unit_flop(blocks_, iters_); }

std::string MmaLoad::describe() const {
  return "BF16 WMMA 16x16x16 register loop, " + std::to_string(blocks_) + " blocks (one per SM) x " +
         std::to_string(kMmaThreads) + " threads, " + std::to_string(iters_) + " x 4 products per warp";
}

void MmaLoad::enqueue_unit() { mma_kernel_launch(stream(), blocks_, iters_, seed_++, out_); }

}  // namespace wattlab::device
