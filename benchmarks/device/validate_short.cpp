// Part "short" of meter_validate: isolated bursts. Each window holds exactly one burst of the
// level's load (opened just before the first unit, closed once the last one finished), with an
// idle gap of random length before it, so its phase against the sensors' update grid is random.
// Lengths and repeats are interleaved at random so that a slow drift does not line up with one
// length. The counter read on its updates around the whole sequence checks the sum.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "validate_context.h"
#include "wattlab/marks.h"

namespace wattlab::device {
namespace {

int reps_for(const Options& o, double len_s) { return len_s >= 1.0 ? o.long_burst_reps : o.burst_reps; }

void bursts(Context& c, Level& lvl) {
  const Options& o = c.opt;
  UnitLoad& load = *lvl.load;
  std::vector<std::pair<double, int>> order;
  for (double len : o.burst_lengths)
    for (int r = 0; r < reps_for(o, len); ++r) order.emplace_back(len, r);
  std::shuffle(order.begin(), order.end(), c.rng());
  c.progress("short", lvl.name, std::to_string(order.size()) + " isolated bursts");
  const AlignedEdge a = c.aligned();
  const uint64_t n0 = load.launched();
  int done = 0;
  for (const auto& [len, rep] : order) {
    const double gap_s = c.uniform(o.gap_min_s, o.gap_max_s);
    if (!c.has_time(gap_s + len + 0.2)) {
      c.skip("short " + lvl.name + ": " + std::to_string(order.size() - static_cast<std::size_t>(done)) + " bursts", gap_s + len);
      break;
    }
    c.sleep_until(marks::monotonic_ns() + s_to_ns(gap_s));
    const int64_t units = std::max<int64_t>(1, std::llround(len / lvl.unit_s()));
    WindowPlan p = Context::labelled("short", lvl.name, "burst-" + fmt_len(len), "window", rep);
    p.ctr_begin = c.read();
    p.wl_id = c.meter.open(p.name);
    const int64_t t_on = marks::monotonic_ns();
    load.run_units(units);
    const int64_t t_off = marks::monotonic_ns();
    c.meter.close(*p.wl_id);
    p.ctr_end = c.read();
    p.planned_s = len;
    p.work_units = static_cast<double>(units);
    p.busy_s = static_cast<double>(t_off - t_on) * 1e-9;
    p.ref_j = lvl.e_unit_j * static_cast<double>(units);
    p.ref_kind = "steady-work";
    p.ref_alt_j = lvl.power_w * p.busy_s;
    c.log.queue(p);
    ++done;
    if (done % 8 == 0) c.log.flush();
  }
  c.sleep_until(marks::monotonic_ns() + s_to_ns(o.gap_min_s));
  const AlignedEdge b = c.aligned();
  WindowPlan span = c.exact("short", lvl.name, "burst-span", "span", 0, a, b);
  span.work_units = static_cast<double>(load.launched() - n0);
  c.log.add(span);
  c.log.flush();
  c.progress("short", lvl.name, std::to_string(done) + " bursts done");
}

}  // namespace

void run_short(Context& c) {
  for (const char* name : {"below", "near", "cap"})
    if (c.selected(c.opt.levels, name)) bursts(c, c.levels[name]);
}

}  // namespace wattlab::device
