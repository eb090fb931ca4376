// Number formats the diagnose text renderers share (internal to src/report).
#pragma once
#include <fmt/format.h>

#include <string>

namespace wattlab::report::diagnose_text {

// Four significant digits: energies per unit and latencies ("0.07019", "47.41").
inline std::string g4(double x) { return fmt::format("{:.4g}", x); }
// One decimal: energies per response and powers ("27.8").
inline std::string f1(double x) { return fmt::format("{:.1f}", x); }

}  // namespace wattlab::report::diagnose_text
