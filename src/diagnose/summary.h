// Per-task headline figures of "Where Do the Joules Go?" (docs/joules-framework.md §5).
#pragma once
#include <string>
#include <vector>

#include "diagnose/paper_defaults.h"
#include "diagnose/population.h"

namespace wattlab::diagnose {

struct TaskSummary {
  std::string task, task_display_name, source_label;
  Workload workload = Workload::llm;
  std::size_t rows = 0, models = 0, violations = 0;
  std::string gpu_model;                 // the GPU type the minimum-energy figures use
  Rows minima;                           // minimum energy per unit per model on gpu_model
  double mean_output_len_tokens = 0;     // LLM: mean avg_output_len over minima
  double mean_energy_per_response_j = 0; // mean energy_per_request / per image over minima
  const ConfigRecord* lowest = nullptr;  // minima's lowest / highest energy per response
  const ConfigRecord* highest = nullptr;
  // Batch size effect: per (model, GPU, count) group with >= 2 batches, E at the smallest batch
  // over the group's minimum. Median and range over groups.
  std::size_t batch_groups = 0;
  double batch_effect_median = 0, batch_effect_min = 0, batch_effect_max = 0;
  std::size_t minima_on_one_gpu = 0;
};

TaskSummary summarize_task(const Dataset& d, const std::string& gpu_model = std::string(kPaperGpuModel));

}  // namespace wattlab::diagnose
