#include "wattlab/sensors/registry.h"

#include <string>

#include "backend.h"

namespace wattlab {

bool OpenedSensors::simulated() const {
  for (const auto& s : sensors)
    for (const auto& d : s->domains())
      if (d.simulated) return true;
  return false;
}

std::size_t OpenedSensors::domain_count() const {
  std::size_t n = 0;
  for (const auto& s : sensors) n += s->domains().size();
  return n;
}

namespace {
void take(OpenedSensors& out, detail::BackendLoad load) {
  if (load.sensor) out.sensors.push_back(std::move(load.sensor));
  out.statuses.push_back(std::move(load.status));
}
}  // namespace

OpenedSensors open_sensors(const BackendOptions& options) {
  OpenedSensors out;
  const std::string& d = options.device;
  if (d == "sim") {
    take(out, detail::open_sim(options));
  } else if (d == "auto" || d == "nvml" || d == "rapl") {
    // Real backends are added here, in a fixed order: GPUs first, then CPU packages.
    // "auto" never picks the simulator: simulated numbers are only ever asked for.
    if (d == "auto" || d == "nvml") take(out, detail::open_nvml(options));
    if (d == "rapl" || (d == "auto" && options.cpu)) take(out, detail::open_rapl(options));
  } else {
    throw UsageError("--device '" + d + "' is not known; use auto, sim, nvml or rapl");
  }
  return out;
}

}  // namespace wattlab
