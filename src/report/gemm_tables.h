// The GEMM study's tables (docs/report-gemm.md) from the analysis: references and their CV, each
// experiment against the reference, effects next to the original study's, controls. Built once as
// plain cells, rendered as terminal text, Markdown or HTML. Titles say SIMULATED for simulated
// sweeps.
#pragma once
#include <string>
#include <vector>

#include "report/gemm_analysis.h"

namespace wattlab::report {

struct GemmTable {
  std::string title;
  std::vector<std::string> notes;  // lines under the title
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;
};

// The tables of one sweep, in reading order.
std::vector<GemmTable> gemm_tables(const GemmSweepAnalysis& sweep, const GemmAnalysisOptions& options = {});

// One line naming the sweep: id, runs, points, SIMULATED.
std::string gemm_sweep_heading(const GemmSweepAnalysis& sweep);

std::string render_text(const std::vector<GemmTable>& tables);
std::string render_markdown(const std::vector<GemmTable>& tables);
std::string render_html(const std::vector<GemmTable>& tables);  // cells HTML-escaped

// "1.234 ± 0.012", "1.234 ± n/a" (one value), "n/a" (none); `scale` multiplies first (J -> mJ).
// Without `spec` (a fmt format for one number): 4 significant digits on the mean, the SD to the
// same decimals.
std::string mean_sd(const Stat& s, const char* spec = nullptr, double scale = 1);

}  // namespace wattlab::report
