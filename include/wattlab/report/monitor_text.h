// The terminal form of `wattlab monitor` updates: one line per domain, every number with its unit.
// (The JSON-lines form is monitor_json_line, beside the update's computation in src/export; this
// file reads only the plain MonitorUpdate data of that header and links nothing of export.)
#pragma once
#include <string>
#include <vector>

#include "wattlab/export/monitor.h"

namespace wattlab::report {

// Lines (without newlines) for one update: a header line, then one per domain.
std::vector<std::string> monitor_lines(const MonitorUpdate& u);

}  // namespace wattlab::report
