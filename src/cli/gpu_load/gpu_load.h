// A built-in GPU load for `wattlab sensors --characterize`: a compute-bound FMA loop kernel that
// runs for a given time. Plain C++: gpu_load.cu implements it in CUDA builds, gpu_load_none.cpp
// (WATTLAB_HAVE_CUDA OFF) says that no load is available.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace wattlab::gpu_load {

bool built_with_cuda();

class FmaLoad {
 public:
  // The CUDA device whose UUID ("GPU-...") or else PCI bus id matches; null with `error` set if none.
  static std::unique_ptr<FmaLoad> open(const std::string& uuid, const std::string& pci_bus_id, std::string& error);
  ~FmaLoad();
  std::string describe() const;            // "FMA loop kernel (FP32) on NVIDIA H200, CUDA device 0"
  bool prepare(std::string& error);        // context and buffers, outside the measured load
  bool start(int64_t dur_ns, std::string& error);  // launches and returns at once
  bool finish(std::string& report, std::string& error);  // waits; report: FLOP/s achieved

  struct Impl;

 private:
  explicit FmaLoad(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wattlab::gpu_load
