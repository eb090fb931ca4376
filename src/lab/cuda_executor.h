// The GPU executor: GEMM points through cuBLASLt on a real NVIDIA GPU, measured by a meter on the
// NVML backend (docs/gemm-lab.md, "cuBLASLt executor"). Declared in every build; without CUDA
// make_cuda_executor() returns an `unavailable` error that says so.
#pragma once
#include <memory>
#include <string>

#include "lab/executor.h"
#include "wattlab/meter/meter.h"
#include "wattlab/sensors/registry.h"

namespace wattlab::lab {

struct CudaExecutorOptions {
  int cuda_device = 0;       // the CUDA ordinal the GEMMs run on (after CUDA_VISIBLE_DEVICES)
  BackendOptions backend;    // how the meter opens its sensors; device "nvml" or "auto"
  MeterOptions meter;
  std::size_t workspace_bytes = 32u << 20;  // cuBLASLt workspace
};

// True when this build has the cuBLASLt executor.
bool cuda_executor_available();

// Opens the sensors, starts the meter, creates the CUDA context and cuBLASLt handle.
// Errors: unavailable (no CUDA in this build, no GPU, NVML missing), invalid_argument (bad device).
Result<std::unique_ptr<GemmExecutor>> make_cuda_executor(const CudaExecutorOptions& opt);

}  // namespace wattlab::lab
