// The stable JSON form of a run ("schema": "wattlab.run/1"), printed by `wattlab run --json` and
// `wattlab report --json`. Every field is documented in docs/json-output.md; change both together.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "wattlab/store/run_record.h"

namespace wattlab {

inline constexpr const char* kRunJsonSchema = "wattlab.run/1";

// Keys keep the documented order (ordered_json).
nlohmann::ordered_json run_to_json(const RunRecord& run);
// indent < 0: one line.
std::string run_to_json_string(const RunRecord& run, int indent = 2);

}  // namespace wattlab
