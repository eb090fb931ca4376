// The per-process split of one GPU's energy over one interval (a window, an exporter interval): a
// model, not a measurement (docs/per-process.md). The idle share is the idle power times the
// interval; the rest, the active energy, goes to the processes in proportion to the time their
// kernels held the SMs (NVML's per-process SM utilization integrated over the interval), less the
// share of the device's busy time that no listed process accounts for (reported as unattributed).
// Every share carries a 95 % uncertainty that is wider, relative to its energy, than the total's.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sensors/proc_info.h"

namespace wattlab {

// One look at a GPU's processes: the processes listed on it at t_ns. A poll whose query succeeded
// describes the time before it, back to the previous poll (at most SplitInput::max_hold_ns): the
// coverage of an interval.
struct ProcessPoll {
  int64_t t_ns = 0;
  std::set<unsigned> pids;  // listed (running a context), with or without utilization samples
};

// One utilization sample of one process: its share of SM time over (t_begin_ns, t_end_ns], the
// driver's sample period that ends at the sample's timestamp.
struct SmSample {
  unsigned pid = 0;
  int64_t t_begin_ns = 0, t_end_ns = 0;
  double sm_util_pct = 0;
};

struct SplitInput {
  int64_t t_begin_ns = 0, t_end_ns = 0;
  double energy_j = 0;       // the GPU's energy over the interval
  double uncertainty_j = 0;  // its 95 % uncertainty
  // Idle power and its 95 % uncertainty; empty: unknown, and no idle share is taken out.
  std::optional<double> idle_power_w;
  double idle_power_u95_w = 0;
  std::string idle_source;  // "--idle-power-w", "measured floor (...)": said beside the idle share
  // The device's own busy share over the interval (nvmlDeviceGetUtilizationRates, mean), if read.
  std::optional<double> device_busy_pct;
  std::vector<ProcessPoll> polls;  // in time order; those outside the interval are ignored
  // Every utilization sample of the processes on the GPU; the parts outside the interval are
  // ignored. A listed process without a sample over some time had zero utilization there.
  std::vector<SmSample> samples;
  int64_t max_hold_ns = 2'000'000'000;
  // The proxy's own relative 95 % error: equal SM time does not mean equal power (a tensor-core
  // GEMM and a memory-bound kernel differ per busy SM). A model parameter, checked on the GPU by
  // scripts/device/per_process_h200.sh.
  double proxy_rel_u95 = 0.10;
};

struct ProcessShare {
  unsigned pid = 0;
  double sm_s = 0;           // SM-seconds: the integral of SM utilization over the interval / 100
  double energy_j = 0;
  double uncertainty_j = 0;  // 95 %
};

struct ProcessSplit {
  double total_energy_j = 0, total_uncertainty_j = 0;  // the input's, for reference
  bool idle_known = false;
  double idle_energy_j = 0, idle_uncertainty_j = 0;
  std::string idle_source;
  double active_energy_j = 0;  // total minus the idle share
  double unattributed_energy_j = 0, unattributed_uncertainty_j = 0;
  double coverage = 0;             // share of the interval some poll describes
  double unattributed_busy_share = 0;  // share of the device's busy time no listed process accounts for
  std::vector<ProcessShare> processes;  // by pid
  std::vector<std::string> notes;       // why a part is missing or clamped

  static constexpr const char* kModel = "sm-time-proportional (idle = idle power x time; active by SM-seconds)";
};

// One process's line in a GPU's attribution: who it is and its share.
struct ProcessRow {
  unsigned pid = 0;
  std::string comm;
  CgroupIds ids;
  bool in_tree = false;  // part of the measured command's process tree
  ProcessShare share;
};

// A GPU's energy over an interval, split per process and per group (the command's tree, others).
struct GpuAttribution {
  std::string gpu_id;
  ProcessSplit split;                      // per process
  std::optional<ProcessShare> tree, others;  // the same model over the two groups (pid 1: tree, 2: others)
  std::vector<ProcessRow> rows;            // by pid
};

// The split of `in`. Throws UsageError when the interval is empty or an input is negative.
ProcessSplit split_energy(const SplitInput& in);

}  // namespace wattlab
