#include "wattlab/sensors/registry.h"

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

OpenedSensors open_sensors(const BackendOptions& options) {
  OpenedSensors out;
  (void)options;
  return out;
}

}  // namespace wattlab
