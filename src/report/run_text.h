// The terminal summary of a stored run: what `wattlab run` prints at the end and `wattlab report`
// again. (Its JSON form is run_to_json, wattlab/store/run_json.h.)
#pragma once
#include <iosfwd>

#include "wattlab/store/run_record.h"

namespace wattlab::report {

void print_run_summary(std::ostream& out, const RunRecord& run);

}  // namespace wattlab::report
