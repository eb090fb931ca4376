#include "diagnose/min_energy.h"

#include <map>
#include <tuple>

namespace wattlab::diagnose {

Rows min_energy_per_group(const Rows& rows, const Filter& f) {
  std::map<std::tuple<std::string, std::string, std::string, int>, const ConfigRecord*> best;
  for (const auto* r : filter(rows, f)) {
    auto& b = best[{r->task, r->model_id, r->gpu_model, r->num_gpus}];
    if (!b || r->energy_per_unit_j() < b->energy_per_unit_j()) b = r;
  }
  Rows out;
  for (const auto& [k, r] : best) out.push_back(r);
  return out;
}

Rows min_energy_per_model(const Rows& rows, const Filter& f) {
  std::map<std::pair<std::string, std::string>, const ConfigRecord*> best;
  for (const auto* r : filter(rows, f)) {
    auto& b = best[{r->task, r->model_id}];
    if (!b || r->energy_per_unit_j() < b->energy_per_unit_j()) b = r;
  }
  Rows out;
  for (const auto& [k, r] : best) out.push_back(r);
  return out;
}

Rows best_latency_within_budget(const Rows& rows, double energy_budget_j, const Filter& f) {
  std::map<std::pair<std::string, std::string>, const ConfigRecord*> best;
  for (const auto* r : filter(rows, f)) {
    if (!(r->energy_per_response_j() <= energy_budget_j)) continue;
    auto& b = best[{r->task, r->model_id}];
    if (!b || r->latency_ms() < b->latency_ms()) b = r;
  }
  Rows out;
  for (const auto& [k, r] : best) out.push_back(r);
  return out;
}

}  // namespace wattlab::diagnose
