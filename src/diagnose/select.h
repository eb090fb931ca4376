// Configuration selectors: "model=meta-llama/Llama-3.1-8B-Instruct,gpu=H100,gpus=1,batch=64".
//
// Terms are key=value separated by commas. Keys:
//   model      model_id or nickname (case-insensitive), or a substring of either when only one
//              model matches it
//   task       the task file's `task` (gpqa, lm-arena-chat, text-to-image, ...)
//   gpu        gpu_model (H100, B200)        gpus   num_gpus
//   batch      max_num_seqs (LLM) or batch_size (diffusion)
//   precision  weight_precision (bfloat16, fp8, mxfp4; bf16 is accepted for bfloat16)
//   tp, ep     tensor_parallel, expert_parallel        steps  inference_steps
//   ulysses, ring  diffusion parallel degrees          row    the row index in its file
//   pick       min-energy | min-latency: choose among several matches instead of failing
// A selector that matches no row, or several rows without `pick`, throws UsageError listing the
// closest rows (the fewest mismatching terms) with the selector that picks each one.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diagnose/population.h"

namespace wattlab::diagnose {

struct Selector {
  std::string text;
  std::vector<std::pair<std::string, std::string>> terms;
};

Selector parse_selector(std::string_view text);  // throws UsageError on syntax or unknown keys

// The rows matching every term (model names resolved as described above).
Rows match(const Selector& s, const Rows& rows);

// Exactly one row, or UsageError with close matches.
const ConfigRecord& resolve(const Selector& s, const Rows& rows);

// A selector that picks exactly `r` among `rows` (used in messages and docs).
std::string selector_for(const ConfigRecord& r);

}  // namespace wattlab::diagnose
