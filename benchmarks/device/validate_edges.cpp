// Part "edges" of meter_validate, first half: windows at load->idle transitions.
//  afterload: the load runs for afterload_load_s, then a window of afterload_idle_s opens the moment
//    it stops (the case where wattlab and the counter read at the edges disagreed); beside it the
//    same idle stretch between the next counter updates (exact), and wattlab's windows for the
//    pieces between the stop and that update (head) and between the window's end and the next
//    update (tail), so the exact stretch can be carried over to the window.
//  split: a stretch between counter updates (idle, load, idle) cut into parts at the transitions
//    and at random points, the counter read at every cut: the parts must add up to the whole.
#include <algorithm>
#include <cstdio>
#include <tuple>
#include <utility>
#include <vector>

#include "validate_context.h"
#include "wattlab/marks.h"

namespace wattlab::device {
namespace {

void afterload(Context& c, Level& lvl) {
  const Options& o = c.opt;
  UnitLoad& load = *lvl.load;
  for (int rep = 0; rep < o.afterload_reps; ++rep) {
    const double need_s = 1.0 + o.afterload_load_s + o.afterload_idle_s + 0.5;
    if (!c.has_time(need_s)) {
      c.skip("edges afterload " + lvl.name + " repeat " + std::to_string(rep), need_s);
      return;
    }
    c.progress("edges", lvl.name, "after-load repeat " + std::to_string(rep));
    c.sleep_until(marks::monotonic_ns() + s_to_ns(1.0));
    WindowPlan busy = Context::labelled("edges", lvl.name, "afterload-load", "window", rep);
    WindowPlan idle = Context::labelled("edges", lvl.name, "afterload-idle", "window", rep);
    busy.ctr_begin = c.read();
    busy.wl_id = c.meter.open(busy.name);
    const uint64_t n0 = load.launched();
    const int64_t t_on = marks::monotonic_ns();
    load.start();
    c.sleep_until(t_on + s_to_ns(o.afterload_load_s));
    load.stop();
    const int64_t t_stop = marks::monotonic_ns();
    c.meter.close(*busy.wl_id);
    idle.wl_id = c.meter.open(idle.name);
    const CounterRead at_stop = c.read();
    busy.ctr_end = at_stop;
    idle.ctr_begin = at_stop;
    const AlignedEdge u1 = c.aligned();
    c.sleep_until(t_stop + s_to_ns(o.afterload_idle_s));
    c.meter.close(*idle.wl_id);
    const int64_t t_close = marks::monotonic_ns();
    idle.ctr_end = c.read();
    const AlignedEdge u2 = c.aligned();

    busy.planned_s = o.afterload_load_s;
    busy.work_units = static_cast<double>(load.launched() - n0);
    busy.busy_s = static_cast<double>(t_stop - t_on) * 1e-9;
    busy.ref_j = lvl.e_unit_j * busy.work_units;
    busy.ref_kind = "steady-work";
    busy.ref_alt_j = lvl.power_w * busy.busy_s;
    idle.planned_s = o.afterload_idle_s;
    idle.work_units = 0;
    c.log.queue(busy);
    c.log.queue(idle);
    c.add_phase("edges", lvl.name, "afterload-phase", rep, t_on, t_stop);
    WindowPlan exact = c.exact("edges", lvl.name, "afterload-idle-exact", "exact", rep, u1, u2);
    exact.work_units = 0;
    c.log.add(exact);
    for (auto [set, a, b] : {std::tuple{"afterload-head", t_stop, u1.t_ns()}, std::tuple{"afterload-tail", t_close, u2.t_ns()}}) {
      WindowPlan p = Context::labelled("edges", lvl.name, set, "part", rep);
      p.t_begin_ns = a;
      p.t_end_ns = std::max(a, b);
      c.log.add(p);
    }
    c.log.flush();
  }
}

void split(Context& c, Level& lvl) {
  UnitLoad& load = *lvl.load;
  constexpr double kIdleBeforeS = 1.0, kLoadS = 4.0, kIdleAfterS = 2.0;
  const double need_s = kIdleBeforeS + kLoadS + kIdleAfterS + 0.5;
  if (!c.has_time(need_s)) {
    c.skip("edges split " + lvl.name, need_s);
    return;
  }
  c.progress("edges", lvl.name, "split: idle, load, idle cut into parts");
  double cut1 = c.uniform(0.3, kLoadS - 0.3), cut2 = 0;
  do {
    cut2 = c.uniform(0.3, kLoadS - 0.3);
  } while (std::abs(cut2 - cut1) < 0.2);
  if (cut2 < cut1) std::swap(cut1, cut2);
  const double cut_idle = c.uniform(0.2, kIdleAfterS - 0.2);

  const AlignedEdge a = c.aligned();
  c.sleep_until(a.t_ns() + s_to_ns(kIdleBeforeS));
  std::vector<CounterRead> cuts;
  cuts.push_back(c.read());
  const int64_t t_up = marks::monotonic_ns();
  load.start();
  for (double cut : {cut1, cut2}) {
    c.sleep_until(t_up + s_to_ns(cut));
    cuts.push_back(c.read());
  }
  c.sleep_until(t_up + s_to_ns(kLoadS));
  load.stop();
  const int64_t t_down = marks::monotonic_ns();
  cuts.push_back(c.read());
  c.sleep_until(t_down + s_to_ns(cut_idle));
  cuts.push_back(c.read());
  c.sleep_until(t_down + s_to_ns(kIdleAfterS));
  const AlignedEdge b = c.aligned();

  c.log.add(c.exact("edges", lvl.name, "split", "whole", 0, a, b));
  std::vector<std::pair<int64_t, CounterRead>> edges = {{a.t_ns(), a.e.after}};
  for (const CounterRead& r : cuts) edges.emplace_back(mid_ns(r), r);
  edges.emplace_back(b.t_ns(), b.e.after);
  for (std::size_t i = 0; i + 1 < edges.size(); ++i) {
    WindowPlan p = Context::labelled("edges", lvl.name, "split", "part", static_cast<int>(i));
    p.t_begin_ns = edges[i].first;
    p.t_end_ns = edges[i + 1].first;
    p.ctr_begin = edges[i].second;
    p.ctr_end = edges[i + 1].second;
    c.log.add(p);
  }
  c.add_phase("edges", lvl.name, "split-load", 0, t_up, t_down);
  c.log.flush();
}

}  // namespace

void run_edges(Context& c) {
  for (const char* name : {"below", "near", "cap"})
    if (c.selected(c.opt.afterload_levels, name)) afterload(c, c.levels[name]);
  for (const char* name : {"below", "near", "cap"})
    if (c.selected(c.opt.split_levels, name)) split(c, c.levels[name]);
  run_shifts(c);
}

}  // namespace wattlab::device
