// Internal: one leaderboard row (a JSON object) into a ConfigRecord, with precise errors.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "diagnose/records.h"

namespace wattlab::diagnose::detail {

// `where` names the row in messages, e.g. "gpqa.json: row 12 (configurations[12])".
// `file_architecture` is the file's top-level `architecture` ("diffusion"), may be empty.
ConfigRecord parse_row(const nlohmann::json& row, const std::string& where,
                       const std::string& file_architecture);

}  // namespace wattlab::diagnose::detail
