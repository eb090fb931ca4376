#include "diagnose/population.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace wattlab::diagnose {

Rows all_rows(const std::vector<Dataset>& datasets) {
  Rows out;
  for (const auto& d : datasets)
    for (const auto& r : d.rows) out.push_back(&r);
  return out;
}

bool Filter::passes(const ConfigRecord& r) const {
  if (task && r.task != *task) return false;
  if (model && r.model_id != *model) return false;
  if (gpu_model && r.gpu_model != *gpu_model) return false;
  if (num_gpus && r.num_gpus != *num_gpus) return false;
  if (deadline_ms && !(r.latency_ms() <= *deadline_ms)) return false;
  if (r.batch() < min_batch) return false;
  return true;
}

Rows filter(const Rows& rows, const Filter& f) {
  Rows out;
  for (const auto* r : rows)
    if (f.passes(*r)) out.push_back(r);
  return out;
}

bool same_group(const ConfigRecord& a, const ConfigRecord& b) {
  return a.model_id == b.model_id && a.task == b.task && a.gpu_model == b.gpu_model && a.num_gpus == b.num_gpus;
}

Rows curve_of(const ConfigRecord& r, const Rows& population) {
  std::map<int, const ConfigRecord*> by_batch;
  for (const auto* x : population) {
    if (!same_group(r, *x)) continue;
    auto [it, fresh] = by_batch.emplace(x->batch(), x);
    if (!fresh && (x == &r || (it->second != &r && x->energy_per_unit_j() < it->second->energy_per_unit_j())))
      it->second = x;
  }
  Rows out;
  for (const auto& [b, x] : by_batch) out.push_back(x);
  return out;
}

const ConfigRecord* min_energy(const Rows& rows) {
  const ConfigRecord* best = nullptr;
  for (const auto* r : rows)
    if (!best || r->energy_per_unit_j() < best->energy_per_unit_j()) best = r;
  return best;
}

const ConfigRecord* min_latency(const Rows& rows) {
  const ConfigRecord* best = nullptr;
  for (const auto* r : rows)
    if (!best || r->latency_ms() < best->latency_ms()) best = r;
  return best;
}

double median_of(std::vector<double> xs) {
  if (xs.empty()) throw std::invalid_argument("median_of: empty list");
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

}  // namespace wattlab::diagnose
