#include "lab/runner.h"

#include <fmt/format.h>

#include <deque>
#include <filesystem>

#include "core/units.h"

namespace wattlab::lab {

Result<std::set<int>> completed_points(const Store& store, const std::string& sweep_id) {
  std::set<int> done;
  auto runs = store.list_runs();
  if (!runs) return runs.error();
  for (const auto& r : *runs) {
    auto rec = store.load_run(r.run_id);
    if (!rec) return rec.error();
    for (const auto& w : rec->windows) {
      if (!is_gemm_point(w)) continue;
      auto point = GemmPointRecord::decode(w);
      if (!point) return Error{point.error().kind, fmt::format("run {}: {}", r.run_id, point.error().what), point.error().hint};
      if (point->sweep == sweep_id) done.insert(point->point);
    }
  }
  return done;
}

Result<std::set<int>> completed_points_in_file(const std::string& db_path, const std::string& sweep_id) {
  if (!std::filesystem::exists(db_path)) return std::set<int>{};
  auto store = Store::open(db_path, OpenMode::read_only);
  if (!store) return store.error();
  return completed_points(*store, sweep_id);
}

std::vector<PlannedPoint> remaining_points(const SweepPlan& plan, const std::set<int>& done) {
  std::vector<PlannedPoint> out;
  for (const auto& p : plan.points)
    if (!done.count(p.index)) out.push_back(p);
  return out;
}

std::vector<GemmSpec> specs_to_run(const std::vector<PlannedPoint>& points, std::size_t max_points) {
  std::vector<GemmSpec> out;
  for (const auto& p : points) {
    if (max_points > 0 && out.size() >= max_points) break;
    out.push_back(p.spec);
  }
  return out;
}

GemmPointRecord point_record(const SweepPlan& plan, const PlannedPoint& p, bool simulated) {
  GemmPointRecord r;
  r.experiment = p.experiment;
  r.engine = p.engine_label;
  r.m = p.spec.m;
  r.n = p.spec.n;
  r.k = p.spec.k;
  r.recipe_a = p.spec.recipe_a;
  r.recipe_b = p.spec.recipe_b;
  r.seed = p.spec.seed;
  r.param = p.param;
  r.param_value = p.param_value;
  r.reference = p.reference;
  r.sweep = plan.sweep_id;
  r.point = p.index;
  r.simulated = simulated;
  return r;
}

Result<SweepOutcome> run_sweep(const SweepPlan& plan, const std::vector<PlannedPoint>& points, GemmExecutor& exec,
                               Store& store, RunId run, const ProtocolOptions& opt, Progress* progress,
                               const std::atomic<bool>* stop, std::size_t max_points,
                               const std::function<bool()>& stop_before_next) {
  SweepOutcome out;
  // Points whose window is closed but not stored yet, oldest first. A result is final once the
  // counter and the sample buffer have published past the window's end (about 2 s on the H200 at
  // the default 1 s reads): two points in flight keep the GPU from waiting for that.
  constexpr std::size_t kInFlight = 2;
  std::deque<std::pair<PendingPoint, const PlannedPoint*>> pending;
  auto store_oldest = [&]() -> Status {
    const auto [pt, planned] = std::move(pending.front());
    pending.pop_front();
    CollectedPoint c = collect(exec, pt);
    GemmPointRecord record = point_record(plan, *planned, exec.simulated());
    record.counts = std::move(c.counts);
    record.encode(c.window);
    out.window_s += c.window.dur_s();
    if (auto st = store.add_window(run, c.window); !st) return st;
    std::vector<TimedReading> readings;
    exec.meter().drain_readings(readings);
    if (!readings.empty())
      if (auto st = store.append_readings(run, readings); !st) return st;
    return {};
  };
  // Stores the oldest points until at most `keep` are left in flight.
  auto flush = [&](std::size_t keep) -> Status {
    while (pending.size() > keep) {
      const int64_t t0_ns = exec.clock().now_ns();
      Status st = store_oldest();
      out.store_s += ns_to_s(exec.clock().now_ns() - t0_ns);
      if (!st) return st;
    }
    return {};
  };
  for (std::size_t i = 0; i < points.size(); ++i) {
    if ((stop && stop->load()) || (max_points > 0 && out.measured >= max_points) ||
        (stop_before_next && stop_before_next())) {
      out.stopped = true;
      break;
    }
    const PlannedPoint& p = points[i];
    const std::string what = fmt::format("{} {} {}={} {}x{}x{} seed {}", p.experiment, p.engine_label, p.param,
                                         p.param_value, p.spec.m, p.spec.n, p.spec.k, p.spec.seed);
    if (progress) progress->start(what, exec.clock().now_ns());
    auto point = run_point(exec, p.spec, opt, i == 0, fmt::format("gemm_point {}", p.index));
    // Earlier points' results are final by now: store them before anything can fail (all of
    // them when this point failed).
    if (auto st = flush(point ? kInFlight - 1 : 0); !st) return st.error();
    if (!point) return Error{point.error().kind, what + ": " + point.error().what, point.error().hint};
    out.prepare_s += point->prepare_s;
    out.warmup_s += point->warmup_s;
    out.warmup_steady += point->warmup_steady ? 1 : 0;
    pending.emplace_back(std::move(*point), &p);
    ++out.measured;
    if (progress) progress->finish(exec.clock().now_ns());
  }
  if (auto st = flush(0); !st) return st.error();
  if (progress) progress->done();
  return out;
}

}  // namespace wattlab::lab
