#include "wattlab/sensors/reading.h"

#include <array>

#include "wattlab/sensors/sensor.h"

namespace wattlab {
namespace {
struct KindInfo {
  std::string_view name;
  std::string_view unit;
};
constexpr std::array<KindInfo, kReadingKindCount> kKinds{{
    {"energy_counter_j", "J"},
    {"power_instant_w", "W"},
    {"power_average_w", "W"},
    {"power_sample_w", "W"},
    {"sm_clock_mhz", "MHz"},
    {"mem_clock_mhz", "MHz"},
    {"temperature_c", "degC"},
    {"mem_temperature_c", "degC"},
    {"utilization_gpu_pct", "%"},
    {"utilization_mem_pct", "%"},
    {"clock_event_reasons", "bitmask"},
    {"power_violation_ns", "ns"},
    {"thermal_violation_ns", "ns"},
    {"power_limit_w", "W"},
    {"memory_used_bytes", "B"},
    {"gpm_sm_activity_pct", "%"},
    {"gpm_sm_occupancy_pct", "%"},
    {"gpm_tensor_activity_pct", "%"},
    {"gpm_dram_bw_pct", "%"},
}};
}  // namespace

std::string_view to_string(ReadingKind kind) { return kKinds.at(static_cast<std::size_t>(kind)).name; }
std::string_view unit_of(ReadingKind kind) { return kKinds.at(static_cast<std::size_t>(kind)).unit; }

std::optional<ReadingKind> reading_kind_from_string(std::string_view name) {
  for (std::size_t i = 0; i < kKinds.size(); ++i)
    if (kKinds[i].name == name) return static_cast<ReadingKind>(i);
  return std::nullopt;
}

bool is_power_or_energy(ReadingKind kind) {
  return kind == ReadingKind::energy_counter_j || kind == ReadingKind::power_instant_w ||
         kind == ReadingKind::power_average_w || kind == ReadingKind::power_sample_w;
}

const ReadingModel* SensorModel::find(ReadingKind kind) const {
  for (const auto& r : readings)
    if (r.kind == kind) return &r;
  return nullptr;
}

}  // namespace wattlab
