// The GPU's state as NVML reports it, read only (name, driver, power limits, clocks, temperature,
// power), for the results JSON of meter_validate at its start and end. Nothing is changed.
#pragma once
#include <nlohmann/json.hpp>

#include "direct_counter.h"

namespace wattlab::device {

// Each field that NVML could not give is null, with the reason under "errors".
nlohmann::json read_gpu_state(const DirectCounter& device);
// The enforced power limit in W; NaN when NVML does not give it.
double enforced_power_limit_w(const DirectCounter& device);

}  // namespace wattlab::device
