// The lab's built-in GPU load: a compute-bound FP32 FMA loop kernel that runs for the time asked,
// as a DeviceLoad (what `wattlab sensors --characterize` runs while it compares the energy counter
// with integrated power). CUDA builds implement it (gpu_load.cu); without CUDA, open() says that
// this build has no GPU load (gpu_load_none.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "wattlab/core/error.h"
#include "sensors/device_load.h"

namespace wattlab::lab {

class FmaLoad final : public DeviceLoad {
 public:
  // The CUDA device whose UUID ("GPU-...") or else PCI bus id matches. Errors: unavailable (no
  // such device, or a build without CUDA), with what was looked for.
  static Result<std::unique_ptr<FmaLoad>> open(const std::string& uuid, const std::string& pci_bus_id);
  ~FmaLoad() override;
  std::string describe() const override;  // "FMA loop kernel (FP32, compute-bound) on NVIDIA H200, CUDA device 0"
  bool simulated() const override { return false; }
  Status prepare() override;                // context and buffers, outside the measured load
  Status start(int64_t dur_ns) override;    // launches and returns at once
  Status finish(std::string& report) override;  // waits; report: FLOP/s achieved

  struct Impl;

 private:
  explicit FmaLoad(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wattlab::lab
