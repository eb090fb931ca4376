#include "diagnose/frontier.h"

#include <algorithm>
#include <map>
#include <set>

namespace wattlab::diagnose {

namespace {
bool dominates(const ConfigRecord& x, const ConfigRecord& r) {
  const double lx = x.latency_ms(), lr = r.latency_ms();
  const double ex = x.energy_per_unit_j(), er = r.energy_per_unit_j();
  return lx <= lr && ex <= er && (lx < lr || ex < er);
}
void sort_by_latency(Rows& rows) {
  std::sort(rows.begin(), rows.end(), [](const ConfigRecord* a, const ConfigRecord* b) {
    if (a->latency_ms() != b->latency_ms()) return a->latency_ms() < b->latency_ms();
    return a->energy_per_unit_j() < b->energy_per_unit_j();
  });
}
}  // namespace

Rows pareto_frontier(const Rows& rows) {
  Rows sorted = rows;
  sort_by_latency(sorted);
  Rows out;
  for (const auto* r : sorted) {
    if (out.empty() || r->energy_per_unit_j() < out.back()->energy_per_unit_j()) {
      if (!out.empty() && out.back()->latency_ms() == r->latency_ms()) out.pop_back();
      out.push_back(r);
    }
  }
  return out;
}

bool is_dominated(const ConfigRecord& r, const Rows& rows, const ConfigRecord** by) {
  const ConfigRecord* best = nullptr;
  for (const auto* x : rows) {
    if (x == &r || !dominates(*x, r)) continue;
    if (!best || x->energy_per_unit_j() < best->energy_per_unit_j()) best = x;
  }
  if (by) *by = best;
  return best != nullptr;
}

std::vector<Frontier> frontiers_for_model(const Rows& rows, const std::string& model_id,
                                          std::optional<double> deadline_ms) {
  std::map<std::pair<std::string, int>, Rows> groups;
  std::set<std::string> gpus;
  for (const auto* r : rows) {
    if (r->model_id != model_id) continue;
    groups[{r->gpu_model, r->num_gpus}].push_back(r);
    groups[{r->gpu_model, 0}].push_back(r);
    gpus.insert(r->gpu_model);
  }
  std::vector<Frontier> out;
  for (auto& [key, pts] : groups) {
    Frontier f;
    f.gpu_model = key.first;
    f.num_gpus = key.second;
    sort_by_latency(pts);
    f.points = pts;
    f.frontier = pareto_frontier(pts);
    f.min_energy = f.frontier.empty() ? nullptr : f.frontier.back();
    f.deadline_ms = deadline_ms;
    if (deadline_ms) {
      Filter flt;
      flt.deadline_ms = deadline_ms;
      const Rows ok = filter(pts, flt);
      f.feasible = ok.size();
      f.best_under_deadline = min_energy(ok);
    }
    out.push_back(std::move(f));
  }
  // Per GPU type: the per-count frontiers first, then the all-counts one.
  std::stable_sort(out.begin(), out.end(), [](const Frontier& a, const Frontier& b) {
    if (a.gpu_model != b.gpu_model) return a.gpu_model < b.gpu_model;
    const int ka = a.num_gpus == 0 ? 1 << 20 : a.num_gpus, kb = b.num_gpus == 0 ? 1 << 20 : b.num_gpus;
    return ka < kb;
  });
  return out;
}

}  // namespace wattlab::diagnose
