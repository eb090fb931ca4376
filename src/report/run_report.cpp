#include "report/run_report.h"

#include <ostream>
#include <string>

#include "wattlab/core/error.h"
#include "report/run_json.h"
#include "report/run_text.h"

namespace wattlab::report {

void print_run(std::ostream& out, const RunRecord& run, Format format) {
  switch (format) {
    case Format::text:
      print_run_summary(out, run);
      return;
    case Format::json:
      out << run_to_json_string(run) << "\n";
      return;
    case Format::markdown:
    case Format::html:
      break;
  }
  throw WattlabError(Error{ErrorKind::invalid_argument,
                           "a run prints as text or json here, not " + std::string(format_name(format)),
                           "the HTML page: report::html_report", 0});
}

}  // namespace wattlab::report
