// Throughput per watt and capacity under a power budget (docs/joules-framework.md §4, §7.5).
#pragma once
#include "diagnose/records.h"

namespace wattlab::diagnose {

struct Capacity {
  double throughput_per_watt = 0;     // tokens (images, videos) /s/W = 1 / energy per unit
  double power_budget_w = 0;
  double units_per_sec = 0;           // throughput_per_watt x budget (fractional replicas)
  double requests_per_sec = 0;        // budget / energy per response
  int whole_replicas = 0;             // floor(budget / avg_power_watts): copies of the configuration
  double whole_replica_requests_per_sec = 0;  // what those whole copies serve
  int whole_replica_gpus = 0;
};

// `power_budget_w` is GPU power (the only energy the leaderboard reports).
Capacity capacity_under_budget(const ConfigRecord& r, double power_budget_w);

}  // namespace wattlab::diagnose
