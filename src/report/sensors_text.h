// What `wattlab sensors` prints, and the line every measuring command starts with: which backends
// loaded (and why the others did not), then each domain and its sensor model.
#pragma once
#include <iosfwd>
#include <string>

#include "wattlab/sensors/registry.h"

namespace wattlab::report {

// "SIMULATED GPU ..." when simulated, then one "  loaded <backend>: ..." or "  not loaded ..." line
// per backend, and a hint when nothing can be measured. Every line ends with a newline.
std::string describe_backends(const OpenedSensors& opened);

// describe_backends(), then every domain: vendor, name, scope, gain tolerance, and its readings'
// update period, averaging window and read cost; then the backend's properties.
void print_sensor_list(std::ostream& out, const OpenedSensors& opened);

}  // namespace wattlab::report
