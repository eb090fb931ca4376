// What the diagnose renderers share: the sources' label and provenance line, and the summary's
// baseline task.
#include <fmt/format.h>

#include "report/diagnose_report.h"

namespace wattlab::report {

std::string source_label(DiagnoseSources sources) {
  std::vector<std::string> labels;
  for (const auto& d : sources) labels.push_back(d.source_label);
  return fmt::format("{}", fmt::join(labels, "; "));
}

std::string provenance_line(DiagnoseSources sources) {
  std::size_t rows = 0, violations = 0;
  for (const auto& d : sources) {
    rows += d.rows.size();
    violations += d.violations.size();
  }
  return fmt::format("source: {} ({} rows, {} invariant violations)", source_label(sources), rows, violations);
}

const diagnose::TaskSummary* cheapest_llm_task(const SummaryReport& r) {
  const diagnose::TaskSummary* base = nullptr;
  for (const auto& s : r.tasks)
    if (s.workload == diagnose::Workload::llm && !s.minima.empty() &&
        (!base || s.mean_energy_per_response_j < base->mean_energy_per_response_j))
      base = &s;
  return base;
}

}  // namespace wattlab::report
