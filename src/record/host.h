// This machine's name, as a run records it and `wattlab serve` labels its metrics.
#pragma once
#include <string>

namespace wattlab {

// gethostname(); empty when the system does not give one.
std::string host_name();

}  // namespace wattlab
