// What `wattlab gemm` prints: one point's result, a plan (summary and table), the results of a
// sweep and how it ended, and the accuracy verdict of a point. Every number says what it is and
// its unit; SIMULATED results say so in their title.
#pragma once
#include <iosfwd>
#include <set>
#include <string>
#include <vector>

#include "lab/accuracy_check.h"
#include "lab/engine.h"
#include "lab/plan.h"
#include "lab/runner.h"
#include "lab/sweep_stop.h"
#include "wattlab/meter/window.h"
#include "store/gemm_point_record.h"

namespace wattlab::report {

// A value with an SI prefix chosen from its size: si(0.00123, "J") == "1.230 mJ".
std::string si(double v, const char* unit);
// "1.230 mJ ± 0.012 mJ": both in the value's prefix.
std::string si_pm(double v, double u, const char* unit);

enum class Accuracy { pass, fail, unchecked };
struct AccuracyVerdict {
  Accuracy verdict = Accuracy::unchecked;
  std::string text;  // "1.2e-03 <= bound 1e-02: PASS", "not checked: ...", ...
};
// A point's relative error and non-finite fraction against the engine's bound.
AccuracyVerdict accuracy(const GemmPointCounts& c, lab::Engine engine, bool simulated);
// Points whose engine is known and whose accuracy check failed.
std::size_t failed_accuracy(const std::vector<GemmPointRecord>& points, bool simulated);

// One point in full (wattlab gemm run); `w` is its stored window (name, duration).
void print_point_result(std::ostream& out, const WindowResult& w, const GemmPointRecord& p, lab::Engine engine,
                        bool simulated);

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
void print_results_table(std::ostream& out, const std::vector<GemmPointRecord>& points, bool simulated);

// wattlab gemm check: what was checked (before the first row), one row per check, the total.
void print_accuracy_check_header(std::ostream& out, uint64_t seed);
void print_accuracy_check(std::ostream& out, const lab::AccuracyCheck& c);
void print_accuracy_check_total(std::ostream& out, const std::vector<lab::AccuracyCheck>& checks);

// How a sweep invocation ended: where the time went, complete or why it stopped, failed checks.
struct SweepEnd {
  const lab::SweepOutcome* outcome = nullptr;
  lab::SweepStop::Why why = lab::SweepStop::Why::none;
  std::size_t done = 0, total = 0;  // points in the store now, in the plan
  std::size_t max_points = 0;       // --max-points
  std::size_t failed = 0;           // points that failed their accuracy check
  std::string db, sweep_id;
  bool simulated = false;
};
void print_sweep_end(std::ostream& out, const SweepEnd& e);

}  // namespace wattlab::report
