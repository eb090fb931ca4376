// JSON forms of the structured columns (command, devices, sensor model, issues). The same
// functions build those parts of the exported run JSON, so the file and the export agree.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "wattlab/core/error.h"
#include "wattlab/meter/estimator.h"
#include "wattlab/sensors/sensor.h"
#include "wattlab/store/run_record.h"

namespace wattlab::store_detail {

using Json = nlohmann::ordered_json;

Json strings_to_json(const std::vector<std::string>& strings);
Json devices_to_json(const std::vector<DeviceProperties>& devices);
Json sensor_model_to_json(const SensorModel& model);

// Decoders report a malformed column as ErrorKind::parse naming the column; they never throw.
Result<std::vector<std::string>> strings_from_json(std::string_view text, std::string_view column);
Result<std::vector<DeviceProperties>> devices_from_json(std::string_view text, std::string_view column);
Result<SensorModel> sensor_model_from_json(std::string_view text, std::string_view column);
// An estimator column (plain text, not JSON), parsed once into the enum.
Result<EstimatorUsed> estimator_from_column(std::string_view text, std::string_view column);

}  // namespace wattlab::store_detail
