// Paired comparisons (docs/joules-framework.md §7.4): GPU A against B at matched deadlines,
// FP8 against BF16 at the same batch, more GPUs against fewer at the same batch, MoE against dense.
#pragma once
#include <string>
#include <vector>

#include "diagnose/population.h"

namespace wattlab::diagnose {

struct Pair {
  const ConfigRecord* a = nullptr;  // the baseline
  const ConfigRecord* b = nullptr;  // the alternative
  std::string context;              // "deadline 100 ms", "batch 64", ...
  double energy_change() const;     // E_b / E_a - 1 (energy per unit)
  double latency_change() const;    // lat_b / lat_a - 1
};

struct PairStats {
  std::string label;
  std::size_t n = 0;
  std::size_t b_wins_energy = 0;    // pairs with E_b < E_a
  std::size_t b_wins_latency = 0;   // pairs with lat_b < lat_a
  double median_energy_change = 0;  // of E_b / E_a - 1
  double min_energy_change = 0;
  double max_energy_change = 0;
  double median_latency_change = 0;
  std::vector<Pair> pairs;
};
PairStats stats_of(std::string label, std::vector<Pair> pairs);

// Per (task, model, deadline): the lowest energy on gpu_a under the deadline against the lowest
// on gpu_b, each over all GPU counts and batches. Models missing on either side are skipped.
PairStats compare_gpus(const Rows& rows, const std::string& gpu_a, const std::string& gpu_b,
                       double deadline_ms, int min_batch = 0);

// FP8 (b) against its BF16 sibling (a; the model id without "-FP8") at matched
// (task, GPU, count, batch), over batches [batch_lo, batch_hi].
PairStats compare_fp8_bf16(const Rows& rows, int batch_lo, int batch_hi);

// More GPUs (b) against fewer (a) at matched (task, model, GPU, batch); every pair of counts.
PairStats compare_gpu_counts(const Rows& rows);

// Per MoE model (b), its dense counterpart (a): the dense model of the same organisation whose
// total parameter count is closest, each at its minimum energy per token on `gpu_model`.
PairStats compare_moe_dense(const Rows& rows, const std::string& gpu_model);

// A model (b) against another (a), each at its minimum energy on `gpu_model` per task.
PairStats compare_models(const Rows& rows, const std::string& model_a, const std::string& model_b,
                         const std::string& gpu_model);

// The BF16 sibling's model id for an FP8 model id ("...-FP8" removed), empty when not FP8.
std::string bf16_sibling_id(const std::string& model_id);

}  // namespace wattlab::diagnose
