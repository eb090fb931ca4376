// NVML's clocks-event reason bits (nvmlClocksEventReason*, formerly ClocksThrottleReason*).
#include <fmt/format.h>

#include "export/live.h"

namespace wattlab {

const std::vector<ClockEventReason>& clock_event_reasons() {
  static const std::vector<ClockEventReason> k = {
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {kClockEventSwPowerCap, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {kClockEventSwThermal, "sw_thermal_slowdown"},
      {kClockEventHwThermal, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clock_setting"},
  };
  return k;
}

std::vector<std::string> clock_event_reason_names(uint64_t mask) {
  std::vector<std::string> out;
  uint64_t known = 0;
  for (const auto& r : clock_event_reasons()) {
    known |= r.bit;
    if (mask & r.bit) out.emplace_back(r.name);
  }
  for (uint64_t b = 1; b != 0; b <<= 1)
    if ((mask & b) && !(known & b)) out.push_back(fmt::format("bit_{:#x}", b));
  return out;
}

}  // namespace wattlab
