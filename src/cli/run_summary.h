// The run summary's renderer lives in src/report (wattlab/report/run_text.h); this name stays for
// the CLI files that print runs through it.
#pragma once
#include "wattlab/report/run_text.h"

namespace wattlab::cli {

using report::print_run_summary;

}  // namespace wattlab::cli
