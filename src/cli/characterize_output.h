// wattlab sensors --characterize: the table, the JSON document and the run stored in the database.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wattlab/sensors/characterize.h"

namespace wattlab::cli {

// Schema "wattlab.characterize/1" (docs/sensors-characterize.md).
nlohmann::json characterization_to_json(const std::vector<DomainCharacter>& result, bool simulated,
                                        const std::vector<std::string>& notes);
void print_characterization(std::ostream& out, const std::vector<DomainCharacter>& result, bool simulated);

}  // namespace wattlab::cli
