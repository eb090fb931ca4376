// The structured columns (command, devices, sensor model, issues) read back from their JSON
// forms; the encoders are public (src/store/column_json.h: the run's JSON renderer uses them).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wattlab/core/error.h"
#include "wattlab/meter/estimator.h"
#include "wattlab/sensors/sensor.h"
#include "store/column_json.h"
#include "wattlab/store/run_record.h"

namespace wattlab::store_detail {

using store_json::Json;
using store_json::strings_to_json;
using store_json::devices_to_json;
using store_json::sensor_model_to_json;
using store_json::json_column_text;
using store_json::kTelemetryFields;
using store_json::kClockEventReasonsField;

// Decoders report a malformed column as ErrorKind::parse naming the column; they never throw.
Result<std::vector<std::string>> strings_from_json(std::string_view text, std::string_view column);
Result<std::vector<DeviceProperties>> devices_from_json(std::string_view text, std::string_view column);
Result<SensorModel> sensor_model_from_json(std::string_view text, std::string_view column);
// An estimator column (plain text, not JSON), parsed once into the enum.
Result<EstimatorUsed> estimator_from_column(std::string_view text, std::string_view column);

}  // namespace wattlab::store_detail
