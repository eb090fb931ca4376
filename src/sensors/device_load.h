// Work the characterization runs on a device while it watches the sensors: a built-in GPU
// kernel (CUDA builds, lab::FmaLoad in src/lab/gpu_load.h) or, on the simulated GPU, a
// scripted load.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "wattlab/core/error.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

class DeviceLoad {
 public:
  virtual ~DeviceLoad() = default;
  virtual std::string describe() const = 0;  // "FMA loop kernel on NVIDIA H200 (CUDA device 0)"
  virtual bool simulated() const = 0;
  // Set-up that must not count as load (a CUDA context, buffers). Called once before start().
  virtual Status prepare() { return {}; }
  // Starts the load for `dur_ns` and returns at once: the caller polls sensors meanwhile.
  virtual Status start(int64_t dur_ns) = 0;
  // Waits until the load has ended; `report` receives what it did ("8.1 TFLOP/s FP32 ...").
  virtual Status finish(std::string& report) = 0;
};

// The simulated GPU's stand-in for a kernel: from start() on, the board's true power follows
// `script` (docs/sim.md grammar, e.g. "step 600W 1h") for the load's duration. Null when
// `sensor` is not the simulated GPU. A bad script throws UsageError at start().
std::unique_ptr<DeviceLoad> make_sim_load(Sensor& sensor, std::size_t domain_index, std::string script);

}  // namespace wattlab
