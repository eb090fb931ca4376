#include "wattlab/lab/runner.h"

#include <fmt/format.h>

#include <deque>

#include "wattlab/core/units.h"

namespace wattlab::lab {

Result<std::set<int>> completed_points(const Store& store, const std::string& sweep_id) {
  std::set<int> done;
  auto runs = store.list_runs();
  if (!runs) return runs.error();
  for (const auto& r : *runs) {
    auto rec = store.load_run(r.run_id);
    if (!rec) return rec.error();
    for (const auto& w : rec->windows) {
      auto kind = w.labels.find("kind");
      auto sweep = w.labels.find("sweep");
      auto point = w.labels.find("point");
      if (kind == w.labels.end() || kind->second != "gemm_point" || sweep == w.labels.end() ||
          sweep->second != sweep_id || point == w.labels.end())
        continue;
      done.insert(std::stoi(point->second));
    }
  }
  return done;
}

std::vector<PlannedPoint> remaining_points(const SweepPlan& plan, const std::set<int>& done) {
  std::vector<PlannedPoint> out;
  for (const auto& p : plan.points)
    if (!done.count(p.index)) out.push_back(p);
  return out;
}

std::map<std::string, std::string> point_labels(const SweepPlan& plan, const PlannedPoint& p, bool simulated) {
  return {{"kind", "gemm_point"},
          {"experiment", p.experiment},
          {"engine", p.engine_label},
          {"M", std::to_string(p.spec.m)},
          {"N", std::to_string(p.spec.n)},
          {"K", std::to_string(p.spec.k)},
          {"recipe_a", p.spec.recipe_a},
          {"recipe_b", p.spec.recipe_b},
          {"seed", std::to_string(p.spec.seed)},
          {"param", p.param},
          {"param_value", p.param_value},
          {"reference", p.reference ? "1" : "0"},
          {"sweep", plan.sweep_id},
          {"point", std::to_string(p.index)},
          {"simulated", simulated ? "1" : "0"}};
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
    const WindowResult r = collect(exec, pt, point_labels(plan, *planned, exec.simulated()));
    out.window_s += r.dur_s();
    if (auto st = store.add_window(run, r); !st) return st;
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
