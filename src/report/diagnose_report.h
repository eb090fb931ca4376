// The outputs of `wattlab diagnose` (docs/diagnose.md): one plain-data report per subcommand,
// built by the CLI from the diagnose library's results, and one renderer per format for each:
// render_text (the terminal: tables, a provenance line at the end) and render_json (rows keep the
// leaderboard's field names and units; each row carries `task` and `source: {file, row}`).
// Renderers only read; they return the whole output, ending in a newline.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "diagnose/decompose.h"
#include "diagnose/frontier.h"
#include "diagnose/graph.h"
#include "diagnose/pairs.h"
#include "diagnose/population.h"
#include "diagnose/records.h"
#include "diagnose/rules.h"
#include "diagnose/summary.h"

namespace wattlab::report {

// What every diagnose report names: the datasets it read (their labels, row counts and
// invariant violations). The datasets outlive the report.
using DiagnoseSources = std::span<const diagnose::Dataset>;

// "ML.ENERGY leaderboard v3, gpqa.json; ML.ENERGY leaderboard v3, lm-arena-chat.json".
std::string source_label(DiagnoseSources sources);
// The text outputs' last line: "source: <label> (<rows> rows, <n> invariant violations)".
std::string provenance_line(DiagnoseSources sources);

// `diagnose summary`: per task, the paper's headline figures on one GPU type.
struct SummaryReport {
  DiagnoseSources sources;
  std::string gpu_model;
  std::vector<diagnose::TaskSummary> tasks;  // one per dataset, in load order
};
// The LLM task with the lowest mean energy per response that has minima, which the others are
// compared with (problem solving against chat in the paper); nullptr when there is none.
const diagnose::TaskSummary* cheapest_llm_task(const SummaryReport& r);

// `diagnose min-energy`: the minimum-energy row per model under a filter.
struct MinEnergyReport {
  DiagnoseSources sources;
  diagnose::Filter filter;
  diagnose::Rows rows;
  std::optional<double> power_budget_w;  // adds requests/s and whole replicas under this GPU power
};

// `diagnose explain`: one configuration and the findings of the rules.
struct ExplainReport {
  DiagnoseSources sources;
  std::string selector;                       // as the user gave it
  const diagnose::ConfigRecord* record = nullptr;
  std::vector<diagnose::Finding> findings;
};

// `diagnose compare A B`: the decomposition of B / A and both configurations' findings.
struct CompareReport {
  DiagnoseSources sources;
  diagnose::Decomposition decomposition;      // its a and b are the two configurations
  std::vector<diagnose::Finding> findings_a, findings_b;
  std::string plot_path;                      // the waterfall plot asked for (JSON names it); empty: none
};

// `diagnose frontier`: a model's time-energy frontiers per (GPU, count).
struct FrontierReport {
  DiagnoseSources sources;
  std::string model_id;
  std::optional<double> deadline_ms;
  std::vector<diagnose::Frontier> frontiers;
  std::string plot_path;                      // the frontier plot asked for (JSON names it); empty: none
};

// `diagnose pairs`: paired comparisons of one kind (gpu, fp8, gpus, moe).
struct PairsReport {
  DiagnoseSources sources;
  std::string kind;
  std::vector<diagnose::PairStats> comparisons;
};

// `diagnose graph`: the causal graph and each rule's path through it.
struct GraphReport {
  const diagnose::CausalGraph& graph = diagnose::CausalGraph::paper();
  const std::vector<diagnose::Rule>& rules = diagnose::rules();
};

std::string render_text(const SummaryReport& r);
std::string render_text(const MinEnergyReport& r);
std::string render_text(const ExplainReport& r);
std::string render_text(const CompareReport& r);
std::string render_text(const FrontierReport& r);
std::string render_text(const PairsReport& r);
std::string render_text(const GraphReport& r);

std::string render_json(const SummaryReport& r);
std::string render_json(const MinEnergyReport& r);
std::string render_json(const ExplainReport& r);
std::string render_json(const CompareReport& r);
std::string render_json(const FrontierReport& r);
std::string render_json(const PairsReport& r);
std::string render_json(const GraphReport& r);

}  // namespace wattlab::report
