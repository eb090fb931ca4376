// serve-bench's synthetic workload from the command line: output lengths around the mean of an
// ML.ENERGY leaderboard task file (or a given mean), input lengths around an assumed mean
// (docs/serve-bench.md, "Synthetic workload").
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "infer/workload.h"

namespace CLI {
class App;
}

namespace wattlab::cli {

struct WorkloadArgs {
  std::string leaderboard;             // --workload: a leaderboard task file (lm-arena-chat.json, gpqa.json)
  std::string model;                   // --workload-model: only that model's rows
  std::optional<double> output_mean;   // --output-mean: instead of the file's mean
  double input_mean = 256;             // --input-mean: the files give no input lengths
  std::string distribution = "geometric";
  double sigma = 1.0;
  std::optional<int64_t> max_output;   // --max-output-tokens: default the task's (lm-arena-chat 4096, gpqa 32768)
  int64_t max_input = 8192;
  std::string api = "chat";

  bool synthetic() const { return !leaderboard.empty() || output_mean.has_value(); }
};

void add_workload_options(CLI::App& sub, WorkloadArgs& w);

// The spec, and the task it stands for (the file's task, or empty). UsageError for a file that
// does not read, a model with no rows there, or lengths that do not fit their caps.
infer::WorkloadSpec build_workload(const WorkloadArgs& w, std::string& task);

}  // namespace wattlab::cli
