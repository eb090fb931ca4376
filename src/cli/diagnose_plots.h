// Glue between the diagnosis and the report layer (diagnose must not depend on report):
// builds report::Plots from frontiers and decompositions.
#pragma once
#include <string>
#include <vector>

#include "wattlab/diagnose/decompose.h"
#include "wattlab/diagnose/frontier.h"
#include "wattlab/report/plot.h"

namespace wattlab::cli {

report::Plot frontier_plot(const std::vector<diagnose::Frontier>& frontiers, const std::string& model,
                           const std::string& source_label);
report::Plot waterfall_plot(const diagnose::Decomposition& d, const std::string& source_label);

}  // namespace wattlab::cli
