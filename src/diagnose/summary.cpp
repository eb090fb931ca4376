#include "diagnose/summary.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "diagnose/min_energy.h"

namespace wattlab::diagnose {

TaskSummary summarize_task(const Dataset& d, const std::string& gpu_model) {
  TaskSummary s;
  s.task = d.task;
  s.task_display_name = d.task_display_name;
  s.source_label = d.source_label;
  s.rows = d.rows.size();
  s.violations = d.violations.size();
  s.gpu_model = gpu_model;
  Rows rows;
  std::set<std::string> models;
  for (const auto& r : d.rows) {
    rows.push_back(&r);
    models.insert(r.model_id);
  }
  s.models = models.size();
  if (!rows.empty()) s.workload = rows.front()->workload;

  Filter f;
  f.gpu_model = gpu_model;
  s.minima = min_energy_per_model(rows, f);
  if (!s.minima.empty()) {
    double len = 0, e = 0;
    for (const auto* r : s.minima) {
      if (r->llm) len += r->llm->avg_output_len;
      e += r->energy_per_response_j();
      if (r->num_gpus == 1) ++s.minima_on_one_gpu;
      if (!s.lowest || r->energy_per_response_j() < s.lowest->energy_per_response_j()) s.lowest = r;
      if (!s.highest || r->energy_per_response_j() > s.highest->energy_per_response_j()) s.highest = r;
    }
    const double n = static_cast<double>(s.minima.size());
    s.mean_output_len_tokens = len / n;
    s.mean_energy_per_response_j = e / n;
  }

  std::vector<double> effects;
  std::set<std::tuple<std::string, std::string, int>> seen;
  for (const auto* r : filter(rows, f)) {
    if (!seen.insert({r->model_id, r->gpu_model, r->num_gpus}).second) continue;
    const Rows c = curve_of(*r, rows);
    if (c.size() < 2) continue;
    effects.push_back(c.front()->energy_per_unit_j() / min_energy(c)->energy_per_unit_j());
  }
  s.batch_groups = effects.size();
  if (!effects.empty()) {
    s.batch_effect_median = median_of(effects);
    s.batch_effect_min = *std::min_element(effects.begin(), effects.end());
    s.batch_effect_max = *std::max_element(effects.begin(), effects.end());
  }
  return s;
}

}  // namespace wattlab::diagnose
