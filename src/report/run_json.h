// The stable JSON form of a run ("schema": "wattlab.run/1"): the JSON renderer of a stored run,
// beside its text one (run_text.h), written by `wattlab run --json FILE` and `gemm run --json FILE`
// and printed by `wattlab report --format json`. Every field is documented in docs/json-output.md;
// change both together.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "wattlab/store/run_record.h"

namespace wattlab::report {

inline constexpr const char* kRunJsonSchema = "wattlab.run/1";

// Keys keep the documented order (ordered_json).
nlohmann::ordered_json run_to_json(const RunRecord& run);
// indent < 0: one line.
std::string run_to_json_string(const RunRecord& run, int indent = 2);

}  // namespace wattlab::report
