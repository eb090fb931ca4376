// Runs a sweep plan point by point into the store: each point one run window, a GemmPointRecord
// (src/store/gemm_point_record.h). Interrupted sweeps resume: completed_points() finds what
// the store already holds under the same sweep id.
#pragma once
#include <atomic>
#include <functional>
#include <iosfwd>
#include <set>

#include "lab/plan.h"
#include "lab/progress.h"
#include "lab/protocol.h"
#include "store/gemm_point_record.h"
#include "wattlab/store/store.h"

namespace wattlab::lab {

// Point indices stored as gemm_point windows of `sweep_id`, across every run in the store.
// Errors: the store's, or a gemm_point window that does not decode (named).
Result<std::set<int>> completed_points(const Store& store, const std::string& sweep_id);

// The same from the database file at `db_path`, opened read-only; none when the file does not
// exist (a dry run never creates it).
Result<std::set<int>> completed_points_in_file(const std::string& db_path, const std::string& sweep_id);

// The plan's points not in `done`, in plan order.
std::vector<PlannedPoint> remaining_points(const SweepPlan& plan, const std::set<int>& done);

// The specs of the points the runner will measure, in order: the first `max_points` (0: all).
std::vector<GemmSpec> specs_to_run(const std::vector<PlannedPoint>& points, std::size_t max_points);

// What a planned point's window is (its record without counts: those come from the window).
GemmPointRecord point_record(const SweepPlan& plan, const PlannedPoint& p, bool simulated);

struct SweepOutcome {
  std::size_t measured = 0;
  bool stopped = false;  // `stop` was raised (or max_points reached) before the end
  // Where the time went, summed over the measured points (the executor's clock): preparing
  // (inputs, checks, graph capture), warming up, inside windows, and collecting plus storing.
  double prepare_s = 0, warmup_s = 0, window_s = 0, store_s = 0;
  std::size_t warmup_steady = 0;  // points whose warm-up ended on a steady temperature
};

// Measures `points` (already without the completed ones) with `exec` into `run` of `store`.
// Stops between points when *stop becomes true, after max_points (0: no limit), or when
// `stop_before_next` (asked before each point, e.g. a time budget) returns true.
Result<SweepOutcome> run_sweep(const SweepPlan& plan, const std::vector<PlannedPoint>& points, GemmExecutor& exec,
                               Store& store, RunId run, const ProtocolOptions& opt, Progress* progress,
                               const std::atomic<bool>* stop = nullptr, std::size_t max_points = 0,
                               const std::function<bool()>& stop_before_next = {});

}  // namespace wattlab::lab
