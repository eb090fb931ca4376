// `wattlab diagnose`: the options every subcommand parses into (cmd_diagnose.cpp), and the
// subcommands that load the data, call the diagnose library and render its results
// (cmd_diagnose_run.cpp; renderers in src/report, report/diagnose_report.h).
#pragma once
#include <string>
#include <vector>

#include "cli.h"
#include "format_option.h"
#include "diagnose/paper_defaults.h"

namespace wattlab::cli {

struct DiagnoseOptions {
  std::vector<std::string> data;  // --data: leaderboard JSON, CSV or store files
  FormatChoice format;            // text (default) or json
  std::string gpu;                // empty: every GPU type (summary and pairs --kind moe: the paper's)
  int gpus = 0;                   // 0: every GPU count
  double deadline_ms = 0;         // 0: no deadline
  int min_batch = 0;
  std::string task;
  std::string config;             // explain: the selector
  std::string a, b;               // compare: the selectors
  std::string model;              // frontier
  std::string plot;               // compare, frontier: the SVG to write; empty: none
  double power_budget_w = 0;      // min-energy; 0: none
  std::string kind = "gpu";       // pairs
  std::string gpu_a{diagnose::kPaperBaselineGpuModel}, gpu_b{diagnose::kPaperAlternativeGpuModel};
  std::vector<double> deadlines;  // pairs --kind gpu; empty: the paper's
  bool json() const { return format.format == report::Format::json; }
};

int diagnose_summary(const DiagnoseOptions& o, Io& io);
int diagnose_min_energy(const DiagnoseOptions& o, Io& io);
int diagnose_explain(const DiagnoseOptions& o, Io& io);
int diagnose_compare(const DiagnoseOptions& o, Io& io);
int diagnose_frontier(const DiagnoseOptions& o, Io& io);
int diagnose_pairs(const DiagnoseOptions& o, Io& io);
int diagnose_graph(const DiagnoseOptions& o, Io& io);

}  // namespace wattlab::cli
