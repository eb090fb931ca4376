// The HTML report of one stored run (`wattlab report RUN --html FILE`, docs/report-html.md): one
// self-contained page (inline CSS, plots as inline SVG rendered by gnuplot, no script, nothing
// fetched) with the run's header, power and telemetry timelines with its windows shaded, a table of
// the windows, GEMM sweep plots and time-energy frontiers where the run has such windows.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "wattlab/store/store.h"

namespace wattlab::report {

struct HtmlReportOptions {
  std::size_t max_points_per_series = 3000;  // longer timelines are averaged in time buckets
  std::size_t max_window_labels = 12;        // more windows: shaded without names (the table names them)
};

// Errors: not_found for a run the store lacks, unavailable when gnuplot is missing, io when it
// fails or the store cannot be read.
Result<std::string> html_report(const Store& store, RunId run, const HtmlReportOptions& options = {});

// The GEMM study page (`wattlab report --gemm ... --html FILE`, docs/report-gemm.md): per sweep of
// the gemm_point windows of `runs`, the plots normalized to the reference and the tables. `what`
// names the selection ("all runs", "run 3"). Errors: not_found without gemm_point windows,
// unavailable when gnuplot is missing.
Result<std::string> gemm_html_report(const std::vector<RunRecord>& runs, const std::string& what);

}  // namespace wattlab::report
