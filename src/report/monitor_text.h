// The terminal form of `wattlab monitor` updates: one line per domain, every number with its unit.
// (The JSON-lines form: monitor_json.h. Both read only the plain MonitorUpdate data of
// src/export/monitor.h and link nothing of export.)
#pragma once
#include <string>
#include <vector>

#include "export/monitor.h"

namespace wattlab::report {

// Lines (without newlines) for one update: a header line, then one per domain.
std::vector<std::string> monitor_lines(const MonitorUpdate& u);

}  // namespace wattlab::report
