// The device flags every measuring subcommand shares (--device, --gpus, --sim-*, ...), parsed
// into the library's device selection (BackendOptions), which wattlab::Recording opens.
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "wattlab/sensors/registry.h"

namespace CLI {
class App;
class Validator;
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

// Accepts a --sim-seed of 0..2^64-1 written in decimal digits; a sign (e.g. -1, which would wrap
// to 2^64-1) or anything else is refused with a message naming the value.
const CLI::Validator& sim_seed_check();

}  // namespace wattlab::cli
