// A stored run in the format a command's --format picks (report::Format): text (the summary,
// run_text.h) or json (one wattlab.run/1 document and a newline, run_json.h). The HTML page reads
// the store for its plots: html_report.h.
#pragma once
#include <iosfwd>

#include "report/format.h"
#include "wattlab/store/run_record.h"

namespace wattlab::report {

// Throws WattlabError (invalid_argument) for a format a run has no renderer for here (md, html).
void print_run(std::ostream& out, const RunRecord& run, Format format);

}  // namespace wattlab::report
