// Plots of the diagnosis (report comes after diagnose, so the glue lives here): frontiers and
// decompositions as Plots, for `wattlab diagnose --plot` and the HTML report.
#pragma once
#include <string>
#include <vector>

#include "diagnose/decompose.h"
#include "diagnose/frontier.h"
#include "report/plot.h"

namespace wattlab::report {

Plot frontier_plot(const std::vector<diagnose::Frontier>& frontiers, const std::string& model,
                   const std::string& source_label);
Plot waterfall_plot(const diagnose::Decomposition& d, const std::string& source_label);

}  // namespace wattlab::report
