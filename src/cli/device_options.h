// The device flags every measuring subcommand shares (--device, --gpus, --sim-*, ...), parsed
// into the library's device selection (BackendOptions), which wattlab::Recording opens.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "wattlab/sensors/registry.h"

namespace CLI {
class App;
}

namespace wattlab::cli {

struct DeviceOptions {
  std::string device = "auto";
  std::string sim_workload;
  std::string sim_faults;
  int sim_gpus = 1;
  uint64_t sim_seed = 1;
  double sim_gain_error = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::string> gpus;
  std::string powercap_root = "/sys/class/powercap";
  bool no_cpu = false;

  BackendOptions backend() const;
};

void add_device_options(CLI::App& sub, DeviceOptions& o);

}  // namespace wattlab::cli
