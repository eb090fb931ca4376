// Part "linearity" of meter_validate: windows whose work is known and varied.
//  nbursts: N identical bursts (each nburst_busy_s of the level's load, one per nburst_period_s,
//    idle between) in one window, N = 1..nburst_max in random order: E = a + b * work.
//  duty: the load switched on and off at duty_hz with duty cycles duty_pct for duty_window_s (at
//    least two periods): E = P_idle * T + e_unit * work.
// Every window is opened and closed on this thread after an idle gap of random length, with the
// counter read at its edges. The fits are made by python/bench/meter_validate.py.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "validate_context.h"
#include "wattlab/marks.h"

namespace wattlab::device {
namespace {

// A window from here on: the counter read, then wattlab's window opened; `body` runs the load.
template <typename Body>
void known_work_window(Context& c, Level& lvl, WindowPlan p, Body body) {
  p.ctr_begin = c.read();
  p.wl_id = c.meter.open(p.name);
  const int64_t t0 = marks::monotonic_ns();
  const int64_t units = body(t0);
  c.meter.close(*p.wl_id);
  const int64_t t1 = marks::monotonic_ns();
  p.ctr_end = c.read();
  p.work_units = static_cast<double>(units);
  p.busy_s = static_cast<double>(units) * lvl.unit_s();
  // Steady energy per unit for the work, idle power for the rest of the window: a guide only
  // (the power after a burst decays more slowly than that).
  const double dur_s = static_cast<double>(t1 - t0) * 1e-9;
  p.ref_j = lvl.e_unit_j * p.work_units + c.idle_w * std::max(0.0, dur_s - p.busy_s);
  p.ref_kind = "steady-work+idle";
  c.log.queue(p);
}

void nbursts(Context& c, Level& lvl) {
  const Options& o = c.opt;
  const int64_t units_per_burst = std::max<int64_t>(1, std::llround(o.nburst_busy_s / lvl.unit_s()));
  std::vector<int> order;
  for (int r = 0; r < o.nburst_reps; ++r)
    for (int n = 1; n <= o.nburst_max; ++n) order.push_back(n);
  std::shuffle(order.begin(), order.end(), c.rng());
  c.progress("linearity", lvl.name,
             std::to_string(order.size()) + " windows of N bursts, " + std::to_string(units_per_burst) + " units each");
  for (int n : order) {
    const double gap_s = c.uniform(0.3, 0.6);
    const double need_s = gap_s + n * o.nburst_period_s + 0.1;
    if (!c.has_time(need_s)) {
      c.skip("linearity nbursts " + lvl.name, need_s);
      break;
    }
    c.sleep_until(marks::monotonic_ns() + s_to_ns(gap_s));
    WindowPlan p = Context::labelled("linearity", lvl.name, "nbursts", "window", n);  // repeat: N, the number of bursts
    p.planned_s = n * o.nburst_period_s;
    known_work_window(c, lvl, p, [&](int64_t t0) {
      int64_t units = 0;
      for (int i = 0; i < n; ++i) {
        units += lvl.load->run_units(units_per_burst);
        c.sleep_until(t0 + s_to_ns((i + 1) * o.nburst_period_s));
      }
      return units;
    });
  }
  c.log.flush();
}

void duty(Context& c, Level& lvl) {
  const Options& o = c.opt;
  std::vector<std::pair<double, double>> order;
  for (double hz : o.duty_hz)
    for (double pct : o.duty_pct) order.emplace_back(hz, pct);
  std::shuffle(order.begin(), order.end(), c.rng());
  c.progress("linearity", lvl.name, std::to_string(order.size()) + " duty-cycled windows");
  for (const auto& [hz, pct] : order) {
    const double window_s = std::max(o.duty_window_s, 2.0 / hz);
    const double gap_s = c.uniform(0.3, 0.6);
    if (!c.has_time(gap_s + window_s + 0.1)) {
      c.skip("linearity duty " + lvl.name, gap_s + window_s);
      break;
    }
    c.sleep_until(marks::monotonic_ns() + s_to_ns(gap_s));
    const int periods = static_cast<int>(std::lround(window_s * hz));
    const int64_t on_units = std::max<int64_t>(1, std::llround(pct / 100.0 / hz / lvl.unit_s()));
    WindowPlan p = Context::labelled("linearity", lvl.name, "duty-" + fmt_len(hz) + "hz-" + fmt_len(pct), "window", 0);
    p.planned_s = periods / hz;
    known_work_window(c, lvl, p, [&](int64_t t0) {
      int64_t units = 0;
      for (int k = 0; k < periods; ++k) {
        units += lvl.load->run_units(on_units);
        c.sleep_until(t0 + s_to_ns((k + 1) / hz));
      }
      return units;
    });
  }
  c.log.flush();
}

}  // namespace

void run_linearity(Context& c) {
  for (const char* name : {"below", "near", "cap"})
    if (c.selected(c.opt.levels, name)) {
      nbursts(c, c.levels[name]);
      duty(c, c.levels[name]);
    }
}

}  // namespace wattlab::device
