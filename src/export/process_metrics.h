// Per-process GPU energy as Prometheus counters (`wattlab serve`): each exporter interval's split
// of each GPU's energy (src/meter/process_split.h) adds to a counter per process, labelled by
// pid, command name, container, Kubernetes pod and Slurm job, beside the GPU's idle and
// unattributed counters. A process not credited for forget_after_ns loses its series (cardinality:
// pids are reused and short-lived; docs/per-process.md).
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

#include "meter/process_split.h"

namespace wattlab {

class ProcessEnergyCounters {
 public:
  explicit ProcessEnergyCounters(int64_t forget_after_ns = 300'000'000'000) : forget_after_ns_(forget_after_ns) {}

  // One interval of one GPU, ending at t_ns.
  void add(const GpuAttribution& a, int64_t t_ns);
  // Drops the series of processes last credited more than forget_after_ns before t_ns.
  void forget(int64_t t_ns);
  // The families, with HELP and TYPE; "" before the first interval. With now_ns (the clock the
  // intervals' ends are on), also each GPU's split age: how far behind now the newest split
  // interval ends, so that a reader compares the counters with the board's energy up to there.
  // Thread-safe.
  std::string format(const std::string& host, std::optional<int64_t> now_ns = std::nullopt) const;
  std::size_t series() const;

 private:
  struct Series {
    std::string comm, container, pod, slurm_job;
    double energy_j = 0, u95_j = 0;
    int64_t last_t_ns = 0;
  };
  struct GpuTotals {
    double idle_j = 0, idle_u95_j = 0, unattributed_j = 0, unattributed_u95_j = 0;
    uint64_t intervals = 0;
    int64_t end_ns = 0;  // the newest split interval's end
  };
  int64_t forget_after_ns_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, unsigned>, Series> series_;  // (gpu id, pid)
  std::map<std::string, GpuTotals> gpus_;
  uint64_t dropped_ = 0;
};

}  // namespace wattlab
