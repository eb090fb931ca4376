#include "device_options.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>

namespace wattlab::cli {

BackendOptions DeviceOptions::backend() const {
  BackendOptions b;
  b.device = device;
  b.sim_workload = sim_workload;
  b.sim_faults = sim_faults;
  b.sim_gpus = sim_gpus;
  b.sim_seed = sim_seed;
  b.sim_gain_error = sim_gain_error;
  b.gpus = gpus;
  b.powercap_root = powercap_root;
  b.cpu = !no_cpu;
  return b;
}

const CLI::Validator& sim_seed_check() {
  static const CLI::Validator check(
      [](std::string& s) -> std::string {
        const std::string why = "'" + s + "' is not a seed: use a whole number from 0 to 18446744073709551615";
        if (s.empty() || s.size() > 20) return why;
        for (char c : s)
          if (c < '0' || c > '9') return why;
        errno = 0;
        (void)std::strtoull(s.c_str(), nullptr, 10);
        return errno == ERANGE ? why : std::string();
      },
      "SEED");
  return check;
}

void add_device_options(CLI::App& sub, DeviceOptions& o) {
  sub.add_option("--device", o.device, "auto (every real backend that loads), sim, nvml or rapl")
      ->check(CLI::IsMember({"auto", "sim", "nvml", "rapl"}))
      ->capture_default_str();
  sub.add_option("--sim-workload", o.sim_workload, "the simulated GPU's workload script (docs/sim.md)");
  sub.add_option("--sim-faults", o.sim_faults, "faults the simulated GPU produces (docs/sim.md)");
  sub.add_option("--sim-gpus", o.sim_gpus, "how many simulated GPUs")->check(CLI::Range(1, 64));
  sub.add_option("--sim-seed", o.sim_seed, "seed of the simulated boards (gain, phase, noise)")->check(sim_seed_check());
  sub.add_option("--sim-gain-error", o.sim_gain_error,
                 "the simulated boards' gain error, e.g. 0.02 (default: drawn from the seed within +-3%)")
      ->check(CLI::Range(-0.5, 0.5));
  sub.add_option("--gpus", o.gpus, "GPUs to measure: NVML indices or UUIDs (overrides CUDA_VISIBLE_DEVICES)")
      ->delimiter(',');
  sub.add_option("--powercap-root", o.powercap_root, "powercap sysfs folder (containers, tests)")
      ->capture_default_str();
  sub.add_flag("--no-cpu", o.no_cpu, "leave CPU (RAPL) domains out under --device auto");
}

}  // namespace wattlab::cli
