// One process's use of one GPU, as the driver reports it (NVML: the running compute processes
// merged with the per-process utilization samples). Absent is absent.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace wattlab {

// One utilization sample of one process, ending at t_ns: the share of time its kernels ran on the
// SMs, over one sample period where the driver keeps a history of samples, since its previous
// update where the driver keeps only its newest row (docs/per-process.md).
struct ProcessSmSample {
  int64_t t_ns = 0;  // the sample's own timestamp, on the sensor's clock
  double sm_util_pct = 0;
};

struct ProcessUsage {
  unsigned pid = 0;
  std::optional<uint64_t> used_memory_bytes;
  // The newest utilization sample's values.
  std::optional<double> sm_util_pct, mem_util_pct, enc_util_pct, dec_util_pct;
  int64_t util_t_ns = 0;  // the newest utilization sample's own timestamp, on the monotonic clock; 0: none
  // Every utilization sample the driver published since the previous query, oldest first, each
  // once: one per process per sample period (1/6 s to 1 s by product), none for a period of zero
  // utilization, where the driver keeps a history; the newest row alone where it does not (the
  // H100's driver, measured).
  std::vector<ProcessSmSample> sm_samples;
  std::optional<unsigned> gpu_instance_id, compute_instance_id;  // MIG only
};

}  // namespace wattlab
