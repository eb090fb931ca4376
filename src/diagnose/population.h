// A population of records from one or more Datasets, and the filters and groupings the analyses
// share: groups are (model, task, GPU, GPU count) as in the paper; curves are a group over batch.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "diagnose/records.h"

namespace wattlab::diagnose {

using Rows = std::vector<const ConfigRecord*>;

Rows all_rows(const std::vector<Dataset>& datasets);

struct Filter {
  std::optional<std::string> task;
  std::optional<std::string> model;      // model_id
  std::optional<std::string> gpu_model;  // "B200"
  std::optional<int> num_gpus;
  std::optional<double> deadline_ms;     // latency_ms() <= deadline (median ITL or batch latency)
  int min_batch = 0;                     // drop batch < min_batch (the paper often uses 16)
  bool passes(const ConfigRecord& r) const;
};
Rows filter(const Rows& rows, const Filter& f);

// Same (model, task, GPU, GPU count).
bool same_group(const ConfigRecord& a, const ConfigRecord& b);
// The group of `r` over batch, ascending; where several rows share a batch (diffusion parallel
// layouts) the lowest-energy one is kept.
Rows curve_of(const ConfigRecord& r, const Rows& population);

// The row of lowest energy per unit (token / image / video) in `rows`; nullptr when empty.
const ConfigRecord* min_energy(const Rows& rows);
// The row of lowest latency; nullptr when empty.
const ConfigRecord* min_latency(const Rows& rows);

// Median of a non-empty list (the mean of the middle two for an even count).
double median_of(std::vector<double> xs);

}  // namespace wattlab::diagnose
