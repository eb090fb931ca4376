// What `wattlab gemm` prints: one point's result, a plan (summary and table), the results of a
// sweep, and the accuracy verdict of a point. Every number says what it is and its unit;
// SIMULATED results say so in their title.
#pragma once
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "wattlab/lab/engine.h"
#include "wattlab/lab/plan.h"
#include "wattlab/meter/window.h"

namespace wattlab::cli {

// A value with an SI prefix chosen from its size: si(0.00123, "J") == "1.230 mJ".
std::string si(double v, const char* unit);
// "1.230 mJ ± 0.012 mJ": both in the value's prefix.
std::string si_pm(double v, double u, const char* unit);

enum class Accuracy { pass, fail, unchecked };
struct AccuracyVerdict {
  Accuracy verdict = Accuracy::unchecked;
  std::string text;  // "1.2e-03 <= bound 1e-02: PASS", "not checked: ...", ...
};
// A point's rel_error and non-finite fraction (window counts) against the engine's bound.
AccuracyVerdict accuracy(const WindowResult& w, lab::Engine engine, bool simulated);

// One point in full (wattlab gemm run).
void print_point_result(std::ostream& out, const WindowResult& w, lab::Engine engine, bool simulated);

struct PlanFacts {
  const lab::SweepPlan* plan = nullptr;
  const lab::PlanRequest* request = nullptr;
  std::size_t done = 0;  // already in the store
  double estimate_s = 0; // for the points left
  lab::TimeModel model;
  std::string db;
  bool fidelity = false;
};
void print_plan_summary(std::ostream& out, const PlanFacts& f);
// index, engine, shape, seed, experiment, param=value, recipes; "done" for stored points.
void print_plan_table(std::ostream& out, const lab::SweepPlan& plan, const std::set<int>& done);
// The points measured in this invocation, one line each.
void print_results_table(std::ostream& out, const std::vector<WindowResult>& windows, bool simulated);

}  // namespace wattlab::cli
