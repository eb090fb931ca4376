// What `wattlab monitor` shows per update: per-domain rows computed from successive meter
// snapshots. Its renderers live with the reports: src/report/monitor_text.h (the terminal)
// and src/report/monitor_json.h (JSON lines, schema "wattlab.monitor/1", docs/export.md).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "wattlab/meter/meter.h"

namespace wattlab {

struct MonitorRow {
  std::string domain;
  std::string name;
  std::string uuid;
  bool simulated = false;
  bool up = true;
  std::optional<double> energy_j;          // cumulative since the monitor started (monotonic)
  std::string energy_estimator;
  std::optional<double> power_interval_w;  // mean power since the previous update, from energy
  std::optional<double> power_instant_w, power_average_w, power_sample_w;
  std::optional<double> sm_clock_mhz, mem_clock_mhz, temperature_c, utilization_gpu_pct;
  std::optional<double> gpm_sm_activity_pct, gpm_tensor_activity_pct, gpm_dram_bw_pct;
  std::optional<double> power_limit_w, memory_used_bytes;
  std::vector<std::string> clock_event_reasons;  // names of the bits set in the newest mask
  double gain_tolerance = 0;                     // systematic relative error of power and energy
  uint64_t read_errors = 0;                      // failed reads of any kind since the start
};

struct MonitorUpdate {
  uint64_t seq = 0;   // 0, 1, 2, ...
  double t_s = 0;     // since the meter started
  bool simulated = false;
  std::vector<MonitorRow> rows;
};

class MonitorView {
 public:
  explicit MonitorView(std::vector<Domain> domains);
  // A new update from a snapshot (energies already monotonic: LiveMeter::sample()).
  MonitorUpdate update(const MeterSnapshot& snapshot);

 private:
  std::vector<Domain> domains_;
  uint64_t seq_ = 0;
  std::vector<std::optional<std::pair<int64_t, double>>> prev_;  // (energy_t_ns, energy_j) per domain
};

}  // namespace wattlab
