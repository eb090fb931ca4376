// Time-energy Pareto frontiers (docs/joules-framework.md §3.4, §7.3): latency against energy per
// unit, both minimized.
#pragma once
#include <optional>
#include <string>

#include "diagnose/population.h"

namespace wattlab::diagnose {

// The Pareto-optimal subset of `rows` (no other row has latency <= and energy <= with one strictly
// lower), ascending by latency (so descending by energy). The last point is the minimum energy.
Rows pareto_frontier(const Rows& rows);

// True when some row of `rows` dominates `r`; `by` receives the dominating row.
bool is_dominated(const ConfigRecord& r, const Rows& rows, const ConfigRecord** by = nullptr);

struct Frontier {
  std::string gpu_model;
  int num_gpus = 0;        // 0: every GPU count of the GPU type together
  Rows points;             // every configuration of the group, ascending by latency
  Rows frontier;           // its Pareto frontier
  const ConfigRecord* min_energy = nullptr;          // the frontier's right end
  std::optional<double> deadline_ms;
  const ConfigRecord* best_under_deadline = nullptr; // lowest energy with latency <= deadline
  std::size_t feasible = 0;                          // points with latency <= deadline
};

// One frontier per (GPU, count) of `model` in `task` (task may be empty when only one task has
// the model), plus, per GPU type, one over all counts (num_gpus = 0).
std::vector<Frontier> frontiers_for_model(const Rows& rows, const std::string& model_id,
                                          std::optional<double> deadline_ms = std::nullopt);

}  // namespace wattlab::diagnose
