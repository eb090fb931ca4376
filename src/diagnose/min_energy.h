// Minimum-energy and deadline-constrained selection (docs/joules-framework.md §1 "SLO-based
// selection", §7.1-7.2).
#pragma once
#include "diagnose/population.h"

namespace wattlab::diagnose {

// The minimum-energy configuration per (model, task, GPU, GPU count), over the batch sizes
// that pass `f`. Sorted by task, model, GPU, count.
Rows min_energy_per_group(const Rows& rows, const Filter& f = {});

// The minimum-energy configuration per (task, model) over every GPU count and batch that passes
// `f`. With f.deadline_ms this is the paper's "deadline D" selection; with f.gpu_model the paper's
// per-GPU-type minimum. Sorted by task, model.
Rows min_energy_per_model(const Rows& rows, const Filter& f = {});

// The reverse: per (task, model), the lowest-latency configuration whose energy per response is
// within `energy_budget_j`.
Rows best_latency_within_budget(const Rows& rows, double energy_budget_j, const Filter& f = {});

}  // namespace wattlab::diagnose
