// The GEMM study's plots as files (`wattlab report --gemm --plots-dir DIR`, docs/report-gemm.md):
// every analyzed sweep's plots normalized to the reference, one SVG per experiment, shape and
// quantity.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "wattlab/core/error.h"
#include "report/gemm_analysis.h"
#include "report/gemm_plots.h"

namespace wattlab::report {

// "gemm_<sweep>_<experiment>_<shape>_<energy|power>.svg" (controls: shape "control"; no sweep id:
// "nosweep"), every character but letters, digits, '-' and '.' replaced by '_'.
std::string gemm_plot_file_name(const std::string& sweep, const GemmPlotKey& key, GemmQty q);

// Renders each plot that has data into `dir` (which exists); returns how many were written.
// Errors: render()'s (gnuplot missing, with the package to install, or failing, with its stderr).
Result<std::size_t> write_gemm_plot_files(const std::vector<GemmSweepAnalysis>& analyses, const std::string& dir);

}  // namespace wattlab::report
