// The JSON forms of the store's structured columns (command, devices, sensor model) and the
// TelemetrySummary fields by name, listed once: the store's columns and the run's JSON renderer
// (src/report/run_json.h) both follow them, so the file and the export agree, and a new
// telemetry field cannot be stored but not exported.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wattlab/meter/window.h"
#include "wattlab/sensors/sensor.h"
#include "wattlab/store/run_record.h"

namespace wattlab::store_json {

using Json = nlohmann::ordered_json;

Json strings_to_json(const std::vector<std::string>& strings);
Json devices_to_json(const std::vector<DeviceProperties>& devices);
Json sensor_model_to_json(const SensorModel& model);

// A column's JSON text. A command's arguments, a device's name or an issue need not be UTF-8;
// such bytes become U+FFFD, so storing the run never fails on them.
inline std::string json_column_text(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

struct TelemetryField {
  const char* name;  // column and JSON key; carries the unit
  std::optional<double> TelemetrySummary::*member;
};

inline constexpr std::array<TelemetryField, 14> kTelemetryFields{{
    {"mean_sm_clock_mhz", &TelemetrySummary::mean_sm_clock_mhz},
    {"mean_mem_clock_mhz", &TelemetrySummary::mean_mem_clock_mhz},
    {"mean_temperature_c", &TelemetrySummary::mean_temperature_c},
    {"temperature_begin_c", &TelemetrySummary::temperature_begin_c},
    {"temperature_end_c", &TelemetrySummary::temperature_end_c},
    {"mean_utilization_gpu_pct", &TelemetrySummary::mean_utilization_gpu_pct},
    {"power_capped_fraction", &TelemetrySummary::power_capped_fraction},
    {"thermal_capped_fraction", &TelemetrySummary::thermal_capped_fraction},
    {"mean_sm_activity_pct", &TelemetrySummary::mean_sm_activity_pct},
    {"mean_sm_occupancy_pct", &TelemetrySummary::mean_sm_occupancy_pct},
    {"mean_tensor_activity_pct", &TelemetrySummary::mean_tensor_activity_pct},
    {"mean_dram_bw_pct", &TelemetrySummary::mean_dram_bw_pct},
    {"power_limit_w", &TelemetrySummary::power_limit_w},
    {"max_memory_used_bytes", &TelemetrySummary::max_memory_used_bytes},
}};
// The one integer field, kept apart: a bitmask must not pass through a double.
inline constexpr const char* kClockEventReasonsField = "clock_event_reasons_seen";

}  // namespace wattlab::store_json
