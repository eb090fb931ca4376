// Which GEMM executor a `wattlab gemm` command runs on (--device auto|sim|nvml), and the first line
// it prints: "SIMULATED ..." on the simulated one, the GPU and the executor's description otherwise.
// Two steps, because the SIMULATED executor needs the points it will run, and which points remain
// depends on the sweep id, which depends on the executor kind (sim points never resume a GPU sweep).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "gemm_options.h"
#include "wattlab/core/error.h"
#include "lab/executor.h"
#include "lab/protocol.h"

namespace wattlab::cli {

struct GpuAttempt {
  std::unique_ptr<lab::GemmExecutor> exec;  // null: use the SIMULATED executor
  std::string fallback_note;                // --device auto fell back: why; else empty
};

// nvml: the cuBLASLt executor or its error (unavailable in a build without CUDA); auto: it when
// this build has it and it opens, else null with a note; sim: null.
Result<GpuAttempt> try_gpu_executor(const GemmDeviceOptions& dev);

// The SIMULATED executor for `planned` (the points in the order they will run). A bad recipe is
// an invalid_argument error.
Result<std::unique_ptr<lab::GemmExecutor>> make_sim(const GemmDeviceOptions& dev, std::vector<lab::GemmSpec> planned,
                                                    const lab::ProtocolOptions& protocol);

// What --device resolves to without opening anything ("sim" or "gpu"): for dry runs.
std::string expected_executor_kind(const GemmDeviceOptions& dev);

// "SIMULATED ..." or "GPU executor on gpu:0 (NVIDIA H200, GPU-...): <description>".
std::string executor_header(lab::GemmExecutor& exec);

}  // namespace wattlab::cli
