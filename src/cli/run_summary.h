// The terminal summary of a run: what `wattlab run` prints at the end and `wattlab report` again.
#pragma once
#include <iosfwd>

#include "wattlab/store/run_record.h"

namespace wattlab::cli {

void print_run_summary(std::ostream& out, const RunRecord& run);

}  // namespace wattlab::cli
