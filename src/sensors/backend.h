// Private to the sensors layer: what each backend's open function returns to the registry.
#pragma once
#include "wattlab/sensors/registry.h"

namespace wattlab::detail {

struct BackendLoad {
  SensorPtr sensor;      // null when the backend did not load
  BackendStatus status;  // loaded or not, and why
};

// One open function per backend folder; the registry calls them explicitly.
BackendLoad open_sim(const BackendOptions& options);    // sim/sim_gpu.cpp
BackendLoad open_nvml(const BackendOptions& options);   // nvml/nvml_sensor.cpp
BackendLoad open_rapl(const BackendOptions& options);   // rapl/rapl_sensor.cpp

}  // namespace wattlab::detail
