#include "infer_workload.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <map>

#include "wattlab/core/error.h"
#include "diagnose/readers.h"

namespace wattlab::cli {
namespace {

// The leaderboard's --max-output-tokens per task (ml-energy/benchmark, configs/vllm/<task>/benchmark.yaml).
int64_t task_output_cap(const std::string& task) {
  static const std::map<std::string, int64_t> caps{{"lm-arena-chat", 4096}, {"gpqa", 32768}};
  const auto it = caps.find(task);
  return it == caps.end() ? 4096 : it->second;
}

}  // namespace

void add_workload_options(CLI::App& sub, WorkloadArgs& w) {
  sub.add_option("--workload", w.leaderboard,
                 "synthetic requests with the output lengths of this ML.ENERGY leaderboard task file (mean avg_output_len)");
  sub.add_option("--workload-model", w.model, "with --workload: the mean over this model's rows only");
  sub.add_option("--output-mean", w.output_mean, "synthetic requests: mean output tokens (instead of the file's)")
      ->check(CLI::Range(1.0, 1e7));
  sub.add_option("--input-mean", w.input_mean, "synthetic requests: mean prompt tokens (the files give none)")
      ->check(CLI::Range(1.0, 1e7))->capture_default_str();
  sub.add_option("--length-dist", w.distribution, "length distribution around the means: geometric, lognormal, fixed")
      ->capture_default_str();
  sub.add_option("--length-sigma", w.sigma, "lognormal: the log's standard deviation")->capture_default_str();
  sub.add_option("--max-output-tokens", w.max_output, "output length cap (default: the task's, 4096; gpqa 32768)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  sub.add_option("--max-input-tokens", w.max_input, "prompt length cap")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))->capture_default_str();
  sub.add_option("--api", w.api, "synthetic requests: chat or completions")->capture_default_str();
}

infer::WorkloadSpec build_workload(const WorkloadArgs& w, std::string& task) {
  infer::WorkloadSpec s;
  if (w.api != "chat" && w.api != "completions")
    throw UsageError(fmt::format("--api '{}': expected chat or completions", w.api));
  s.api = w.api == "chat" ? infer::Api::chat : infer::Api::completions;
  const auto kind = infer::parse_length_kind(w.distribution);
  double out_mean = w.output_mean.value_or(0);
  if (!w.leaderboard.empty()) {
    const auto d = diagnose::read_leaderboard_json(w.leaderboard);
    task = d.task;
    double sum = 0;
    int rows = 0;
    for (const auto& r : d.rows)
      if (r.llm && (w.model.empty() || r.model_id == w.model)) sum += r.llm->avg_output_len, ++rows;
    if (rows == 0)
      throw UsageError(fmt::format("--workload {}: no LLM rows{}", w.leaderboard,
                                   w.model.empty() ? std::string() : " of model '" + w.model + "'"));
    if (!w.output_mean) {
      out_mean = sum / rows;
      s.source = fmt::format("output mean {:.1f} tokens = mean avg_output_len of {} rows of {}{}; input mean {} tokens "
                             "assumed (the leaderboard's files give no input lengths)",
                             out_mean, rows, w.leaderboard, w.model.empty() ? "" : " for " + w.model, w.input_mean);
    }
  } else if (!w.model.empty()) {
    throw UsageError("--workload-model needs --workload (a leaderboard task file)");
  }
  if (s.source.empty())
    s.source = fmt::format("output mean {} tokens given (--output-mean); input mean {} tokens", out_mean, w.input_mean);
  s.output = {kind, out_mean, w.sigma, w.max_output.value_or(task_output_cap(task))};
  s.input = {kind, w.input_mean, w.sigma, w.max_input};
  infer::validate(s.output, "output lengths (--output-mean / --workload, --max-output-tokens)");
  infer::validate(s.input, "input lengths (--input-mean, --max-input-tokens)");
  return s;
}

}  // namespace wattlab::cli
