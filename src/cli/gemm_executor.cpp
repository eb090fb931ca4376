#include "gemm_executor.h"

#include <fmt/format.h>

#include "lab/cuda_executor.h"
#include "lab/sim_executor.h"

namespace wattlab::cli {

Result<GpuAttempt> try_gpu_executor(const GemmDeviceOptions& dev) {
  GpuAttempt out;
  if (dev.device == "sim") return out;
  if (dev.device == "auto" && !lab::cuda_executor_available()) {
    out.fallback_note = "this wattlab was built without CUDA, so --device auto uses the SIMULATED executor";
    return out;
  }
  lab::CudaExecutorOptions o;
  o.cuda_device = dev.cuda_device;
  o.backend.device = "nvml";
  o.backend.gpus = dev.gpus;
  o.backend.cpu = false;
  auto cuda = lab::make_cuda_executor(o);
  if (cuda) {
    out.exec = std::move(*cuda);
    return out;
  }
  if (dev.device == "nvml") return cuda.error();
  out.fallback_note = "the GPU executor did not open (" + cuda.error().message() + "); using the SIMULATED executor";
  return out;
}

Result<std::unique_ptr<lab::GemmExecutor>> make_sim(const GemmDeviceOptions& dev, std::vector<lab::GemmSpec> planned,
                                                    const lab::ProtocolOptions& p) {
  lab::SimExecutorOptions o;
  // A point's virtual slot holds the longest warm-up (plus one chunk), the window, and the 2 s
  // the previous point's collect() advances: nothing spills into the next point's slot.
  o.slot_s = (p.warmup ? std::max(p.warmup_max_s, p.first_warmup_min_s) + p.warmup_chunk_s : 0) + p.window_s + 5;
  o.sim_seed = dev.sim_seed;
  return lab::make_sim_executor(std::move(planned), o);
}

std::string expected_executor_kind(const GemmDeviceOptions& dev) {
  return dev.device == "sim" || (dev.device == "auto" && !lab::cuda_executor_available()) ? "sim" : "gpu";
}

std::string executor_header(lab::GemmExecutor& exec) {
  if (exec.simulated()) {
    const std::string d = exec.description();
    return d.rfind("SIMULATED", 0) == 0 ? d : "SIMULATED: " + d;
  }
  const auto& domains = exec.meter().domains();
  std::string gpu = "no GPU domain";
  if (auto i = lab::gpu_domain_index(domains)) {
    const Domain& d = domains[*i];
    gpu = d.id + " (" + d.name + (d.uuid.empty() ? "" : ", " + d.uuid) + ")";
  }
  return fmt::format("GPU executor on {}: {}", gpu, exec.description());
}

}  // namespace wattlab::cli
