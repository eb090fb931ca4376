// One process's use of one GPU, as the driver reports it (NVML: the running compute processes
// merged with the newest per-process utilization sample). Absent is absent.
#pragma once
#include <cstdint>
#include <optional>

namespace wattlab {

struct ProcessUsage {
  unsigned pid = 0;
  std::optional<uint64_t> used_memory_bytes;
  std::optional<double> sm_util_pct, mem_util_pct, enc_util_pct, dec_util_pct;
  int64_t util_t_ns = 0;  // the utilization sample's own timestamp, on the monotonic clock; 0: none
  std::optional<unsigned> gpu_instance_id, compute_instance_id;  // MIG only
};

}  // namespace wattlab
