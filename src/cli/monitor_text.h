// The terminal form of `wattlab monitor` updates: one line per domain, every number with its unit.
#pragma once
#include <string>
#include <vector>

#include "wattlab/export/monitor.h"

namespace wattlab::cli {

// Lines (without newlines) for one update: a header line, then one per domain.
std::vector<std::string> monitor_lines(const MonitorUpdate& u);

}  // namespace wattlab::cli
