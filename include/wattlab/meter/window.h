// Results of measurement windows: plain data that reporters, the store and exporters read.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "wattlab/meter/estimator.h"
#include "wattlab/meter/issue_code.h"

namespace wattlab {

using WindowId = uint64_t;

// Telemetry summarized over a window; a field is empty when the domain has no such reading.
struct TelemetrySummary {
  std::optional<double> mean_sm_clock_mhz;
  std::optional<double> mean_mem_clock_mhz;
  std::optional<double> mean_temperature_c;
  std::optional<double> temperature_begin_c;
  std::optional<double> temperature_end_c;
  std::optional<double> mean_utilization_gpu_pct;
  std::optional<double> power_capped_fraction;  // share of the window held by the power policy
  std::optional<double> thermal_capped_fraction;
  std::optional<double> mean_sm_activity_pct;
  std::optional<double> mean_sm_occupancy_pct;
  std::optional<double> mean_tensor_activity_pct;
  std::optional<double> mean_dram_bw_pct;
  std::optional<double> power_limit_w;
  std::optional<double> max_memory_used_bytes;
  std::optional<uint64_t> clock_event_reasons_seen;  // OR of every mask seen
};

// Energy of one domain over one window, with where it came from and how sure it is.
struct DomainEnergy {
  std::string domain_id;
  bool simulated = false;
  bool available = false;       // false: no estimate, `issues` says why (never a silent 0 J)
  double energy_j = 0;
  double uncertainty_j = 0;     // expanded (~95%) uncertainty from timing, resolution, shaping, noise
  double systematic_j = 0;      // sensor gain tolerance (and unseen rails), a common bias of the board
  double mean_power_w = 0;
  double peak_power_w = 0;      // highest power reading inside the window
  EstimatorUsed estimator;      // to_string: "counter+samples", "counter+instant", "integrated(samples)", ...
  std::optional<double> cross_check_j;     // a second estimator's answer, where one exists
  EstimatorUsed cross_check_estimator;
  std::size_t readings_used = 0;
  std::vector<std::string> issues;  // "window 20 ms is shorter than the 100 ms counter update", ...
  // The code of each issue, in the same order, where the meter made the result (a result read back
  // from a store has the text only: this is then empty).
  std::vector<IssueCode> issue_codes;
  TelemetrySummary telemetry;

  void add_issue(IssueCode code, std::string text) {
    issue_codes.push_back(code);
    issues.push_back(std::move(text));
  }
};

struct WindowResult {
  WindowId id = 0;
  std::string name;
  int64_t t_begin_ns = 0;
  int64_t t_end_ns = 0;
  bool final = false;  // false: the timeline did not yet cover the end (provisional)
  std::vector<DomainEnergy> domains;
  // What the caller says the window held, kept beside the energy: counts ("tokens" = 512,
  // "gemms" = 2400) turn joules into joules per unit; labels ("engine" = "bf16") name the point.
  std::map<std::string, double> counts;
  std::map<std::string, std::string> labels;

  double dur_s() const { return static_cast<double>(t_end_ns - t_begin_ns) * 1e-9; }
};

}  // namespace wattlab
