// A run as stored: plain data that the CLI fills in and reporters read (DESIGN.md data model).
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "wattlab/meter/meter.h"
#include "wattlab/meter/window.h"
#include "wattlab/sensors/sensor.h"

namespace wattlab {

using RunId = int64_t;

// Static facts of one opened backend: Sensor::backend() and Sensor::properties().
struct DeviceProperties {
  std::string backend;  // "nvml", "rapl", "sim"
  std::vector<std::pair<std::string, std::string>> properties;  // in the backend's order
};

// What is known when a run begins.
struct RunInfo {
  std::vector<std::string> command;  // argv of the measured command (empty for library use)
  std::string host;                  // hostname
  std::string start_utc;             // wall-clock start, ISO-8601 UTC: "2025-06-01T12:00:00.123Z"
  int64_t start_t_ns = 0;            // monotonic clock at start (the readings' clock)
  bool simulated = false;            // any domain is simulated: every output says SIMULATED
  std::string device_selection;      // what --device asked for: "auto", "sim", "nvml", "rapl"
  std::vector<DeviceProperties> devices;
  // Free-form facts about the run ("model" = "llama-8b", "batch" = "64"): set at begin_run or
  // later with Store::set_run_tag; diagnose reads configurations from them.
  std::map<std::string, std::string> tags;
};

// One line of `list_runs()`: enough to pick a run without loading it.
struct RunSummary {
  RunId run_id = 0;
  RunInfo info;
  std::string wattlab_version;        // the wattlab that wrote the run
  std::optional<int64_t> end_t_ns;    // empty: the writer never ended the run (killed, or running)
  std::optional<int> exit_status;
  int64_t reading_count = 0;          // power/energy readings stored
  int64_t telemetry_count = 0;        // telemetry readings stored
  int64_t window_count = 0;

  bool complete() const { return end_t_ns.has_value(); }
  // "complete", or "incomplete" when end_run never happened (the writer was killed or still runs).
  std::string_view state() const { return complete() ? "complete" : "incomplete"; }
  std::optional<double> dur_s() const;
};

// Everything stored about one run except the readings themselves (load_readings() gives those).
struct RunRecord : RunSummary {
  std::vector<Domain> domains;        // index i is TimedReading::domain_index i
  std::vector<WindowResult> windows;  // in the order they were added
  std::vector<MeterEvent> events;     // in time order
};

// ISO-8601 UTC with milliseconds: "2025-06-01T12:00:00.123Z".
std::string utc_iso8601(std::chrono::system_clock::time_point t);

}  // namespace wattlab
