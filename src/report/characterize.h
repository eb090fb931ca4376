// wattlab sensors --characterize: the table for the terminal and the JSON document (which is also
// stored as the run's characterize.json tag).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sensors/characterize.h"

namespace wattlab::report {

// Schema "wattlab.characterize/1" (docs/sensors-characterize.md).
nlohmann::json characterization_to_json(const std::vector<DomainCharacter>& result, bool simulated,
                                        const std::vector<std::string>& notes);
void print_characterization(std::ostream& out, const std::vector<DomainCharacter>& result, bool simulated);

}  // namespace wattlab::report
