// The JSON-lines form of `wattlab monitor` updates (`--format json`, or `--jsonl`): one object per
// update, schema "wattlab.monitor/1" (docs/export.md). It reads only the plain MonitorUpdate data
// of src/export/monitor.h and links nothing of export. (The terminal form: monitor_text.h.)
#pragma once
#include <string>

#include "export/monitor.h"

namespace wattlab::report {

inline constexpr const char* kMonitorJsonSchema = "wattlab.monitor/1";

// One JSON object, no newline.
std::string monitor_json_line(const MonitorUpdate& update);

}  // namespace wattlab::report
