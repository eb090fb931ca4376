// The list of backends, explicit (no static constructors), and how `--device` picks among them.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "wattlab/core/clock.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

struct BackendOptions {
  std::string device = "auto";  // auto | sim | nvml | rapl
  Clock* clock = nullptr;       // defaults to the monotonic clock
  // sim
  std::string sim_workload;     // script, see docs/sim.md; empty: the built-in demo workload
  std::string sim_faults;       // fault script, see docs/sim.md
  int sim_gpus = 1;
  uint64_t sim_seed = 1;
  double sim_gain_error = std::numeric_limits<double>::quiet_NaN();  // NaN: drawn from the seed (±3%)
  // nvml
  std::string nvml_library;     // override the library path; empty: libnvidia-ml.so.1, then .so
  std::vector<std::string> gpus;  // indices or UUIDs to measure; empty: CUDA_VISIBLE_DEVICES, else all
  // rapl
  std::string powercap_root = "/sys/class/powercap";
  bool cpu = true;              // include CPU domains under auto
};

// What happened to one backend: loaded with its domains, or not loaded, and why.
struct BackendStatus {
  std::string backend;
  bool loaded = false;
  std::string detail;  // "2 GPUs, driver 580.159.04, /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1" or why not
};

struct OpenedSensors {
  std::vector<SensorPtr> sensors;
  std::vector<BackendStatus> statuses;
  bool simulated() const;
  std::size_t domain_count() const;
};

// Opens what `options.device` asks for. "auto" means every real backend that loads (never sim).
// Throws UsageError for an unknown device name.
OpenedSensors open_sensors(const BackendOptions& options);

}  // namespace wattlab
