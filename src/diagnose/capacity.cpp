#include "diagnose/capacity.h"

#include <cmath>

namespace wattlab::diagnose {

Capacity capacity_under_budget(const ConfigRecord& r, double power_budget_w) {
  Capacity c;
  c.power_budget_w = power_budget_w;
  c.throughput_per_watt = r.throughput_per_watt();
  c.units_per_sec = c.throughput_per_watt * power_budget_w;
  c.requests_per_sec = power_budget_w / r.energy_per_response_j();
  if (r.avg_power_watts > 0) {
    c.whole_replicas = static_cast<int>(std::floor(power_budget_w / r.avg_power_watts));
    const double req_per_sec_one = r.llm ? r.throughput_per_sec() / r.llm->avg_output_len : r.throughput_per_sec();
    c.whole_replica_requests_per_sec = c.whole_replicas * req_per_sec_one;
    c.whole_replica_gpus = c.whole_replicas * r.num_gpus;
  }
  return c;
}

}  // namespace wattlab::diagnose
