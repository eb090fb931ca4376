// What a sensor reports: every reading carries its own monotonic timestamp (DESIGN.md data model).
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace wattlab {

enum class ReadingKind : uint8_t {
  // Energy and power. Backends convert to SI (J, W); nothing after them converts again.
  energy_counter_j,  // cumulative energy counter since some origin
  power_instant_w,   // "instant" power (on H100/H200: a 25 ms average, refreshed every 100 ms)
  power_average_w,   // smoothed power (on Ampere+: a 1 s average)
  power_sample_w,    // one sample from the driver's power sample buffer (own timestamps)
  // Telemetry on the same timeline: what lets a diagnosis say why.
  sm_clock_mhz,
  mem_clock_mhz,
  temperature_c,
  mem_temperature_c,
  utilization_gpu_pct,
  utilization_mem_pct,
  clock_event_reasons,    // bitmask, as NVML's clocks-event reasons (0x4 = SW power cap)
  power_violation_ns,     // cumulative time held by the power policy
  thermal_violation_ns,   // cumulative time held by the thermal policy
  power_limit_w,          // enforced limit
  memory_used_bytes,
  gpm_sm_activity_pct,
  gpm_sm_occupancy_pct,
  gpm_tensor_activity_pct,
  gpm_dram_bw_pct,
  kCount,
};
inline constexpr std::size_t kReadingKindCount = static_cast<std::size_t>(ReadingKind::kCount);

// The bit of ReadingKind::clock_event_reasons that says the power policy holds the clocks down
// (nvmlClocksEventReasonSwPowerCap).
inline constexpr uint64_t kClockEventSwPowerCap = 0x4;
// The bits that say temperature holds them down (nvmlClocksEventReasonSwThermalSlowdown and
// nvmlClocksEventReasonHwThermalSlowdown): what the thermal violation counter accumulates.
inline constexpr uint64_t kClockEventSwThermal = 0x20;
inline constexpr uint64_t kClockEventHwThermal = 0x40;

std::string_view to_string(ReadingKind kind);          // "energy_counter_j"
std::optional<ReadingKind> reading_kind_from_string(std::string_view name);
bool is_power_or_energy(ReadingKind kind);
std::string_view unit_of(ReadingKind kind);            // "J", "W", "MHz", ...

struct Reading {
  int64_t t_ns = 0;         // monotonic, midpoint of the read call (or the sensor's own stamp)
  ReadingKind kind = ReadingKind::power_instant_w;
  double value = 0;         // in the unit of `kind`
  int64_t read_dur_ns = 0;  // how long the read call took; bounds the timestamp's error
  // The sensor's own timestamp for the value where it gives one (NVML field values, samples,
  // violation counters: us since the epoch), mapped onto the monotonic clock; 0: none.
  int64_t sensor_t_ns = 0;
};

}  // namespace wattlab
